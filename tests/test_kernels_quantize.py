"""QUANTIZE and DEQUANTIZE bit-exact against the tflite-micro oracle: single-op models
(ModelBuilder, kernel_cases.single_op) over the type pairs TFLM supports; a model TFLM rejects
must be rejected by our prepare as well."""
from __future__ import annotations

import numpy as np
import pytest

from kernel_cases import (assert_named_case_matches_oracle, f32, named_case_params, q8, q16, random_scale,
                          single_op)


def _quant_cases():
    rng = np.random.default_rng(7)
    S = (3, 40)
    cases = [
        ("QUANTIZE-f32-i8", single_op("QUANTIZE", [f32(S)], q8(S, 0.037, -5))),
        ("QUANTIZE-f32-i16", single_op("QUANTIZE", [f32(S)], q16(S, 0.0003))),
        ("DEQUANTIZE-i8", single_op("DEQUANTIZE", [q8(S, 0.0371, 17)], f32(S))),
        ("DEQUANTIZE-i16", single_op("DEQUANTIZE", [q16(S, 0.00037)], f32(S))),
    ]
    for k in range(3):
        cases.append((f"QUANTIZE-i8-i8-{k}", single_op("QUANTIZE", [q8(S, random_scale(rng), int(rng.integers(-128, 128)))],
                                                        q8(S, random_scale(rng), int(rng.integers(-128, 128))))))
        cases.append((f"QUANTIZE-i16-i8-{k}", single_op("QUANTIZE", [q16(S, random_scale(rng, 1e-5, 1e-3))],
                                                         q8(S, random_scale(rng), int(rng.integers(-128, 128))))))
        cases.append((f"QUANTIZE-i8-i16-{k}", single_op("QUANTIZE", [q8(S, random_scale(rng), int(rng.integers(-128, 128)))],
                                                         q16(S, random_scale(rng, 1e-5, 1e-3)))))
        cases.append((f"QUANTIZE-i16-i16-{k}", single_op("QUANTIZE", [q16(S, random_scale(rng, 1e-5, 1e-3))],
                                                          q16(S, random_scale(rng, 1e-5, 1e-3)))))
    return cases


@pytest.mark.parametrize("name,data", named_case_params(_quant_cases()))
def test_single_op_matches_tflm(name, data, oracle):
    assert_named_case_matches_oracle(oracle, name, data)
