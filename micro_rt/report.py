"""Human-facing text: byte sizes, the kernels' names, the plan's lifetime table.
(The pages, charts and other formats are in micro_rt.reports.)"""
from __future__ import annotations

from .allocator import ArenaPlan


# What each `--kernels` name stands for, said wherever the name is shown: "cmsis-nn" is not
# Arm's library, and a reader of the output should not have to guess that.
KERNELS_NOTES = {
    "reference": "micro_rt's kernels modelled on TFLM's reference kernels (numpy on the host; "
                 "plain C loops, no SIMD and no scratch, on the virtual MCU)",
    "cmsis-nn": "micro_rt's own kernels written to CMSIS-NN's API (arm_<op>_<type> functions "
                "and buffer sizes), not Arm's CMSIS-NN library",
}
_KERNELS_SHORT = {"cmsis-nn": "micro_rt's CMSIS-NN-style kernels"}
# The TFLM build whose arena micro_rt accounts for each flavour (flavours.py).
_TFLM_BUILDS = {"reference": "reference kernels", "cmsis-nn": "CMSIS-NN kernels"}


def kernels_label(kernels: str) -> str:
    """'cmsis-nn' -> "cmsis-nn (micro_rt's CMSIS-NN-style kernels)" for text output."""
    short = _KERNELS_SHORT.get(kernels)
    return f"{kernels} ({short})" if short else kernels


def arena_for(kernels: str, target: str) -> str:
    """Whose arena an answer reports: 'arena for TFLM with CMSIS-NN kernels on cortex-m4'."""
    return f"arena for TFLM with {_TFLM_BUILDS.get(kernels, f'{kernels} kernels')} on {target}"


def kernels_fields(kernels: str, target: str) -> dict:
    """The JSON fields naming the kernels and whose arena the answer reports:
    {"kernels": ..., "kernels_note": ..., "arena_for": ...}."""
    return {"kernels": kernels, "kernels_note": KERNELS_NOTES.get(kernels),
            "arena_for": arena_for(kernels, target)}


def format_bytes(n: int) -> str:
    if n >= 1024 * 1024:
        return f"{n} B ({n / 1024 / 1024:.2f} MiB)"
    if n >= 1024:
        return f"{n} B ({n / 1024:.1f} KiB)"
    return f"{n} B"


def plan_table(plan: ArenaPlan, kernels: str) -> str:
    """The lifetime table and the totals; a model with several subgraphs numbers each buffer
    subgraph:tensor (scratch: subgraph:operator), as `profile` numbers operators."""
    several = plan.subgraph_count > 1
    rows = [f"{'tensor':>6}  {'kind':<7} {'offset':>9} {'size':>9} {'first':>5} {'last':>5}  name"]
    for b in sorted(plan.buffers, key=lambda b: (b.offset, b.first_use)):
        number = f"{b.subgraph}:{b.tensor}" if several else f"{b.tensor}"
        rows.append(f"{number:>6}  {b.kind:<7} {b.offset:>9} {b.size:>9} {b.first_use:>5} "
                    f"{b.last_use:>5}  {b.name}")
    if several:
        rows.append(f"{plan.subgraph_count} subgraphs planned together (tensor = subgraph:tensor; "
                    "steps count across subgraphs as TFLM's planner walks them): "
                    + ", ".join(f"{i} '{name}'" for i, name in enumerate(plan.subgraph_names)))
    efficiency = plan.efficiency
    rows += ["",
             f"target {plan.target}, planner {plan.planner}, kernels {kernels_label(kernels)}",
             f"{arena_for(kernels, plan.target)}:",
             f"head (planned activations + scratch): {format_bytes(plan.head_bytes)}",
             f"  lower bound for this order: {format_bytes(plan.lower_bound)} "
             f"(efficiency {efficiency:.1%}"
             + (", the offline plan shares memory between buffers live at the same step)"
                if efficiency > 1 else ")"),
             f"tail (persistent):                    {format_bytes(plan.tail_bytes)}"]
    for category, used in sorted(plan.tail_breakdown.items(), key=lambda kv: -kv[1]):
        rows.append(f"  {category:<44}{used:>9} B")
    rows += [f"total (head + tail, as TFLM reports): {format_bytes(plan.total_bytes)}",
             f"smallest arena that works:            {format_bytes(plan.required_bytes)}"]
    return "\n".join(rows)
