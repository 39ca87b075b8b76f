#!/usr/bin/env python3
"""Build converter-made test models for the rest of TFLM's builtin operators (issue 12) and
for control flow and resource variables (issue 13) into models/ops/.

Dev-only tool (TensorFlow is never a micro_rt dependency).  From the repository root, with
TensorFlow in a venv outside the repository and micro_rt's own venv in .venv:

    python3 -m venv /work/tfvenv && /work/tfvenv/bin/pip install tensorflow-cpu==2.21.0
    /work/tfvenv/bin/python models/make_models_ops.py            # all models + README section
    /work/tfvenv/bin/python models/make_models_ops.py gather     # only these, README untouched

Each model groups related operators.  A model comes in every variant whose tensor type TFLM's
kernels accept for its ops and the converter can produce: `_f32` (float), `_int8` (full
integer, int8 in/out), `_int16x8` (16-bit activations, 8-bit weights), `_int32` / `_int64` /
`_bool` (graphs that are integer or boolean by nature, converted without quantization) and
`_dynamic_int8` (dynamic-range quantization: int8 weights, float activations).  The ops a
variant holds depend on the variant: an op is left out of a variant when TFLM refuses that
type or the converter will not produce it (see README.md, "Operator coverage in TFLM").

For every file the script checks that micro_rt's reader finds the ops it was meant to hold in
the intended type (the converter likes to fold, fuse and fall back to float), compares the
outputs with TensorFlow itself, runs the model in the TFLM oracle (tflite-micro, one child
process per model) and compares the oracle with LiteRT's reference kernels.  Deterministic:
per-model seeds (`keras.utils.set_random_seed`, seeded initializers), seeded representative
data; two runs give byte-identical files.
"""
from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

import make_models as mm   # shared conventions: seeded initializers, TF import, paths
from make_models import L, W, tf
from ops_report import Result, check_model, convert, write_readme

# XlaDynamicUpdateSlice is the TF op the converter turns into DYNAMIC_UPDATE_SLICE.
from tensorflow.compiler.tf2xla.python.xla import dynamic_update_slice  # noqa: E402


@dataclass
class In:
    """One graph input: shape, dtype and the range its sample data is drawn from."""
    shape: tuple
    dtype: tf.DType = tf.float32
    lo: float = -1.0
    hi: float = 1.0

    def spec(self) -> tf.TensorSpec:
        return tf.TensorSpec(self.shape, self.dtype)

    def sample(self, rng: np.random.Generator) -> np.ndarray:
        shape = [1 if d is None else d for d in self.shape]
        if self.dtype == tf.bool:
            return rng.integers(0, 2, shape).astype(np.bool_)
        if self.dtype.is_integer:
            return rng.integers(int(self.lo), int(self.hi) + 1, shape).astype(self.dtype.as_numpy_dtype)
        return rng.uniform(self.lo, self.hi, shape).astype(np.float32)


@dataclass
class Graph:
    """What a model builder returns for one variant."""
    fn: Callable                    # fn(*inputs) -> tensor or tuple (a tf.function for modules)
    inputs: list                    # list of In
    expect: list                    # "OP" (in the variant's type) or "OP:TYPE", in any subgraph
    module: Optional[tf.Module] = None   # set for models with variables: steps share state


@dataclass
class OpModel:
    name: str
    purpose: str
    build: Callable[[str], Graph]   # variant -> Graph
    seed: int
    variants: tuple
    steps: int = 3                  # invokes per check (state carries over between them)
    refusal: str = ""               # set: the oracle must refuse the model with this text
    tf_deviation: str = ""          # set: why TFLM's outputs differ from TensorFlow's (recorded)
    per_tensor: bool = False        # quantize weights per tensor, not per channel


TF_TYPE = {"f32": tf.float32, "int8": tf.float32, "int16x8": tf.float32, "int32": tf.int32,
           "int64": tf.int64, "bool": tf.bool, "dynamic_int8": tf.float32}


def seeded(lo: float, hi: float, *shape) -> tf.Tensor:
    """A constant drawn from the model's seeded counter (weights that are not Keras layers)."""
    rng = np.random.default_rng(mm._next_seed())
    return tf.constant(rng.uniform(lo, hi, shape).astype(np.float32))


# --------------------------------------------------------------------------- model builders

def build_unary(v: str) -> Graph:
    x, p = In((1, 2, 8), lo=-3, hi=3), In((1, 2, 8), lo=0.1, hi=4)
    if v == "f32":
        def fn(x, p):
            return (tf.abs(x), tf.math.ceil(x), tf.math.cos(x), tf.nn.elu(x), tf.exp(x),
                    tf.floor(x), tf.math.log(p), -x, tf.round(x), tf.math.rsqrt(p), tf.sin(x),
                    tf.sqrt(p), tf.square(x), tf.nn.log_softmax(x), tf.math.l2_normalize(x, -1))
        ops = ["ABS", "CEIL", "COS", "ELU", "EXP", "FLOOR", "LOG", "NEG", "ROUND", "RSQRT", "SIN",
               "SQRT", "SQUARE", "LOG_SOFTMAX", "L2_NORMALIZATION"]
    elif v == "int8":
        def fn(x, p):
            return (tf.abs(x), tf.math.rsqrt(p), tf.nn.log_softmax(x), tf.math.l2_normalize(x, -1))
        ops = ["ABS", "RSQRT", "LOG_SOFTMAX", "L2_NORMALIZATION"]
    else:   # int16x8: the converter quantizes only these two of the unary ops to 16 bits
        def fn(x, p):
            return tf.abs(x), tf.math.rsqrt(p)
        ops = ["ABS", "RSQRT"]
    return Graph(fn, [x, p], ops)


def build_binary(v: str) -> Graph:
    kind = TF_TYPE[v]
    pos = kind.is_integer
    a = In((1, 4, 3), kind, lo=1 if pos else -2, hi=9 if pos else 2)
    b = In((1, 4, 3), kind, lo=1 if pos else 0.5, hi=5 if pos else 2)
    neg_alpha = -seeded(-0.5, 0.5, 1, 3) if v != "int32" else None   # PRELU alpha (per channel)
    if v == "int32":   # integer DIV is TF's Div (truncating); `/` would cast to float
        return Graph(lambda a, b: (tf.raw_ops.Div(x=a, y=b), tf.math.squared_difference(a, b)),
                     [a, b], ["DIV", "SQUARED_DIFFERENCE"])

    def prelu(x):   # the Keras PReLU pattern the converter fuses (alpha rank = input rank - 1)
        return tf.nn.relu(x) + tf.nn.relu(-x) * neg_alpha
    if v == "f32":
        c = In((1, 4, 3), lo=-2, hi=2)
        return Graph(lambda a, b, c: (a / b, tf.math.floordiv(a, b), tf.math.floormod(a, b),
                                      tf.math.squared_difference(a, c), tf.add_n([a, b, c]),
                                      prelu(a)),
                     [a, b, c], ["DIV", "FLOOR_DIV", "FLOOR_MOD", "SQUARED_DIFFERENCE", "ADD_N",
                                 "PRELU"])
    if v == "int8":
        return Graph(lambda a, b: (a / b, tf.math.squared_difference(a, b), prelu(a)),
                     [a, b], ["DIV", "SQUARED_DIFFERENCE", "PRELU"])
    return Graph(lambda a, b: tf.math.squared_difference(a, b), [a, b], ["SQUARED_DIFFERENCE"])


def build_compare(v: str) -> Graph:
    kind = TF_TYPE[v]
    if v == "bool":
        a, b = In((2, 4), tf.bool), In((2, 4), tf.bool)
        return Graph(lambda a, b: (tf.equal(a, b), tf.not_equal(a, b)), [a, b], ["EQUAL", "NOT_EQUAL"])
    ints = kind.is_integer
    a = In((2, 4), kind, lo=-3 if ints else -1, hi=3 if ints else 1)
    b = In((2, 4), kind, lo=-3 if ints else -1, hi=3 if ints else 1)
    cmp = ["EQUAL", "NOT_EQUAL", "GREATER", "GREATER_EQUAL", "LESS", "LESS_EQUAL"]
    if ints:
        return Graph(lambda a, b: (tf.equal(a, b), tf.not_equal(a, b), a > b, a >= b, a < b, a <= b),
                     [a, b], cmp)
    if v == "f32":
        def fn(a, b):
            return (tf.equal(a, b), tf.not_equal(a, b), a > b, a >= b, a < b, a <= b,
                    tf.where(a > b, a, b[:1]))      # broadcast: SELECT_V2 (same shapes: SELECT)
        return Graph(fn, [a, b], cmp + ["SELECT_V2"])

    # int8: comparisons are quantized only when their inputs come from int8 ops (a compare
    # of the graph inputs stays float behind DEQUANTIZE), and NOT_EQUAL stays float anyway.
    def fn(a, b):
        s, d = a + b, a - b
        return (tf.equal(s, d), s > d, s >= d, s < d, s <= d, tf.where(s > d, s, d[:1]))
    return Graph(fn, [a, b], ["EQUAL", "GREATER", "GREATER_EQUAL", "LESS", "LESS_EQUAL", "SELECT_V2"])


def build_logical(v: str) -> Graph:
    a, b = In((2, 4), tf.bool), In((2, 4), tf.bool)
    return Graph(lambda a, b: (tf.logical_and(a, b), tf.logical_or(a, b), tf.logical_not(a),
                               tf.reduce_all(a, axis=1), tf.reduce_all(b, axis=[0, 1], keepdims=True)),
                 [a, b], ["LOGICAL_AND", "LOGICAL_OR", "LOGICAL_NOT", "REDUCE_ALL"])


def build_reduce(v: str) -> Graph:
    x = In((1, 4, 4, 3))
    if v == "int16x8":
        # TFLM's REDUCE_MAX/REDUCE_MIN refuse int16.  The 16x8 quantizer gives SUM its input's
        # scale, so a sum outside the input's range saturates: sum a tensor calibrated to
        # [-4, 4] that holds values in [-1, 1] (4-term sums fit).
        def fn(x):
            wide = tf.concat([x, 4.0 * x[..., :1]], axis=-1)
            return (tf.reduce_sum(wide[..., :3], axis=2),
                    tf.reduce_sum(wide[..., :3], axis=1, keepdims=True))
        return Graph(fn, [x], ["SUM"])
    return Graph(lambda x: (tf.reduce_max(x, axis=1), tf.reduce_min(x, axis=[1, 2], keepdims=True),
                            tf.reduce_sum(x, axis=2), tf.reduce_sum(x, axis=[1, 2], keepdims=True),
                            tf.reduce_max(x, axis=-1, keepdims=True)),
                 [x], ["REDUCE_MAX", "REDUCE_MIN", "SUM"])


def build_arg_min_max(v: str) -> Graph:
    return Graph(lambda x: (tf.argmax(x, axis=1, output_type=tf.int32),
                            tf.argmin(x, axis=2, output_type=tf.int32),
                            tf.argmax(x, axis=-1, output_type=tf.int32)),
                 [In((1, 4, 5))], ["ARG_MAX", "ARG_MIN"])


def build_arg_max_int64(v: str) -> Graph:
    return Graph(lambda x: tf.argmax(x, axis=1), [In((1, 4, 5))], ["ARG_MAX"])


def build_batch_matmul(v: str) -> Graph:
    a, b, c = In((2, 3, 4)), In((2, 4, 5)), In((1, 5, 4))
    return Graph(lambda a, b, c: (tf.linalg.matmul(a, b),
                                  tf.linalg.matmul(a, c, transpose_b=True),     # broadcast batch
                                  tf.linalg.matmul(b, a, transpose_a=True, transpose_b=True)),
                 [a, b, c], ["BATCH_MATMUL"])


def build_space_depth(v: str) -> Graph:
    x, y = In((1, 4, 6, 4)), In((4, 2, 3, 2))
    return Graph(lambda x, y: (tf.nn.depth_to_space(x, 2), tf.nn.space_to_depth(x, 2),
                               tf.space_to_batch_nd(x, [2, 2], [[0, 0], [1, 1]]),
                               tf.batch_to_space(y, [2, 2], [[0, 0], [1, 0]])),
                 [x, y], ["DEPTH_TO_SPACE", "SPACE_TO_DEPTH", "SPACE_TO_BATCH_ND", "BATCH_TO_SPACE_ND"])


def build_broadcast(v: str) -> Graph:
    kind = TF_TYPE[v]
    x = In((1, 3), kind, lo=-5, hi=5)
    if v in ("int32", "int64"):
        s1, s2 = In((3,), kind, lo=1, hi=1), In((2,), kind, lo=1, hi=4)   # shapes [1,1,1] and [k,m]
        return Graph(lambda x, s1, s2: (tf.broadcast_to(x, [2, 4, 3]), tf.broadcast_dynamic_shape(s1, s2)),
                     [x, s1, s2], ["BROADCAST_TO", "BROADCAST_ARGS"])
    return Graph(lambda x: (tf.broadcast_to(x, [2, 4, 3]), tf.broadcast_to(x[0], [4, 3])),
                 [x], ["BROADCAST_TO"])


def build_cumsum(v: str) -> Graph:
    return Graph(lambda x: (tf.cumsum(x, axis=1), tf.cumsum(x, axis=1, exclusive=True),
                            tf.cumsum(x, axis=2, reverse=True),
                            tf.cumsum(x, axis=-1, exclusive=True, reverse=True)),
                 [In((1, 4, 5))], ["CUMSUM"])


def build_slicing(v: str) -> Graph:
    kind = TF_TYPE[v]
    x = In((2, 4, 6), kind, lo=-9, hi=9)

    def reverse(x):
        return tf.reverse(x, [1]), tf.reverse(x, [0, 1])

    def slices(x):   # SLICE with size -1, SPLIT, SPLIT_V, UNPACK
        return (tf.slice(x, [0, 1, 1], [2, 2, -1]), *tf.split(x, 2, axis=1),
                *tf.split(x, [1, 3, 2], axis=2), *tf.unstack(x, axis=0))
    if v == "int64":                  # of these TFLM takes int64 only in REVERSE_V2
        return Graph(reverse, [x], ["REVERSE_V2"])
    if v == "bool":                   # ... and bool in REVERSE_V2 and SLICE
        return Graph(lambda x: (*reverse(x), tf.slice(x, [0, 1, 1], [2, 2, -1])), [x],
                     ["REVERSE_V2", "SLICE"])
    ops = ["REVERSE_V2", "SLICE", "SPLIT", "SPLIT_V", "UNPACK"]
    if v in ("f32", "int32"):         # the converter keeps int8 DYNAMIC_UPDATE_SLICE float
        u = In((1, 2, 3), kind, lo=-9, hi=9)
        i = In((3,), tf.int32, lo=0, hi=1)
        return Graph(lambda x, u, i: (*reverse(x), *slices(x), dynamic_update_slice(x, u, i)),
                     [x, u, i], ops + ["DYNAMIC_UPDATE_SLICE"])
    return Graph(lambda x: (*reverse(x), *slices(x)), [x], ops)


def embedding_table(rows: int, cols: int) -> tf.Tensor:
    return seeded(-1, 1, rows, cols)


@tf.function(experimental_implements="embedding_matmul", autograph=False)
def embedding_matmul(table, ids):
    """The composite the converter turns into EMBEDDING_LOOKUP (tf.gather gives GATHER)."""
    onehot = tf.cast(tf.equal(tf.expand_dims(ids, 1), tf.range(tf.shape(table)[0])), table.dtype)
    return tf.matmul(onehot, table)


def build_gather(v: str) -> Graph:
    x = In((2, 4, 5))
    i = In((3,), tf.int32, lo=0, hi=3)
    j = In((2, 3), tf.int32, lo=0, hi=4)
    k = In((2, 2), tf.int32, lo=0, hi=1)
    ids = In((3,), tf.int32, lo=0, hi=7)
    table = embedding_table(8, 4)
    return Graph(lambda x, i, j, k, ids: (tf.gather(x, i, axis=1), tf.gather(x, j, axis=2, batch_dims=1),
                                          tf.gather(x[0], i), tf.gather_nd(x, k),
                                          embedding_matmul(table, ids)),
                 [x, i, j, k, ids], ["GATHER", "GATHER_ND", "EMBEDDING_LOOKUP"])


def build_embedding_hybrid(v: str) -> Graph:
    # Dynamic-range quantization leaves tables under 1024 elements float: 64 x 16.
    table = embedding_table(64, 16)
    return Graph(lambda ids: embedding_matmul(table, ids), [In((4,), tf.int32, lo=0, hi=63)],
                 ["EMBEDDING_LOOKUP:FLOAT32"])


def build_fill_zeros(v: str) -> Graph:
    # TFLM's FILL wants constant dims (it refuses a dims tensor computed at run time, see
    # refuse_fill_dynamic_dims); the value comes from an input so nothing folds.
    kind = TF_TYPE[v]
    if v in ("int32", "int64"):
        x = In((None, 3), kind, lo=-5, hi=5)        # dynamic: ZEROS_LIKE of a static shape folds
        if v == "int64":                            # TFLM's FILL refuses int64 values
            return Graph(lambda x: tf.zeros_like(x), [x], ["ZEROS_LIKE"])
        return Graph(lambda s, x: (tf.fill([2, 3], s), tf.zeros_like(x)),
                     [In((), kind, lo=-5, hi=5), x], ["FILL", "ZEROS_LIKE"])
    if v == "int8":   # the converter keeps an int8 ZEROS_LIKE float; FILL's value is quantized
        return Graph(lambda s: tf.fill([2, 3], s), [In(())], ["FILL"])
    return Graph(lambda s, x: (tf.fill([2, 3], s), tf.zeros_like(x)), [In(()), In((None, 3))],
                 ["FILL", "ZEROS_LIKE"])


def build_fill_dynamic_dims(v: str) -> Graph:
    return Graph(lambda x: tf.fill(tf.shape(x), tf.reduce_max(x)), [In((None, 3))], ["FILL"])


def build_mirror_pad(v: str) -> Graph:
    pads = [[0, 0], [1, 2], [2, 1], [0, 0]]
    return Graph(lambda x: (tf.pad(x, pads, mode="REFLECT"), tf.pad(x, pads, mode="SYMMETRIC")),
                 [In((1, 4, 4, 2))], ["MIRROR_PAD"])


def build_resize(v: str) -> Graph:
    img = tf.compat.v1.image
    nn = [lambda x: img.resize_nearest_neighbor(x, (6, 8)),
          lambda x: img.resize_nearest_neighbor(x, (6, 8), align_corners=True),
          lambda x: img.resize_nearest_neighbor(x, (5, 7), half_pixel_centers=True)]
    bl = [lambda x: img.resize_bilinear(x, (6, 8)),
          lambda x: img.resize_bilinear(x, (6, 8), align_corners=True),
          lambda x: img.resize_bilinear(x, (5, 7), half_pixel_centers=True)]
    if v == "int16x8":   # TFLM's RESIZE_BILINEAR refuses int16
        return Graph(lambda x: tuple(f(x) for f in nn), [In((1, 3, 4, 2))], ["RESIZE_NEAREST_NEIGHBOR"])
    return Graph(lambda x: tuple(f(x) for f in bl + nn), [In((1, 3, 4, 2))],
                 ["RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR"])


def build_transpose_conv(v: str) -> Graph:
    t1 = L.Conv2DTranspose(4, 3, strides=2, padding="same", **W())
    t2 = L.Conv2DTranspose(3, 2, strides=1, padding="valid", **W(bias=False))
    t3 = L.Conv2DTranspose(2, 3, strides=(2, 1), padding="valid", **W())
    t4 = L.Conv2DTranspose(2, 3, strides=2, padding="same", activation="relu", **W())
    return Graph(lambda x: (t1(x), t2(x), t3(x), t4(x)), [In((1, 4, 4, 3))], ["TRANSPOSE_CONV"])


def build_if(v: str) -> Graph:
    def fn(x, p):
        a = tf.cond(p[0], lambda: tf.nn.relu(x) * 2.0, lambda: tf.tanh(x) - 0.5)    # predicate input
        b = tf.cond(tf.reduce_sum(x) > 0.0, lambda: x * 0.5, lambda: -x)            # computed
        return a, b
    return Graph(fn, [In((1, 6), lo=-2, hi=2), In((1,), tf.bool)], ["IF:FLOAT32"])


def build_while(v: str) -> Graph:
    def fn(x, n):
        def body(i, acc):
            return i + 1, acc * 0.5 + 0.25
        _, acc = tf.while_loop(lambda i, acc: i < n[0], body, [tf.constant(0), x])   # n from input
        (halved,) = tf.while_loop(lambda h: tf.reduce_max(tf.abs(h)) > 0.5,          # until small
                                  lambda h: (h * 0.5,), [x])
        return acc, halved
    return Graph(fn, [In((1, 4), lo=-2, hi=2), In((1,), tf.int32, lo=0, hi=5)], ["WHILE:INT32", "WHILE:FLOAT32"])


class Counter(tf.Module):
    """A variable initialised from a non-zero constant: the converter emits the initializer
    as its own subgraph, run once by CALL_ONCE; each invoke reads and updates the variable."""

    def __init__(self):
        super().__init__()
        self.v = tf.Variable(seeded(-1, 1, 1, 4), name="counter")

    @tf.function(input_signature=[tf.TensorSpec((1, 4), tf.float32)], autograph=False)
    def __call__(self, x):
        y = x * self.v
        self.v.assign(self.v * -1.0)   # flips sign: calibration sees the whole range
        return y


class Stream(tf.Module):
    """Streaming model: the last 4 frames live in a variable; each invoke shifts one in."""

    def __init__(self):
        super().__init__()
        self.frames = tf.Variable(tf.zeros((1, 4, 3)), name="frames")
        self.w = seeded(-1, 1, 4, 3)

    @tf.function(input_signature=[tf.TensorSpec((1, 1, 3), tf.float32)], autograph=False)
    def __call__(self, x):
        window = tf.concat([self.frames[:, 1:, :], x], axis=1)
        self.frames.assign(window)
        return tf.reduce_sum(window * self.w, axis=1)


def build_module(cls, shape) -> Callable[[str], Graph]:
    def build(v: str) -> Graph:
        m = cls()
        kinds = ["CALL_ONCE:-", "VAR_HANDLE:RESOURCE", "READ_VARIABLE", "ASSIGN_VARIABLE"]
        return Graph(m.__call__, [In(shape)], kinds, module=m)
    return build


MODELS = [
    OpModel("unary", "elementwise math of one input (LOG/SQRT/RSQRT on a positive input)",
            build_unary, 201, ("f32", "int8", "int16x8")),
    OpModel("binary", "DIV, FLOOR_DIV, FLOOR_MOD, SQUARED_DIFFERENCE, ADD_N (3 inputs), PRELU "
            "(per-channel alpha)", build_binary, 202, ("f32", "int8", "int16x8", "int32")),
    OpModel("compare", "EQUAL, NOT_EQUAL, GREATER(_EQUAL), LESS(_EQUAL) -> bool; SELECT_V2 "
            "with a broadcast operand", build_compare, 203, ("f32", "int8", "int32", "int64", "bool")),
    OpModel("logical", "LOGICAL_AND/OR/NOT, REDUCE_ALL (one axis; all axes with keepdims)",
            build_logical, 204, ("bool",)),
    OpModel("reduce", "REDUCE_MAX, REDUCE_MIN, SUM over one or two axes, keepdims false/true",
            build_reduce, 205, ("f32", "int8", "int16x8")),
    OpModel("arg_min_max", "ARG_MAX / ARG_MIN with int32 output, axes 1, 2, -1",
            build_arg_min_max, 206, ("f32", "int8")),
    OpModel("refuse_arg_max_int64", "REFUSAL: tf.argmax's default int64 output; TFLM refuses "
            "it at invoke", build_arg_max_int64, 207, ("f32",),
            refusal="Only int32_t are supported currently, got INT64."),
    OpModel("batch_matmul", "BATCH_MATMUL plain, adj_y with a broadcast batch, adj_x+adj_y",
            build_batch_matmul, 208, ("f32", "int8", "int16x8")),
    OpModel("space_depth", "DEPTH_TO_SPACE, SPACE_TO_DEPTH (block 2), SPACE_TO_BATCH_ND with "
            "padding, BATCH_TO_SPACE_ND with crops", build_space_depth, 209, ("f32", "int8")),
    OpModel("broadcast", "BROADCAST_TO (rank 2->3, 1->2); BROADCAST_ARGS of two shape inputs",
            build_broadcast, 210, ("f32", "int8", "int16x8", "int32", "int64", "bool")),
    OpModel("cumsum", "CUMSUM plain, exclusive, reverse, exclusive+reverse, axes 1, 2, -1",
            build_cumsum, 211, ("f32",)),
    OpModel("slicing", "SLICE (size -1), REVERSE_V2 (one and two axes), SPLIT, SPLIT_V, UNPACK, "
            "DYNAMIC_UPDATE_SLICE (start from an input)", build_slicing, 212,
            ("f32", "int8", "int16x8", "int32", "int64", "bool")),
    OpModel("gather", "GATHER (axis 1, axis 2 with batch_dims 1, axis 0), GATHER_ND, "
            "EMBEDDING_LOOKUP; all indices are inputs", build_gather, 213, ("f32", "int8")),
    OpModel("embedding_hybrid", "EMBEDDING_LOOKUP of an int8 table (symmetric, one scale) into "
            "float32: dynamic-range quantization", build_embedding_hybrid, 214, ("dynamic_int8",),
            per_tensor=True),
    OpModel("embedding_hybrid_per_row", "the same with the converter's default per-row table "
            "scales", build_embedding_hybrid, 214, ("dynamic_int8",),
            tf_deviation="TFLM's hybrid EMBEDDING_LOOKUP dequantizes every row with the first "
            "row's scale (it reads params.scale), so rows other than row 0 come out scaled wrong"),
    OpModel("fill_zeros", "FILL (constant dims, value from an input), ZEROS_LIKE (dynamic first dim)",
            build_fill_zeros, 215, ("f32", "int8", "int32", "int64")),
    OpModel("refuse_fill_dynamic_dims", "REFUSAL: FILL whose dims come from SHAPE at run time "
            "(tf.fill(tf.shape(x), v)); TFLM refuses it in prepare", build_fill_dynamic_dims, 223,
            ("f32",), steps=1, refusal="Non-constant >dims< tensor is not supported"),
    OpModel("mirror_pad", "MIRROR_PAD REFLECT and SYMMETRIC, uneven padding",
            build_mirror_pad, 216, ("f32", "int8")),
    OpModel("resize", "RESIZE_BILINEAR / RESIZE_NEAREST_NEIGHBOR: plain, align_corners, "
            "half_pixel_centers", build_resize, 217, ("f32", "int8", "int16x8")),
    OpModel("transpose_conv", "TRANSPOSE_CONV: stride 2 SAME bias; stride 1 VALID no bias; "
            "stride 2x1 VALID; stride 2 SAME + RELU", build_transpose_conv, 218, ("f32", "int8", "int16x8")),
    OpModel("control_if", "IF twice: predicate from a bool input, and from SUM > 0",
            build_if, 219, ("f32", "int8"), steps=4),
    OpModel("control_while", "WHILE twice: trip count from an int32 input; loop until "
            "max|x| <= 0.5", build_while, 220, ("f32", "int8"), steps=4),
    OpModel("call_once_var", "CALL_ONCE initializer subgraph; a variable read, used and "
            "updated every invoke", build_module(Counter, (1, 4)), 221, ("f32", "int8"), steps=4),
    OpModel("stream_buffer", "streaming: a 4-frame buffer in a resource variable "
            "(VAR_HANDLE/READ_VARIABLE/ASSIGN_VARIABLE), CALL_ONCE zero init",
            build_module(Stream, (1, 1, 3)), 222, ("f32", "int8"), steps=5),
]


def build_one(name: str) -> None:
    """Child process: convert and check every variant of one model; one JSON line each.

    One process per model, because the converter names control-flow subgraphs after
    TensorFlow's process-wide function counter: in a shared process a model's bytes would
    depend on which models were built before it."""
    m = next(m for m in MODELS if m.name == name)
    for v in m.variants:
        data = convert(m, v)
        r = check_model(m, v, data)
        print("RESULT " + json.dumps({**{k: val for k, val in vars(r).items() if k != "model"},
                                      "sha256": hashlib.sha256(data).hexdigest()}), flush=True)


def main(argv: list[str]) -> int:
    if argv[:1] == ["--model"]:
        build_one(argv[1])
        return 0
    only = [a for a in argv if not a.startswith("--")]
    mm.OUT_DIR.joinpath("ops").mkdir(exist_ok=True)
    results = []
    for m in MODELS:
        if only and m.name not in only:
            continue
        r = subprocess.run([sys.executable, __file__, "--model", m.name], capture_output=True, text=True)
        if r.returncode != 0:
            sys.stderr.write(r.stderr[-4000:])
            raise SystemExit(f"{m.name}: conversion or checks failed")
        for line in r.stdout.splitlines():
            if line.startswith("RESULT "):
                fields = json.loads(line[len("RESULT "):])
                sha = fields.pop("sha256")
                results.append(Result(model=m, **fields))
                print(f"{fields['file']:44s} {fields['size']:6d} B  sha256 {sha[:12]}  "
                      f"TF err {fields['tf_error']}  TFLM {fields['oracle'][:60]}", flush=True)
    if not only and "--no-readme" not in argv:
        write_readme(MODELS, results)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
