"""`micro-rt fit`: RAM and flash against a budget, with a verdict only where micro_rt can back it.

RAM = tensor arena (head + tail + temp) + kernel stack + firmware static data; flash = model +
kernel code. The arena is planned; stack, static data and code are measured by one emulated
inference of micro_rt's C kernels of the chosen flavour (CMSIS-NN-style or reference). Whatever
is left out (an operator without a kernel, one that fell back to a host kernel) is listed and
"fits" is not claimed:
the verdict is "cannot tell", unless what is counted already exceeds a budget, which the missing
parts could only add to.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

from .allocator import ArenaPlan
from .errors import MicroRtError, UnsupportedOpError
from .inputs import random_inputs
from .interpreter import Interpreter
from .report import format_bytes, kernels_fields, kernels_label

FITS, DOES_NOT_FIT, CANNOT_TELL = "fits", "does not fit", "cannot tell"


def ops_without_kernels(it: Interpreter) -> list[str]:
    """'0 ethos-u (custom op)' for every operator the interpreter's resolver has no kernel for
    ('1:0 ...' for operator 0 of subgraph 1)."""
    found = []
    for sg in it.model.subgraphs:
        for op in sg.operators:
            try:
                it.resolver.find(op.op_name, op.is_custom, op.version, op.index)
            except UnsupportedOpError:
                number = f"{sg.index}:{op.index}" if sg.index else f"{op.index}"
                found.append(f"{number} {op.op_name} "
                             f"({'custom op' if op.is_custom else f'builtin version {op.version}'})")
    return found


def ops_not_simulated(it: Interpreter) -> list[tuple[int, str, str]]:
    """(index, op, why) for every operator whose kernel accounts its arena but whose
    computation micro_rt does not simulate (Vela's ethos-u: the NPU)."""
    found = []
    for op in it.model.main.operators:
        try:
            registration = it.resolver.find(op.op_name, op.is_custom, op.version, op.index)
        except UnsupportedOpError:
            continue
        if registration.not_simulated:
            found.append((op.index, op.op_name, registration.not_simulated))
    return found


@dataclass
class KernelMeasurement:
    """What one emulated inference of micro_rt's C kernels measured."""
    stack_bytes: int
    static_bytes: int
    code_bytes: int
    ops_on_host: list[str]        # ran on a host kernel: no C kernel, nothing measured


def measure_kernels(data: bytes, target: str,
                    progress: Optional[Callable[[int, int], None]] = None,
                    kernels: str = "cmsis-nn") -> KernelMeasurement:
    """Run one inference on the virtual MCU with micro_rt's C kernels of the flavour `kernels`
    (the CMSIS-NN-style ones, or the reference ones)."""
    with Interpreter.from_bytes(data, target=target, kernels=kernels, emulate=True) as it:
        for i, x in enumerate(random_inputs(it, 0)):
            it.set_input(x, i)
        it.invoke(progress=progress)
        return kernel_measurement(it)


def kernel_measurement(it: Interpreter) -> KernelMeasurement:
    """What the last inference of `it` (emulated, with its flavour's C kernels) measured."""
    executor = it.executor
    return KernelMeasurement(max((r.stack_bytes for r in it.last_run), default=0),
                             executor.static_ram_bytes(), executor.code_bytes(),
                             [f"{r.subgraph}:{r.index} {r.op}" if r.subgraph else f"{r.index} {r.op}"
                              for r in it.last_run if not r.on_mcu])


@dataclass
class FitReport:
    model: str
    plan: ArenaPlan
    kernels: str
    model_bytes: int
    ram_budget: Optional[int]       # None: RAM is reported, not judged (micro-rt report)
    flash_budget: Optional[int]
    measured: Optional[KernelMeasurement] = None
    # Why kernel stack and code are left out by the user's choice (host target, --no-emulate);
    # None when they are part of the question.
    scope: Optional[str] = None
    not_accounted: list[str] = field(default_factory=list)
    unresolved_ops: list[str] = field(default_factory=list)
    board: Optional[str] = None       # the budgets and core are this board's (--board)
    budget_source: str = ""           # where the budgets come from, when not given plainly

    @property
    def ram_used(self) -> int:
        m = self.measured
        return self.plan.required_bytes + (m.stack_bytes + m.static_bytes if m else 0)

    @property
    def flash_used(self) -> int:
        return self.model_bytes + (self.measured.code_bytes if self.measured else 0)

    def _verdict(self, used: int, budget: Optional[int]) -> Optional[str]:
        if budget is None:
            return None
        if used > budget:
            return DOES_NOT_FIT          # true whatever is missing: it could only add
        return CANNOT_TELL if self.not_accounted else FITS

    @property
    def verdict(self) -> str:
        parts = [v for v in (self._verdict(self.ram_used, self.ram_budget),
                             self._verdict(self.flash_used, self.flash_budget)) if v]
        for v in (DOES_NOT_FIT, CANNOT_TELL):
            if v in parts:
                return v
        return FITS

    @property
    def exit_code(self) -> int:
        return {FITS: 0, DOES_NOT_FIT: 1, CANNOT_TELL: 3}[self.verdict]

    def as_dict(self) -> dict:
        m, complete = self.measured, not self.not_accounted
        as_bool = {FITS: True, DOES_NOT_FIT: False, CANNOT_TELL: None, None: None}

        def resource(used, budget, **parts):
            return {"budget": budget, "used": used,
                    "margin": None if budget is None else budget - used,
                    "fits": as_bool[self._verdict(used, budget)], "complete": complete, **parts}

        return {
            "fits": as_bool[self.verdict], "verdict": self.verdict,
            "target": self.plan.target, "board": self.board, "budget_source": self.budget_source,
            **kernels_fields(self.kernels),
            "scope": self.scope or "arena, kernel stack, static data, model and kernel code",
            "not_accounted": self.not_accounted,
            "ram": resource(self.ram_used, self.ram_budget, arena_bytes=self.plan.required_bytes,
                            kernel_stack_bytes=m.stack_bytes if m else None,
                            static_bytes=m.static_bytes if m else None),
            "flash": resource(self.flash_used, self.flash_budget, model_bytes=self.model_bytes,
                              kernel_code_bytes=m.code_bytes if m else None),
            "arena": {"head_bytes": self.plan.head_bytes, "tail_bytes": self.plan.tail_bytes,
                      "total_bytes": self.plan.total_bytes, "required_bytes": self.plan.required_bytes},
            "measured_on_virtual_mcu": m is not None,
            "unresolved_ops": self.unresolved_ops,
        }

    def _line(self, what: str, used: int, budget: Optional[int]) -> str:
        counted = " counted so far" if self.not_accounted else ""
        if budget is None:
            return f"{what}: {format_bytes(used)}{counted} (no budget given)"
        margin = budget - used
        verdict = self._verdict(used, budget)
        word = {FITS: "fits", DOES_NOT_FIT: "does NOT fit", CANNOT_TELL: "cannot tell"}[verdict]
        after = " before the parts not accounted for" if verdict == CANNOT_TELL else ""
        return (f"{what}: {format_bytes(used)}{counted} of {format_bytes(budget)} -> {word}, "
                f"margin {margin:+d} B ({margin / budget:+.1%}){after}")

    def text(self) -> str:
        plan, m = self.plan, self.measured
        verdict = self.verdict
        head = {FITS: "FITS", DOES_NOT_FIT: "DOES NOT FIT", CANNOT_TELL: "CANNOT TELL"}[verdict]
        if self.scope and verdict != CANNOT_TELL:
            head += f", {self.scope}"
        where = f"board {self.board} ({plan.target})" if self.board else plan.target
        lines = [f"{head}: {self.model} on {where}, kernels {kernels_label(self.kernels)}"]
        n = len(self.not_accounted)
        things = f"{n} part{'s' if n != 1 else ''} not accounted for (listed below)"
        if verdict == CANNOT_TELL:
            lines.append(f"no verdict: {things}")
        elif verdict == DOES_NOT_FIT and n:
            over = " and ".join(name for name, used, budget in
                                (("RAM", self.ram_used, self.ram_budget),
                                 ("flash", self.flash_used, self.flash_budget))
                                if budget is not None and used > budget)
            lines.append(f"what is counted already exceeds the {over} budget; the {things} "
                         "would only add to it")
        stack = (f" + kernel stack {m.stack_bytes} + static data {m.static_bytes}" if m else
                 "" if self.scope else " + kernel stack and static data not measured")
        code = (f" + kernel code {m.code_bytes}" if m else
                "" if self.scope else " + kernel code not measured")
        temp = (", + temp peak while preparing and 16-byte rounding"
                if plan.required_bytes > plan.total_bytes else "")
        lines += [
            self._line("RAM  ", self.ram_used, self.ram_budget),
            f"      arena {plan.required_bytes} (head {plan.head_bytes} + tail {plan.tail_bytes}{temp})"
            + stack,
            self._line("flash", self.flash_used, self.flash_budget),
            f"      model {self.model_bytes}" + code,
        ]
        if m:
            lines.append("      stack and code measured by running one inference of micro_rt's C "
                         "kernels on the virtual MCU")
        if self.board:
            lines.append(f"budgets: {self.budget_source}")
        if self.not_accounted:
            lines.append("not accounted for:")
            lines += [f"  - {item}" for item in self.not_accounted]
        return "\n".join(lines)


def assess(model: str, data: bytes, it: Interpreter, ram_budget: Optional[int],
           flash_budget: Optional[int], measure: bool = True,
           progress: Optional[Callable[[int, int], None]] = None,
           measured: Optional[KernelMeasurement] = None) -> FitReport:
    """The fit of the model planned by `it` (a plan-only interpreter with the user's kernels,
    target and planner). `measure=False` (--no-emulate) keeps kernel stack and code out of the
    question by the user's choice. `measured`: an inference already emulated by the caller
    (micro-rt report profiles once and judges the fit from the same run)."""
    report = FitReport(model, it.plan, it.kernels, len(data), ram_budget, flash_budget,
                       unresolved_ops=it.unresolved)
    missing = ops_without_kernels(it)
    report.not_accounted += [f"op {op}: no kernel registered, so its op data, scratch buffers, "
                             "stack and code are not counted" for op in missing]
    not_simulated = ops_not_simulated(it)
    if it.target.is_host:
        report.scope = "arena and model only (host target: kernel stack and code are not modelled)"
    elif not measure:
        report.scope = "arena and model only (kernel stack and code not measured: --no-emulate)"
    elif missing:
        report.not_accounted.append("kernel stack, static data and code: not measured, the model "
                                    "cannot run without the kernels above")
    elif not_simulated:
        report.not_accounted.append("kernel stack, static data and code: not measured, the model "
                                    "cannot run on the virtual MCU, where NPU operators are not simulated (listed below)")
    else:
        try:
            report.measured = measured or measure_kernels(data, it.target.name, progress, it.kernels)
        except MicroRtError as e:
            report.not_accounted.append("kernel stack, static data and code: not measured, the "
                                        f"emulated inference failed: {' '.join(str(e).split())}")
        else:
            report.not_accounted += [f"op {op}: no {it.kernels} C kernel (ran on a host kernel), so its "
                                     "stack and code are not measured" for op in report.measured.ops_on_host]
    if not report.scope:      # RAM is exact; the NPU's compute and driver are another matter
        report.not_accounted += [f"op {index} {op}: {why} (its op data, scratch buffers and "
                                 "tensors are counted in the arena)" for index, op, why in not_simulated]
    return report
