"""MEAN bit-exact against the tflite-micro oracle: single-op models (ModelBuilder) over axes,
keep_dims and quantizations, and the scratch buffers the kernel asks for."""
from __future__ import annotations

import numpy as np
import pytest

from kernel_cases import (assert_layer_op_case_matches_oracle, f32, i32, kernel_persistent, layer_op_params, q8,
                          scratch_sizes, single_op)
from micro_rt import Interpreter


def mean_model(rng, dtype="int8", in_shape=(1, 5, 6, 4), axis=(1, 2), keep_dims=True,
               same_quant=False):
    ax = [a + len(in_shape) if a < 0 else a for a in axis]
    out_shape = tuple(1 if i in ax else d for i, d in enumerate(in_shape)) if keep_dims else \
        tuple(d for i, d in enumerate(in_shape) if i not in ax)
    if dtype == "float32":
        x, y = f32(in_shape), f32(out_shape)
    else:
        qi = (float(rng.uniform(0.01, 0.1)), int(rng.integers(-20, 20)))
        qo = qi if same_quant else (float(rng.uniform(0.01, 0.1)), int(rng.integers(-20, 20)))
        x, y = q8(in_shape, *qi), q8(out_shape, *qo)
    return single_op("MEAN", [x, i32((len(axis),), data=np.array(axis))], y, {"keep_dims": keep_dims})


@pytest.mark.parametrize("case", layer_op_params({"mean"}))
def test_single_op_matches_tflm(case, oracle):
    assert_layer_op_case_matches_oracle(oracle, case, {"mean": mean_model})


@pytest.mark.parametrize("target", ["host64", "cortex-m4"])
def test_persistent_and_scratch_requests(target):
    """MEAN asks for three scratch buffers (int8, 4-d input reduced over two axes) in TFLM's
    order (PrepareMeanOrSumHelper: the int32 sums, the input iterator, the resolved axes) and
    no persistent bytes beyond its OpData."""
    it = Interpreter.from_bytes(mean_model(np.random.default_rng(0)), target=target)
    assert kernel_persistent(it) == (1, it.target.sizeof("OpDataReduce"))
    assert scratch_sizes(it) == [16, 16, 8]
