"""int16 AVERAGE_POOL_2D / MAX_POOL_2D (CMSIS-NN's arm_avgpool_s16 / arm_max_pool_s16) and float32
L2_POOL_2D on the virtual MCU (cortexm/src/mrt_pooling_more.c) vs the numpy twins, bit for bit.
arm_avgpool_s16 has a DSP path (per-window channel sums in the scratch, QADD) and the M0+'s
channel-by-channel loop; L2_POOL_2D runs soft-float on the M0+ and on three FPUs.
"""
from __future__ import annotations

import numpy as np
import pytest

from vmcu_cases import CORES_ALL, CORES_FAST, CORES_FLOAT, T, assert_same, rand_f32, run_both

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
