"""TRANSPOSE_CONV on the virtual MCU (cortexm/src/mrt_transpose_conv.c) vs its numpy twin
(micro_rt.kernels.transpose_conv), bit for bit: int8 on both of CMSIS-NN's paths (the rolling
row buffer: few input channels or a stride above 2; the reverse conv: more than 16 input
channels and strides <= 2), including padding not a multiple of the stride, filters smaller
than the stride and outputs larger than the input reaches; 16x8 with int64 and int16 biases;
float32. Every core whose code differs (M0+ plain C, M4 DSP; float: all four FPU builds). And
the Python mirror of the two *_get_buffer_size functions against the C ones.
"""
from __future__ import annotations

import struct

import numpy as np
import pytest

from vmcu_cases import CORES_ALL, CORES_FAST, CORES_FLOAT, T, assert_same, run_both, shared_mcu
from micro_rt.kernel_api import Node


def out_size(size: int, k: int, stride: int, padding: str, extra: int) -> int:
    return (size * stride if padding == "SAME" else (size - 1) * stride + k) + extra


def transpose_conv_case(rng, dtype, n, ih, iw, ic, oc, fh, fw, sh, sw, padding, extra=(0, 0), bias="yes",
                        act="NONE"):
    oh, ow = out_size(ih, fh, sh, padding, extra[0]), out_size(iw, fw, sw, padding, extra[1])
    shape = T(0, (4,), np.int32, data=[n, oh, ow, oc])
    if dtype == "float32":
        w = T(1, (oc, fh, fw, ic), np.float32, data=rng.normal(0, 0.5, (oc, fh, fw, ic)))
        x = T(2, (n, ih, iw, ic), np.float32)
        b = T(3, (oc,), np.float32, data=rng.normal(0, 1, oc)) if bias else None
        y = T(4, (n, oh, ow, oc), np.float32)
        seed = rng.normal(0, 2, x.shape).astype(np.float32)
    else:
        wide = dtype == "int16"
        ws = rng.uniform(0.002, 0.02, oc)
        w = T(1, (oc, fh, fw, ic), np.int8, data=rng.integers(-128, 128, (oc, fh, fw, ic)), scales=ws,
              zero_points=np.zeros(oc, np.int64))
        in_scale = rng.uniform(0.0005, 0.002) if wide else rng.uniform(0.01, 0.1)
        x = T(2, (n, ih, iw, ic), dtype, scales=[in_scale], zero_points=[0 if wide else int(rng.integers(-20, 20))])
        bias_type = {"yes": np.int64 if wide else np.int32, "int16": np.int16}.get(bias)
        b = (T(3, (oc,), bias_type, data=rng.integers(-3000, 3000, oc), scales=ws * in_scale,
               zero_points=np.zeros(oc, np.int64)) if bias else None)
        y = T(4, (n, oh, ow, oc), dtype, scales=[rng.uniform(0.001, 0.01) if wide else rng.uniform(0.05, 0.5)],
              zero_points=[0 if wide else int(rng.integers(-20, 20))])
        info = np.iinfo(dtype)
        seed = rng.integers(info.min, info.max + 1, x.shape)
    opts = dict(padding=padding, stride_h=sh, stride_w=sw, fused_activation_function=act)
    inputs = [shape, w, x] + ([b] if bias else [])
    return "TRANSPOSE_CONV", opts, inputs, [y], {2: seed}


# (n, ih, iw, ic, oc, fh, fw, sh, sw, padding, extra, bias, act)
S8_SHAPES = [
    (1, 4, 5, 3, 4, 3, 3, 2, 2, "SAME", (0, 0), "yes", "NONE"),       # rolling buffer, pad 0
    (1, 4, 6, 5, 3, 4, 4, 2, 2, "SAME", (0, 0), "yes", "RELU"),       # pad 1 (pad % stride != 0)
    (2, 3, 7, 8, 6, 3, 2, 1, 3, "VALID", (0, 0), None, "NONE"),       # 4 + 2 + 1 pixel blocks
    (1, 3, 3, 4, 2, 1, 1, 2, 2, "VALID", (0, 0), "yes", "NONE"),      # filter smaller than the stride
    (1, 3, 4, 6, 5, 3, 2, 2, 2, "VALID", (1, 1), "yes", "RELU6"),     # output beyond the input's reach
    (1, 4, 4, 3, 3, 5, 5, 1, 1, "SAME", (0, 0), "yes", "NONE"),       # stride 1, pad 2
    (1, 3, 5, 20, 7, 3, 3, 2, 2, "SAME", (0, 0), "yes", "NONE"),      # reverse conv, 20 channels
    (1, 3, 4, 24, 6, 4, 4, 2, 1, "VALID", (0, 0), None, "NONE"),      # reverse conv, 4-aligned channels
    (2, 2, 3, 17, 3, 3, 3, 1, 2, "SAME", (0, -1), "yes", "RELU"),     # reverse conv, odd output
    (1, 3, 3, 20, 4, 3, 3, 3, 3, "SAME", (0, 0), "yes", "NONE"),      # 20 channels but stride 3: rolling
]


@pytest.mark.parametrize("core", CORES_ALL)
def test_transpose_conv_s8(core):
    rng = np.random.default_rng(31)
    for args in S8_SHAPES:
        *geom, padding, extra, bias, act = args
        for _ in range(3):
            h, m, _ = run_both(core, *transpose_conv_case(rng, "int8", *geom, padding, extra, bias, act))
            assert_same(h, m, f"transpose conv s8 {args}")


S16_SHAPES = [
    (1, 4, 5, 3, 4, 3, 3, 2, 2, "SAME", (0, 0), "yes", "NONE"),
    (1, 1, 5, 16, 8, 3, 4, 1, 2, "VALID", (0, 0), "yes", "NONE"),     # the seanet geometry, smaller
    (2, 3, 3, 4, 3, 2, 3, 2, 1, "VALID", (1, 0), None, "RELU"),
    (1, 3, 4, 5, 4, 3, 3, 2, 2, "SAME", (0, 0), "int16", "NONE"),     # int16 bias, widened
]


@pytest.mark.parametrize("core", CORES_FAST)
def test_transpose_conv_s16(core):
    rng = np.random.default_rng(32)
    for args in S16_SHAPES:
        *geom, padding, extra, bias, act = args
        for _ in range(3):
            h, m, _ = run_both(core, *transpose_conv_case(rng, "int16", *geom, padding, extra, bias, act))
            assert_same(h, m, f"transpose conv s16 {args}")


@pytest.mark.parametrize("core", CORES_FLOAT)
def test_transpose_conv_f32(core):
    rng = np.random.default_rng(33)
    for args in S16_SHAPES[:3] + [(1, 3, 3, 5, 3, 4, 4, 3, 2, "SAME", (-1, 0), "yes", "RELU6")]:
        *geom, padding, extra, bias, act = args
        h, m, _ = run_both(core, *transpose_conv_case(rng, "float32", *geom, padding, extra, bias and "yes", act))
        assert_same(h, m, f"transpose conv f32 {args}")


@pytest.mark.parametrize("core", CORES_FAST)
def test_scratch_sizes_match_c(core):
    """ops.scratch_requests mirrors arm_transpose_conv_s8_get_buffer_size and
    _get_reverse_conv_buffer_size."""
    from micro_rt.cortexm import ops
    mcu = shared_mcu(core)
    rng = np.random.default_rng(34)
    for args in S8_SHAPES:
        *geom, padding, extra, bias, act = args
        op, opts, ins, outs, _ = transpose_conv_case(rng, "int8", *geom, padding, extra, bias, act)
        node = Node(0, op, 1, tuple(t.index for t in ins), (outs[0].index,), options=opts)
        tensors = {t.index: t for t in ins + outs}
        n, ih, iw, ic, oc, fh, fw, sh, sw = geom
        mcu.args_reset()
        params = mcu.args_alloc(struct.pack("<12i", 0, 0, sw, sh, 0, 0, 0, 0, 1, 1, -128, 127))
        in_dims = mcu.args_alloc(struct.pack("<4i", n, ih, iw, ic))
        f_dims = mcu.args_alloc(struct.pack("<4i", oc, fh, fw, ic))
        o_dims = mcu.args_alloc(struct.pack("<4i", *outs[0].shape))
        size = mcu.call("arm_transpose_conv_s8_get_buffer_size", params, in_dims, f_dims, o_dims).return_value
        reverse = mcu.call("arm_transpose_conv_s8_get_reverse_conv_buffer_size", params, in_dims, f_dims).return_value
        assert ops.scratch_requests(mcu, core, node, tensors) == (size, reverse), args
