"""AVERAGE_POOL_2D and MAX_POOL_2D on the virtual MCU (cortexm/src/mrt_pooling.c) vs the numpy twins,
bit for bit: int8 and float32.
"""
from __future__ import annotations

import numpy as np
import pytest

from vmcu_cases import (CORES_FAST, CORES_FLOAT, T, rand_f32, assert_same, pool_case, run_both)


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
