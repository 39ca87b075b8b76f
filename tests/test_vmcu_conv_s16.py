"""16x8 CONV_2D / DEPTHWISE_CONV_2D / FULLY_CONNECTED on the virtual MCU with the CMSIS-NN
kernels (cortexm/src/mrt_conv_s16_dsp.c: arm_convolve_wrapper_s16, arm_depthwise_conv_s16,
arm_fully_connected_s16) vs their numpy twins, bit for bit, on the M0+ (plain C) and the DSP
cores; which kernel runs (the CMSIS-NN one, or mrt_conv_s16 where it would not be exact); and
the Python mirror of arm_convolve_wrapper_s16_get_buffer_size.
"""
from __future__ import annotations

import struct

import numpy as np
import pytest

from vmcu_cases import CORES_ALL, CORES_FAST, T, assert_same, q16_tensor, rand_i8, rand_i16, run_both, shared_mcu
from vmcu_cases import called  # noqa: F401 - the fixture


def _edge_inputs(rng, shape):
    """Random int16 inputs, then the extremes: all min, all max, alternating."""
    n = int(np.prod(shape))
    yield rand_i16(rng, shape)
    yield np.full(shape, -32768, np.int16)
    yield np.full(shape, 32767, np.int16)
    yield np.resize(np.array([-32768, 32767], np.int16), n).reshape(shape)


def _conv(rng, n, ih, iw, ic, oc, fh, fw, st, pad, dil, bias="int64", act="NONE", groups=1, w=None, x_zp=0,
          bias_values=None, bias_type=None):
    from micro_rt.kernels.padding import compute_padding_height_width
    x = q16_tensor(rng, 0, (n, ih, iw, ic), zp=x_zp)
    w = rand_i8(rng, (oc, fh, fw, ic // groups)) if w is None else w
    ws = rng.uniform(0.002, 0.02, size=oc)
    wt = T(1, w.shape, np.int8, data=w, scales=ws, zero_points=np.zeros(oc, np.int64))
    ins = [x, wt]
    if bias:
        values = rng.integers(-200000, 200000, size=oc) if bias_values is None else bias_values
        ins.append(T(2, (oc,), np.int64 if bias == "int64" else np.int32, data=values))
    _, oh, ow = compute_padding_height_width(st, st, dil, dil, ih, iw, fh, fw, pad)
    y = T(3, (n, oh, ow, oc), np.int16, scales=[rng.uniform(0.01, 0.05)], zero_points=[0])
    opts = dict(padding=pad, stride_w=st, stride_h=st, dilation_w_factor=dil, dilation_h_factor=dil,
                fused_activation_function=act)
    if bias_type:
        opts["quantized_bias_type"] = bias_type
    return opts, ins, y


CONV_S16_SHAPES = [
    # n, ih, iw, ic, oc, fh, fw, stride, pad, dil, bias, act
    (1, 7, 9, 3, 5, 3, 3, 1, "SAME", 1, "int64", "NONE"),      # odd channels, odd pixel count
    (1, 8, 8, 8, 6, 3, 3, 2, "SAME", 1, "int64", "RELU6"),
    (2, 6, 5, 5, 7, 2, 3, 1, "VALID", 1, None, "RELU"),        # batches, no bias
    (1, 6, 6, 16, 8, 1, 1, 1, "VALID", 1, "int32", "NONE"),    # int32 bias: int32 throughout
    (1, 9, 9, 4, 6, 3, 3, 1, "SAME", 2, "int64", "NONE"),      # dilation
    (1, 5, 5, 64, 3, 3, 3, 1, "SAME", 1, "int64", "NONE"),     # 576 taps: int32 window + int64 rest
    (1, 3, 5, 70, 4, 3, 3, 1, "VALID", 1, "int32", "NONE"),    # 630 taps, int32 bias
    (1, 4, 4, 57, 3, 3, 3, 2, "SAME", 1, "int64", "NONE"),     # 513 taps, odd channel past the window
]


@pytest.mark.parametrize("core", CORES_ALL)
def test_conv_s16_cmsis(core, called):
    rng = np.random.default_rng(41)
    for args in CONV_S16_SHAPES:
        n, ih, iw, ic, oc, fh, fw, st, pad, dil, bias, act = args
        opts, ins, y = _conv(rng, n, ih, iw, ic, oc, fh, fw, st, pad, dil, bias, act)
        for x in _edge_inputs(rng, ins[0].shape):
            h, m, _ = run_both(core, "CONV_2D", opts, ins, [y], {0: x})
            assert_same(h, m, f"conv 16x8 {args}")
    assert set(called) == {"arm_convolve_wrapper_s16"}
    # No bias with TFLM's int32 quantized bias type: the int32 variant without a bias.
    opts, ins, y = _conv(rng, 1, 5, 5, 6, 5, 3, 3, 1, "SAME", 1, None, bias_type="INT32")
    h, m, _ = run_both(core, "CONV_2D", opts, ins, [y], {0: rand_i16(rng, ins[0].shape)})
    assert_same(h, m, "conv 16x8 int32 quantized bias type, no bias")
    assert called[-1] == "arm_convolve_wrapper_s16"


@pytest.mark.parametrize("core", CORES_FAST)
def test_conv_s16_reference_loop_where_cmsis_is_not_exact(core, called):
    """Groups, a zero point, an int32 window that could wrap, a requantization that could
    leave int32: mrt_conv_s16 runs (still bit-exact)."""
    rng = np.random.default_rng(42)
    cases = [
        _conv(rng, 1, 6, 6, 8, 6, 3, 3, 1, "SAME", 1, groups=2),
        _conv(rng, 1, 5, 5, 4, 3, 3, 3, 1, "SAME", 1, x_zp=3),
        _conv(rng, 1, 4, 4, 512, 2, 1, 1, 1, "VALID", 1, w=np.full((2, 1, 1, 512), -128, np.int8)),
        _conv(rng, 1, 4, 4, 8, 2, 3, 3, 1, "SAME", 1, bias_values=np.array([1 << 50, -(1 << 50)])),
    ]
    for opts, ins, y in cases:
        for x in _edge_inputs(rng, ins[0].shape):
            h, m, _ = run_both(core, "CONV_2D", opts, ins, [y], {0: x})
            assert_same(h, m, "conv 16x8 reference loop")
    assert set(called) == {"mrt_conv_s16"}
    # 511 taps of -128 stay inside the int32 window: the CMSIS-NN kernel, exact at the extremes.
    opts, ins, y = _conv(rng, 1, 3, 3, 511, 2, 1, 1, 1, "VALID", 1, w=np.full((2, 1, 1, 511), -128, np.int8))
    for x in _edge_inputs(rng, ins[0].shape):
        h, m, _ = run_both(core, "CONV_2D", opts, ins, [y], {0: x})
        assert_same(h, m, "conv 16x8 511 taps of -128")
    assert called[-1] == "arm_convolve_wrapper_s16"


DW_S16_SHAPES = [
    # ih, iw, ic, mult, fh, fw, stride, pad, dil, act, n
    (8, 8, 8, 1, 3, 3, 1, "SAME", 1, "NONE", 1),
    (9, 7, 6, 1, 3, 3, 2, "SAME", 1, "RELU6", 1),
    (6, 6, 4, 2, 3, 3, 1, "VALID", 1, "NONE", 1),
    (8, 8, 3, 3, 3, 3, 1, "SAME", 2, "NONE", 1),
    (5, 5, 7, 1, 5, 5, 1, "SAME", 3, "NONE", 2),
]


@pytest.mark.parametrize("core", CORES_FAST)
def test_depthwise_s16_cmsis(core, called):
    from micro_rt.kernels.padding import compute_padding_height_width
    rng = np.random.default_rng(43)
    for i, args in enumerate(DW_S16_SHAPES):
        ih, iw, ic, mult, fh, fw, st, pad, dil, act, n = args
        x = q16_tensor(rng, 0, (n, ih, iw, ic))
        oc = ic * mult
        w = rand_i8(rng, (1, fh, fw, oc))
        ws = rng.uniform(0.002, 0.02, size=oc)
        ins = [x, T(1, w.shape, np.int8, data=w, scales=ws, zero_points=np.zeros(oc, np.int64), qdim=3)]
        if i % 2 == 0:
            ins.append(T(2, (oc,), np.int64, data=rng.integers(-200000, 200000, size=oc)))
        _, oh, ow = compute_padding_height_width(st, st, dil, dil, ih, iw, fh, fw, pad)
        y = T(3, (n, oh, ow, oc), np.int16, scales=[rng.uniform(0.01, 0.05)], zero_points=[0])
        opts = dict(padding=pad, stride_w=st, stride_h=st, dilation_w_factor=dil, dilation_h_factor=dil,
                    depth_multiplier=mult, fused_activation_function=act)
        for xv in _edge_inputs(rng, x.shape):
            h, m, _ = run_both(core, "DEPTHWISE_CONV_2D", opts, ins, [y], {0: xv})
            assert_same(h, m, f"dw 16x8 {args}")
    assert set(called) == {"arm_depthwise_conv_s16"}


@pytest.mark.parametrize("core", CORES_FAST)
def test_fully_connected_s16_cmsis(core, called):
    rng = np.random.default_rng(44)
    for batches, depth, out_depth, act, bias in [(1, 16, 10, "NONE", "int64"), (3, 37, 9, "RELU", None),
                                                 (2, 600, 5, "RELU6", "int64"), (1, 513, 4, "NONE", None),
                                                 (2, 40, 7, "NONE", "int32")]:
        x = q16_tensor(rng, 0, (batches, depth))
        w = rand_i8(rng, (out_depth, depth))
        ins = [x, T(1, w.shape, np.int8, data=w, scales=[0.01], zero_points=[0])]
        if bias:
            ins.append(T(2, (out_depth,), np.int64 if bias == "int64" else np.int32,
                         data=rng.integers(-200000, 200000, size=out_depth)))
        y = T(3, (batches, out_depth), np.int16, scales=[rng.uniform(0.05, 0.2)], zero_points=[0])
        for xv in _edge_inputs(rng, x.shape):
            h, m, _ = run_both(core, "FULLY_CONNECTED", dict(fused_activation_function=act), ins, [y], {0: xv})
            assert_same(h, m, f"fc 16x8 {(batches, depth, out_depth, bias)}")
        # int32 bias: CMSIS-NN's kernel reads int64 only, the reference loop runs
        assert called[-1] == ("mrt_conv_s16" if bias == "int32" else "arm_fully_connected_s16")


@pytest.mark.parametrize("core", CORES_FAST)
def test_conv_s16_scratch_matches_c(core):
    """conv_s16_scratch (what the planner reserves) equals arm_convolve_wrapper_s16_get_buffer_size."""
    from micro_rt.cortexm import ops
    from micro_rt.kernel_api import Node
    mcu = shared_mcu(core)
    rng = np.random.default_rng(45)
    for n, ih, iw, ic, oc, fh, fw, st, pad, dil, bias, act in CONV_S16_SHAPES:
        opts, ins, y = _conv(rng, n, ih, iw, ic, oc, fh, fw, st, pad, dil, bias, act)
        node = Node(0, "CONV_2D", 1, tuple(t.index for t in ins), (3,), options=opts)
        tensors = {t.index: t for t in ins + [y]}
        mcu.args_reset()
        a = [mcu.args_alloc(struct.pack("<10i", 0, 0, st, st, 0, 0, dil, dil, -32768, 32767)),
             mcu.args_alloc(struct.pack("<4i", n, ih, iw, ic)),
             mcu.args_alloc(struct.pack("<4i", oc, fh, fw, ic)),
             mcu.args_alloc(struct.pack("<4i", n, *y.shape[1:]))]
        c_size = mcu.call("arm_convolve_wrapper_s16_get_buffer_size", *a).return_value
        assert ops.scratch_bytes(mcu, core, node, tensors) == c_size > 0
