"""Kernels-A: CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED, AVERAGE/MAX_POOL_2D, SOFTMAX, MEAN,
bit-exact against the tflite-micro oracle (TFLM's reference kernels).

* single-op models (ModelBuilder) covering the options the converter emits, run through
  micro_rt.Interpreter and the oracle on the same inputs;
* real models with every tensor preserved on both sides: each operator's output must equal
  the oracle's (whole-model outputs against the oracle are test_oracle_models.py's);
* the persistent and scratch bytes the kernels ask for, read from the interpreter's arena.
"""
from __future__ import annotations

import numpy as np
import pytest

from conftest import SHARED_MODELS, oracle_models, shared_model, shared_models
from kernel_cases import (assert_ops_match_oracle, assert_single_op_matches_oracle, f32, i32,
                          kernel_persistent, q8, scratch_sizes, single_op)
from micro_rt import Interpreter
from micro_rt.kernels.padding import compute_out_size

# ----------------------------------------------------------------------------- single-op models


def conv_model(rng, dtype="int8", in_shape=(1, 9, 11, 3), oc=4, k=(3, 3), stride=(1, 1),
               dil=(1, 1), padding="SAME", act="NONE", per_channel=True, bias=True,
               depthwise=False, mult=1):
    n, h, w, c = in_shape
    kh, kw = k
    if depthwise:
        oc = c * mult
        fshape, qdim = (1, kh, kw, oc), 3
    else:
        fshape, qdim = (oc, kh, kw, c), 0
    oh = compute_out_size(padding, h, kh, stride[0], dil[0])
    ow = compute_out_size(padding, w, kw, stride[1], dil[1])
    if dtype == "float32":
        x = f32(in_shape)
        f = f32(fshape, data=rng.normal(0, 0.5, fshape))
        bi = f32((oc,), data=rng.normal(0, 1, oc)) if bias else None
        y = f32((n, oh, ow, oc))
    else:
        in_scale, in_zp = float(rng.uniform(0.01, 0.1)), int(rng.integers(-20, 20))
        fs = rng.uniform(0.002, 0.02, oc if per_channel else 1).astype(np.float32)
        x = q8(in_shape, in_scale, in_zp)
        f = q8(fshape, list(fs), [0] * fs.size, qdim=qdim, data=rng.integers(-127, 128, fshape))
        bs = (np.float32(in_scale) * fs).astype(np.float32)
        bi = i32((oc,), scale=list(bs), zp=[0] * bs.size,
                 data=rng.integers(-3000, 3000, oc)) if bias else None
        y = q8((n, oh, ow, oc), float(rng.uniform(0.05, 0.5)), int(rng.integers(-30, 30)))
    options = {"padding": padding, "stride_h": stride[0], "stride_w": stride[1],
               "dilation_h_factor": dil[0], "dilation_w_factor": dil[1],
               "fused_activation_function": act}
    if depthwise:
        options["depth_multiplier"] = mult
    return single_op("DEPTHWISE_CONV_2D" if depthwise else "CONV_2D",
                     [x, f, bi] if bias else [x, f], y, options)


def fc_model(rng, dtype="int8", in_shape=(2, 10), oc=5, act="NONE", per_channel=False,
             bias=True, keep_num_dims=False):
    d = in_shape[-1]
    out_shape = tuple(in_shape[:-1]) + (oc,) if keep_num_dims else (int(np.prod(in_shape[:-1])), oc)
    if dtype == "float32":
        x = f32(in_shape)
        f = f32((oc, d), data=rng.normal(0, 0.5, (oc, d)))
        bi = f32((oc,), data=rng.normal(0, 1, oc)) if bias else None
        y = f32(out_shape)
    else:
        in_scale, in_zp = float(rng.uniform(0.01, 0.1)), int(rng.integers(-20, 20))
        fs = rng.uniform(0.002, 0.02, oc if per_channel else 1).astype(np.float32)
        x = q8(in_shape, in_scale, in_zp)
        f = q8((oc, d), list(fs), [0] * fs.size, data=rng.integers(-127, 128, (oc, d)))
        bs = (np.float32(in_scale) * fs).astype(np.float32)
        bi = i32((oc,), scale=list(bs), zp=[0] * bs.size,
                 data=rng.integers(-3000, 3000, oc)) if bias else None
        y = q8(out_shape, float(rng.uniform(0.05, 0.5)), int(rng.integers(-30, 30)))
    # Without bias the operator keeps an omitted (-1) third input, as the converter writes it.
    return single_op("FULLY_CONNECTED", [x, f, bi], y,
                     {"fused_activation_function": act, "keep_num_dims": keep_num_dims})


def pool_model(rng, kind="AVERAGE_POOL_2D", dtype="int8", in_shape=(1, 9, 10, 3), k=(3, 3),
               stride=(2, 2), padding="SAME", act="NONE"):
    n, h, w, c = in_shape
    oh = compute_out_size(padding, h, k[0], stride[0])
    ow = compute_out_size(padding, w, k[1], stride[1])
    if dtype == "float32":
        x, y = f32(in_shape), f32((n, oh, ow, c))
    else:
        scale, zp = float(rng.uniform(0.01, 0.1)), int(rng.integers(-20, 20))
        x, y = q8(in_shape, scale, zp), q8((n, oh, ow, c), scale, zp)
    return single_op(kind, [x], y, {"padding": padding, "stride_h": stride[0], "stride_w": stride[1],
                                    "filter_height": k[0], "filter_width": k[1],
                                    "fused_activation_function": act})


def softmax_model(rng, dtype="int8", out_dtype=None, shape=(2, 7), beta=1.0, in_scale=None):
    out_dtype = out_dtype or dtype
    if dtype == "float32":
        x, y = f32(shape), f32(shape)
    else:
        x = q8(shape, in_scale or float(rng.uniform(0.02, 0.3)), int(rng.integers(-20, 20)))
        if out_dtype == "int16":
            y = dict(shape=shape, type="INT16", scale=1.0 / 65536, zp=-32768)
        else:
            y = q8(shape, 1.0 / 256, -128)
    return single_op("SOFTMAX", [x], y, {"beta": beta})


def mean_model(rng, dtype="int8", in_shape=(1, 5, 6, 4), axis=(1, 2), keep_dims=True,
               same_quant=False):
    ax = [a + len(in_shape) if a < 0 else a for a in axis]
    out_shape = tuple(1 if i in ax else d for i, d in enumerate(in_shape)) if keep_dims else \
        tuple(d for i, d in enumerate(in_shape) if i not in ax)
    if dtype == "float32":
        x, y = f32(in_shape), f32(out_shape)
    else:
        qi = (float(rng.uniform(0.01, 0.1)), int(rng.integers(-20, 20)))
        qo = qi if same_quant else (float(rng.uniform(0.01, 0.1)), int(rng.integers(-20, 20)))
        x, y = q8(in_shape, *qi), q8(out_shape, *qo)
    return single_op("MEAN", [x, i32((len(axis),), data=np.array(axis))], y, {"keep_dims": keep_dims})


def _single_op_cases():
    cases = []
    for dt in ("int8", "float32"):
        for pad in ("SAME", "VALID"):
            for stride, dil in (((1, 1), (1, 1)), ((2, 2), (1, 1)), ((2, 1), (1, 1)), ((1, 1), (2, 2)),
                                ((1, 2), (2, 1))):
                cases.append(("conv", dict(dtype=dt, padding=pad, stride=stride, dil=dil)))
                cases.append(("dw", dict(dtype=dt, padding=pad, stride=stride, dil=dil, depthwise=True)))
        for act in ("RELU", "RELU6", "RELU_N1_TO_1"):
            cases.append(("conv", dict(dtype=dt, act=act)))
            cases.append(("dw", dict(dtype=dt, act=act, depthwise=True)))
            cases.append(("fc", dict(dtype=dt, act=act)))
        cases.append(("conv", dict(dtype=dt, bias=False, k=(1, 1))))
        cases.append(("conv", dict(dtype=dt, k=(5, 2), in_shape=(2, 8, 7, 5))))
        cases.append(("conv", dict(dtype=dt, k=(3, 3), in_shape=(1, 6, 6, 4), oc=6)))
        cases.append(("dw", dict(dtype=dt, depthwise=True, mult=3, in_shape=(1, 7, 8, 2))))
        cases.append(("dw", dict(dtype=dt, depthwise=True, mult=2, stride=(2, 2), padding="VALID")))
        cases.append(("fc", dict(dtype=dt, bias=False)))
        cases.append(("fc", dict(dtype=dt, in_shape=(2, 3, 8), keep_num_dims=True)))
        cases.append(("fc", dict(dtype=dt, in_shape=(1, 1, 1, 64))))
        for kind in ("AVERAGE_POOL_2D", "MAX_POOL_2D"):
            for pad in ("SAME", "VALID"):
                cases.append(("pool", dict(kind=kind, dtype=dt, padding=pad)))
                cases.append(("pool", dict(kind=kind, dtype=dt, padding=pad, k=(2, 3), stride=(1, 2),
                                           act="RELU6")))
        cases.append(("softmax", dict(dtype=dt)))
        cases.append(("softmax", dict(dtype=dt, shape=(1, 1, 3, 30), beta=0.5)))
        cases.append(("mean", dict(dtype=dt)))
        cases.append(("mean", dict(dtype=dt, keep_dims=False)))
        cases.append(("mean", dict(dtype=dt, axis=(2, 1))))
        cases.append(("mean", dict(dtype=dt, axis=(-3, -2))))
        cases.append(("mean", dict(dtype=dt, axis=(3,), keep_dims=False)))
        cases.append(("mean", dict(dtype=dt, in_shape=(2, 3, 4), axis=(0, 2), keep_dims=True)))
    cases.append(("conv", dict(per_channel=False)))
    cases.append(("dw", dict(depthwise=True, mult=4, in_shape=(1, 9, 8, 1), k=(4, 3), stride=(2, 2))))
    cases.append(("dw", dict(depthwise=True, mult=2, in_shape=(1, 9, 8, 1), k=(3, 3), padding="VALID",
                             per_channel=False)))
    cases.append(("dw", dict(per_channel=False, depthwise=True)))
    cases.append(("fc", dict(per_channel=True)))
    cases.append(("fc", dict(per_channel=True, bias=False, in_shape=(3, 17), oc=9)))
    cases.append(("softmax", dict(out_dtype="int16")))
    cases.append(("softmax", dict(in_scale=1.0, shape=(3, 10))))
    cases.append(("softmax", dict(in_scale=0.004, shape=(3, 10), beta=2.0)))
    cases.append(("mean", dict(same_quant=True, keep_dims=False)))
    cases.append(("mean", dict(same_quant=True, in_shape=(1, 3, 3, 8), axis=(1,))))
    cases.append(("mean", dict(in_shape=(1, 7, 7, 16))))
    return cases


_BUILDERS = {"conv": conv_model, "dw": conv_model, "fc": fc_model, "pool": pool_model,
             "softmax": softmax_model, "mean": mean_model}
SINGLE_OP_CASES = _single_op_cases()


@pytest.mark.parametrize("case", range(len(SINGLE_OP_CASES)),
                         ids=[f"{k}-{'-'.join(f'{a}={v}' for a, v in kw.items())}"
                              for k, kw in SINGLE_OP_CASES])
def test_single_op_matches_tflm(case, oracle):
    kind, kw = SINGLE_OP_CASES[case]
    model = _BUILDERS[kind](np.random.default_rng(1000 + case), **kw)
    assert_single_op_matches_oracle(oracle, model, trials=3, seed=case)


# ----------------------------------------------------------------------------- real models

# keyword_scrambled*: their FULLY_CONNECTED / SOFTMAX / QUANTIZE ops run one at a time on the
# oracle's tensors (kernel_cases.op_submodel); SVDF itself is tested in test_kernels_svdf.py.
REAL_MODELS = ["person_detect", "micro_speech_quantized", "network_tester_model",
               "test_conv_model", "hello_world_int8", "hello_world_float", "keyword_scrambled",
               "keyword_scrambled_8bit"]


@pytest.mark.parametrize("name", shared_models([f"{n}.tflite" for n in REAL_MODELS]))
def test_real_model_ops_match_tflm(name, oracle):
    checked = assert_ops_match_oracle(oracle, (SHARED_MODELS / name).read_bytes(), seeds=(7, 8))
    assert checked


def test_mobilenet_v2_ops_match_tflm(oracle):
    data = shared_model("mobilenet_v2_quantized_1x3x224x224.tflite").read_bytes()
    checked = assert_ops_match_oracle(oracle, data, seeds=(3,))
    assert checked["MEAN"] == 1 and checked["CONV_2D"] == 35


# custom_*.tflite are left out: the oracle has no kernel for a custom operator
# (test_oracle_models.test_custom_op_models_need_the_users_kernel)
@pytest.mark.parametrize("path", oracle_models(), ids=lambda p: p.stem)
def test_converter_model_ops_match_tflm(path, oracle):
    data = path.read_bytes()
    assert assert_ops_match_oracle(oracle, data, seeds=(5, 6))


# ----------------------------------------------------------------------------- arithmetic units

def test_requantize_matches_reference():
    from micro_rt.kernels.quant import Requantizer, multiply_by_quantized_multiplier, requantize
    rng = np.random.default_rng(0)
    x = rng.integers(-2**31, 2**31, (300, 40))
    m = rng.integers(2**30, 2**31, 40)
    for lo, hi in ((-31, 8), (-20, 1), (0, 1)):
        s = rng.integers(lo, hi, 40)
        want = multiply_by_quantized_multiplier(x, m, s)
        assert np.array_equal(requantize(x, m, s), want)
    rq = Requantizer((300, 40), m, s, None, 0, -2**31, 2**31 - 1, tile=3)
    out = np.empty((300, 40), np.int64)
    rq.run(x, out)
    assert np.array_equal(out, multiply_by_quantized_multiplier(x, m, s))


def test_padding_matches_tflm_formulas():
    from micro_rt.kernels.padding import compute_padding_height_width
    pv, oh, ow = compute_padding_height_width(2, 2, 1, 1, 96, 96, 3, 3, "SAME")
    assert (oh, ow, pv.height, pv.width, pv.height_offset) == (48, 48, 0, 0, 1)
    pv, oh, ow = compute_padding_height_width(1, 1, 2, 2, 10, 9, 3, 3, "VALID")
    assert (oh, ow, pv.height, pv.width) == (6, 5, 0, 0)
    pv, oh, ow = compute_padding_height_width(1, 1, 1, 1, 5, 5, 3, 3, "SAME")
    assert (oh, ow, pv.height, pv.width) == (5, 5, 1, 1)


@pytest.mark.parametrize("target", ["host64", "cortex-m4"])
def test_persistent_and_scratch_requests(target):
    """OpData from init, then per-channel multiplier and shift arrays (4 bytes per output
    channel each) for CONV_2D and per-channel FULLY_CONNECTED; MEAN asks for three scratch
    buffers (int8, 4-d input reduced over two axes) and no persistent bytes beyond its OpData."""
    rng = np.random.default_rng(0)
    it = Interpreter.from_bytes(conv_model(rng, oc=6), target=target)
    assert kernel_persistent(it) == (3, it.target.sizeof("OpDataConv") + 24 + 24)
    assert scratch_sizes(it) == []
    it = Interpreter.from_bytes(fc_model(rng, per_channel=True), target=target)
    assert kernel_persistent(it) == (3, it.target.sizeof("OpDataFullyConnected") + 20 + 20)
    it = Interpreter.from_bytes(mean_model(rng), target=target)
    assert kernel_persistent(it) == (1, it.target.sizeof("OpDataReduce"))
    assert scratch_sizes(it) == [16, 8, 16]


def test_fc_per_tensor_multiplier_uses_a_double_product(oracle):
    """TFLM multiplies input and filter scales in double for a per-tensor FULLY_CONNECTED;
    these scales make a float32 product round two accumulators differently."""
    from micro_rt.builder import ModelBuilder
    from micro_rt.kernels.quant import multiply_by_quantized_multiplier, quantize_multiplier
    si, sw, so = np.float32(0.037542414), np.float32(0.044881042), np.float32(0.0067242053)
    single = quantize_multiplier(float(np.float32(si * sw)) / float(so))
    double = quantize_multiplier(float(si) * float(sw) / float(so))
    accs = np.arange(-32640, 32386)
    ties = accs[multiply_by_quantized_multiplier(accs, *single) != multiply_by_quantized_multiplier(accs, *double)]
    ties = ties[np.abs(ties) < 800]
    assert ties.size                        # the case really separates the two products
    b = ModelBuilder()
    x = b.add_tensor("x", [ties.size, 255], "INT8", scale=float(si), zero_point=0)
    w = b.add_tensor("w", [1, 255], "INT8", data=np.ones((1, 255), np.int8), scale=float(sw))
    y = b.add_tensor("y", [ties.size, 1], "INT8", scale=float(so), zero_point=0)
    b.add_operator("FULLY_CONNECTED", [x, w, -1], [y], version=4)
    b.inputs, b.outputs = [x], [y]
    rows = np.zeros((ties.size, 255), np.int8)
    for i, acc in enumerate(ties):          # each row sums to one of the separating accumulators
        step = 127 if acc >= 0 else -128
        q, r = divmod(int(acc), step)
        rows[i, :q] = step
        rows[i, q] = r
    data = b.build()
    ours = Interpreter.from_bytes(data)
    ours.set_input(rows, 0)
    ours.invoke()
    np.testing.assert_array_equal(ours.get_output(0), oracle.run(data, [rows], 1, arena_size=1 << 20)[0])


@pytest.mark.parametrize("kind", ["AVERAGE_POOL_2D", "MAX_POOL_2D"])
@pytest.mark.parametrize("dtype", ["int8", "float32"])
def test_pool_window_far_larger_than_the_image(kind, dtype, oracle):
    """A pooling window of thousands of taps over a 12x12 image: TFLM's loops clip every
    window to the image, so its cost follows the image; the host kernel must only visit
    taps that reach the image too (a 1001x1001 window once took 14 s: a fuzzing hang)."""
    cases = [((1001, 1001), (1, 1), "SAME"), ((601, 3), (1, 2), "SAME"), ((40, 900), (5, 7), "SAME"),
             ((30000, 7), (30001, 3), "SAME"), ((11, 12), (1, 1), "VALID")]
    for case, (k, stride, padding) in enumerate(cases):
        data = pool_model(np.random.default_rng(case), kind, dtype, in_shape=(1, 12, 12, 2), k=k,
                          stride=stride, padding=padding)
        assert_single_op_matches_oracle(oracle, data, trials=3, seed=case)
        g = Interpreter.from_bytes(data).nodes[0].user_data.geometry
        # taps reaching the image: at most the image plus the span the strides cover
        assert g.filter_h <= 12 + (g.out_h - 1) * stride[0], (k, g)
        assert g.filter_w <= 12 + (g.out_w - 1) * stride[1], (k, g)


def test_float_max_pool_skips_nan_like_tflm(oracle):
    """TFLM's float max pooling starts from the type's lowest value and keeps the larger with
    std::max, which ignores a NaN operand: NaN inputs are skipped, and a window of NaNs alone
    gives the lowest float (numpy's maximum would propagate them)."""
    data = pool_model(np.random.default_rng(0), "MAX_POOL_2D", "float32", in_shape=(1, 4, 6, 2),
                      k=(2, 2), stride=(2, 2), padding="VALID")
    x = np.random.default_rng(1).normal(0, 3, (1, 4, 6, 2)).astype(np.float32)
    x[0, 0, 0, 0] = np.nan                          # one NaN in a window
    x[0, 2:4, 2:4, 1] = np.nan                      # a window of NaNs
    x[0, 0, 2, 1] = -np.inf
    want = oracle.run(data, [x], 1, arena_size=1 << 16)[0]
    assert not np.isnan(want).any() and want[0, 1, 1, 1] == -np.finfo(np.float32).max
    for kernels, target in (("reference", "host64"), ("cmsis-nn", "cortex-m4")):
        ours = Interpreter.from_bytes(data, kernels=kernels, target=target)
        ours.set_input(x, 0)
        ours.invoke()
        np.testing.assert_array_equal(ours.get_output(0), want, err_msg=target)
