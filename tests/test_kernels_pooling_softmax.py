"""AVERAGE_POOL_2D, MAX_POOL_2D and SOFTMAX bit-exact against the tflite-micro oracle: single-op
models (ModelBuilder) covering the options the converter emits."""
from __future__ import annotations

import numpy as np
import pytest

from kernel_cases import (assert_layer_op_case_matches_oracle, assert_single_op_matches_oracle, f32, layer_op_params,
                          q8, single_op)
from micro_rt import Interpreter
from micro_rt.kernels.padding import compute_out_size


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


_BUILDERS = {"pool": pool_model, "softmax": softmax_model}


@pytest.mark.parametrize("case", layer_op_params(set(_BUILDERS)))
def test_single_op_matches_tflm(case, oracle):
    assert_layer_op_case_matches_oracle(oracle, case, _BUILDERS)


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
        ours = Interpreter.from_bytes(data, kernels=kernels, target=target, emulate=target != "host64")
        ours.set_input(x, 0)
        ours.invoke()
        np.testing.assert_array_equal(ours.get_output(0), want, err_msg=target)
