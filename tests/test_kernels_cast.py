"""CAST against the tflite-micro oracle where float32 meets integers: TFLM truncates and
saturates (NaN -> 0), in every pair of the types its CAST accepts (int8, int16, int32, uint32,
float32, bool), on seeded values and the edge values of each input type."""
from __future__ import annotations

import numpy as np
import pytest

from kernel_cases import assert_bits_equal, single_op
from micro_rt import Interpreter

TYPES = {"INT8": np.int8, "INT16": np.int16, "INT32": np.int32, "UINT32": np.uint32, "FLOAT32": np.float32,
         "BOOL": np.bool_}


def cast_inputs(dtype, rng, n: int = 64) -> np.ndarray:
    """Seeded values plus the type's edges; float32 also NaN, +-inf, -0, halves and values
    beyond every integer range."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, n).astype(np.bool_)
    if dtype == np.float32:
        edges = [0.0, -0.0, np.nan, np.inf, -np.inf, 0.5, -0.5, 127.9, 128.0, -128.5, -129.0, 32767.5, 32768.0,
                 -32769.0, 2.0 ** 31, -2.0 ** 31, 3e9, 2.0 ** 32, -3e9, 1e20, -1e20, 3.4e38, 1e-40]
        body = np.concatenate([rng.normal(0, 100, n // 2), rng.normal(0, 1e6, n // 2), np.exp(rng.uniform(0, 50, n))])
        return np.concatenate([edges, body]).astype(np.float32)
    info = np.iinfo(dtype)
    edges = [info.min, info.max, 0, 1, -1 if info.min < 0 else 2]
    return np.concatenate([edges, rng.integers(int(info.min), int(info.max) + 1, n, dtype=np.int64)]).astype(dtype)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("src", list(TYPES))
def test_cast_matches_tflm(src, oracle):
    rng = np.random.default_rng(len(src))
    x = cast_inputs(TYPES[src], rng).reshape(1, -1)
    for dst in TYPES:
        data = single_op("CAST", [dict(shape=x.shape, type=src)], dict(shape=x.shape, type=dst))
        ours, theirs = Interpreter.from_bytes(data), oracle.interpreter(data, 1 << 16)
        oracle.invoke_both(ours, theirs, [x])
        assert_bits_equal(ours.get_output(0), np.array(theirs.get_output(0)), f"CAST {src} -> {dst}")
