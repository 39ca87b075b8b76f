"""A TFLM application on the virtual MCU: its operators, one row each, as TFLM dispatched them.

TFLM runs a model in `tflite::MicroInterpreterGraph::InvokeSubgraph(int)`: for each node, an
indirect call (`blx rN`) to its registration's invoke function, bracketed, when the application
installed a MicroProfiler, by indirect calls of the profiler's BeginEvent and EndEvent (virtual
methods), BeginEvent given the operator's name. So an operator is the time from one such call
to a kernel to its return, and the interpreter's own time is what InvokeSubgraph spends
between them. The kernels cannot be told apart by name: each TFLM kernel's Eval is local to an
anonymous namespace, with the same mangled name in every kernel file; elf.py keys such symbols
by their source file (STT_FILE), and the operator is named by the profiler's tag when there is
one, else from that file.

Code hooks at the call sites of InvokeSubgraph (found by disassembling it) and at their return
addresses read the running cycle count (clock.RunningCycles: block-granular, so an operator's
cycles run from the end of the calling block to the end of the block it returns to). The
MicroProfiler's ticks, when the firmware read DWT_CYCCNT around an operator, are the difference
of the last value read before the call and the first one after it: what the profiler prints.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Callable, Optional

import capstone
from unicorn import unicorn_const as UC
import unicorn.arm_const as arm
from unicorn.arm_const import UC_ARM_REG_LR, UC_ARM_REG_R0, UC_ARM_REG_R1

from ..demangle import Demangler, unqualified, without_parameters
from ..elf import ElfImage, Symbol
from .call_watch import CallWatch, ReturnHooks

INVOKE = "_ZN6tflite16MicroInterpreter6InvokeEv"
INVOKE_SUBGRAPH = "_ZN6tflite21MicroInterpreterGraph14InvokeSubgraphEi"
# what MicroInterpreter::arena_used_bytes() returns: the interpreter's method when it is out of
# line, the allocator's it calls (TFLM 90b983c2 inlines the first) otherwise
ARENA_USED_BYTES = ("_ZNK6tflite16MicroInterpreter16arena_used_bytesEv", "_ZNK6tflite14MicroAllocator10used_bytesEv")
PROFILER_CLASS = "Profiler"           # TFLM's MicroProfiler and MicroProfilerInterface methods
# the framework's other indirect calls from InvokeSubgraph: the allocator's virtual
# ResetTempAllocations after each node (no kernel's invoke function is a method of these)
FRAMEWORK_CLASSES = (PROFILER_CLASS, "Allocator")
KERNEL_LIBRARY_PREFIX = "arm_"        # CMSIS-NN's functions: what a kernel dispatched to
TAG_BYTES = 64                        # longest operator name read from a profiler tag

# TFLM kernel source files whose name is not the operator's (the rest: the stem in capitals)
OP_OF_FILE = {"conv": "CONV_2D", "depthwise_conv": "DEPTHWISE_CONV_2D", "transpose_conv": "TRANSPOSE_CONV",
              "reduce": "REDUCE (MEAN, SUM or MAX)", "pooling": "POOL_2D", "activations": "RELU / RELU6",
              "elementwise": "ELEMENTWISE (ABS, SQRT, ...)", "comparisons": "COMPARISON",
              "logical": "LOGICAL_AND / LOGICAL_OR", "maximum_minimum": "MAXIMUM / MINIMUM",
              "floor": "FLOOR", "kernel_util": "?"}
POOL_OF_FUNCTION = {"AverageEval": "AVERAGE_POOL_2D", "MaxEval": "MAX_POOL_2D"}
REGISTERS = {f"r{i}": getattr(arm, f"UC_ARM_REG_R{i}") for i in range(13)} | \
    {"sb": arm.UC_ARM_REG_R9, "sl": arm.UC_ARM_REG_R10, "fp": arm.UC_ARM_REG_R11, "ip": arm.UC_ARM_REG_R12,
     "lr": arm.UC_ARM_REG_LR}


@dataclass
class OperatorRun:
    """One operator as TFLM invoked it."""
    index: int                   # in the order TFLM invoked them (node order within a subgraph)
    subgraph_depth: int          # 0: the model's main subgraph; 1 and more: inside IF / WHILE
    op: str                      # the profiler's tag, else from the kernel's source file
    op_source: str               # "profiler tag" | "kernel file" | "kernel function"
    kernel: str                  # the invoke function TFLM called, demangled, [its file]
    dispatched_to: list[str]     # library (CMSIS-NN) functions it entered, first entered first
    cycles: int
    instructions: int
    library_cycles: int          # of cycles: inside the library calls (their outermost)
    library_instructions: int
    interpreter_cycles_before: int   # InvokeSubgraph's own cycles since the previous operator
    interpreter_instructions_before: int
    profiler_ticks: Optional[int] = None

    @property
    def glue_cycles(self) -> int:
        """TFLM's part of the operator: its Eval outside the library calls."""
        return self.cycles - self.library_cycles

    def to_dict(self) -> dict:
        return dict(self.__dict__) | {"glue_cycles": self.glue_cycles,
                                      "glue_instructions": self.instructions - self.library_instructions}


@dataclass
class TflmRun:
    """What a TFLM application's run adds to its report."""
    operators: list[OperatorRun] = field(default_factory=list)
    arena_used_bytes: list[int] = field(default_factory=list)    # each value the application asked for
    unfinished: int = 0          # operators called and not returned at the end of the run
    invoke_stack_bytes: Optional[int] = None   # the deepest MicroInterpreter::Invoke went below its entry SP
    invokes: list[tuple[int, int]] = field(default_factory=list)   # (cycles, instructions) of each Invoke()

    @property
    def operator_cycles(self) -> int:
        return sum(o.cycles for o in self.operators if o.subgraph_depth == 0)

    @property
    def interpreter_cycles(self) -> int:
        return sum(o.interpreter_cycles_before for o in self.operators)

    def to_dict(self) -> dict:
        return {"operators": [o.to_dict() for o in self.operators],
                "operator_cycles": self.operator_cycles,
                "interpreter_cycles_between_operators": self.interpreter_cycles,
                "arena_used_bytes": self.arena_used_bytes[-1] if self.arena_used_bytes else None,
                "invoke_stack_bytes": self.invoke_stack_bytes,
                "invokes": [{"cycles": c, "instructions": i} for c, i in self.invokes],
                "operators_unfinished": self.unfinished}


def is_tflm_application(image: ElfImage) -> bool:
    sym = image.symbols.get(INVOKE_SUBGRAPH)
    return sym is not None and sym.is_func and sym.size > 0


def indirect_call_sites(sym: Symbol, read_code: Callable[[int, int], bytes]) -> list[tuple[int, int, str]]:
    """(address, size, register) of each `blx <register>` in the function's body."""
    md = capstone.Cs(capstone.CS_ARCH_ARM, capstone.CS_MODE_THUMB | capstone.CS_MODE_MCLASS)
    code = read_code(sym.addr, sym.size)
    return [(insn.address, insn.size, insn.op_str.strip()) for insn in md.disasm(code, sym.addr)
            if insn.mnemonic == "blx" and not insn.op_str.startswith("#")]


def op_of_function(name: str) -> str:
    """An operator's name from a global kernel function's, TFLM's way of naming them:
    "tflite::EvalAdd(...)" ADD, "tflite::EvalQuantizeReference" QUANTIZE, "SoftmaxEval"
    SOFTMAX, "AverageEval" AVERAGE_POOL_2D; anything else as it is."""
    last = unqualified(name)
    if last in POOL_OF_FUNCTION:
        return POOL_OF_FUNCTION[last]
    m = (re.fullmatch(r"Eval([A-Z]\w*?)(?:Reference|Int8|Int16|Float32|Float|Quantized)?", last)
         or re.fullmatch(r"([A-Z]\w*?)Eval", last))
    if m is None:
        return last
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", m.group(1)).upper()


class _Frame:
    """One InvokeSubgraph in progress."""

    def __init__(self, depth: int, cycles: int, instructions: int):
        self.depth = depth
        self.mark = cycles                   # end of the last operator (or the entry)
        self.mark_instructions = instructions
        self.tag: Optional[str] = None       # the profiler's BeginEvent tag for the next operator
        self.open: Optional[dict] = None     # the operator being run
        self.awaiting_ticks: Optional[tuple[OperatorRun, int]] = None   # (row, CYCCNT before it)


class TflmWatch:
    """The hooks that turn a TFLM application's run into operator rows. Installed before the
    engine first runs (a code hook added later misses code already translated), except the
    return hooks, added at a call and with the return site's translation dropped."""

    def __init__(self, image: ElfImage, uc, read_code: Callable[[int, int], bytes],
                 cycles: Callable[[], int], instructions: Callable[[], int],
                 last_block: Callable[[], Optional[tuple[int, int]]], stack_floor: Callable[[], int],
                 returns: ReturnHooks):
        """cycles, instructions, last_block and stack_floor as call_watch.CallWatch takes them:
        MicroInterpreter::Invoke is timed by one, its stack measured by painting from
        stack_floor() to its entry SP; returns: the run's hooks at return addresses."""
        self.image = image
        self.uc = uc
        self._cycles, self._instructions = cycles, instructions
        self._demangle = Demangler()
        self.run = TflmRun()
        self._frames: list[_Frame] = []
        self._last_cyccnt: Optional[int] = None
        self._sites: dict[int, int] = {}     # blx address -> Unicorn register of its target
        self._returns: dict[int, int] = {}   # return address -> blx address
        self._on_return_to = returns.on
        invoke = image.symbols[INVOKE_SUBGRAPH]
        for addr, size, reg in indirect_call_sites(invoke, read_code):
            if reg in REGISTERS:
                self._sites[addr] = REGISTERS[reg]
                self._returns[addr + size] = addr
        self._library = {s.addr: s.name for s in image.symbols.values()
                         if s.is_func and s.name.startswith(KERNEL_LIBRARY_PREFIX)}
        uc.hook_add(UC.UC_HOOK_CODE, self._on_entry, begin=invoke.addr, end=invoke.addr)
        for addr in self._sites:
            uc.hook_add(UC.UC_HOOK_CODE, self._on_call, begin=addr, end=addr)
        for addr in self._returns:
            uc.hook_add(UC.UC_HOOK_CODE, self._on_return, begin=addr, end=addr)
        for addr in self._library:
            uc.hook_add(UC.UC_HOOK_CODE, self._on_library, begin=addr, end=addr)
        invoke_top = image.symbols.get(INVOKE)
        self._invoke: Optional[CallWatch] = None
        if invoke_top is not None and invoke_top.is_func:
            self._invoke = CallWatch(uc, invoke_top, read_code, cycles, instructions, last_block,
                                     stack_floor, returns.on)
        for name in ARENA_USED_BYTES:
            arena = image.symbols.get(name)
            if arena is not None and arena.is_func:
                uc.hook_add(UC.UC_HOOK_CODE, self._on_arena_call, begin=arena.addr, end=arena.addr)

    # ---- the firmware's own CYCCNT reads (scs.SystemControlSpace.on_cyccnt)
    def on_cyccnt(self, value: int) -> None:
        frame = self._frames[-1] if self._frames else None
        if frame is not None and frame.open is None and frame.awaiting_ticks is not None:
            row, before = frame.awaiting_ticks
            row.profiler_ticks = (value - before) & 0xFFFFFFFF
            frame.awaiting_ticks = None
        self._last_cyccnt = value

    # ---- hooks
    def _on_entry(self, uc, address, size, _user) -> None:
        self._frames.append(_Frame(len(self._frames), self._cycles(), self._instructions()))
        self._on_return_to(uc.reg_read(UC_ARM_REG_LR) & ~1, self._on_subgraph_return)

    def _on_subgraph_return(self, uc, address) -> None:
        if self._frames:
            self._frames.pop()

    def _on_call(self, uc, address, size, _user) -> None:
        if not self._frames:
            return
        frame = self._frames[-1]
        target = uc.reg_read(self._sites[address]) & ~1
        sym = self.image.function_at(target)
        name = self._demangle(sym.name) if sym is not None else f"0x{target:08x}"
        qualified = without_parameters(name)
        if any(cls in qualified for cls in FRAMEWORK_CLASSES):
            if PROFILER_CLASS in qualified and "BeginEvent" in qualified:
                frame.tag = self._c_string(uc.reg_read(UC_ARM_REG_R1))
            return
        frame.awaiting_ticks = None
        frame.open = {"call": address, "sym": sym, "name": name, "start": self._cycles(),
                      "insns": self._instructions(), "dispatched": [], "cyccnt_before": self._last_cyccnt,
                      "library": [0, 0], "in_library": None}

    def _on_return(self, uc, address, size, _user) -> None:
        frame = self._frames[-1] if self._frames else None
        if frame is None or frame.open is None or self._returns[address] != frame.open["call"]:
            return
        op = frame.open
        now = self._cycles()
        tag, frame.tag = frame.tag, None
        row = OperatorRun(index=len(self.run.operators), subgraph_depth=frame.depth,
                          op=tag or self._op_of(op["sym"], op["name"]),
                          op_source="profiler tag" if tag else
                          "kernel file" if op["sym"] is not None and op["sym"].file else "kernel function",
                          kernel=op["name"], dispatched_to=op["dispatched"],
                          cycles=now - op["start"], instructions=self._instructions() - op["insns"],
                          library_cycles=op["library"][0], library_instructions=op["library"][1],
                          interpreter_cycles_before=op["start"] - frame.mark,
                          interpreter_instructions_before=op["insns"] - frame.mark_instructions)
        self.run.operators.append(row)
        frame.mark, frame.mark_instructions, frame.open = now, self._instructions(), None
        if op["cyccnt_before"] is not None:
            frame.awaiting_ticks = (row, op["cyccnt_before"])

    def _on_library(self, uc, address, size, _user) -> None:
        """A library function entered: named for the operator running; the outermost one is
        timed to its return."""
        for frame in reversed(self._frames):
            op = frame.open
            if op is not None:
                name = self._library[address]
                if name not in op["dispatched"]:
                    op["dispatched"].append(name)
                if op["in_library"] is None:
                    op["in_library"] = (self._cycles(), self._instructions())
                    self._on_return_to(uc.reg_read(UC_ARM_REG_LR) & ~1, self._on_library_return)
                return

    def _on_library_return(self, uc, address) -> None:
        for frame in reversed(self._frames):
            op = frame.open
            if op is not None:
                if op["in_library"] is not None:
                    cycles, insns = op["in_library"]
                    op["library"][0] += self._cycles() - cycles
                    op["library"][1] += self._instructions() - insns
                    op["in_library"] = None
                return

    def _on_arena_call(self, uc, address, size, _user) -> None:
        self._on_return_to(uc.reg_read(UC_ARM_REG_LR) & ~1, self._on_arena_return)

    def _on_arena_return(self, uc, _address) -> None:
        self.run.arena_used_bytes.append(uc.reg_read(UC_ARM_REG_R0))

    # ---- naming
    def _op_of(self, sym: Optional[Symbol], name: str) -> str:
        if sym is None or sym.file is None:
            return op_of_function(name)
        stem = PurePosixPath(sym.file).stem
        if stem == "pooling":
            for fn, op in POOL_OF_FUNCTION.items():
                if fn in name:
                    return op
        return OP_OF_FILE.get(stem, stem.upper())

    def _c_string(self, addr: int) -> Optional[str]:
        try:
            raw = bytes(self.uc.mem_read(addr, TAG_BYTES))
        except Exception:
            return None
        text = raw.split(b"\0", 1)[0]
        return text.decode("ascii", "replace") if text and text.isascii() else None

    def finish(self) -> TflmRun:
        self.run.unfinished = sum(1 for f in self._frames if f.open is not None)
        if self._invoke is not None:
            calls = self._invoke.calls
            self.run.invokes = [(c.cycles, c.instructions) for c in calls]
            stacks = [c.stack_bytes for c in calls if c.stack_bytes is not None]
            self.run.invoke_stack_bytes = max(stacks) if stacks else None
        return self.run
