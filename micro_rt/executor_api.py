"""How a machine that runs a model's plan plugs into the interpreter, so that the core (reading,
resolving, planning, the interpreter and the host kernels) imports no machine.

An executor is made by the interpreter's first emulated invoke, as `executor_class()(interpreter,
**mcu_options)`, and from then on runs each whole invoke (`invoke(progress)`: one record per
operator) until `close()`. The class is found by name in the `micro_rt.executors` entry-point
group of the installed distribution (pyproject.toml): micro-rt's own is "cortex-m", the virtual
Cortex-M (`micro_rt.cortexm.executor.McuExecutor`), which loads Unicorn only when a model is
emulated. Another package can add one the same way.
"""
from __future__ import annotations

from importlib import metadata
from typing import Any, Callable, Optional, Protocol

from .errors import EmulationError

EXECUTOR_GROUP = "micro_rt.executors"
DEFAULT_EXECUTOR = "cortex-m"
DISTRIBUTION = "micro-rt"


class Executor(Protocol):
    """What the interpreter asks of the machine that runs its plan."""

    def invoke(self, progress: Optional[Callable[[int, int], None]] = None) -> list[Any]:
        """Run one whole invoke; the operators' records (op_records.OpRecord) in plan order."""

    def close(self) -> None:
        """Free the machine now; the interpreter makes a new one if it is invoked again."""


def executor_class(name: str = DEFAULT_EXECUTOR) -> Callable[..., Executor]:
    """The executor registered as `name` in the `micro_rt.executors` entry points, or an
    EmulationError saying that none is installed (a source tree used without `pip install`)."""
    # micro-rt's own entry points first: reading one distribution's metadata takes under a
    # millisecond, scanning every installed one about 7 ms of each emulating process
    try:
        own = metadata.distribution(DISTRIBUTION).entry_points
    except metadata.PackageNotFoundError:
        own = metadata.EntryPoints(())
    found = [ep for ep in own if ep.group == EXECUTOR_GROUP and ep.name == name]
    if not found:
        found = [ep for ep in metadata.entry_points(group=EXECUTOR_GROUP) if ep.name == name]
    if not found:
        raise EmulationError(f"no executor '{name}' is installed (entry-point group {EXECUTOR_GROUP}): "
                             "install micro-rt (pip install -e .) so that the virtual MCU is found")
    return found[0].load()
