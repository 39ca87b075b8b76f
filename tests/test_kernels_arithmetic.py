"""The arithmetic and geometry the kernels share (kernels/fixedpoint.py, requant.py, padding.py),
against TFLM's formulas and the functions they approximate."""
from __future__ import annotations

import numpy as np

from micro_rt.kernels import fixedpoint


def test_requantize_matches_reference():
    from micro_rt.kernels.fixedpoint import multiply_by_quantized_multiplier
    from micro_rt.kernels.requant import Requantizer, requantize
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


def test_gemmlowp_logistic_tanh_close_to_real():
    x = np.linspace(-7.9, 7.9, 101)
    raw = np.round(x * 2 ** 27).astype(np.int64)
    lo = fixedpoint.gemmlowp_logistic(raw, 4) / 2 ** 31
    th = fixedpoint.gemmlowp_tanh(raw, 4) / 2 ** 31
    assert np.max(np.abs(lo - 1 / (1 + np.exp(-x)))) < 1e-6
    assert np.max(np.abs(th - np.tanh(x))) < 1e-6
