"""Human-facing renderings of plans: the lifetime table and the HTML lane chart."""
from __future__ import annotations

import html
import json
from typing import Optional, Sequence

from .allocator import ArenaPlan

_PALETTE = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1",
            "#ff9da7", "#9c755f", "#bab0ac")


# What each `--kernels` name stands for, said wherever the name is shown: "cmsis-nn" is not
# Arm's library, and a reader of the output should not have to guess that.
KERNELS_NOTES = {
    "reference": "micro_rt's host kernels, modelled on TFLM's reference kernels",
    "cmsis-nn": "micro_rt's own kernels written to CMSIS-NN's API (arm_<op>_<type> functions "
                "and buffer sizes), not Arm's CMSIS-NN library",
}
_KERNELS_SHORT = {"cmsis-nn": "micro_rt's CMSIS-NN-style kernels"}


def kernels_label(kernels: str) -> str:
    """'cmsis-nn' -> "cmsis-nn (micro_rt's CMSIS-NN-style kernels)" for text output."""
    short = _KERNELS_SHORT.get(kernels)
    return f"{kernels} ({short})" if short else kernels


def kernels_fields(kernels: str) -> dict:
    """The JSON fields naming the kernels: {"kernels": ..., "kernels_note": ...}."""
    return {"kernels": kernels, "kernels_note": KERNELS_NOTES.get(kernels)}


def format_bytes(n: int) -> str:
    if n >= 1024 * 1024:
        return f"{n} B ({n / 1024 / 1024:.2f} MiB)"
    if n >= 1024:
        return f"{n} B ({n / 1024:.1f} KiB)"
    return f"{n} B"


def plan_table(plan: ArenaPlan, kernels: Optional[str] = None) -> str:
    rows = [f"{'tensor':>6}  {'kind':<7} {'offset':>9} {'size':>9} {'first':>5} {'last':>5}  name"]
    for b in sorted(plan.buffers, key=lambda b: (b.offset, b.first_use)):
        rows.append(f"{b.tensor:>6}  {b.kind:<7} {b.offset:>9} {b.size:>9} {b.first_use:>5} "
                    f"{b.last_use:>5}  {b.name}")
    efficiency = plan.efficiency
    rows += ["",
             f"target {plan.target}, planner {plan.planner}"
             + (f", kernels {kernels_label(kernels)}" if kernels else ""),
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


def _lane_svg(plan: ArenaPlan, top: int, width: int = 560, height: int = 420) -> str:
    """`top` is the byte value at the top of the y axis: the same for plans shown side by
    side, so a smaller arena looks smaller."""
    steps = max((b.last_use for b in plan.buffers), default=0) + 1
    top = max(top, 1)
    left, bottom = 60, 30
    sx = (width - left - 10) / steps
    sy = (height - bottom - 10) / top
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'class="lanes" role="img">']
    for b in plan.buffers:
        x = left + b.first_use * sx
        w = max((b.last_use - b.first_use + 1) * sx - 1, 1)
        y = height - bottom - (b.offset + b.size) * sy
        h = max(b.size * sy, 1)
        color = "#999999" if b.kind == "scratch" else _PALETTE[b.tensor % len(_PALETTE)]
        tip = html.escape(f"{b.kind} {b.tensor} {b.name}: {b.size} B at offset {b.offset}, "
                          f"steps {b.first_use}..{b.last_use}")
        parts.append(f'<rect class="buf" x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" '
                     f'fill="{color}" stroke="#222" stroke-width="0.5"><title>{tip}</title></rect>')
    axis_y = height - bottom
    parts.append(f'<line x1="{left}" y1="{axis_y}" x2="{width - 10}" y2="{axis_y}" stroke="#000"/>')
    parts.append(f'<line x1="{left}" y1="10" x2="{left}" y2="{axis_y}" stroke="#000"/>')
    tick_every = max(1, steps // 20)
    for step in range(0, steps, tick_every):
        x = left + (step + 0.5) * sx
        parts.append(f'<text x="{x:.1f}" y="{axis_y + 12}" font-size="9" text-anchor="middle">{step}</text>')
    parts.append(f'<text x="{left}" y="{height - 4}" font-size="11">operator step</text>')
    parts.append(f'<text x="2" y="16" font-size="11">{top} B</text>')
    head_y = height - bottom - plan.head_bytes * sy
    parts.append(f'<line x1="{left}" y1="{head_y:.1f}" x2="{width - 10}" y2="{head_y:.1f}" '
                 f'stroke="#c00" stroke-dasharray="4 3"><title>head {plan.head_bytes} B</title></line>')
    parts.append(f'<text x="2" y="{axis_y}" font-size="11">0</text>')
    parts.append("</svg>")
    return "".join(parts)


def plans_html(plans: Sequence[tuple[str, ArenaPlan]], model_name: str) -> str:
    """One self-contained page: a lane chart (x = operator step, y = arena offset) per plan,
    side by side, each with its totals; hover a box to see the tensor."""
    columns = []
    top = max(plan.head_bytes for _, plan in plans)
    for title, plan in plans:
        columns.append(
            f'<div class="plan"><h2>{html.escape(title)}</h2>'
            f'<p>head {plan.head_bytes} B · tail {plan.tail_bytes} B · total {plan.total_bytes} B · '
            f'lower bound {plan.lower_bound} B · smallest arena {plan.required_bytes} B</p>'
            f'{_lane_svg(plan, top)}</div>')
    data = json.dumps({title: plan.as_dict() for title, plan in plans})
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>micro_rt arena plan: {html.escape(model_name)}</title>
<style>body{{font-family:sans-serif;margin:16px}} .row{{display:flex;gap:24px;flex-wrap:wrap}}
.plan h2{{font-size:16px;margin:4px 0}} .plan p{{font-size:12px;color:#333}}
rect.buf:hover{{stroke-width:2;stroke:#000}}</style></head>
<body><h1>Arena plan: {html.escape(model_name)}</h1>
<p>Each box is one buffer: its width spans the operator steps it is live, its height the bytes
it occupies at its arena offset. Hover a box for the tensor.</p>
<div class="row">{''.join(columns)}</div>
<script type="application/json" id="plan-data">{html.escape(data, quote=False)}</script>
</body></html>
"""
