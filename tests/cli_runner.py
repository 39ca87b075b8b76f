"""Running `micro-rt` in-process for the CLI tests, and the small builder-made models they use."""
from __future__ import annotations

from micro_rt.builder import ModelBuilder
from micro_rt.cli import main


def run_cli(capsys, *argv) -> tuple[int, str, str]:
    """Exit code, stdout, stderr of one `micro-rt` command."""
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


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
