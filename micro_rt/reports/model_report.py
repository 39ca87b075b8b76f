"""Everything `micro-rt report` says about one model on one target, gathered once.

The figures come from the commands' own code paths: the arena plan from the allocator
(`plan`), cycles, stack and code from one emulated inference (`profile`'s
`emulated_profile`), the budget verdict from `fit.assess` judged on that same run, and the
suggestion from `optimize`. Nothing is estimated here: what was not measured is said so.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

from ..allocator import ArenaPlan
from ..arena import align_up
from ..cortexm.validation import status_lines
from ..errors import MicroRtError
from ..fit import FitReport, assess
from ..fit_measure import kernel_measurement, ops_without_kernels
from ..interpreter import Interpreter
from ..model import read_model
from ..profile import emulated_profile, op_number
from ..report import arena_for, kernels_fields
from ..runtimes import tflm_pricing
from ..run_setup import Setup, make_setup  # noqa: F401  (make_setup: the CLI's entry)
from .facts import BufferFact, OperatorFact, buffer_facts, operator_facts

@dataclass
class ModelReport:
    model: str
    model_bytes: int
    setup: Setup
    plan: ArenaPlan
    buffers: list[BufferFact]
    operators: list[OperatorFact]
    fit: FitReport
    profile: Optional[dict]            # `micro-rt profile --json`'s report, when it ran
    cycles_note: str                   # why there are no cycles, or what they assume
    optimize: Optional[dict]           # saved bytes etc., when optimize ran
    warnings: list[str] = field(default_factory=list)
    suggestions: list[str] = field(default_factory=list)
    subgraphs: list = field(default_factory=list)     # the model's, when it has several

    @property
    def name(self) -> str:
        return Path(self.model).name

    @property
    def judged(self) -> bool:
        """A budget was given: the page shows a verdict."""
        s = self.setup
        return s.ram_budget is not None or s.ram_layout is not None or s.flash_budget is not None

    @property
    def cycles_complete(self) -> bool:
        return bool(self.profile and self.profile["complete"])

    def as_dict(self) -> dict:
        return {"model": self.model, "model_bytes": self.model_bytes,
                "setup": self.setup.as_dict(), **kernels_fields(self.setup.flavour, self.setup.target),
                "fit": self.fit.as_dict() if self.judged else None,
                "ram_used": self.fit.ram_used, "flash_used": self.fit.flash_used,
                "not_accounted": self.fit.not_accounted,
                "plan": self.plan.as_dict(),
                "profile": self.profile, "cycles_note": self.cycles_note,
                "optimize": self.optimize,
                "operators": [o.as_dict() for o in self.operators],
                "buffers": [b.as_dict() for b in self.buffers],
                "warnings": self.warnings, "suggestions": self.suggestions}

    @property
    def exit_code(self) -> int:
        """0, or the fit's verdict (1 does not fit, 3 cannot tell) when a budget was given;
        3 when cycles were asked for and the total leaves operators out."""
        if self.judged and self.fit.exit_code:
            return self.fit.exit_code
        if self.setup.cycles and self.profile is not None and not self.profile["complete"]:
            return 3
        return 0


def gather(path: str, data: bytes, setup: Setup,
           progress: Optional[Callable[[int, int], None]] = None) -> ModelReport:
    model = read_model(data)
    sg = model.main
    it = Interpreter.from_bytes(data, target=setup.target, kernels=setup.kernels,
                                planner=setup.planner, plan_only=True)
    missing = ops_without_kernels(it)
    profile, measured, note = None, None, ""
    tflm = tflm_pricing(setup.runtime, setup.target, setup.flavour)
    if not setup.cycles:
        note = "cycles not measured (--no-cycles)"
    elif it.target.is_host:
        note = f"cycles not measured: {it.target.name} is the host, not a Cortex-M core"
    else:
        try:
            profile, run = emulated_profile(data, setup.target, setup.clock_hz,
                                            memory_system=setup.mcu_memory_system(),
                                            strict_alignment=setup.strict_alignment,
                                            seed=setup.seed, progress=progress, kernels=setup.flavour)
            try:
                if profile["total_cycles"] is not None:
                    measured = kernel_measurement(run)
            finally:
                run.close()
            if tflm is not None:
                profile = tflm.profile(profile)
        except MicroRtError as e:
            note = f"cycles not measured: the emulated inference failed: {' '.join(str(e).split())}"
        else:
            flavour = "CMSIS-NN-style" if setup.kernels == "cmsis-nn" else setup.kernels
            note = (f"one inference of micro_rt's {flavour} C kernels on a virtual "
                    f"{setup.target} at {setup.clock_hz / 1e6:g} MHz with "
                    f"{setup.flash_wait_states} flash wait states (a line fill costs "
                    f"{setup.line_fill_cycles} core cycles), "
                    f"on seeded random inputs (seed {setup.seed})")
    # A failed emulation is retried by assess, which then lists why stack and code are missing.
    fit = assess(path, data, it, setup.ram_budget, setup.flash_budget, measure=setup.cycles,
                 measured=measured, layout=setup.ram_layout, tflm=tflm)
    if not setup.cycles and not it.target.is_host:
        fit.scope = "arena and model only (kernel stack and code not measured: --no-cycles)"
    # '3 FOO (...)' names an operator of subgraph 0, '1:3 FOO' one of subgraph 1
    supported = {op.index for op in sg.operators} - {int(m.split()[0]) for m in missing
                                                     if ":" not in m.split()[0]}
    subgraphs = model.subgraphs if len(model.subgraphs) > 1 else []
    report = ModelReport(path, len(data), setup, it.plan, buffer_facts(sg, it.plan, subgraphs),
                         operator_facts(sg, it.plan, profile, supported, subgraphs), fit, profile,
                         note, None, subgraphs=subgraphs)
    _warn(report, missing)
    _suggest(report, data)
    return report


def _warn(report: ModelReport, missing: list[str]) -> None:
    """One line per thing left out: operators without a kernel, operators on host kernels
    (cycles, stack and code all missing), then the rest fit could not account for."""
    w = report.warnings
    w += [f"op {m}: no kernel registered, so its op data, scratch buffers, stack, code and "
          "cycles are in none of these figures" for m in missing]
    p = report.profile
    if p:
        w += [f"op {op_number(o)} {o['op']}: ran on a host kernel (micro_rt has no C kernel for "
              "it), so its cycles, stack and code are not counted: the cycle total is incomplete"
              for o in p["ops_not_counted"] if "index" in o]
        w += [f"alignment: {a}" for a in p["alignment"]]
    # fit's per-operator items say the same as the lines above; keep the others.
    w += [f"not accounted for: {n}" for n in report.fit.not_accounted if not n.startswith("op ")]
    plan = report.plan
    if plan.required_bytes > align_up(plan.total_bytes):
        w.append(f"the smallest working arena is {plan.required_bytes:,} B, above head + tail "
                 f"({plan.total_bytes:,} B): TFLM's temporary allocations while preparing "
                 "peak higher")


def _suggest(report: ModelReport, data: bytes) -> None:
    plan, setup, s = report.plan, report.setup, report.suggestions
    if setup.optimize_seconds <= 0:
        if plan.head_bytes > plan.lower_bound:
            s.append(f"the head is {plan.head_bytes - plan.lower_bound:,} B above its lower "
                     "bound for this operator order; `micro-rt optimize` searches orders and "
                     "placements")
        return
    from ..optimize import optimize
    try:
        result = optimize(data, target=setup.target, kernels=setup.kernels,
                          time_limit=setup.optimize_seconds)
    except MicroRtError as e:
        s.append(f"`micro-rt optimize` cannot work on this model: {' '.join(str(e).split())}")
        return
    report.optimize = {"saved_bytes": result.saved_bytes, "original_head": result.original_head,
                       "predicted_head": result.predicted_head, "summary": result.summary,
                       "optimal": result.optimal, "reordered": result.reordered,
                       "order_lower_bound": result.order_bound,
                       "search_seconds": setup.optimize_seconds, "notes": result.notes}
    command = (f"micro-rt optimize {report.name} -o optimized.tflite --target {setup.target} "
               f"--kernels {setup.kernels}")
    if result.saved_bytes > 0:
        s.append(f"`micro-rt optimize` would save {result.saved_bytes:,} B of arena head "
                 f"({result.original_head:,} -> {result.predicted_head:,} B, "
                 f"{result.saved_bytes / result.original_head:.1%}; "
                 f"{'operators reordered and ' if result.reordered else ''}an offline plan), "
                 f"found in a {setup.optimize_seconds:g} s search: `{command}` writes it and "
                 "checks its outputs")
    elif result.optimal:
        s.append("the arena head is already the smallest any operator order and placement "
                 "can reach under TFLM's lifetime rules: `micro-rt optimize` has nothing to save")
    else:
        s.append(f"`micro-rt optimize` found no smaller head in a {setup.optimize_seconds:g} s "
                 f"search (the head is {plan.head_bytes - result.order_bound:,} B above the "
                 f"lowest peak any order could reach); a longer --time-limit may")


def report_text(r: ModelReport) -> str:
    """The terminal summary of a report: what it is, the verdict, latency, warnings, hints."""
    s = r.setup
    where = s.where
    macs = sum(o.macs for o in r.operators)
    lines = [f"{r.model} on {where}: {r.model_bytes:,} B, {len(r.operators)} operators, "
             f"{macs:,} MACs, kernels {s.kernels}"]
    if r.judged:
        fit = r.fit.text().splitlines()
        if "not accounted for:" in fit:          # listed once, with the warnings below
            fit = fit[:fit.index("not accounted for:")]
        lines += fit + [f"budgets: {s.budget_source}"]
    else:
        lines.append(f"RAM {r.fit.ram_used:,} B (with the {arena_for(s.flavour, s.target)}), "
                     f"flash {r.fit.flash_used:,} B (no budget given: no verdict; --ram/--flash "
                     "or --board give one)")
    lines += status_lines(s.validation)
    p = r.profile
    if p and p["total_cycles"] is not None:
        total = f"{p['total_ms']:.3f} ms ({p['total_cycles']:,} cycles at {s.clock_hz / 1e6:g} MHz)"
        lines.append(f"latency: {total}" if p["complete"] else
                     f"latency: INCOMPLETE, at least {total}: "
                     f"{len(p['ops_not_counted'])} operators ran on host kernels, not counted")
    else:
        lines.append(f"latency: {r.cycles_note if p is None else 'not measured: the model was not run'}")
    lines += [f"warning: {w}" for w in r.warnings]
    lines += [f"suggestion: {h}" for h in r.suggestions]
    return "\n".join(lines)
