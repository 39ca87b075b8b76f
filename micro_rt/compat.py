"""What makes micro_rt a drop-in for `tflite_micro.runtime`, and the checks on what callers pass.

- `InterpreterConfig`: tflite_micro's two configurations (`intrepreter_config=`, sic);
  `kPreserveAllTensors` is micro_rt's `preserve_all_tensors=True`.
- Custom-op registerers: in tflite_micro, names of C functions that add custom ops to the
  interpreter's op resolver. micro_rt's kernels are Python, so a registerer is a callable
  taking the `MutableOpResolver` (it calls `add_custom`/`add_builtin` on it), or a
  "package.module:function" string naming one.
- `recording_allocator_lines`: the printout of TFLM's RecordingMicroAllocator, which
  `Interpreter.print_allocations()` writes to stderr.
- `check_*`: each constructor argument's type, refused with an `InputError` naming it.
"""
from __future__ import annotations

import enum
import importlib
import inspect
import numbers
from typing import Any, Callable, Iterable, Optional, Sequence

import numpy as np

from .errors import InputError, InputTypeError, MicroRtError, UnsupportedOpError
from .model import Model
from .resolver import MutableOpResolver, builtin_op_resolver


class InterpreterConfig(enum.Enum):
    """tflite_micro's interpreter configurations. Unlike TFLM, micro_rt records the
    allocations in both (print_allocations works with either)."""
    kAllocationRecording = 0
    kPreserveAllTensors = 1


def preserves_all_tensors(config: Any) -> bool:
    """True for kPreserveAllTensors: micro_rt's member or tflite_micro's (matched by name, so
    a script keeps working whichever module its `InterpreterConfig` comes from)."""
    if config is None:
        return False
    name = getattr(config, "name", None) if isinstance(config, enum.Enum) else None
    if name not in InterpreterConfig.__members__:
        raise InputTypeError(f"intrepreter_config must be InterpreterConfig.kAllocationRecording "
                             f"or InterpreterConfig.kPreserveAllTensors, got {config!r}")
    return name == "kPreserveAllTensors"


# ---- custom op registerers -----------------------------------------------------------------
Registerer = Callable[[MutableOpResolver], Any]


def _registerer(item: Any) -> tuple[str, Registerer]:
    if callable(item):
        return getattr(item, "__qualname__", repr(item)), item
    if isinstance(item, str):
        module_name, _, attr = item.partition(":")
        if not attr:
            raise InputError(f"custom op registerer '{item}' looks like the name of a C registerer; "
                             "micro_rt runs Python kernels: pass a callable taking the "
                             "MutableOpResolver, or 'package.module:function'")
        try:
            found = getattr(importlib.import_module(module_name), attr)
        except (ImportError, AttributeError) as e:
            raise InputError(f"custom op registerer '{item}' cannot be found: {e}") from None
        if not callable(found):
            raise InputTypeError(f"custom op registerer '{item}' is a {type(found).__name__}, "
                                 "not a function")
        return item, found
    raise InputTypeError(f"custom_op_registerers items must be callables or 'module:function' "
                         f"strings, got {type(item).__name__}")


def resolver_with_registerers(registerers: Optional[Sequence[Any]],
                              op_resolver: Optional[MutableOpResolver]) -> MutableOpResolver:
    """The resolver the interpreter uses: `op_resolver` (default: every builtin) with each
    registerer applied to it, in order. A resolver the caller passed is copied first."""
    if op_resolver is not None and not isinstance(op_resolver, MutableOpResolver):
        raise InputTypeError(f"op_resolver must be a micro_rt.MutableOpResolver, got "
                             f"{type(op_resolver).__name__}")
    if registerers is None:
        registerers = []
    if isinstance(registerers, (str, bytes)) or not isinstance(registerers, Iterable):
        raise InputTypeError(f"custom_op_registerers must be a list, got {type(registerers).__name__}")
    found = [_registerer(item) for item in registerers]
    if not found:
        return op_resolver if op_resolver is not None else builtin_op_resolver()
    resolver = op_resolver.copy() if op_resolver is not None else builtin_op_resolver()
    for name, register in found:
        try:
            register(resolver)
        except MicroRtError:
            raise
        except Exception as e:  # the user's code: report it as the registration that failed
            raise UnsupportedOpError(f"custom op registerer {name} failed: "
                                     f"{type(e).__name__}: {e}") from e
    return resolver


# ---- argument checks -----------------------------------------------------------------------
def check_arena_size(value: Any) -> Optional[int]:
    """None (the minimum) or a non-negative integer number of bytes; numpy integers count."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise InputTypeError(f"arena_size must be an integer number of bytes or None, got "
                             f"{type(value).__name__} {value!r}")
    if value < 0:
        raise InputError(f"arena_size must be a non-negative number of bytes, got {int(value)}")
    return int(value)


def check_name(argument: str, value: Any, choices: Iterable[str]) -> str:
    if not isinstance(value, str):
        raise InputTypeError(f"{argument} must be a string, one of {', '.join(choices)}; got "
                             f"{type(value).__name__} {value!r}")
    return value


def check_flag(argument: str, value: Any) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise InputTypeError(f"{argument} must be True or False, got {type(value).__name__} {value!r}")
    return bool(value)


def check_alt_decompression(value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
        raise InputTypeError(f"alt_decompression_memory_size must be a non-negative integer, "
                             f"got {value!r}")
    if value:
        raise InputError("alt_decompression_memory_size is for TFLM's DECODE operators "
                         "(compressed models), which micro_rt does not run; pass 0")


def check_mcu_options(options: Any, emulate: bool, executor_class: Callable[[], Callable[..., Any]]) -> dict:
    """The virtual MCU's keyword options, checked against the executor's own keywords and
    the types of their defaults, so a typo fails here and not at the first invoke."""
    if options is None:
        return {}
    if not isinstance(options, dict):
        raise InputTypeError(f"mcu_options must be a dict, got {type(options).__name__}")
    if not options:
        return {}
    if not emulate:
        raise InputError("mcu_options only apply when the model runs on the virtual MCU: "
                         "pass emulate=True (on a Cortex-M target)")
    params = {name: p for name, p in inspect.signature(executor_class()).parameters.items()
              if p.kind == inspect.Parameter.KEYWORD_ONLY}
    for key, value in options.items():
        if key not in params:
            raise InputError(f"mcu_options: unknown option {key!r}; the virtual MCU takes "
                             f"{', '.join(sorted(params))}")
        default = params[key].default
        takes_int = isinstance(default, int) or (default is None and "int" in str(params[key].annotation))
        if isinstance(default, bool):
            check_flag(f"mcu_options[{key!r}]", value)
        elif takes_int and not (default is None and value is None) and (
                isinstance(value, bool) or not isinstance(value, numbers.Integral)):
            raise InputTypeError(f"mcu_options[{key!r}] must be an integer, got "
                                 f"{type(value).__name__} {value!r}")
    return {k: (bool(v) if isinstance(params[k].default, bool) else
                int(v) if isinstance(v, numbers.Integral) else v) for k, v in options.items()}


# ---- the RecordingMicroAllocator printout --------------------------------------------------
# (micro_rt's arena category, TFLM's name, what it counts), in TFLM's order. TFLM records only
# these; the rest of the tail (allocator objects, builtin params, scratch handles) is in the
# totals but on no line.
_RECORDED = (("TfLiteEvalTensor data", "TfLiteEvalTensor data", "allocations"),
             ("Persistent TfLiteTensor data", "Persistent TfLiteTensor data", "tensors"),
             ("Persistent TfLiteTensor quantization data",
              "Persistent TfLiteTensor quantization data", "allocations"),
             ("Persistent buffer data", "Persistent buffer data", "allocations"),
             ("variable tensors", "TfLiteTensor variable buffer data", "allocations"),
             ("NodeAndRegistration struct", "NodeAndRegistration struct",
              "NodeAndRegistration structs"))


def recording_allocator_lines(model: Model, head: int, tail: int, categories: dict) -> list[str]:
    """TFLM's RecordingMicroAllocator::PrintAllocations, line for line. `categories` maps
    micro_rt's arena categories to records with used/requested/count."""
    prefix = "[RecordingMicroAllocator]"
    lines = [f"{prefix} Arena allocation total {head + tail} bytes",
             f"{prefix} Arena allocation head {head} bytes",
             f"{prefix} Arena allocation tail {tail} bytes"]
    # TFLM makes one allocation for all eval tensors (and all nodes) of a subgraph but
    # counts one per tensor (per node).
    per_item = {"TfLiteEvalTensor data": sum(len(sg.tensors) for sg in model.subgraphs),
                "NodeAndRegistration struct": sum(len(sg.operators) for sg in model.subgraphs)}
    for category, name, unit in _RECORDED:
        use = categories.get(category)
        if use is None or not (use.used or use.requested):
            continue
        count = per_item.get(category, use.count)
        lines.append(f"{prefix} '{name}' used {use.used} bytes with alignment overhead "
                     f"(requested {use.requested} bytes for {count} {unit})")
    return lines
