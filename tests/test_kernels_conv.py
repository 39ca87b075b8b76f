"""CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED bit-exact against the tflite-micro oracle
(TFLM's reference kernels): single-op models (ModelBuilder) covering the options the
converter emits, and the persistent bytes the kernels ask for."""
from __future__ import annotations

import numpy as np
import pytest

from kernel_cases import (assert_layer_op_case_matches_oracle, f32, i32, kernel_persistent, layer_op_params, q8,
                          scratch_sizes, single_op)
from micro_rt import Interpreter
from micro_rt.kernels.padding import compute_out_size


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


_BUILDERS = {"conv": conv_model, "dw": conv_model, "fc": fc_model}


@pytest.mark.parametrize("case", layer_op_params(set(_BUILDERS)))
def test_single_op_matches_tflm(case, oracle):
    assert_layer_op_case_matches_oracle(oracle, case, _BUILDERS)


@pytest.mark.parametrize("target", ["host64", "cortex-m4"])
def test_persistent_and_scratch_requests(target):
    """OpData from init, then per-channel multiplier and shift arrays (4 bytes per output
    channel each) for CONV_2D and per-channel FULLY_CONNECTED."""
    rng = np.random.default_rng(0)
    it = Interpreter.from_bytes(conv_model(rng, oc=6), target=target, kernels="reference")
    assert kernel_persistent(it) == (3, it.target.sizeof("OpDataConv") + 24 + 24)
    assert scratch_sizes(it) == []
    it = Interpreter.from_bytes(fc_model(rng, per_channel=True), target=target, kernels="reference")
    assert kernel_persistent(it) == (3, it.target.sizeof("OpDataFullyConnected") + 20 + 20)


def test_fc_per_tensor_multiplier_uses_a_double_product(oracle):
    """TFLM multiplies input and filter scales in double for a per-tensor FULLY_CONNECTED;
    these scales make a float32 product round two accumulators differently."""
    from micro_rt.builder import ModelBuilder
    from micro_rt.kernels.fixedpoint import multiply_by_quantized_multiplier
    from micro_rt.kernels.quant import quantize_multiplier
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
