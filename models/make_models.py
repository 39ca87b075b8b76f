#!/usr/bin/env python3
"""Build micro_rt's small test models with the real TensorFlow Lite converter.

Dev-only tool: needs TensorFlow (tensorflow-cpu), which is NOT a runtime
dependency of micro_rt.  Run from the repository root:

    python3 -m venv tfvenv && tfvenv/bin/pip install tensorflow-cpu==2.21.0
    tfvenv/bin/python models/make_models.py

It rebuilds every ``models/*.tflite`` listed in MODELS below, checks each float
model against TensorFlow on one random input (and each int8 model loosely, after
dequantizing), and rewrites ``models/README.md`` (model table + op coverage).

It is long (one declarative entry per model, each a few lines of Keras) because the models
are the data: splitting them over files would hide which seed and converter options made which
file.  Everything is deterministic: every model is built after
``keras.utils.set_random_seed(seed)`` with its own seed, and its representative
dataset comes from ``numpy.random.default_rng(seed)``.  Running the script twice
gives byte-identical files (checked with the TensorFlow version in README.md).

Optional arguments: model names (e.g. ``conv_variants``) to rebuild only those;
``--no-readme`` to leave README.md alone.
"""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from tensorflow.lite.python import schema_py_generated as schema  # noqa: E402

keras = tf.keras
L = keras.layers

OUT_DIR = Path(__file__).resolve().parent
# The project venv with the TFLM oracle; used only to put check_models.py's
# report into README.md.
TFLM_PYTHON = OUT_DIR.parent / ".venv" / "bin" / "python"
N_REPRESENTATIVE = 64
# README.md from this heading on is written by make_models_ops.py; this script keeps it.
OPS_SECTION = "## Operator models (`make_models_ops.py`)"

# Every initializer gets an explicit seed from a per-model counter (reset in
# concrete()).  Unseeded Keras 3 initializers were not reproducible from run to
# run, and one shared unseeded instance gave several layers the same bias.
# Biases are random and non-zero: the converter drops an all-zero bias from
# FULLY_CONNECTED (it becomes an absent optional input), and zero biases test
# nothing.
_seed_counter = [0]


def _next_seed():
    _seed_counter[0] += 1
    return _seed_counter[0]


def W(bias=True, depthwise=False):
    """Seeded initializer keyword arguments for a Conv2D/Dense/DepthwiseConv2D."""
    kw = {("depthwise_initializer" if depthwise else "kernel_initializer"):
          keras.initializers.GlorotUniform(seed=_next_seed())}
    if bias:
        kw["bias_initializer"] = keras.initializers.RandomUniform(-0.3, 0.3, seed=_next_seed())
    else:
        kw["use_bias"] = False
    return kw


def spec(*shape, name=None):
    return tf.TensorSpec(shape, tf.float32, name=name)


@dataclass
class ModelDef:
    name: str                       # file stem (a suffix _int8 / _f32 is added)
    purpose: str
    build: Callable[[], Callable]   # returns fn(*tensors) -> tensor or tuple
    inputs: list                    # list of tf.TensorSpec (None = dynamic dim)
    seed: int
    variants: tuple = ("int8", "f32")
    rep_range: tuple = (-1.0, 1.0)  # uniform range of the representative data
    notes: str = ""
    extra: dict = field(default_factory=dict)


# --------------------------------------------------------------------------
# Model builders.  Each returns a Python function over float32 tensors; the
# Keras layers it closes over hold the (seeded) weights.
# --------------------------------------------------------------------------

def build_conv_variants():
    c1 = L.Conv2D(8, 3, strides=1, padding="same", activation="relu", **W())
    c2 = L.Conv2D(8, 3, strides=2, padding="valid", activation="relu6", **W())
    c3 = L.Conv2D(8, 3, strides=1, padding="same", dilation_rate=2, **W())
    c4 = L.Conv2D(8, 3, strides=2, padding="same", **W(bias=False))  # even input: asymmetric pad
    c5 = L.Conv2D(6, 2, strides=1, padding="valid", dilation_rate=2, activation="relu", **W())
    c6 = L.Conv2D(4, (1, 3), strides=(1, 2), padding="same", **W())  # non-square kernel/stride
    c7 = L.Conv2D(5, 1, padding="valid", activation="relu6", **W())   # pointwise
    # Keras refuses stride > 1 with dilation > 1; tf.nn.conv2d does not.
    rng = np.random.default_rng(_next_seed())
    k8 = tf.constant(rng.uniform(-0.3, 0.3, (3, 3, 8, 4)).astype(np.float32))
    b8 = tf.constant(rng.uniform(-0.3, 0.3, (4,)).astype(np.float32))

    def fn(x):                 # (1,16,16,3)
        a = c1(x)              # (1,16,16,8)  s1 SAME RELU
        b = c2(a)              # (1,7,7,8)    s2 VALID RELU6
        c = c3(b)              # (1,7,7,8)    dilation 2 SAME, no activation
        d = c4(a)              # (1,8,8,8)    s2 SAME (pad 0 before / 1 after)
        e = c5(d)              # (1,6,6,6)    dilation 2 VALID RELU
        f = c6(e)              # (1,6,3,4)    1x3 kernel, stride (1,2)
        g = c7(c)              # (1,7,7,5)    1x1 RELU6
        h = tf.nn.relu(tf.nn.conv2d(a, k8, strides=2, dilations=2, padding="SAME") + b8)
        return g, f, h         # h: (1,8,8,4) s2 dilation 2 SAME RELU
    return fn


def build_depthwise_variants():
    dw = dict(depthwise=True)
    d1 = L.DepthwiseConv2D(3, padding="same", depth_multiplier=1, activation="relu", **W(**dw))
    d2 = L.DepthwiseConv2D(3, strides=2, padding="valid", depth_multiplier=2, activation="relu6",
                           **W(**dw))
    d3 = L.DepthwiseConv2D(3, padding="same", dilation_rate=2, depth_multiplier=1, **W(**dw))
    d4 = L.DepthwiseConv2D(3, strides=2, padding="same", depth_multiplier=2, **W(**dw))
    d5 = L.DepthwiseConv2D(2, padding="valid", dilation_rate=2, depth_multiplier=1, activation="relu",
                           **W(**dw))

    def fn(x):                 # (1,12,12,4)
        a = d1(x)              # (1,12,12,4)  dm1 s1 SAME RELU
        b = d2(a)              # (1,5,5,8)    dm2 s2 VALID RELU6
        c = d3(b)              # (1,5,5,8)    dm1 dilation 2 SAME
        d = d4(c)              # (1,3,3,16)   dm2 s2 SAME
        e = d5(a)              # (1,10,10,4)  dm1 dilation 2 VALID RELU
        return d, e
    return fn


def build_fully_connected():
    f1 = L.Dense(6, **W())                      # 3-D input -> keep_num_dims
    f2 = L.Dense(6, activation="relu", **W(bias=False))   # 3-D, no bias
    f3 = L.Dense(10, activation="relu6", **W())
    f4 = L.Dense(5, **W(bias=False))

    def fn(x):                 # (1,4,8)
        a = f1(x)              # (1,4,6)  FC keep_num_dims=True, bias
        b = f2(a)              # (1,4,6)  FC keep_num_dims=True, no bias, RELU
        flat = tf.reshape(b, (1, 24))
        c = f3(flat)           # (1,10)   FC bias RELU6
        d = f4(c)              # (1,5)    FC no bias
        return d
    return fn


def build_elementwise():
    # MAXIMUM/MINIMUM force one scale on their inputs and output, and the
    # quantizer pushes that scale back onto the producers of their inputs.  Feed
    # them tensors that nothing else reads, or other outputs get clipped.
    def fn(a, b, c):           # a,b: (1,6,6,4)  c: (1,1,1,4)
        s = a + b                            # ADD same shape
        d = a - c                            # SUB broadcast
        m = s * b                            # MUL same shape
        o1 = s - m                           # SUB same shape
        o2 = d * c + c                       # MUL broadcast, ADD broadcast
        o3 = tf.maximum(a - b, b - a)        # MAXIMUM same shape
        o4 = tf.minimum(a * 2.0, c * 0.5)    # MINIMUM broadcast (MUL by scalar constants)
        o5 = tf.nn.relu(a * tf.constant([0.5, 1.0, 2.0, -1.0]) + 0.25)  # MUL/ADD by constants, fused RELU
        o6 = tf.maximum(tf.minimum(a * b, 0.75), -0.5)                 # MINIMUM/MAXIMUM with scalar constants
        return o1, o2, o3, o4, o5, o6
    return fn


def build_activations():
    def fn(x):                 # (1,8,32)
        return (tf.nn.relu(x),
                tf.nn.relu6(x),
                tf.nn.leaky_relu(x, alpha=0.2),
                x * tf.nn.relu6(x + 3.0) / 6.0,  # -> HARD_SWISH
                tf.nn.sigmoid(x),
                tf.nn.tanh(x),
                tf.nn.softmax(x))
    return fn


def build_pooling():
    p1 = L.MaxPooling2D(2, strides=2, padding="valid")
    p2 = L.AveragePooling2D(3, strides=1, padding="same")
    p3 = L.MaxPooling2D(3, strides=2, padding="same")
    p4 = L.AveragePooling2D(2, strides=2, padding="valid")
    p5 = L.AveragePooling2D((2, 3), strides=(1, 2), padding="same")

    def fn(x):                 # (1,12,12,4)
        a = p1(x)                                # (1,6,6,4) MAX 2x2 s2 VALID
        b = tf.nn.relu(p2(a))                    # (1,6,6,4) AVG 3x3 s1 SAME, fused RELU
        c = p3(x)                                # (1,6,6,4) MAX 3x3 s2 SAME
        d = tf.nn.relu6(p4(c))                   # (1,3,3,4) AVG 2x2 s2 VALID, fused RELU6
        e = p5(x)                                # (1,12,6,4) AVG 2x3 stride (1,2) SAME
        m1 = tf.reduce_mean(b, axis=[1, 2])                   # MEAN keepdims=False -> (1,4)
        m2 = tf.reduce_mean(c, axis=[1, 2], keepdims=True)    # MEAN keepdims=True  -> (1,1,1,4)
        m3 = tf.reduce_mean(e, axis=[3], keepdims=True)       # MEAN over channels  -> (1,12,6,1)
        return d, m1, m2, m3
    return fn


def build_shape_ops():
    def fn(x):                 # (1,6,8,4)
        p = tf.pad(x, [[0, 0], [1, 1], [2, 0], [0, 0]])                        # PAD (zeros)
        q = tf.pad(x, [[0, 0], [0, 1], [1, 1], [0, 0]], constant_values=0.5)   # PADV2
        t = tf.transpose(p, [0, 2, 1, 3])                                       # TRANSPOSE (1,10,8,4)
        s = t[:, 1:7, ::2, :]                                                   # STRIDED_SLICE (1,6,4,4)
        r = s[:, :, :, ::-1]                                                    # STRIDED_SLICE, negative stride
        pk = tf.stack([s, r], axis=1)                                           # PACK (1,2,6,4,4)
        h = tf.reshape(q, (1, 7, 40))                                           # RESHAPE
        cc = tf.concat([h[:, :, :20], h[:, :, 20:]], axis=1)                    # CONCATENATION (1,14,20)
        tt = tf.transpose(cc, [0, 2, 1])                                        # TRANSPOSE 3-D (1,20,14)
        return pk, tt
    return fn


def build_dynamic_shape():
    # Two dynamic dimensions keep SHAPE / STRIDED_SLICE / PACK (int32 shape
    # arithmetic) and SQUEEZE / EXPAND_DIMS, which the converter otherwise
    # folds into constants or RESHAPE.  The flatbuffer stores each dynamic dim
    # as 1, so TFLM sees the input as (1,1,4,8).
    def fn(x):                 # (None,None,4,8)
        sh = tf.shape(x)                                          # SHAPE (int32)
        flat = tf.reshape(x, tf.stack([sh[0], sh[1], 32]))       # STRIDED_SLICE, PACK, RESHAPE
        m = tf.reduce_mean(x, axis=[2], keepdims=True)            # MEAN (N,H,1,8)
        s = tf.squeeze(m, axis=2)                                 # SQUEEZE (N,H,8)
        e = tf.expand_dims(tf.nn.relu(s), 1)                      # EXPAND_DIMS (N,1,H,8)
        return flat, e
    return fn


def build_requantize():
    def fn(x):                 # (1,4,4,8)
        # LOGISTIC output is fixed at scale 1/256 zp -128 and TANH at 1/128 zp 0;
        # CONCATENATION needs one scale for all inputs, so the quantizer inserts
        # int8->int8 QUANTIZE (requantize) ops in front of it.
        return tf.concat([tf.nn.sigmoid(x), tf.nn.tanh(x), x], axis=3)
    return fn


def build_quant_dequant():
    c1 = L.Conv2D(6, 3, padding="same", activation="relu", **W())

    def fn(x):                 # (1,8,8,3) float in, float out, int8 inside
        a = c1(x)
        return tf.concat([tf.nn.tanh(a), a], axis=3), tf.reduce_mean(a, axis=[1, 2])
    return fn


def build_residual():
    c1 = L.Conv2D(8, 3, padding="same", activation="relu", **W())
    c2 = L.Conv2D(8, 3, padding="same", **W())
    c3 = L.Conv2D(16, 3, strides=2, padding="same", activation="relu", **W())
    c4 = L.Conv2D(16, 3, padding="same", **W())
    sc = L.Conv2D(16, 1, strides=2, padding="valid", **W())  # projection shortcut

    def fn(x):                 # (1,16,16,8)
        y = tf.nn.relu(c2(c1(x)) + x)          # identity skip, ADD + fused RELU
        z = tf.nn.relu(c4(c3(y)) + sc(y))      # projection skip (stride 2)
        return z               # (1,8,8,16)
    return fn


def build_inception():
    b1 = L.Conv2D(4, 1, activation="relu", **W())
    b2a = L.Conv2D(4, 1, activation="relu", **W())
    b2b = L.Conv2D(6, 3, padding="same", activation="relu", **W())
    b3a = L.Conv2D(2, 1, activation="relu", **W())
    b3b = L.Conv2D(4, 5, padding="same", activation="relu", **W())
    b4p = L.MaxPooling2D(3, strides=1, padding="same")
    b4c = L.Conv2D(4, 1, activation="relu", **W())
    head = L.Conv2D(8, 1, **W())

    def fn(x):                 # (1,16,16,8)
        cat = tf.concat([b1(x), b2b(b2a(x)), b3b(b3a(x)), b4c(b4p(x))], axis=3)  # (1,16,16,18)
        return head(cat)       # (1,16,16,8)
    return fn


def build_mobilenet_tiny():
    layers = [
        L.Conv2D(8, 3, strides=2, padding="same", activation="relu6", **W()),   # 16x16x8
        L.DepthwiseConv2D(3, padding="same", activation="relu6", **W(depthwise=True)),
        L.Conv2D(16, 1, activation="relu6", **W()),
        L.DepthwiseConv2D(3, strides=2, padding="same", activation="relu6",
                          **W(depthwise=True)),                                   # 8x8x16
        L.Conv2D(32, 1, activation="relu6", **W()),
        L.DepthwiseConv2D(3, strides=2, padding="same", activation="relu6",
                          **W(depthwise=True)),                                   # 4x4x32
        L.Conv2D(32, 1, activation="relu6", **W()),
        L.AveragePooling2D(4),                                                    # 1x1x32
    ]
    fc = L.Dense(10, **W())

    def fn(x):                 # (1,32,32,3)
        for layer in layers:
            x = layer(x)
        return tf.nn.softmax(fc(tf.reshape(x, (1, 32))))
    return fn


def build_anomaly_fc():
    # Auto-encoder style stack (like the MLPerf Tiny anomaly-detection model, smaller).
    layers = [L.Dense(32, activation="relu", **W()),
              L.Dense(8, activation="relu", **W()),
              L.Dense(32, activation="relu", **W()),
              L.Dense(64, **W())]

    def fn(x):                 # (1,64)
        for layer in layers:
            x = layer(x)
        return x
    return fn


MODELS = [
    ModelDef("conv_variants", "CONV_2D options: strides 1/2 (and 1x2), SAME/VALID, dilation 2 "
             "(also with stride 2), "
             "fused RELU/RELU6/none, 1x1 and 1x3 kernels",
             build_conv_variants, [spec(1, 16, 16, 3)], seed=101),
    ModelDef("depthwise_variants", "DEPTHWISE_CONV_2D options: depth multiplier 1/2, strides 1/2, "
             "SAME/VALID, dilation 2, fused RELU/RELU6/none",
             build_depthwise_variants, [spec(1, 12, 12, 4)], seed=102),
    ModelDef("fully_connected", "FULLY_CONNECTED with/without bias, keep_num_dims on 3-D input, "
             "fused RELU/RELU6 (int8: per-channel weights, the converter's default)",
             build_fully_connected, [spec(1, 4, 8)], seed=103),
    ModelDef("fully_connected_pt", "same graph and weights as fully_connected, int8 with per-tensor "
             "weights (_experimental_disable_per_channel)",
             build_fully_connected, [spec(1, 4, 8)], seed=103, variants=("int8",),
             extra=dict(per_tensor=True)),
    ModelDef("elementwise", "ADD/SUB/MUL/MAXIMUM/MINIMUM, same-shape, broadcast and constant operands; "
             "3 inputs, 6 outputs",
             build_elementwise, [spec(1, 6, 6, 4, name="a"), spec(1, 6, 6, 4, name="b"),
                                 spec(1, 1, 1, 4, name="c")], seed=104),
    ModelDef("activations", "standalone RELU, RELU6, LEAKY_RELU, HARD_SWISH, LOGISTIC, TANH, SOFTMAX "
             "(7 outputs, in that order)",
             build_activations, [spec(1, 8, 32)], seed=105, rep_range=(-8.0, 8.0)),
    ModelDef("pooling", "MAX_POOL_2D/AVERAGE_POOL_2D (sizes, strides, SAME/VALID, fused RELU/RELU6), "
             "MEAN keepdims false/true, spatial and channel axes",
             build_pooling, [spec(1, 12, 12, 4)], seed=106),
    ModelDef("shape_ops", "PAD, PADV2, TRANSPOSE (4-D, 3-D), STRIDED_SLICE (masks, negative stride), "
             "PACK, RESHAPE, CONCATENATION",
             build_shape_ops, [spec(1, 6, 8, 4)], seed=107),
    ModelDef("dynamic_shape", "input with 2 dynamic dims: SHAPE -> STRIDED_SLICE -> PACK -> RESHAPE "
             "(int32 shape math), SQUEEZE, EXPAND_DIMS, MEAN",
             build_dynamic_shape, [spec(None, None, 4, 8)], seed=108),
    ModelDef("requantize", "int8->int8 QUANTIZE (requantize) before a CONCATENATION of "
             "LOGISTIC/TANH/input", build_requantize, [spec(1, 4, 4, 8)], seed=109,
             variants=("int8",), rep_range=(-4.0, 4.0)),
    ModelDef("quant_dequant", "int8 inside, float32 in/out: QUANTIZE float->int8 at the input, "
             "DEQUANTIZE int8->float at both outputs, a requantize before CONCATENATION",
             build_quant_dequant, [spec(1, 8, 8, 3)], seed=110, variants=("int8_floatio",)),
    ModelDef("residual_block", "branching: two residual blocks (identity skip, stride-2 projection skip) "
             "joined by ADD with fused RELU", build_residual, [spec(1, 16, 16, 8)], seed=111),
    ModelDef("inception_block", "branching: 4 parallel branches (1x1, 1x1-3x3, 1x1-5x5, maxpool-1x1) "
             "joined by CONCATENATION", build_inception, [spec(1, 16, 16, 8)], seed=112),
    ModelDef("mobilenet_tiny", "small MobileNet-like classifier, 32x32x3 -> 10 classes",
             build_mobilenet_tiny, [spec(1, 32, 32, 3)], seed=113, rep_range=(0.0, 1.0)),
    ModelDef("anomaly_fc", "anomaly-detection style auto-encoder: 4 FULLY_CONNECTED 64-32-8-32-64, "
             "(int8: per-tensor weights)", build_anomaly_fc, [spec(1, 64)], seed=114,
             extra=dict(per_tensor=True)),
]


# --------------------------------------------------------------------------
# Conversion
# --------------------------------------------------------------------------

def concrete(md: ModelDef):
    keras.utils.set_random_seed(md.seed)
    _seed_counter[0] = md.seed * 1000
    fn = md.build()
    tfn = tf.function(fn, input_signature=md.inputs, autograph=False)
    cf = tfn.get_concrete_function()
    return fn, cf


def sample_shape(s):
    return [1 if d is None else d for d in s.shape]


def representative(md: ModelDef):
    rng = np.random.default_rng(md.seed)
    lo, hi = md.rep_range

    def gen():
        for _ in range(N_REPRESENTATIVE):
            yield [rng.uniform(lo, hi, sample_shape(s)).astype(np.float32) for s in md.inputs]
    return gen


def convert(md: ModelDef, variant: str) -> bytes:
    fn, cf = concrete(md)
    conv = tf.lite.TFLiteConverter.from_concrete_functions([cf])
    if variant.startswith("int8"):
        conv.optimizations = [tf.lite.Optimize.DEFAULT]
        conv.representative_dataset = representative(md)
        conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
        if variant == "int8":
            conv.inference_input_type = tf.int8
            conv.inference_output_type = tf.int8
        if md.extra.get("per_tensor"):
            conv._experimental_disable_per_channel = True
    return conv.convert()


def file_name(md: ModelDef, variant: str) -> str:
    suffix = {"int8": "_int8", "f32": "_f32", "int8_floatio": "_int8_floatio"}[variant]
    return md.name + suffix + ".tflite"


# --------------------------------------------------------------------------
# Inspection (flatbuffer via the schema module that ships with TensorFlow)
# --------------------------------------------------------------------------

OPNAME = {v: k for k, v in vars(schema.BuiltinOperator).items() if not k.startswith("_")}
TYPENAME = {v: k.lower() for k, v in vars(schema.TensorType).items() if not k.startswith("_")}
PADDING = {0: "SAME", 1: "VALID"}
ACT = {0: "none", 1: "RELU", 2: "RELU_N1_TO_1", 3: "RELU6", 4: "TANH", 5: "SIGN_BIT"}


def op_code(model, op):
    oc = model.operatorCodes[op.opcodeIndex]
    return OPNAME[max(oc.builtinCode, oc.deprecatedBuiltinCode)]


def op_variant(model, sg, op) -> str:
    """Short description of the options that matter for kernel selection."""
    name = op_code(model, op)
    o = op.builtinOptions
    t_in = [sg.tensors[i] if i >= 0 else None for i in op.inputs]
    t_out = sg.tensors[op.outputs[0]]
    dtype = TYPENAME[t_in[0].type] if t_in and t_in[0] is not None else "?"
    parts = []
    if name in ("CONV_2D", "DEPTHWISE_CONV_2D"):
        parts.append(f"s{o.strideH}x{o.strideW}" if o.strideH != o.strideW else f"s{o.strideH}")
        parts.append(PADDING[o.padding])
        if o.dilationHFactor != 1 or o.dilationWFactor != 1:
            parts.append(f"dil{o.dilationHFactor}")
        if name == "DEPTHWISE_CONV_2D":
            dm = t_out.shape[3] // t_in[0].shape[3]
            parts.append(f"dm{dm}")
        parts.append(f"k{t_in[1].shape[1]}x{t_in[1].shape[2]}")
        parts.append(ACT[o.fusedActivationFunction])
    elif name in ("AVERAGE_POOL_2D", "MAX_POOL_2D"):
        parts += [f"{o.filterHeight}x{o.filterWidth}",
                  f"s{o.strideH}x{o.strideW}" if o.strideH != o.strideW else f"s{o.strideH}",
                  PADDING[o.padding], ACT[o.fusedActivationFunction]]
    elif name == "FULLY_CONNECTED":
        parts.append("bias" if len(op.inputs) > 2 and op.inputs[2] >= 0 else "nobias")
        if o.keepNumDims:
            parts.append("keep_num_dims")
        if t_in[1].type == schema.TensorType.INT8:
            q = t_in[1].quantization
            parts.append("per-channel" if len(q.scale) > 1 else "per-tensor")
        parts.append(ACT[o.fusedActivationFunction])
    elif name in ("ADD", "SUB", "MUL", "MAXIMUM", "MINIMUM"):
        a, b = t_in[0], t_in[1]
        const = any(model.buffers[t.buffer].data is not None for t in (a, b))
        same = list(a.shape) == list(b.shape)
        parts.append("const" if const else ("same" if same else "broadcast"))
        if const and not same:
            parts.append("broadcast")
        if name in ("ADD", "SUB", "MUL"):
            parts.append(ACT[o.fusedActivationFunction])
    elif name == "MEAN":
        parts.append("keepdims" if o.keepDims else "nokeepdims")
    elif name in ("QUANTIZE", "DEQUANTIZE"):
        parts.append(f"{TYPENAME[t_in[0].type]}->{TYPENAME[t_out.type]}")
        dtype = None
    elif name == "SHAPE":
        dtype = None
        parts.append(f"{TYPENAME[t_in[0].type]}->int32")
    elif name == "STRIDED_SLICE":
        strides = model.buffers[t_in[3].buffer].data
        if strides is not None and np.frombuffer(strides.tobytes(), np.int32).min() < 0:
            parts.append("neg-stride")
        if o.shrinkAxisMask:
            parts.append("shrink")
    elif name == "LEAKY_RELU":
        parts.append(f"alpha={o.alpha:g}")
    elif name == "CONCATENATION":
        parts.append(f"axis{o.axis}")
    elif name == "TRANSPOSE":
        parts.append(f"{len(t_in[0].shape)}d")
    if dtype is not None:
        parts.insert(0, dtype)
    return name + "(" + ",".join(p for p in parts if p and p != "none") + ")"


def tensor_desc(sg, i):
    t = sg.tensors[i]
    return f"{TYPENAME[t.type]}[{','.join(str(int(d)) for d in t.shape)}]"


def inspect(buf: bytes) -> dict:
    model = schema.ModelT.InitFromPackedBuf(buf, 0)
    sg = model.subgraphs[0]
    return dict(
        ops=[op_code(model, op) for op in sg.operators],
        variants=[op_variant(model, sg, op) for op in sg.operators],
        inputs=[tensor_desc(sg, i) for i in sg.inputs],
        outputs=[tensor_desc(sg, i) for i in sg.outputs],
        n_subgraphs=len(model.subgraphs),
    )


# --------------------------------------------------------------------------
# Sanity check against TensorFlow
# --------------------------------------------------------------------------

def check_against_tf(md: ModelDef, variant: str, buf: bytes) -> str:
    fn, _ = concrete(md)
    rng = np.random.default_rng(md.seed + 1000)
    lo, hi = md.rep_range
    xs = [rng.uniform(lo, hi, sample_shape(s)).astype(np.float32) for s in md.inputs]
    ref = fn(*[tf.constant(x) for x in xs])
    ref = [np.asarray(r) for r in (ref if isinstance(ref, (tuple, list)) else [ref])]
    interp = tf.lite.Interpreter(
        model_content=buf,
        experimental_op_resolver_type=tf.lite.experimental.OpResolverType.BUILTIN_REF)
    interp.allocate_tensors()
    for d, x in zip(interp.get_input_details(), xs):
        if d["dtype"] == np.int8:
            s, z = d["quantization"]
            x = np.clip(np.round(x / s) + z, -128, 127).astype(np.int8)
        interp.set_tensor(d["index"], x.reshape(d["shape"]))
    interp.invoke()
    worst = 0.0
    for d, r in zip(interp.get_output_details(), ref):
        y = interp.get_tensor(d["index"]).astype(np.float32)
        if d["dtype"] == np.int8:
            s, z = d["quantization"]
            y = (y - z) * s
        if y.shape != r.shape:
            raise AssertionError(f"{md.name}/{variant}: output shape {y.shape} != TF {r.shape}")
        rel = float(np.max(np.abs(y - r)) / max(1e-6, float(np.max(np.abs(r)))))
        worst = max(worst, rel)
    limit = 1e-4 if variant == "f32" else 0.15
    if worst > limit:
        raise AssertionError(f"{md.name}/{variant}: max error {worst:.3g} of output range > {limit}")
    return f"{worst:.2g}"


# --------------------------------------------------------------------------
# README
# --------------------------------------------------------------------------

REQUIRED_OPS = [
    "CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "ADD", "SUB", "MUL", "AVERAGE_POOL_2D",
    "MAX_POOL_2D", "SOFTMAX", "LOGISTIC", "TANH", "RELU", "RELU6", "LEAKY_RELU", "HARD_SWISH",
    "RESHAPE", "SQUEEZE", "EXPAND_DIMS", "QUANTIZE", "DEQUANTIZE", "PAD", "PADV2", "MEAN",
    "TRANSPOSE", "CONCATENATION", "STRIDED_SLICE", "SHAPE", "PACK", "MAXIMUM", "MINIMUM",
]

README_HEAD = """\
# micro_rt test models

Small models made with the real TensorFlow Lite converter, for micro_rt's tests.
**This file is generated by `make_models.py`** (edit the text there, not here), except
the sections from "Operator models" on, which `make_models_ops.py` writes.

Regenerate (from the repository root; TensorFlow is a dev-only tool, never a
micro_rt dependency):

    python3 -m venv tfvenv && tfvenv/bin/pip install tensorflow-cpu==2.21.0
    tfvenv/bin/python models/make_models.py

Made with TensorFlow {tf_version} (Keras {keras_version}), numpy {np_version}.  The
script is deterministic (per-model seeds via `keras.utils.set_random_seed`, seeded
representative datasets); two runs gave byte-identical files.

Conventions:

* `*_int8.tflite`: full integer quantization (`Optimize.DEFAULT`, 64-sample
  representative dataset, `TFLITE_BUILTINS_INT8`, int8 input and output).  Conv and
  depthwise weights are per-channel (converter default); FULLY_CONNECTED is
  per-channel unless the row says per-tensor.
* `*_f32.tflite`: the same graph and weights, plain float32 conversion.
* `quant_dequant_int8_floatio.tflite`: int8 ops but float32 input/output.
* Biases are random (an all-zero bias is dropped from FULLY_CONNECTED by the
  converter).  The representative data is uniform in [-1, 1] unless noted
  (activations: [-8, 8]; requantize: [-4, 4]; mobilenet_tiny: [0, 1]).
* Multi-input/-output models keep the order of the Python function's
  arguments/results (checked against TensorFlow).
* Every model is checked against TensorFlow by this script (TFLite reference
  kernels; float models to 1e-4, int8 models to 15% of the output range after
  dequantizing) and runs in the TFLM oracle (`tflite_micro.runtime`, see
  "Running in TFLM" below and `check_models.py`).

## Models

| file | purpose | ops (in graph order, distinct) | inputs -> outputs | bytes |
|---|---|---|---|---|
"""


def readme(results, tflm_report) -> str:
    out = [README_HEAD.format(tf_version=tf.__version__, keras_version=keras.__version__,
                              np_version=np.__version__)]
    total = 0
    for md, variant, fname, info, size in results:
        ops = ", ".join(dict.fromkeys(info["ops"]))
        purpose = md.purpose + (f" ({md.notes})" if md.notes else "")
        io = " ".join(info["inputs"]) + " -> " + " ".join(info["outputs"])
        out.append(f"| `{fname}` | {purpose} | {ops} | {io} | {size} |\n")
        total += size
    out.append(f"\nTotal: {total} bytes in {len(results)} files.\n")

    out.append("\n## Op coverage\n\nOp -> model files (int8 / float32). Option variants seen in "
               "each are listed in the next section.\n\n| op | int8 models | float32 models |\n|---|---|---|\n")
    cover = {}
    for md, variant, fname, info, size in results:
        for op in info["ops"]:
            kind = "f32" if variant == "f32" else "int8"
            cover.setdefault(op, {"int8": [], "f32": []})
            if fname not in cover[op][kind]:
                cover[op][kind].append(fname)
    ops_sorted = [o for o in REQUIRED_OPS if o in cover] + sorted(o for o in cover if o not in REQUIRED_OPS)
    for op in ops_sorted:
        c = cover[op]
        out.append(f"| {op} | {', '.join(f.replace('.tflite', '') for f in c['int8']) or '-'} "
                   f"| {', '.join(f.replace('.tflite', '') for f in c['f32']) or '-'} |\n")
    missing = [o for o in REQUIRED_OPS if o not in cover]
    if missing:
        out.append(f"\nNot covered: {', '.join(missing)}\n")

    out.append("\n## Op variants (options) per model\n\n| file | op variants |\n|---|---|\n")
    for md, variant, fname, info, size in results:
        vs = ", ".join(f"{v}×{n}" if n > 1 else v
                       for v, n in _count(info["variants"]).items())
        out.append(f"| `{fname}` | {vs} |\n")
    out.append(README_TAIL)
    out.append(README_TFLM.format(report=tflm_report.rstrip() if tflm_report else
                                  "(not run: no project venv found when the README was made)"))
    return "".join(out)


def _count(items):
    d = {}
    for i in items:
        d[i] = d.get(i, 0) + 1
    return d


README_TAIL = """
## Builder-made models (`make_builder_models.py`)

Graphs the converter will not emit on request, written with `micro_rt.builder.ModelBuilder`
(`python models/make_builder_models.py`; a test rebuilds them and compares bytes).

| file | purpose |
|---|---|
| `custom_atan.tflite` | custom op `ATAN` with flexbuffer options `{offset: 0.5, taps: [1, 2, 3]}`, then RELU: the custom-op registration story (fails unresolved without `add_custom`) |
| `offline_plan_chain.tflite` | RELU, RELU6, RELU chain on float32[1, 64] with an `OfflineMemoryAllocation` plan that gives each tensor its own 256 bytes (TFLM honours it: 1024-byte head instead of 512) |
| `odd_lifetimes_int8.tflite` | an early tensor kept live across a RELU6 chain until a final CONCATENATION: lifetimes the greedy planner must work around |

## What the converter would not emit, and workarounds used

* **SQUEEZE / EXPAND_DIMS**: with static shapes the converter rewrites both into
  RESHAPE (also with one dynamic dimension for SQUEEZE).  `dynamic_shape_*` uses an
  input with two dynamic dims `(None, None, 4, 8)`; the flatbuffer stores them as
  1, so the model's input shape is `(1, 1, 4, 8)`.
* **SHAPE** (and the int32 STRIDED_SLICE / PACK chain behind it) is constant-folded
  whenever the shape is static; it survives only with a dynamic dimension
  (`dynamic_shape_*`).  SHAPE reads an int8 (or float) tensor and writes int32; the
  shape arithmetic is int32 in the int8 model too.
* **QUANTIZE int8->int8**: produced where tensors with fixed, different output
  scales (LOGISTIC 1/256 zp -128, TANH 1/128 zp 0) meet in one CONCATENATION
  (`requantize_int8`, and one in `quant_dequant_int8_floatio`).  The converter
  also inserts one on its own in `shape_ops_int8`: the input is requantized before
  PAD (PAD and PADV2 read the same input but got different scales).  QUANTIZE
  float->int8 and DEQUANTIZE int8->float come from float input/output types
  (`quant_dequant_int8_floatio`).
* **CONV_2D without bias**: the converter always adds a zero bias tensor to
  CONV_2D (float and int8), so a bias-less CONV_2D cannot be produced; FULLY_CONNECTED
  keeps the bias input absent (-1) when `use_bias=False`.
* **SOFTMAX beta != 1**: `softmax(2*x)` stays MUL + SOFTMAX(beta=1); all SOFTMAX ops
  have beta 1.
* **Fused activations other than RELU / RELU6** (RELU_N1_TO_1, TANH, SIGN_BIT) are not
  emitted from Keras/TF graphs here.
* **DEQUANTIZE in float models** (float16 weights) is not made: TFLM has no float16
  tensors.
* **Dilation together with stride > 1**: Keras `Conv2D` refuses it, so that
  CONV_2D is built with `tf.nn.conv2d` (`conv_variants`).  For DEPTHWISE_CONV_2D
  it is not reachable: Keras `DepthwiseConv2D(strides=2, dilation_rate=2)` comes
  out as PAD + stride-1 dilated DEPTHWISE_CONV_2D + STRIDED_SLICE + ADD (bias), and
  `tf.nn.depthwise_conv2d` refuses stride > 1 with rate > 1.
* **Per-tensor CONV_2D / DEPTHWISE_CONV_2D weights**: not made (only FULLY_CONNECTED
  has per-tensor variants); `_experimental_disable_per_channel` would give them.
* **STRIDED_SLICE ellipsis / new-axis masks** are not produced (the converter
  rewrites `...` and `tf.newaxis` away); begin/end masks, shrink-axis mask and a
  negative stride are covered.
* **MAXIMUM / MINIMUM quantization quirk**: they force one scale on inputs and
  output, and the quantizer pushes the result's range back onto the producers of
  their inputs; a tensor that also feeds other ops gets clipped (seen while
  building `elementwise`, avoided by giving MIN/MAX their own input tensors).
"""


README_TFLM = """
## Running in TFLM

`check_models.py` (project venv, no TensorFlow) loads every model with
`tflite_micro.runtime.Interpreter.from_bytes` (default arena, 10x the model size),
feeds seeded random inputs (int8: full range; float: uniform [-1, 1]), invokes,
reads the arena total from `print_allocations()`, and compares each output with
LiteRT's reference kernels (`OpResolverType.BUILTIN_REF`):

    .venv/bin/python models/check_models.py

Every model loads and runs in TFLM; none had to be dropped (all ops used are in
the TFLM Python interpreter's op resolver).  Two TFLM-vs-LiteRT differences
show up, both TFLM behaviour that micro_rt must reproduce:

* **RELU6 int8 does not requantize in TFLM.**  TFLM's RELU6 prepare computes
  `zero = input zero point`, `six = quantize(6.0, input scale, input zero point)`
  and the kernel clamps the input bytes to [zero, six], ignoring the output's
  scale and zero point; LiteRT rescales to the output quantization.  The
  converter gave the standalone RELU6 a different output scale from the input's
  (input [-8, 8] -> output [0, 6]), so `activations_int8` output 1 differs by up
  to 128 LSB.  RELU (no 6) requantizes in both and matches.  (Fused RELU6 in
  CONV_2D etc. is unaffected.)
* **FULLY_CONNECTED int8 with per-tensor weights** rounds twice in TFLM and once
  in LiteRT, so `anomaly_fc_int8` (and `fully_connected_pt_int8` on other
  inputs) can differ by 1 LSB.

Output of the last run:

```
{report}
```
"""


def tflm_check_report():
    if not TFLM_PYTHON.exists():
        return None
    r = subprocess.run([str(TFLM_PYTHON), str(OUT_DIR / "check_models.py")],
                       capture_output=True, text=True, check=False)
    if r.returncode != 0:
        print(r.stdout, r.stderr, file=sys.stderr)
        raise SystemExit("check_models.py failed: some model does not run in TFLM")
    return r.stdout


# --------------------------------------------------------------------------

def main(argv):
    only = [a for a in argv if not a.startswith("--")]
    write_readme = "--no-readme" not in argv and not only
    results = []
    for md in MODELS:
        if only and md.name not in only:
            continue
        for variant in md.variants:
            buf = convert(md, variant)
            fname = file_name(md, variant)
            (OUT_DIR / fname).write_bytes(buf)
            info = inspect(buf)
            err = check_against_tf(md, variant, buf)
            results.append((md, variant, fname, info, len(buf)))
            print(f"{fname:36s} {len(buf):7d} B  sha256 {hashlib.sha256(buf).hexdigest()[:12]}  "
                  f"err {err:>7s}  {' '.join(info['inputs'])} -> {' '.join(info['outputs'])}")
            print("    " + ", ".join(info["variants"]))
    if write_readme:
        path = OUT_DIR / "README.md"
        old = path.read_text() if path.exists() else ""
        kept = old[old.index(OPS_SECTION):] if OPS_SECTION in old else ""
        path.write_text(readme(results, tflm_check_report()) + ("\n" + kept if kept else ""))
        print("wrote", path)


if __name__ == "__main__":
    main(sys.argv[1:])
