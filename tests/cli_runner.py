"""Running `micro-rt` in-process for the CLI tests, and the small builder-made models they use."""
from __future__ import annotations

import json

from micro_rt.builder import ModelBuilder
from micro_rt.cli import main


def run_cli(capsys, *argv) -> tuple[int, str, str]:
    """Exit code, stdout, stderr of one `micro-rt` command."""
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def run_json(capsys, *argv) -> tuple[int, dict]:
    """Exit code and JSON answer of one quiet `micro-rt` command."""
    code, out, _ = run_cli(capsys, *argv, "--json", "--quiet")
    return code, json.loads(out)


def chain_with(op: str, custom: bool = False) -> bytes:
    """int8 x -> RELU -> `op` -> z: an operator micro_rt may have no kernel for, after one it has."""
    b = ModelBuilder()
    x, y, z = (b.add_tensor(name, (1, 64), "INT8", scale=0.1, zero_point=0) for name in "xyz")
    b.add_operator("RELU", [x], [y])
    b.add_operator(op, [y], [z], **({"custom_options": b""} if custom else {}))
    b.inputs, b.outputs = [x], [z]
    return b.build()


def cast_from_uint8() -> bytes:
    """CAST uint8 -> int32: micro_rt runs it, tflite-micro refuses it at invoke."""
    b = ModelBuilder()
    x = b.add_tensor("x", (1, 8), "UINT8")
    y = b.add_tensor("y", (1, 8), "INT32")
    b.add_operator("CAST", [x], [y])
    b.inputs, b.outputs = [x], [y]
    return b.build()


def int16_conv_pool(side: int = 96) -> bytes:
    """An int16 image model of the size of an int16 visual-wake-words arena: a side x side x 1
    int16 image -> CONV_2D 3x3 (8 filters, 16x8) -> MAX_POOL_2D 2x2. At 96 its arena needs
    about 181 KiB (the 96x96x8 int16 activation and its input or pooled output live together):
    more than a 128 KiB DTCM, less than a 512 KiB AXI SRAM."""
    import numpy as np
    rng = np.random.default_rng(7)
    b = ModelBuilder("micro_rt test: int16 conv + pool")
    x = b.add_tensor("image", (1, side, side, 1), "INT16", scale=1 / 4096, zero_point=0)
    w = b.add_tensor("filters", (8, 3, 3, 1), "INT8", data=rng.integers(-127, 128, (8, 3, 3, 1)),
                     scale=[0.01] * 8, zero_point=[0] * 8)
    bias = b.add_tensor("bias", (8,), "INT64", data=rng.integers(-1000, 1000, 8))
    c = b.add_tensor("conv", (1, side, side, 8), "INT16", scale=1 / 2048, zero_point=0)
    b.add_operator("CONV_2D", [x, w, bias], [c], options=dict(
        padding="SAME", stride_w=1, stride_h=1, fused_activation_function="RELU"))
    y = b.add_tensor("pooled", (1, side // 2, side // 2, 8), "INT16", scale=1 / 2048, zero_point=0)
    b.add_operator("MAX_POOL_2D", [c], [y], options=dict(
        padding="VALID", stride_w=2, stride_h=2, filter_width=2, filter_height=2))
    b.inputs, b.outputs = [x], [y]
    return b.build()


def relu_model(path, n: int):
    """int8 x -> RELU -> y of n elements at `path`: an arena of about 2 n bytes and a seeded
    input of n (flash, in an exported image), to size a model against a board."""
    b = ModelBuilder()
    x, y = (b.add_tensor(name, (1, n), "INT8", scale=0.1, zero_point=0) for name in "xy")
    b.add_operator("RELU", [x], [y])
    b.inputs, b.outputs = [x], [y]
    path.write_bytes(b.build())
    return path
