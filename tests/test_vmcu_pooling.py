"""The pooling family on the virtual MCU vs the numpy twins, bit for bit: AVERAGE_POOL_2D and
MAX_POOL_2D int8 and float32 (cortexm/src/mrt_pooling.c), int16 (CMSIS-NN's arm_avgpool_s16 /
arm_max_pool_s16, mrt_pooling_s16.c) and float32 L2_POOL_2D (mrt_pooling.c).
arm_avgpool_s16 has a DSP path (per-window channel sums in the scratch, QADD) and the M0+'s
channel-by-channel loop; L2_POOL_2D runs soft-float on the M0+ and on three FPUs.
"""
from __future__ import annotations

import numpy as np
import pytest

from vmcu_cases import CORES_ALL, CORES_FAST, CORES_FLOAT, T, assert_same, pool_case, rand_f32, run_both


@pytest.mark.parametrize("core", CORES_FAST + ["cortex-m33"])
def test_pooling(core):
    rng = np.random.default_rng(5)
    for op in ("AVERAGE_POOL_2D", "MAX_POOL_2D"):
        for args in [(1, 8, 8, 5, 2, 2, 2, "VALID", "NONE"), (1, 7, 9, 3, 3, 3, 2, "SAME", "RELU6"),
                     (2, 5, 5, 4, 5, 5, 1, "VALID", "NONE"), (1, 6, 6, 16, 3, 3, 1, "SAME", "NONE")]:
            h, m, _ = run_both(core, *pool_case(rng, op, *args))
            assert_same(h, m, f"{op} {args}")


@pytest.mark.parametrize("core", CORES_FLOAT)
def test_pooling_f32(core):
    rng = np.random.default_rng(24)
    from micro_rt.kernels.padding import compute_padding_height_width
    for op in ("AVERAGE_POOL_2D", "MAX_POOL_2D"):
        for n, ih, iw, c, fh, fw, st, pad, act in [(1, 8, 8, 5, 2, 2, 2, "VALID", "NONE"),
                                                   (1, 7, 9, 3, 3, 3, 2, "SAME", "RELU6"),
                                                   (2, 5, 5, 4, 5, 5, 1, "VALID", "NONE"),
                                                   (1, 6, 6, 16, 3, 3, 1, "SAME", "RELU")]:
            x = T(0, (n, ih, iw, c), np.float32)
            _, oh, ow = compute_padding_height_width(st, st, 1, 1, ih, iw, fh, fw, pad)
            y = T(1, (n, oh, ow, c), np.float32)
            opts = dict(padding=pad, stride_w=st, stride_h=st, filter_width=fw, filter_height=fh,
                        fused_activation_function=act)
            h, m, _ = run_both(core, op, opts, [x], [y], {0: rand_f32(rng, x.shape, 3.0)})
            assert_same(h, m, f"{op} f32 {(n, ih, iw, c, fh, fw, st, pad)}")


@pytest.mark.parametrize("core", CORES_FLOAT)
def test_pooling_f32_windows_clip_to_the_image(core):
    """TFLM's float pooling loops visit only the taps inside the image, so a window far larger
    than the image costs what a window covering it costs; NaN inputs are skipped by max pooling
    (std::max keeps its first operand), an all-NaN window gives the type's lowest value."""
    rng = np.random.default_rng(26)
    from micro_rt.kernels.padding import compute_padding_height_width
    x = rand_f32(rng, (1, 6, 7, 3), 3.0)
    x[0, 0, :3, 0] = np.nan
    x[0, :2, :2, 1] = np.nan                      # the corner window of a 2x2 stride-2 pool
    for op in ("AVERAGE_POOL_2D", "MAX_POOL_2D"):
        counts = []
        for fh, fw, st in ((13, 15, 1), (1001, 2001, 1), (2, 2, 2)):
            _, oh, ow = compute_padding_height_width(st, st, 1, 1, 6, 7, fh, fw, "SAME")
            opts = dict(padding="SAME", stride_w=st, stride_h=st, filter_width=fw, filter_height=fh,
                        fused_activation_function="NONE")
            h, m, res = run_both(core, op, opts, [T(0, x.shape, np.float32)], [T(1, (1, oh, ow, 3), np.float32)],
                                 {0: x})
            assert_same(h, m, f"{op} f32 {fh}x{fw} stride {st}")
            counts.append(res.instructions)
            if op == "MAX_POOL_2D" and st == 2:
                assert h[0][0, 0, 0, 1] == -np.finfo(np.float32).max and not np.isnan(h[0]).any()
        assert counts[1] < 1.2 * counts[0], (op, counts)


# (n, ih, iw, c, fh, fw, stride, padding, activation): odd channel counts (the two-per-word
# loops' tail), windows clipped by SAME padding, batches, a window larger than the image
GEOMETRIES = [(1, 8, 8, 3, 2, 2, 2, "VALID", "NONE"), (1, 7, 9, 5, 3, 3, 1, "SAME", "NONE"),
              (2, 6, 5, 4, 3, 2, 2, "SAME", "RELU"), (1, 5, 5, 1, 5, 5, 1, "VALID", "RELU6"),
              (1, 4, 6, 8, 7, 7, 3, "SAME", "RELU_N1_TO_1")]


def _geometry(n, ih, iw, c, fh, fw, stride, pad, act):
    from micro_rt.kernels.padding import compute_padding_height_width
    _, oh, ow = compute_padding_height_width(stride, stride, 1, 1, ih, iw, fh, fw, pad)
    opts = dict(padding=pad, stride_w=stride, stride_h=stride, filter_width=fw, filter_height=fh,
                fused_activation_function=act)
    return (n, oh, ow, c), opts


@pytest.mark.parametrize("core", CORES_FAST + ["cortex-m33"])
@pytest.mark.parametrize("op", ["AVERAGE_POOL_2D", "MAX_POOL_2D"])
def test_pool_s16(core, op):
    rng = np.random.default_rng(61)
    for geom in GEOMETRIES:
        out_shape, opts = _geometry(*geom)
        in_shape = geom[:4]
        x = T(0, in_shape, np.int16, scales=[rng.uniform(1e-4, 1e-2)], zero_points=[0])
        y = T(1, out_shape, np.int16, scales=x.scales, zero_points=[0])
        for data in (rng.integers(-32768, 32768, size=in_shape), rng.choice([-32768, 32767], size=in_shape)):
            h, m, _ = run_both(core, op, opts, [x], [y], {0: data})
            assert_same(h, m, f"{op} s16 {geom}")


@pytest.mark.filterwarnings("ignore::RuntimeWarning")       # squares of 1e20 overflow to inf (on both sides)
@pytest.mark.parametrize("core", CORES_FLOAT)
def test_l2_pool_f32(core):
    rng = np.random.default_rng(62)
    for geom in GEOMETRIES:
        out_shape, opts = _geometry(*geom)
        in_shape = geom[:4]
        x, y = T(0, in_shape, np.float32), T(1, out_shape, np.float32)
        for data in (rand_f32(rng, in_shape, 2.0), rand_f32(rng, in_shape, 1e20)):
            h, m, _ = run_both(core, "L2_POOL_2D", opts, [x], [y], {0: data})
            assert_same(h, m, f"l2_pool f32 {geom}")


@pytest.mark.parametrize("core", CORES_ALL)
def test_avgpool_s16_scratch_matches_c(core):
    """The planner's scratch for arm_avgpool_s16 is what the firmware's
    arm_avgpool_s16_get_buffer_size returns."""
    from micro_rt.cortexm import ops
    from micro_rt.kernel_api import Node
    from vmcu_cases import shared_mcu
    mcu = shared_mcu(core)
    for ch in (1, 3, 16):
        node = Node(0, "AVERAGE_POOL_2D", 1, (0,), (1,), options={})
        tensors = {0: T(0, (1, 8, 8, ch), np.int16), 1: T(1, (1, 4, 4, ch), np.int16)}
        assert ops.scratch_bytes(mcu, core, node, tensors) == \
            mcu.call("arm_avgpool_s16_get_buffer_size", 4, ch).return_value
