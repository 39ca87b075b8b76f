"""CONV_2D and DEPTHWISE_CONV_2D on the virtual MCU (cortexm/src/mrt_conv_s8.c, mrt_depthwise_conv_s8.c,
mrt_gemm_s8.c, mrt_conv_f32.c, mrt_conv_s16.c) vs their numpy twins, bit for bit: int8, float32 and
16x8 (with FULLY_CONNECTED 16x8, which mrt_conv_s16 also runs), and the Python mirror of the
*_get_buffer_size functions.
"""
from __future__ import annotations

import numpy as np
import pytest

from vmcu_cases import (CONV_SHAPES, CORES_ALL, CORES_FAST, CORES_FLOAT, DW_SHAPES, T, shared_mcu, q16_tensor, rand_i16,
                        rand_i8, assert_same, conv_case, conv_f32_case, dw_case, dw_f32_case, pool_case,
                        run_both)


@pytest.mark.parametrize("core", CORES_ALL)
def test_conv(core):
    rng = np.random.default_rng(1)
    for i, args in enumerate(CONV_SHAPES):
        n, ih, iw, ic, oc, fh, fw, st, pad, dil, pc, act, groups = args
        case = conv_case(rng, n, ih, iw, ic, oc, fh, fw, st, pad, dil, pc, act, groups, bias=(i != 2))
        h, m, _ = run_both(core, *case)
        assert_same(h, m, f"conv {args}")


@pytest.mark.parametrize("core", CORES_ALL)
def test_depthwise(core):
    rng = np.random.default_rng(2)
    for args in DW_SHAPES:
        ih, iw, ic, mult, fh, fw, st, pad, dil, act, n = args
        h, m, _ = run_both(core, *dw_case(rng, ih, iw, ic, mult, fh, fw, st, pad, dil, act, n))
        assert_same(h, m, f"dw {args}")


@pytest.mark.parametrize("core", CORES_ALL)
def test_scratch_bytes_match_c(core):
    """ops.scratch_bytes (Python mirror) equals the C *_get_buffer_size functions."""
    from micro_rt.cortexm import ops
    from micro_rt.cortexm.ops.nn import conv_geometry
    from micro_rt.kernel_api import Node
    import struct
    mcu = shared_mcu(core)
    rng = np.random.default_rng(11)
    for args in CONV_SHAPES:
        n, ih, iw, ic, oc, fh, fw, st, pad, dil, pc, act, groups = args
        op, opts, ins, outs, _ = conv_case(rng, n, ih, iw, ic, oc, fh, fw, st, pad, dil, pc, act, groups)
        node = Node(0, op, 1, tuple(t.index for t in ins), (outs[0].index,), options=opts)
        tensors = {t.index: t for t in ins + outs}
        g = conv_geometry(node, ins[0], ins[1], outs[0])
        mcu.args_reset()
        a = [mcu.args_alloc(struct.pack("<10i", g.in_off, g.out_off, g.sw, g.sh, g.pw, g.ph, g.dw, g.dh, 0, 0)),
             mcu.args_alloc(struct.pack("<4i", g.n, g.ih, g.iw, g.ic)),
             mcu.args_alloc(struct.pack("<4i", g.oc, g.fh, g.fw, g.fc)),
             mcu.args_alloc(struct.pack("<4i", g.n, g.oh, g.ow, g.oc))]
        c_size = mcu.call("arm_convolve_wrapper_s8_get_buffer_size", *a).return_value
        assert ops.scratch_bytes(mcu, core, node, tensors) == c_size, args
    for args in DW_SHAPES:
        op, opts, ins, outs, _ = dw_case(rng, *args[:10], n=args[10])
        node = Node(0, op, 1, tuple(t.index for t in ins), (outs[0].index,), options=opts)
        tensors = {t.index: t for t in ins + outs}
        g = conv_geometry(node, ins[0], ins[1], outs[0])
        mcu.args_reset()
        a = [mcu.args_alloc(struct.pack("<11i", g.in_off, g.out_off, g.oc // g.ic, g.sw, g.sh, g.pw, g.ph, g.dw,
                                        g.dh, 0, 0)),
             mcu.args_alloc(struct.pack("<4i", g.n, g.ih, g.iw, g.ic)),
             mcu.args_alloc(struct.pack("<4i", 1, g.fh, g.fw, g.oc)),
             mcu.args_alloc(struct.pack("<4i", g.n, g.oh, g.ow, g.oc))]
        c_size = mcu.call("arm_depthwise_conv_wrapper_s8_get_buffer_size", *a).return_value
        assert ops.scratch_bytes(mcu, core, node, tensors) == c_size, args
    for c in (1, 8, 13):
        op, opts, ins, outs, _ = pool_case(rng, "AVERAGE_POOL_2D", 1, 6, 6, c, 2, 2, 2, "VALID")
        node = Node(0, op, 1, (0,), (1,), options=opts)
        c_size = mcu.call("arm_avgpool_s8_get_buffer_size", 3, c).return_value
        assert ops.scratch_bytes(mcu, core, node, {0: ins[0], 1: outs[0]}) == c_size


@pytest.mark.parametrize("core", CORES_FLOAT)
def test_conv_f32(core):
    rng = np.random.default_rng(21)
    for i, args in enumerate(CONV_SHAPES):
        n, ih, iw, ic, oc, fh, fw, st, pad, dil, pc, act, groups = args
        h, m, _ = run_both(core, *conv_f32_case(rng, n, ih, iw, ic, oc, fh, fw, st, pad, dil, act, groups,
                                                bias=(i != 2)))
        assert_same(h, m, f"conv f32 {args}")


@pytest.mark.parametrize("core", CORES_FLOAT)
def test_depthwise_f32(core):
    rng = np.random.default_rng(22)
    for i, args in enumerate(DW_SHAPES):
        ih, iw, ic, mult, fh, fw, st, pad, dil, act, n = args
        h, m, _ = run_both(core, *dw_f32_case(rng, ih, iw, ic, mult, fh, fw, st, pad, dil, act, n, bias=(i != 3)))
        assert_same(h, m, f"dw f32 {args}")


@pytest.mark.parametrize("core", CORES_FAST)
def test_conv_depthwise_fc_16x8(core):
    from micro_rt.kernels.padding import compute_padding_height_width
    rng = np.random.default_rng(31)
    for i, args in enumerate(CONV_SHAPES):
        n, ih, iw, ic, oc, fh, fw, st, pad, dil, pc, act, groups = args
        x = q16_tensor(rng, 0, (n, ih, iw, ic))
        w = rand_i8(rng, (oc, fh, fw, ic // groups))
        ws = rng.uniform(0.002, 0.02, size=oc if pc else 1)
        wt = T(1, w.shape, np.int8, data=w, scales=ws, zero_points=np.zeros(ws.size, np.int64))
        bdt = np.int64 if i % 2 == 0 else np.int32
        b = T(2, (oc,), bdt, data=rng.integers(-200000, 200000, size=oc))
        _, oh, ow = compute_padding_height_width(st, st, dil, dil, ih, iw, fh, fw, pad)
        y = T(3, (n, oh, ow, oc), np.int16, scales=[rng.uniform(0.01, 0.05)], zero_points=[0])
        opts = dict(padding=pad, stride_w=st, stride_h=st, dilation_w_factor=dil, dilation_h_factor=dil,
                    fused_activation_function=act)
        h, m, _ = run_both(core, "CONV_2D", opts, [x, wt] + ([b] if i != 2 else []), [y], {0: rand_i16(rng, x.shape)})
        assert_same(h, m, f"conv 16x8 {args}")
    for i, args in enumerate(DW_SHAPES):
        ih, iw, ic, mult, fh, fw, st, pad, dil, act, n = args
        x = q16_tensor(rng, 0, (n, ih, iw, ic))
        oc = ic * mult
        w = rand_i8(rng, (1, fh, fw, oc))
        ws = rng.uniform(0.002, 0.02, size=oc)
        wt = T(1, w.shape, np.int8, data=w, scales=ws, zero_points=np.zeros(oc, np.int64), qdim=3)
        b = T(2, (oc,), np.int64, data=rng.integers(-200000, 200000, size=oc))
        _, oh, ow = compute_padding_height_width(st, st, dil, dil, ih, iw, fh, fw, pad)
        y = T(3, (n, oh, ow, oc), np.int16, scales=[rng.uniform(0.01, 0.05)], zero_points=[0])
        opts = dict(padding=pad, stride_w=st, stride_h=st, dilation_w_factor=dil, dilation_h_factor=dil,
                    depth_multiplier=mult, fused_activation_function=act)
        h, m, _ = run_both(core, "DEPTHWISE_CONV_2D", opts, [x, wt, b], [y], {0: rand_i16(rng, x.shape)})
        assert_same(h, m, f"dw 16x8 {args}")
    # One input channel: the twin's im2col shortcut must use the 16x8 int64 output stage too.
    x = q16_tensor(rng, 0, (1, 6, 6, 1))
    wt = T(1, (1, 3, 3, 2), np.int8, data=rand_i8(rng, (1, 3, 3, 2)), scales=[0.01, 0.01], zero_points=[0, 0],
           qdim=3)
    y = T(3, (1, 6, 6, 2), np.int16, scales=[0.02], zero_points=[0])
    h, m, _ = run_both(core, "DEPTHWISE_CONV_2D", dict(padding="SAME", depth_multiplier=2), [x, wt], [y],
                       {0: rand_i16(rng, x.shape)})
    assert_same(h, m, "dw 16x8 one input channel")
    for batches, depth, out_depth, act, bias in [(1, 16, 10, "NONE", True), (3, 37, 9, "RELU", False),
                                                 (4, 250, 12, "RELU6", True)]:
        x = q16_tensor(rng, 0, (batches, depth))
        w = rand_i8(rng, (out_depth, depth))
        wt = T(1, w.shape, np.int8, data=w, scales=[0.01], zero_points=[0])
        b = T(2, (out_depth,), np.int64, data=rng.integers(-200000, 200000, size=out_depth))
        y = T(3, (batches, out_depth), np.int16, scales=[rng.uniform(0.05, 0.2)], zero_points=[0])
        h, m, _ = run_both(core, "FULLY_CONNECTED", dict(fused_activation_function=act),
                           [x, wt] + ([b] if bias else []), [y], {0: rand_i16(rng, x.shape)})
        assert_same(h, m, f"fc 16x8 {(batches, depth, out_depth)}")
