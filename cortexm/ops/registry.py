"""How an operator's C kernel is registered: each family module of this package lists its own
kernels (`KERNELS`, and ops.reference the reference flavour's `REFERENCE_KERNELS`), keyed by
(operator, input type), and the package puts the families' tables together (`merge`), so adding
a kernel is its runner and one line in the module it lives in."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping, Optional

from micro_rt.cmsis_nn_scratch import ScratchSize

from .context import CallContext, KernelCall

Runner = Callable[[CallContext], list[KernelCall]]

# Input element types a kernel is registered for; ANY: data movement, any element size;
# CONTROL: control flow and resource variables, whatever their tensors hold: the host kernel
# decides what to copy and the runner makes the copies (McuExecutor runs them so).
INT8, INT16, FLOAT32, ANY, CONTROL = "int8", "int16", "float32", "any", "control"

KernelKey = tuple[str, str]


@dataclass(frozen=True)
class OpKernel:
    """How an operator runs on the virtual MCU for one input type: the runner that describes
    its kernel calls and, for a reference-flavour kernel that needs scratch memory, the
    requests of TFLM's reference kernel (a CMSIS-NN-style kernel's are its *_get_buffer_size,
    the firmware's C called on the host by micro_rt/cmsis_nn_scratch.py, which the host's arena
    accounting reads too; a tuple when TFLM requests several buffers). `libm`: its float32
    results come from newlib's expf / tanhf / logf (cosf / sinf / expm1f for the unary math
    family), within a few ulp of the host's glibc, not bit-equal (every other float32 kernel is
    bit-exact with its twin). `persistent`: (node, tensors) -> the bytes of each of TFLM's
    persistent buffers the kernel writes at invoke (already in the plan's tail; on the MCU the
    executor gives them memory after the variable tensors), () when none."""
    runner: Runner
    scratch: Optional[ScratchSize] = None
    libm: bool = False
    persistent: Optional[Callable[..., tuple[int, ...]]] = None


def merge(*tables: Mapping[KernelKey, OpKernel]) -> dict[KernelKey, OpKernel]:
    """The families' tables as one, in the order given; a key two families register is a
    mistake (which kernel would run?), refused by name."""
    merged: dict[KernelKey, OpKernel] = {}
    for table in tables:
        for key, kernel in table.items():
            if key in merged:
                raise ValueError(f"{key[0]} ({key[1]}) is registered by two families: "
                                 f"{merged[key].runner} and {kernel.runner}")
            merged[key] = kernel
    return merged
