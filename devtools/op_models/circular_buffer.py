"""A streaming CIRCULAR_BUFFER model (`streaming_model`): the buffer, then a RESHAPE of it, with
the period from the options or TFLM's shape rule. The CIRCULAR_BUFFER tests
(tests/test_circular_buffer.py, test_vmcu_custom.py, ...) and benchmarks/bench_op_cycles.py
share it."""
from __future__ import annotations

from typing import Any

import numpy as np
from flatbuffers import flexbuffers

from micro_rt.builder import ModelBuilder


def streaming_model(slots: int, depth: int, cycles_max: int | None, width: int = 1,
                    dtype: str = "INT8") -> bytes:
    b = ModelBuilder()
    q: dict[str, Any] = {"scale": 0.1, "zero_point": 0}
    x = b.add_tensor("x", [1, 1, width, depth], dtype, **q)
    buf = b.add_tensor("buffer", [1, slots, width, depth], dtype, **q)
    flat = b.add_tensor("flat", [1, slots * width * depth], dtype, **q)
    shape = b.add_tensor("shape", [2], "INT32", data=np.array([1, slots * width * depth], np.int32))
    options = flexbuffers.Dumps({"cycles_max": cycles_max}) if cycles_max is not None else b""
    b.add_operator("CIRCULAR_BUFFER", [x], [buf], custom_options=options)
    b.add_operator("RESHAPE", [buf, shape], [flat])
    b.inputs, b.outputs = [x], [flat, buf]
    return b.build()

