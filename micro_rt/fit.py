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
from .errors import MicroRtError
from .fit_measure import KernelMeasurement, measure_kernels, ops_not_simulated, ops_without_kernels
from .interpreter import Interpreter
from .placement import Part, Placement, RamLayout, Role, place
from .runtimes import Runtime, TflmPricing
from .report import arena_for, compact_bytes, format_bytes, kernels_fields, kernels_label

FITS, DOES_NOT_FIT, CANNOT_TELL = "fits", "does not fit", "cannot tell"


@dataclass
class FitReport:
    model: str
    plan: ArenaPlan
    kernels: str
    model_bytes: int
    # One RAM budget (--ram, a bare target); None: judged by `layout`, or not at all
    # (micro-rt report without a budget).
    given_ram_budget: Optional[int]
    flash_budget: Optional[int]
    measured: Optional[KernelMeasurement] = None
    # Why kernel stack and code are left out by the user's choice (host target, --no-emulate);
    # None when they are part of the question.
    scope: Optional[str] = None
    not_accounted: list[str] = field(default_factory=list)
    unresolved_ops: list[str] = field(default_factory=list)
    board: Optional[str] = None       # the budgets and core are this board's (--board)
    budget_source: str = ""           # where the budgets come from, when not given plainly
    # A board's RAM regions: each part placed in one (micro_rt.placement), judged per region.
    layout: Optional[RamLayout] = None
    # --runtime tflm: TFLM's image and static RAM (measured builds) in place of micro_rt's
    tflm: Optional[TflmPricing] = None
    model_ops: frozenset = frozenset()       # the builtin operators the model uses

    @property
    def model_flash_bytes(self) -> int:
        """The model in flash: its constant tensors as the firmware plan keeps them, or the
        .tflite file when there is no plan (not measured)."""
        m = self.measured
        return m.plan.model_constants if m and m.plan else self.model_bytes

    def ram_parts(self) -> list[tuple[str, int, str]]:
        """(part, bytes, what it is) of the RAM counted."""
        plan, m = self.plan, self.measured
        temp = (", + temp peak while preparing and 16-byte rounding"
                if plan.required_bytes > plan.total_bytes else "")
        parts = [("arena", plan.required_bytes, f"{arena_for(self.kernels, plan.target)}: "
                  f"head {plan.head_bytes} + tail {plan.tail_bytes}{temp}")]
        if self.tflm is not None:
            return self.tflm.ram_parts(parts[0], m, set(self.model_ops))
        if m and m.plan:
            parts[0] = ("arena", plan.required_bytes, parts[0][2] + " (TFLM's arena; micro_rt's "
                        f"runtime allocates {m.runtime_arena_bytes}: the head and variable "
                        "tensors; its op data is the plan's, counted below)")
        if m:
            parts += [("stack", m.stack_bytes, f"high-water mark of {m.stack_scope}"),
                      ("static data", m.static_bytes, ".data and .bss the image keeps")]
            if m.plan:
                flags = f" (with the runtime's CALL_ONCE flags {m.plan.flags})" if m.plan.flags else ""
                parts.append(("plan structs", m.plan.ram, f"the calls' argument structs {m.plan.structs} "
                                                          f"(RAM, as TFLM's are) + those kernels write "
                                                          f"{m.plan.state}{flags}"))
        return parts

    def flash_parts(self) -> list[tuple[str, int, str]]:
        """(part, bytes, what it is) of the flash counted."""
        m = self.measured
        if self.tflm is not None:
            return self.tflm.flash_parts(self.model_bytes, set(self.model_ops))
        if not (m and m.plan):
            parts = [("model", self.model_bytes, "the .tflite file")]
        else:
            parts = [("model weights", m.plan.model_constants,
                      f"constant tensors as the plan keeps them (the .tflite file is {self.model_bytes})"),
                     ("op constants", m.plan.op_constants, "multipliers, shifts, lookup tables"),
                     ("plan", m.plan.flash, f"the call table {m.plan.table} + the argument structs' "
                                            f"initial values {m.plan.ram}")]
        if m:
            parts += [("code", m.code_bytes, f"start-up and runtime {m.runtime_code_bytes} + "
                                             f"kernels {m.kernel_code_bytes}"),
                      ("read-only data", m.rodata_bytes, "vector table, kernels' and libm's tables"),
                      (".data initial values", m.data_init_bytes, "copied to RAM at start-up"),
                      ("alignment padding", m.padding_bytes, "between sections, estimated")]
        return parts

    @property
    def ram_used(self) -> int:
        return sum(n for _, n, _ in self.ram_parts())

    @property
    def placement(self) -> Optional[Placement]:
        """Where each part of RAM goes on the board (None without a board's regions): the arena
        as a user can place it, the rest where the vendor's linker puts it."""
        if self.layout is None:
            return None
        roles = {"arena": Role.ARENA, "stack": Role.STACK}     # the rest is .data / .bss
        return place([Part(name, n, roles.get(name, Role.DATA)) for name, n, _ in self.ram_parts()],
                     self.layout)

    @property
    def ram_budget(self) -> Optional[int]:
        """The RAM judged against: the given budget, or the size of the board's regions the
        parts went to."""
        placement = self.placement
        return self.given_ram_budget if placement is None else placement.budget

    def _ram_verdict(self) -> Optional[str]:
        placement = self.placement
        if placement is None:
            return self._verdict(self.ram_used, self.ram_budget)
        return self._judged(placement.fits)

    @property
    def flash_used(self) -> int:
        return sum(n for _, n, _ in self.flash_parts())

    def _verdict(self, used: int, budget: Optional[int]) -> Optional[str]:
        return None if budget is None else self._judged(used <= budget)

    def _judged(self, fits: bool) -> str:
        if not fits:
            return DOES_NOT_FIT          # true whatever is missing: it could only add
        return CANNOT_TELL if self.not_accounted else FITS

    @property
    def verdict(self) -> str:
        parts = [v for v in (self._ram_verdict(),
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

        def parts(items):
            return [{"part": name, "bytes": n, "what": what} for name, n, what in items]

        def resource(used, budget, verdict, margin, **parts):
            return {"budget": budget, "used": used, "margin": margin, "fits": as_bool[verdict],
                    "complete": complete, **parts}

        placement = self.placement
        ram_margin = (placement.margin if placement else
                      None if self.ram_budget is None else self.ram_budget - self.ram_used)

        return {
            "fits": as_bool[self.verdict], "verdict": self.verdict,
            "target": self.plan.target, "board": self.board, "budget_source": self.budget_source,
            "runtime_priced": (Runtime.TFLM if self.tflm is not None else Runtime.MICRO_RT).value,
            "runtime_note": self.tflm.fit_note if self.tflm is not None else None,
            **kernels_fields(self.kernels, self.plan.target),
            "scope": self.scope or "arena, kernel stack, static data, model and kernel code",
            "not_accounted": self.not_accounted,
            "ram": resource(self.ram_used, self.ram_budget, self._ram_verdict(), ram_margin,
                            arena_bytes=self.plan.required_bytes,
                            kernel_stack_bytes=m.stack_bytes if m else None,
                            stack_scope=m.stack_scope if m else None,
                            static_bytes=m.static_bytes if m else None,
                            plan_state_bytes=m.plan.ram if m and m.plan else None,
                            parts=parts(self.ram_parts()),
                            placement=placement.as_dict() if placement else None),
            "flash": resource(self.flash_used, self.flash_budget,
                              self._verdict(self.flash_used, self.flash_budget),
                              None if self.flash_budget is None else self.flash_budget - self.flash_used,
                              model_bytes=self.model_flash_bytes,
                              model_file_bytes=self.model_bytes,
                              op_constants_bytes=m.plan.op_constants if m and m.plan else None,
                              plan_bytes=m.plan.flash if m and m.plan else None,
                              plan_table_bytes=m.plan.table if m and m.plan else None,
                              kernel_code_bytes=m.code_bytes if m else None,
                              runtime_code_bytes=m.runtime_code_bytes if m else None,
                              rodata_bytes=m.rodata_bytes if m else None,
                              data_init_bytes=m.data_init_bytes if m else None,
                              padding_bytes=m.padding_bytes if m else None,
                              parts=parts(self.flash_parts())),
            "image_functions": m.functions if m else None,
            "arena": {"head_bytes": self.plan.head_bytes, "tail_bytes": self.plan.tail_bytes,
                      "total_bytes": self.plan.total_bytes, "required_bytes": self.plan.required_bytes},
            "measured_on_virtual_mcu": m is not None,
            "unresolved_ops": self.unresolved_ops,
        }

    def summary(self) -> str:
        """The verdict in one line, as `profile --board` ends with it: 'does not fit
        nucleo-l4r5zi: RAM 2.56 MiB of 640 KiB (over by 1.93 MiB)'."""
        where = f"board {self.board}" if self.board else self.plan.target
        judged = [(what, used, budget) for what, used, budget in
                  (("RAM", self.ram_used, self.ram_budget), ("flash", self.flash_used, self.flash_budget))
                  if budget is not None]
        verdict = self.verdict
        placement = self.placement
        ram_over = placement is not None and self._judged(placement.fits) == DOES_NOT_FIT
        shown = ([j for j in judged if j[1] > j[2] or (j[0] == "RAM" and ram_over)]
                 if verdict == DOES_NOT_FIT else judged)
        figures = ", ".join(f"{what} {compact_bytes(used)} of {compact_bytes(budget)}"
                            + (f" (over by {compact_bytes(used - budget)})" if used > budget else "")
                            for what, used, budget in shown)
        if verdict == CANNOT_TELL:
            n = len(self.not_accounted)
            return (f"cannot tell whether it fits {where}: {n} part{'s' if n != 1 else ''} not "
                    f"accounted for; counted so far {figures}")
        problem = f"; {placement.problem}" if placement is not None and ram_over and placement.problem else ""
        return f"{verdict} {where}: {figures}{problem}"

    def text(self) -> str:
        plan, m = self.plan, self.measured
        verdict = self.verdict
        head = {FITS: "FITS", DOES_NOT_FIT: "DOES NOT FIT", CANNOT_TELL: "CANNOT TELL"}[verdict]
        if self.scope and verdict != CANNOT_TELL:
            head += f", {self.scope}"
        where = f"board {self.board} ({plan.target})" if self.board else plan.target
        lines = [f"{head}: {self.model} on {where}, kernels {kernels_label(self.kernels)}, runtime "
                 + ("TFLM" if self.tflm is not None else "micro_rt's own")]
        if self.tflm is not None:
            lines.append(self.tflm.fit_note)
        n = len(self.not_accounted)
        things = f"{n} part{'s' if n != 1 else ''} not accounted for (listed below)"
        if verdict == CANNOT_TELL:
            lines.append(f"no verdict: {things}")
        elif verdict == DOES_NOT_FIT and n:
            over = " and ".join(name for name, verdict in
                                (("RAM", self._ram_verdict()),
                                 ("flash", self._verdict(self.flash_used, self.flash_budget)))
                                if verdict == DOES_NOT_FIT)
            lines.append(f"what is counted already exceeds the {over} budget; the {things} "
                         "would only add to it")
        width = max(len(name) for name, _, _ in self.ram_parts() + self.flash_parts())
        counted = bool(self.not_accounted)
        placement = self.placement
        lines.append(budget_line("RAM  ", self.ram_used, self.ram_budget, self._ram_verdict(), counted, placement))
        lines += [f"  {name:<{width}} {n:>10,}  {what}" for name, n, what in self.ram_parts()]
        if not m:
            lines.append("  " + ("" if self.scope else "+ kernel stack and static data not measured"))
        if placement is not None:
            lines += placement_lines(self.layout.board if self.layout else "", placement)
        lines.append(budget_line("flash", self.flash_used, self.flash_budget,
                                 self._verdict(self.flash_used, self.flash_budget), counted))
        lines += [f"  {name:<{width}} {n:>10,}  {what}" for name, n, what in self.flash_parts()]
        if not m:
            lines.append("  " + ("" if self.scope else "+ kernel code not measured"))
        lines = [line for line in lines if line.strip()]
        if m and self.tflm is None:
            lines.append("stack measured by running one inference of micro_rt's C kernels on the "
                         "virtual MCU; code and data are what a --gc-sections link of the firmware "
                         "keeps for the functions that inference ran")
        if self.board:
            lines.append(f"budgets: {self.budget_source}")
        if self.not_accounted:
            lines.append("not accounted for:")
            lines += [f"  - {item}" for item in self.not_accounted]
        return "\n".join(lines)


def assess(model: str, data: bytes, it: Interpreter, ram_budget: Optional[int],
           flash_budget: Optional[int], measure: bool = True,
           progress: Optional[Callable[[int, int], None]] = None,
           measured: Optional[KernelMeasurement] = None,
           layout: Optional[RamLayout] = None, tflm: Optional[TflmPricing] = None) -> FitReport:
    """The fit of the model planned by `it` (a plan-only interpreter with the user's kernels,
    target and planner). `measure=False` (--no-emulate) keeps kernel stack and code out of the
    question by the user's choice. `measured`: an inference already emulated by the caller
    (micro-rt report profiles once and judges the fit from the same run). `layout`: a board's
    RAM regions, which then judge RAM in place of `ram_budget` (micro_rt.placement). `tflm`
    (--runtime tflm): TFLM's image and static RAM, from measured TFLM builds, in place of
    micro_rt's runtime and plan."""
    report = FitReport(model, it.plan, it.kernels, len(data), None if layout else ram_budget,
                       flash_budget, unresolved_ops=it.unresolved, layout=layout, tflm=tflm,
                       model_ops=frozenset(op.op_name for sg in it.model.subgraphs for op in sg.operators))
    if tflm is not None:
        report.not_accounted += tflm.not_accounted(set(report.model_ops))
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
            report.not_accounted += [f"op {op}: ran on a host kernel, so its stack and code are not measured"
                                     for op in report.measured.ops_on_host]
            if report.measured.ended_at:
                report.not_accounted.append(
                    f"the operators after op {report.measured.ended_at}: it ended the emulated inference "
                    "(kTfLiteAbort, as TFLM's CIRCULAR_BUFFER does until its period comes round), so "
                    "their stack and code are not measured")
            if report.measured.plan is None and not report.measured.ops_on_host:
                report.not_accounted.append(
                    f"the firmware plan and the operators' constants: {report.measured.plan_note} "
                    "(micro_rt's runtime cannot run it as one plan; the .tflite file is counted "
                    "in their place)")
    if not report.scope:      # RAM is exact; the NPU's compute and driver are another matter
        report.not_accounted += [f"op {index} {op}: {why} (its op data, scratch buffers and "
                                 "tensors are counted in the arena)" for index, op, why in not_simulated]
    return report


def budget_line(what: str, used: int, budget: Optional[int], verdict: Optional[str], counted: bool,
                placement: Optional[Placement] = None) -> str:
    """One resource's line of `fit`'s text: used against its budget, the verdict and the margin
    (with a placement: in its tightest region). `counted`: parts are not accounted for yet."""
    so_far = " counted so far" if counted else ""
    if budget is None or verdict is None:
        return f"{what}: {format_bytes(used)}{so_far} (no budget given)"
    word = {FITS: "fits", DOES_NOT_FIT: "does NOT fit", CANNOT_TELL: "cannot tell"}[verdict]
    after = " before the parts not accounted for" if verdict == CANNOT_TELL else ""
    if placement is not None:
        tightest = min(placement.regions, key=lambda r: r.margin)
        names = " and ".join(r.span.name for r in placement.regions)
        return (f"{what}: {format_bytes(used)}{so_far} in {names} of {format_bytes(budget)} "
                f"-> {word}, margin {tightest.margin:+d} B in {tightest.span.name} (the "
                f"tightest region){after}")
    margin = budget - used
    return (f"{what}: {format_bytes(used)}{so_far} of {format_bytes(budget)} -> {word}, "
            f"margin {margin:+d} B ({margin / budget:+.1%}){after}")


def placement_lines(board: str, placement: Placement) -> list[str]:
    """Where each part of RAM was placed on the board's regions, for `fit`'s text."""
    lines = [f"placed on board {board}: {placement.how}"]
    if placement.problem:
        lines.append(f"  does NOT fit: {placement.problem}")
    lines += [f"  {line}" for line in placement.lines()]
    lines.append("  the cycle model prices every SRAM region alike: no data cache, and the "
                 "board's SRAM wait states (if any) on every word loaded (the per-region "
                 "timing above is the board's, not modelled)")
    return lines
