"""What TFLM's Signal kernels share: options read from the flexbuffer map, the checks their
Prepare makes (counts, ranks, types; errors name the op and the tensor), and C integer
wrapping.

The Signal library (tensorflow/tflite-micro signal/micro/kernels) registers custom operators
(`SignalWindow`, `SignalRfft`, ...) whose options are a flexbuffer map; each kernel's init
allocates its params struct (and any state) persistently, which `allocate_op_data` accounts.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..errors import ModelError
from .kernel_util import kernel_error, tensor_desc
from micro_rt.kernel_api import KernelContext, Node


def option_int(options: dict, key: str, what: str) -> int:
    """An option TFLM reads with ElementAsInt32 (bools and floats convert as AsInt64 does)."""
    if key not in options:
        raise ModelError(f"{what}: custom options lack '{key}' (have {sorted(options)})")
    value = options[key]
    if isinstance(value, (bool, int, float)):
        return ((int(value) + (1 << 31)) % (1 << 32)) - (1 << 31)     # AsInt64, then int32
    raise ModelError(f"{what}: custom option '{key}' is {value!r}, not a number")


def allocate_op_data(ctx, *structs_or_bytes: Any) -> None:
    """Persistent allocations of an init, in order: a struct name (sized for the target) or
    a byte count (a C array)."""
    for item in structs_or_bytes:
        ctx.allocate_persistent(ctx.target.sizeof(item) if isinstance(item, str) else int(item))


def check_io(ctx: KernelContext, node: Node, inputs: int, outputs: int) -> tuple[list, list]:
    """TF_LITE_ENSURE_EQ(NumInputs/NumOutputs), and every tensor present."""
    if len(node.inputs) != inputs or len(node.outputs) != outputs:
        raise kernel_error(node, f"has {len(node.inputs)} inputs and {len(node.outputs)} outputs, "
                                 f"needs {inputs} and {outputs}")
    ins = [ctx.input(node, i) for i in range(inputs)]
    if any(t is None for t in ins):
        raise kernel_error(node, f"an input is absent (inputs {list(node.inputs)}, -1 = absent)")
    return ins, [ctx.output(node, i) for i in range(outputs)]


def check_tensor(node, t, role: str, dtype, rank: int | None = None) -> None:
    """TF_LITE_ENSURE_TYPES_EQ and the rank check of a Signal kernel's Prepare."""
    if np.dtype(t.dtype) != np.dtype(dtype):
        raise kernel_error(node, f"{role} {tensor_desc(t)} must be {np.dtype(dtype).name}")
    if rank is not None and len(t.shape) != rank:
        raise kernel_error(node, f"{role} {tensor_desc(t)} must have rank {rank}")


def check_index_range(node, what: str, values: Sequence[int], size: int) -> None:
    """Indices a kernel reads at must lie inside the tensor (TFLM reads out of bounds)."""
    found = np.asarray(values, dtype=np.int64)
    if found.size and (found.min() < 0 or found.max() > size):
        raise kernel_error(node, f"{what} reach outside 0..{size} ({int(found.min())}.."
                                 f"{int(found.max())})")


def wrap(x: np.ndarray | int, bits: int, signed: bool = True) -> np.ndarray:
    """C's conversion of an int64 value to an intN/uintN (two's complement wrap)."""
    x = np.asarray(x, dtype=np.int64)
    mask = (1 << bits) - 1
    if not signed:
        return x & mask
    half = 1 << (bits - 1)
    return ((x + half) & mask) - half


def msb32(x: np.ndarray) -> np.ndarray:
    """TFLM's MostSignificantBit32 in its GCC form: 32 - clz(x), and 32 for x == 0."""
    x = np.asarray(x, dtype=np.uint64) & 0xFFFFFFFF
    bits = np.zeros(x.shape, np.int64)
    for shift in (16, 8, 4, 2, 1):
        big = x >= (np.uint64(1) << np.uint64(shift))
        bits += np.where(big, shift, 0)
        x = np.where(big, x >> np.uint64(shift), x)
    bits += (x > 0)
    return np.where(bits == 0, 32, bits)


def msb64(x: np.ndarray) -> np.ndarray:
    """MostSignificantBit64 (GCC form): 64 - clzll(x), and 64 for x == 0."""
    x = np.asarray(x, dtype=np.uint64)
    high = msb32(x >> np.uint64(32))
    low = msb32(x & np.uint64(0xFFFFFFFF))
    return np.where(x == 0, 64, np.where((x >> np.uint64(32)) > 0, high + 32, low))
