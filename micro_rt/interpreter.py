"""The interpreter: load, resolve, init, prepare, plan, invoke, with `tflite_micro.runtime`'s API.

    it = micro_rt.Interpreter.from_file("model.tflite")      # arena_size=None: the minimum
    it.set_input(x, 0); it.invoke(); y = it.get_output(0)

Activations live in one numpy byte array laid out exactly as the planner placed them in
the arena's head, so an offset reported by `plan` is the offset the kernels really use. A
model with several subgraphs (IF, WHILE, CALL_ONCE) is loaded, planned and run as TFLM's
MicroInterpreterGraph does (`interpreter_graph.py`, the interpreter's `graph`): every
subgraph's kernels are initialised and prepared, their tensors share one plan, and
control-flow kernels run subgraphs through `graph.invoke_subgraph`.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

import numpy as np

from . import compat
from .allocator import ArenaPlan, TflmAllocator
from .arena import align_up
from .blas import BlasThreadLimit
from .compat import InterpreterConfig
from .context import Tensor, reset_variable
from .errors import (EmulationError, InputError, InputTypeError, KernelError,
                     MicroRtError, ModelError)
from .files import read_model_file
from .executor_api import Executor, executor_class
from .kernel_api import Node
from .model import Model, read_model, undefined_reads
from .resolver import MutableOpResolver
from .planner import PLANNERS
from .resource_variables import ResourceVariables, resource_variable_count
from .flavours import KERNEL_FLAVOURS, default_kernels
from .targets import TARGETS, Target, get_target
from .interpreter_graph import InterpreterGraph
from .tensor_access import TensorAccess

def _as_model(model: Any) -> Model:
    if isinstance(model, (bytes, bytearray, memoryview)):
        model = read_model(model)
    if not isinstance(model, Model):
        raise InputTypeError(f"Interpreter needs a micro_rt Model or the model's bytes (or "
                             f"use Interpreter.from_file), got {type(model).__name__}")
    return model


def _target_and_kernels(target: Any, kernels: Optional[str]) -> tuple[Target, str]:
    """The target, and the kernel flavour: the one given, else the one TFLM is built with
    for the target (flavours.default_kernels: cmsis-nn on a Cortex-M core, reference on the
    host)."""
    try:
        target_info = get_target(compat.check_name("target", target, TARGETS))
    except InputError:
        raise
    except MicroRtError as e:
        raise InputError(str(e)) from None
    if kernels is None:
        return target_info, default_kernels(target_info)
    if compat.check_name("kernels", kernels, KERNEL_FLAVOURS) not in KERNEL_FLAVOURS:
        raise InputError(f"unknown kernels '{kernels}'; choose from {', '.join(KERNEL_FLAVOURS)}")
    return target_info, kernels


class Interpreter(TensorAccess):
    """Runs a .tflite model the way TFLM does: on the host kernels, or, when asked
    (`emulate=True`, on a Cortex-M target), on the virtual MCU with the flavour's C kernels."""

    def __init__(self, model: Model | bytes, custom_op_registerers: Optional[Sequence[Any]] = None,
                 arena_size: Optional[int] = None,
                 intrepreter_config: Any = InterpreterConfig.kAllocationRecording,
                 alt_decompression_memory_size: int = 0, *,
                 op_resolver: Optional[MutableOpResolver] = None, target: str = "cortex-m4",
                 kernels: Optional[str] = None, planner: str = "greedy",
                 preserve_all_tensors: bool = False, plan_only: bool = False,
                 emulate: bool = False, mcu_options: Optional[dict] = None,
                 blas_threads: Optional[int] = 1):
        """The positional arguments are tflite_micro's (`intrepreter_config` is spelled as
        there); micro_rt's own are keywords. `kernels` ("reference" or "cmsis-nn") is the
        flavour whose arena is planned; None: the one TFLM is built with for `target`
        (cmsis-nn on a Cortex-M core, reference on host64). The model runs on the host's
        kernels (bit-exact with either flavour's C kernels) unless `emulate=True`, which runs
        it on the virtual MCU of a Cortex-M target, with `mcu_options` for the machine.
        `plan_only=True` accepts operators without
        kernels (they count no op data and fail if invoked), so memory can be planned for
        models micro_rt cannot run. `blas_threads` caps numpy's BLAS thread pool during
        invoke (None leaves it alone): the matrices of microcontroller models are small,
        and waking BLAS threads for them costs more than it saves."""
        model = _as_model(model)
        arena_size = compat.check_arena_size(arena_size)
        compat.check_alt_decompression(alt_decompression_memory_size)
        preserve_all_tensors = (compat.check_flag("preserve_all_tensors", preserve_all_tensors)
                                or compat.preserves_all_tensors(intrepreter_config))
        self.plan_only = compat.check_flag("plan_only", plan_only)
        self.emulate = compat.check_flag("emulate", emulate)
        if compat.check_name("planner", planner, PLANNERS) not in PLANNERS:
            raise InputError(f"unknown planner '{planner}'; choose from {', '.join(PLANNERS)}")
        self.model = model
        target_info, self.kernels = _target_and_kernels(target, kernels)
        if self.emulate and target_info.is_host:
            raise InputError(f"emulate=True (run --emulate) needs a Cortex-M target, not {target_info.name}")
        self.mcu_options = compat.check_mcu_options(mcu_options, self.emulate, executor_class)
        self._blas = BlasThreadLimit(blas_threads)
        self._executor: Optional[Executor] = None
        self.last_run: list = []
        self.target = target_info
        self.preserve_all_tensors = preserve_all_tensors
        self.resolver = compat.resolver_with_registerers(custom_op_registerers, op_resolver)
        self.graph = InterpreterGraph(model, self.kernels, self.target)
        self.subgraphs = self.graph.subgraphs
        self._resolve()
        main = self.graph.main
        self.tensors, self.nodes, self.registrations = main.tensors, main.nodes, main.registrations
        self._context = self.graph.context
        variables = resource_variable_count(model)
        self.resource_variables = ResourceVariables(variables) if variables else None
        self._context.resource_variables = self.resource_variables
        self.plan: ArenaPlan = self._allocate(arena_size, planner)
        # planned like TFLM, refused at invoke
        self._undefined_reads = [f"subgraph {sg.index} {read}" if sg.index else read
                                 for sg in model.subgraphs for read in undefined_reads(sg)]
        self.arena_size = arena_size if arena_size is not None else self.plan.required_bytes

    # ---- construction ----------------------------------------------------------------
    @classmethod
    def from_file(cls, model_path: str | Path, custom_op_registerers: Optional[Sequence[Any]] = None,
                  arena_size: Optional[int] = None,
                  intrepreter_config: Any = InterpreterConfig.kAllocationRecording,
                  alt_decompression_memory_size: int = 0, **kwargs: Any) -> "Interpreter":
        """tflite_micro's `from_file`, plus micro_rt's keywords (target, kernels, ...)."""
        return cls(read_model(read_model_file(model_path)), custom_op_registerers, arena_size,
                   intrepreter_config, alt_decompression_memory_size, **kwargs)

    @classmethod
    def from_bytes(cls, model_data: bytes, custom_op_registerers: Optional[Sequence[Any]] = None,
                   arena_size: Optional[int] = None,
                   intrepreter_config: Any = InterpreterConfig.kAllocationRecording,
                   alt_decompression_memory_size: int = 0, **kwargs: Any) -> "Interpreter":
        """tflite_micro's `from_bytes`, plus micro_rt's keywords (target, kernels, ...)."""
        return cls(read_model(model_data), custom_op_registerers, arena_size, intrepreter_config,
                   alt_decompression_memory_size, **kwargs)

    def _resolve(self) -> None:
        """Each subgraph's registrations; every missing operator is named at once."""
        missing = self.graph.resolve(self.resolver)
        self.unresolved = [str(e) for e in missing]
        if missing and not self.plan_only:
            raise type(missing[0])(str(missing[0]) if len(missing) == 1 else
                                   f"{missing[0]} (and {len(missing) - 1} more unsupported operators)")

    def _allocate(self, arena_size: Optional[int], planner: str) -> ArenaPlan:
        """TFLM's AllocateTensors: start-up, init every subgraph's kernels, prepare them (in
        subgraph order), commit the plan."""
        self._allocator = TflmAllocator(self.model, self.target, arena_size, planner)
        self._context.allocator = self._allocator
        self._allocator.start_model()
        self.graph.init_subgraphs()
        self.graph.prepare_subgraphs(self._allocator)
        plan = self._allocator.commit(self.preserve_all_tensors)
        self.plan_head_bytes, self._allocator_buffers = plan.head_bytes, plan.buffers
        self._bind_memory(plan)
        return plan

    @property
    def memory_bytes(self) -> int:
        """Bytes of the interpreter's memory: the planned head, then the resource variables'
        buffers (each 16-aligned, standing for their tail allocations)."""
        variables = self.resource_variables.nbytes if self.resource_variables is not None else 0
        return max(self.plan_head_bytes + variables, 16)

    def _bind_memory(self, plan: ArenaPlan) -> None:
        self._variables: list[Tensor] = []
        self.rebind_arena(np.zeros(self.memory_bytes, np.uint8))
        for sub in self.subgraphs:
            for t in sub.tensors:
                if t.is_variable and not t.is_constant:
                    t.bind(np.zeros(t.shape, t.dtype) if t.dtype is not None else
                           np.zeros(t.nbytes, np.uint8))
                    self._variables.append(t)
                    reset_variable(t)
                elif not t.is_bound and t.nbytes == 0:
                    t.bind(np.zeros(t.shape, t.dtype) if t.dtype is not None else np.zeros(0, np.uint8))
        if self.resource_variables is not None:
            self.resource_variables.reset_all()

    def rebind_arena(self, memory: np.ndarray) -> None:
        """Lay the planned buffers over `memory` (uint8, at least head bytes): the virtual MCU
        hands in its mapped SRAM so host and emulated kernels share the same bytes."""
        if memory.size < self.memory_bytes:
            raise KernelError(f"arena memory of {memory.size} bytes is below the planned head "
                              f"{self.plan_head_bytes} and resource variables' "
                              f"{self.memory_bytes - self.plan_head_bytes}"
                              if self.resource_variables is not None else
                              f"arena memory of {memory.size} bytes is below the planned head "
                              f"{self.plan_head_bytes}")
        old = getattr(self, "_memory", None)
        if old is not None:
            memory[:old.size] = old[:memory.size]
        self._memory = memory
        self._context.scratch_views = scratch_views = []
        for b in self._allocator_buffers:
            region = self._memory[b.offset:b.offset + b.size]
            if b.kind == "scratch":
                scratch_views.append(region)
            else:
                t = self.subgraphs[b.subgraph].tensors[b.tensor]
                t.offset = b.offset
                if t.dtype is None:     # INT4, BFLOAT16: no numpy type, kept as raw bytes
                    t.bind(region[:t.nbytes])
                else:
                    t.bind(region[:t.nbytes].view(t.dtype).reshape(t.shape))
        if self.resource_variables is not None:
            self.resource_variables.layout(self._memory, align_up(self.plan_head_bytes))

    # ---- running ---------------------------------------------------------------------
    def invoke(self, progress: Optional[Callable[[int, int], None]] = None) -> None:
        """Run every operator: on the virtual MCU where it has a C kernel (with `emulate`),
        else on the host kernels. `last_run` keeps one record per operator; `progress(done,
        total)` is called after each."""
        if getattr(self, "_closed", False):
            raise InputError("the interpreter was closed (close() or the end of its `with` block): "
                             "create a new one to invoke the model again")
        for node, reg in zip(self.nodes, self.registrations):
            if reg.not_simulated:     # before the read check: an NPU's scratch inputs are its own
                raise KernelError(f"op {node.index} {node.op_name} cannot run: it {reg.not_simulated} "
                                  "(plan and fit count its arena)")
        if self._undefined_reads:
            more = len(self._undefined_reads) - 1
            raise ModelError(f"{self._undefined_reads[0]}, which is neither a subgraph input, a "
                             "constant, a variable nor written by any operator"
                             + (f" (and {more} more such reads)" if more else "")
                             + ": tflite-micro would read whatever its arena holds there, so "
                             "micro_rt does not run the model (its memory plan stands)")
        executor = self._mcu()
        with self._blas:
            if executor is not None:        # one firmware call: the device runtime walks the plan
                self.last_run = executor.invoke(progress)
            elif progress is None and len(self.subgraphs) == 1:
                self.last_run = self.graph.invoke_main()
            else:
                self.last_run = self.graph.invoke_each(progress)

    def run_on_host(self, node: Node) -> int:
        """One operator's host kernel during an invoke on the virtual MCU (InterpreterGraph)."""
        return self.graph.run_on_host(node)

    def _mcu(self):
        if not self.emulate:
            return None
        if self._executor is None:
            try:
                self._executor = executor_class()(self, **self.mcu_options)
            except MicroRtError:
                raise
            except Exception as e:  # e.g. unicorn.UcError: never a raw foreign error from invoke
                raise EmulationError(f"the virtual MCU could not be set up for this model: "
                                     f"{type(e).__name__}: {e}") from e
        return self._executor

    @property
    def executor(self):
        """The virtual MCU's run data (`cortexm.executor.McuExecutor`: emulation seconds, static
        RAM and code bytes of the C kernels, per-operator instruction budgets, the machine):
        made by the first emulated invoke; None before it, without `emulate` and after close()."""
        return self._executor

    def close(self) -> None:
        """Call every kernel's `free` with its user data, once, as TFLM does when the
        interpreter is destroyed; also releases the virtual MCU."""
        if getattr(self, "_closed", False):
            return
        self._closed = True
        self.graph.free_subgraphs()
        if self._executor is not None:
            self._executor.close()
            self._executor = None

    def __enter__(self) -> "Interpreter":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def reset(self) -> None:
        """Reset the variable tensors (RNN/LSTM/SVDF state) as TFLM's ResetVariableTensors:
        int8 ones to their zero point, the rest to zero; then each kernel's reset (state a
        kernel keeps itself, such as SignalFilterBankSpectralSubtraction's noise estimate), in
        every subgraph; and every resource variable to its default byte (as TFLM, a CALL_ONCE
        that ran does not run again)."""
        for t in self._variables:
            reset_variable(t)
        self.graph.reset_subgraphs()          # kernels' own state
        if self.resource_variables is not None:
            self.resource_variables.reset_all()

    # ---- memory --------------------------------------------------------------------
    def arena_used_bytes(self) -> int:
        """Head + tail, the figure TFLM's MicroInterpreter::arena_used_bytes() reports."""
        return self.plan.total_bytes

    def arena_required_bytes(self) -> int:
        """The smallest arena this model can be allocated in (temp peak included)."""
        return self.plan.required_bytes

    def print_allocations(self) -> None:
        """TFLM's RecordingMicroAllocator printout (totals, head, tail, then what each kind of
        persistent data used), to stderr, for this interpreter's target and kernels."""
        lines = compat.recording_allocator_lines(self.model, self.plan.head_bytes,
                                                 self.plan.tail_bytes,
                                                 self._allocator.arena.categories)
        sys.stderr.write("".join(line + "\r\n" for line in lines))   # TFLM ends lines so
        sys.stderr.flush()
