#!/usr/bin/env python3
"""Build the project's builder-made models: graphs the converter will not emit on request.

    python models/make_builder_models.py        (from the repository root, micro_rt installed)

Each function returns the model's bytes; the script writes them into models/. The files
are deterministic, and a test rebuilds them and compares bytes.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from flatbuffers import flexbuffers

from micro_rt.builder import ModelBuilder

HERE = Path(__file__).resolve().parent


def custom_atan() -> bytes:
    """x -> ATAN (custom op, flexbuffer options {offset: 0.5, taps: [1, 2, 3]}) -> RELU -> y."""
    b = ModelBuilder("micro_rt builder: custom ATAN op")
    x = b.add_tensor("x", [1, 8], "FLOAT32")
    a = b.add_tensor("atan", [1, 8], "FLOAT32")
    y = b.add_tensor("y", [1, 8], "FLOAT32")
    b.add_operator("ATAN", [x], [a], custom_options=flexbuffers.Dumps({"offset": 0.5, "taps": [1, 2, 3]}))
    b.add_operator("RELU", [a], [y])
    b.inputs, b.outputs = [x], [y]
    return b.build()


def offline_plan_chain() -> bytes:
    """x -> RELU -> RELU6 -> RELU -> y (float32 [1, 64]) with an OfflineMemoryAllocation plan
    that gives every tensor its own 256 bytes (no reuse: 1024 bytes of head)."""
    b = ModelBuilder("micro_rt builder: offline memory plan")
    t = [b.add_tensor(n, [1, 64], "FLOAT32") for n in ("x", "a", "b", "y")]
    for op, i in zip(("RELU", "RELU6", "RELU"), range(3)):
        b.add_operator(op, [t[i]], [t[i + 1]])
    b.inputs, b.outputs = [t[0]], [t[3]]
    plan = np.array([1, 1, 4, 0, 256, 512, 768], "<i4")
    b.add_metadata("OfflineMemoryAllocation", plan.tobytes())
    return b.build()


def odd_lifetimes_int8() -> bytes:
    """A long-lived early tensor: x -> RELU -> a; a -> 3 x RELU6 chain -> c; CONCAT(a, c) -> y.
    `a` stays live across the whole chain, so the planner must work around it."""
    b = ModelBuilder("micro_rt builder: odd lifetimes")
    q = {"scale": 0.05, "zero_point": -3}
    x = b.add_tensor("x", [1, 8, 8, 4], "INT8", **q)
    a = b.add_tensor("a", [1, 8, 8, 4], "INT8", **q)
    b.add_operator("RELU", [x], [a])
    prev = a
    for i in range(3):
        nxt = b.add_tensor(f"chain{i}", [1, 8, 8, 4], "INT8", **q)
        b.add_operator("RELU6", [prev], [nxt])
        prev = nxt
    y = b.add_tensor("y", [1, 8, 8, 8], "INT8", **q)
    b.add_operator("CONCATENATION", [a, prev], [y], options={"axis": 3})
    b.inputs, b.outputs = [x], [y]
    return b.build()


MODELS = {"custom_atan.tflite": custom_atan, "offline_plan_chain.tflite": offline_plan_chain,
          "odd_lifetimes_int8.tflite": odd_lifetimes_int8}


def main() -> int:
    for name, make in MODELS.items():
        (HERE / name).write_bytes(make())
        print(f"wrote models/{name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
