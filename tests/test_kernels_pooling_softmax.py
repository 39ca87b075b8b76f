"""AVERAGE_POOL_2D, MAX_POOL_2D and SOFTMAX bit-exact against the tflite-micro oracle: single-op
models (ModelBuilder) covering the options the converter emits."""
from __future__ import annotations

import pytest

from kernel_cases import assert_layer_op_case_matches_oracle, f32, layer_op_params, q8, single_op
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
