"""`micro-rt profile`: one emulated inference (`emulated_profile`) and the report built from its
per-operator records (op_records.py): `profile_report` turns a run into the table and JSON.
"""
from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

from .fit_measure import invoke_until_every_operator_runs, ops_not_simulated, ops_without_kernels
from .interpreter import Interpreter
from .op_records import OpRecord
from .report import OP_WIDTH, elide, kernels_fields, kernels_label


def runtime_fields(executor: Any) -> dict:
    """The device runtime's own part of the last invoke on the virtual MCU (`runtime`:
    instructions, cycles, its stack frame, the plan's bytes in flash (its entry table) and in
    RAM (its kernels' argument structs and state)); None, and why, when nothing ran there."""
    cost = getattr(executor, "last_runtime", None) if executor is not None else None
    if cost is not None:
        image = executor.plan_image
        return {"runtime": {"instructions": cost.instructions, "cycles": cost.cycles,
                            "frame_bytes": cost.frame_bytes, "plan_flash_bytes": len(image.flash),
                            "plan_ram_bytes": len(image.state)},
                "runtime_not_measured": None}
    return {"runtime": None, "runtime_not_measured": "the model has not run on the virtual MCU"}


def profile_report(interpreter: Any, records: list[OpRecord], clock_hz: int,
                   emulation_seconds: float, without_kernels: Sequence[str] = (),
                   not_simulated: Sequence[tuple[int, str, str]] = (), runtime: Optional[dict] = None) -> dict:
    """The `micro-rt profile` JSON: per-operator costs and totals at the given clock.

    `runtime` (runtime_fields): when the whole inference ran as one call of the firmware's
    runtime, its own instructions and cycles between the operators are a line of their own and
    part of the totals (what a DWT cycle counter around invoke reads); else they are not
    measured and the report says so.

    `complete` is False when the total leaves operators out: those that ran on a host kernel
    (no C kernel, no cycles), or, with `without_kernels` (ops no kernel is registered for), the
    whole model, which then was not run and has no total; so with `not_simulated`
    ((index, op, why) of operators whose computation micro_rt does not simulate, an NPU's)."""
    no_kernel = _no_c_kernel(interpreter.kernels)
    not_counted = [{**({"subgraph": r.subgraph} if r.subgraph else {}), "index": r.index, "op": r.op,
                    "reason": f"ran on a host kernel ({r.host_reason or no_kernel})"}
                   for r in records if not r.on_mcu]
    not_counted += [{"op": op, "reason": "no kernel registered, so the model was not run"}
                    for op in without_kernels]
    not_counted += [{"index": index, "op": op, "reason": f"{why}, so the model was not run"}
                    for index, op, why in not_simulated]
    ran = not without_kernels and not not_simulated
    several = len(interpreter.model.subgraphs) > 1
    runtime = runtime if runtime is not None else {"runtime": None, "runtime_not_measured": None}
    own = runtime["runtime"] or {"cycles": 0, "instructions": 0}
    total_cycles = sum(r.cycles for r in records) + own["cycles"] if ran else None
    total_instructions = sum(r.instructions for r in records) + own["instructions"] if ran else None
    return {
        "target": interpreter.target.name,
        **kernels_fields(interpreter.kernels, interpreter.target.name),
        "runtime_priced": "micro_rt", "runtime_note": None,
        "arena_bytes": interpreter.plan.required_bytes,
        "clock_hz": clock_hz,
        "complete": not not_counted,
        "ops_not_counted": not_counted,
        "total_cycles": total_cycles,
        "total_instructions": total_instructions,
        "total_ms": total_cycles / clock_hz * 1e3 if total_cycles is not None else None,
        "total_macs": sum(r.macs for r in records) if ran else None,
        "max_stack_bytes": max((r.stack_bytes for r in records), default=0) if ran else None,
        "emulation_seconds": emulation_seconds,
        "instructions_per_second": (total_instructions / emulation_seconds
                                    if total_instructions is not None and emulation_seconds else None),
        "alignment": [str(a) for r in records for a in r.alignment],
        "ops": [r.as_dict(several) for r in records],
        **(runtime if ran else {"runtime": None, "runtime_not_measured": None}),
    }


def _no_c_kernel(kernels: str) -> str:
    """Why an operator ran on the host: the flavour has no C kernel for it (the reference flavour
    says so: the CMSIS-NN-style kernel it has is never counted in its place)."""
    return "no C kernel" if kernels == "cmsis-nn" else f"no {kernels} C kernel"


def emulated_profile(data: bytes, target: str, clock_hz: int, *, flash_wait_states: int = 0,
                     memory_system: Any = None, strict_alignment: bool = False, arena_misalign: int = 0, seed: int = 0,
                     progress: Optional[Callable[[int, int], None]] = None,
                     kernels: str = "cmsis-nn") -> tuple[dict, Any]:
    """`micro-rt profile`'s measurement: one inference of micro_rt's C kernels of the flavour
    `kernels` (cmsis-nn or reference) on the virtual MCU, on seeded random inputs (while an
    operator ends inferences early, a streaming model's CIRCULAR_BUFFER, the first that runs
    every operator, within fit_measure.MAX_MEASURED_INVOKES). Returns (the profile report, the
    interpreter, which the caller closes); a model with operators no kernel is registered for
    is not run. `memory_system`: a board's flash interface (cortexm.memory_system.MemorySystem),
    else the core's default one with `flash_wait_states`."""
    options = {"clock_hz": clock_hz, "flash_wait_states": flash_wait_states,
               "strict_alignment": strict_alignment, "arena_misalign": arena_misalign}
    if memory_system is not None:
        options["memory_system"] = memory_system
    it = Interpreter.from_bytes(data, target=target, kernels=kernels, emulate=True,
                                mcu_options=options, plan_only=True)
    missing, not_simulated = ops_without_kernels(it), ops_not_simulated(it)
    if missing or not_simulated:          # the model cannot run: no total at all
        return profile_report(it, [], clock_hz, 0.0, without_kernels=missing,
                              not_simulated=not_simulated), it
    ended_early, seconds, before = 0, 0.0, 0.0      # the executor is made at the first invoke
    for ended in invoke_until_every_operator_runs(it, seed, progress):
        seconds, before = it.executor.emulation_seconds - before, it.executor.emulation_seconds
        ended_early += ended
    report = profile_report(it, it.last_run, clock_hz, seconds,
                            runtime=runtime_fields(it.executor))
    if ended_early and not any(r.ended_run for r in it.last_run):
        report["invokes_ended_early"] = ended_early
    return report, it


def _not_counted(report: dict) -> str:
    return ", ".join(f"{op_number(op)} {op['op']}".strip() for op in report["ops_not_counted"])


def op_number(op: dict) -> str:
    """An operator's number: its index, or subgraph:index for those of subgraphs after the first."""
    return f"{op['subgraph']}:{op['index']}" if op.get("subgraph") else str(op.get("index", ""))


def _name(op: dict) -> str:
    """The operator's name, with how often it ran when it ran more than once (loops)."""
    return op["op"] + (f" x{op['runs']}" if op.get("runs", 1) > 1 else "")


def profile_table(report: dict) -> str:
    kernels = kernels_label(report["kernels"])
    clock = report["clock_hz"]
    where = f"{report['target']} at {clock / 1e6:g} MHz, kernels: {kernels}"
    if report["total_cycles"] is None:
        why = "; ".join(f"{op.get('index', '')} {op['op']}".strip()
                        + (f" {op['reason']}" if "index" in op else ": no kernel registered")
                        for op in report["ops_not_counted"])
        return f"cannot profile on {where}: {why}; there is no total"
    # the op column fits the longest name up to OP_WIDTH (longer ones elided), at least 21
    w = min(max([21] + [len(_name(op)) for op in report["ops"]]), OP_WIDTH)
    lines = [f"{'#':>4}  {'op':<{w}}{'instructions':>14}{'cycles':>14}{'MACs':>12}{'MAC/cyc':>9}"
             f"{'stack':>7}{'ms':>9}"]
    for op in report["ops"]:
        name = elide(_name(op), w)
        if not op["on_mcu"]:
            host = "(ran on its host kernel, not counted)"
            lines.append(f"{op_number(op):>4}  {name:<{w}}{host:>56}")
            continue
        mpc = f"{op['macs_per_cycle']:.3f}" if op["macs_per_cycle"] is not None else "-"
        lines.append(f"{op_number(op):>4}  {name:<{w}}{op['instructions']:>14,}{op['cycles']:>14,}"
                     f"{op['macs']:>12,}{mpc:>9}{op['stack_bytes']:>7}{op['cycles'] / clock * 1e3:>9.3f}")
        if op.get("ended_run"):
            lines.append(f"{'':>4}  (it ended the invoke, kTfLiteAbort as in TFLM: the operators after it did not run)")
        if op.get("cycles_with_subgraphs", op["cycles"]) != op["cycles"]:
            cycles = op["cycles_with_subgraphs"]
            lines.append(f"{'':>4}  {'  with its subgraphs':<{w}}{op['instructions_with_subgraphs']:>14,}"
                         f"{cycles:>14,}{'':>28}{cycles / clock * 1e3:>9.3f}")
    own = report.get("runtime")
    if own is not None:
        label = own.get("name", "runtime (between ops)")
        lines.append(f"{'':>4}  {label:<{w}}{own['instructions']:>14,}{own['cycles']:>14,}"
                     f"{'':>21}{own['frame_bytes']:>7}{own['cycles'] / clock * 1e3:>9.3f}")
    n = len(report["ops_not_counted"])
    label = "total" if report["complete"] else f"INCOMPLETE total ({n} operator{'s' if n != 1 else ''} not counted)"
    lines.append(f"{label} on {where}: {report['total_cycles']:,} cycles = "
                 f"{report['total_ms']:.2f} ms, {report['total_instructions']:,} instructions, "
                 f"{report['total_macs']:,} MACs, max stack {report['max_stack_bytes']} B")
    lines.append(f"run in the {report['arena_for']} ({report['arena_bytes']:,} B, as planned for "
                 "those kernels)")
    if report.get("invokes_ended_early"):
        n = report["invokes_ended_early"]
        lines.append(f"(the {n} inference{'s' if n > 1 else ''} before this one ended early, kTfLiteAbort as "
                     "in TFLM, e.g. a CIRCULAR_BUFFER's period: this is the first to run every operator)")
    if report.get("runtime_note"):
        lines.append(report["runtime_note"])
    if report["instructions_per_second"]:
        lines.append(f"emulated in {report['emulation_seconds']:.2f} s "
                     f"({report['instructions_per_second'] / 1e6:.0f} M instructions/s)")
    if report.get("runtime_not_measured"):
        lines.append(f"runtime overhead not measured ({report['runtime_not_measured']}): the total is the "
                     "operators' alone")
    if not report["complete"]:
        why = "; ".join(f"{op_number(op)} {op['op']}: {op['reason']}" for op in report["ops_not_counted"])
        lines.append(f"INCOMPLETE: the total leaves out {_not_counted(report)}, so their cycles, instructions "
                     f"and stack are not in it ({why})")
    for a in report["alignment"]:
        lines.append(f"alignment: {a}")
    return "\n".join(lines)
