"""Human-facing text: byte sizes, the kernels' names, the plan's lifetime table.
(The pages, charts and other formats are in micro_rt.reports.)"""
from __future__ import annotations

from typing import Optional

import numpy as np

from .allocator import ArenaPlan
from .model import Quantization


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


ELLIPSIS = "…"
OP_WIDTH = 36                 # an operator column's widest: TFLM's longest name (35) fits


def elide(text: str, width: int) -> str:
    """'sequential/conv2d/Conv2D;sequential/conv2d/BiasAdd' -> 'sequenti…BiasAdd' (16): at
    most `width` characters, the start and the end kept (a TFLite name's most telling parts)."""
    if len(text) <= width:
        return text
    keep = width - len(ELLIPSIS)
    head = (keep + 1) // 2
    return text[:head] + ELLIPSIS + text[len(text) - (keep - head):]


def format_bytes(n: int) -> str:
    if n >= 1024 * 1024:
        return f"{n} B ({n / 1024 / 1024:.2f} MiB)"
    if n >= 1024:
        return f"{n} B ({n / 1024:.1f} KiB)"
    return f"{n} B"


def compact_bytes(n: int) -> str:
    """2684354 -> '2.56 MiB', 655360 -> '640 KiB': a size in one short figure, for verdict lines."""
    for unit, scale in (("MiB", 1024 * 1024), ("KiB", 1024)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
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


# ---- a tensor's quantization and an array's values, as `info` and `run` show them ---------
def quantization_fields(q: Optional[Quantization]) -> Optional[dict]:
    """JSON: {"scale", "zero_point"} for a per-tensor quantization; {"per_channel": True,
    "channels", "quantized_dimension"} for a per-channel one; None when not quantized."""
    if q is None:
        return None
    if q.per_channel:
        return {"per_channel": True, "channels": int(q.scales.size),
                "quantized_dimension": q.quantized_dimension}
    return {"scale": float(q.scales[0]), "zero_point": int(q.zero_points[0])}


def quantization_label(q: Optional[Quantization]) -> str:
    """'scale 0.00390625, zero point -128', 'per-channel: 16 scales on dimension 3' or
    'not quantized'."""
    fields = quantization_fields(q)
    if fields is None:
        return "not quantized"
    if fields.get("per_channel"):
        return (f"per-channel: {fields['channels']} scales on dimension "
                f"{fields['quantized_dimension']}")
    return f"scale {fields['scale']:.8g}, zero point {fields['zero_point']}"


WHOLE_ARRAY_ELEMENTS = 16     # arrays up to this size are printed whole by `run`
FIRST_ELEMENTS = 8            # of a larger one, the first values


def _number(v) -> str:
    return f"{v:.6g}" if isinstance(v, float) else str(v)


def _values(a: np.ndarray) -> str:
    return np.array2string(a, precision=5, separator=" ", max_line_width=10 ** 6,
                           threshold=10 ** 9).replace("\n", "")


def array_summary(value: np.ndarray, dequantized: Optional[np.ndarray] = None) -> list[str]:
    """An output's values for a person: whole when small (WHOLE_ARRAY_ELEMENTS), else the
    count, min, max and the first few (the whole array goes to --output files or --json).
    Lines are indented to sit under the output's heading line."""
    if value.size <= WHOLE_ARRAY_ELEMENTS:
        lines = [f"  values: {_values(value)}"]
        if dequantized is not None:
            lines.append(f"  dequantized: {_values(dequantized)}")
        return lines
    flat = value.reshape(-1)
    lo, hi = flat.min().item(), flat.max().item()
    line = f"  {value.size:,} values, min {_number(lo)}, max {_number(hi)}"
    if dequantized is not None:
        d = dequantized.reshape(-1)
        line += f" (dequantized {_number(d.min().item())} .. {_number(d.max().item())})"
    lines = [line, f"  first {FIRST_ELEMENTS}: {_values(flat[:FIRST_ELEMENTS])} ..."]
    if dequantized is not None:
        lines.append(f"  dequantized first {FIRST_ELEMENTS}: "
                     f"{_values(dequantized.reshape(-1)[:FIRST_ELEMENTS])} ...")
    return lines
