"""Op resolvers: which kernel runs each operator, by builtin name and version or custom name.

As in TFLM, registration is explicit: `MutableOpResolver.add_builtin/add_custom`.
`builtin_op_resolver()` returns one holding every builtin micro_rt implements.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Optional

from .errors import UnsupportedOpError
from .kernel_api import Registration
from .schema import BUILTIN_CODE

# The host kernel modules, each exporting BUILTINS = [(op name, Registration, max version)]
# and/or CUSTOMS = [(custom name, Registration, version)]: TFLM's own custom operators (the
# Signal library), which its resolver registers by the names the models carry.
KERNEL_MODULES = ("conv", "depthwise_conv", "fully_connected", "pooling", "softmax", "reduce",
                  "elementwise", "activations", "quantize", "shape_ops", "svdf", "lstm",
                  "space_depth", "slicing", "gather", "broadcast",
                  "binary_ops", "comparisons", "unary_math",
                  "along_axis", "normalization",
                  "signal_spectrum", "signal_filterbank", "signal_stream",
                  "transpose_conv", "resize", "batch_matmul",
                  "control_flow", "resource_variables",
                  "ethos_u", "detection_postprocess", "circular_buffer")


@dataclass(frozen=True)
class _Entry:
    registration: Registration
    min_version: int
    max_version: int


class MutableOpResolver:
    """Maps operators to registrations."""

    def __init__(self) -> None:
        self._builtins: dict[str, _Entry] = {}
        self._customs: dict[str, _Entry] = {}

    def add_builtin(self, op: str, registration: Registration, min_version: int = 1,
                    max_version: Optional[int] = None) -> None:
        if op not in BUILTIN_CODE:
            raise ValueError(f"'{op}' is not a TFLite builtin operator; use add_custom")
        self._builtins[op] = _Entry(registration, min_version, max_version or min_version)

    def add_custom(self, name: str, registration: Registration, version: int = 1) -> None:
        self._customs[name] = _Entry(registration, 1, version)

    def copy(self) -> "MutableOpResolver":
        """A resolver with the same registrations, to add to without touching this one."""
        other = MutableOpResolver()
        other._builtins, other._customs = dict(self._builtins), dict(self._customs)
        return other

    def registered(self) -> list[str]:
        return sorted(self._builtins) + sorted(self._customs)

    def supports(self, op_name: str, is_custom: bool) -> bool:
        return op_name in (self._customs if is_custom else self._builtins)

    def find(self, op_name: str, is_custom: bool, version: int, op_index: int = -1) -> Registration:
        table = self._customs if is_custom else self._builtins
        entry = table.get(op_name)
        where = f"operator {op_index} " if op_index >= 0 else ""
        if entry is None:
            kind = "custom" if is_custom else "builtin"
            # TFLite's own wording first, so users recognise it.
            head = (f"Encountered unresolved custom op: {op_name}." if is_custom else
                    f"Didn't find op for builtin opcode '{op_name}' version '{version}'.")
            raise UnsupportedOpError(
                f"{head} ({where}{kind} op not registered; registered: "
                f"{', '.join(self.registered()) or 'nothing'}). "
                + ("Register it with MutableOpResolver.add_custom." if is_custom else ""))
        if not entry.min_version <= version <= entry.max_version:
            raise UnsupportedOpError(
                f"{where}{op_name} version {version} is not supported; registered versions "
                f"{entry.min_version}..{entry.max_version}")
        return entry.registration


def builtin_op_resolver() -> MutableOpResolver:
    """A resolver with every kernel micro_rt ships: the builtins and TFLM's own custom
    operators (as tflite-micro's resolver registers its Signal ops)."""
    resolver = MutableOpResolver()
    for module_name in KERNEL_MODULES:
        module = importlib.import_module(f"micro_rt.kernels.{module_name}")
        for op, registration, max_version in getattr(module, "BUILTINS", ()):
            resolver.add_builtin(op, registration, 1, max_version)
        for name, registration, version in getattr(module, "CUSTOMS", ()):
            resolver.add_custom(name, registration, version)
    return resolver
