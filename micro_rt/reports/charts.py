"""The report's charts: hand-written SVG, laid out in percentages, with a little inline JS.

Why this approach (chosen for the long run):
- No library: a charting runtime (Vega-Lite's is ~800 KB) would dominate a page meant to be
  attached to a CI run, and a CDN is not offline. The charts here are rectangles, lines and
  labels; a few hundred lines of Python draw them, and the page stays small (person_detect's
  report is ~80 KB, mobilenet_v2's ~185 KB, most of it the two tables).
- Positions are percentages of the plot, not pixels: the same SVG fills a 600 px or a 2500 px
  window without JS, text keeps its size, and zoom is CSS (the plot's width and height times
  a factor, inside a scrolling frame); nothing is re-laid out by script.
- The page works without JS (charts, legend, tables); `page.PAGE_JS` only adds the tooltip
  (hit-tested per column, so a 16-byte buffer in a 2 MB arena can be hovered), zoom buttons,
  label thinning and table sorting.
Every drawn item has an entry in the chart's JSON (its column span, byte span and tooltip
lines); the tooltip reads it, and tests count drawn items against the plan.
"""
from __future__ import annotations

import html
import json
from dataclasses import dataclass, field
from typing import Optional, Sequence

from ..allocator import ArenaPlan
from .facts import ROLES, BufferFact, OperatorFact, live_in_main_steps

ROLE_COLOURS = {"input": "#4e79a7", "output": "#59a14f", "activation": "#f28e2b",
                "scratch": "#b07aa1", "untouched": "#bab0ac"}
TAIL_COLOUR = "#cdb49a"
ROLE_LABELS = {"input": "model input", "output": "model output",
               "activation": "activation (intermediate tensor)",
               "scratch": "kernel scratch", "untouched": "tensor no operator touches"}
LABEL_MIN_PX = 30          # x labels closer than this are thinned (JS redoes it on zoom)
ASSUMED_PLOT_PX = 1100     # the plot width the page opens with, for the no-JS label choice


@dataclass
class Item:
    """One drawn box: columns x0..x1 (inclusive), values y0..y1, tooltip lines."""
    x0: int
    x1: int
    y0: float
    y1: float
    colour: str
    tip: list[str]
    css: str = ""
    row: Optional[str] = None      # id of the table row it stands for


@dataclass
class RefLine:
    y: float
    label: str
    css: str


@dataclass
class Chart:
    chart_id: str
    title: str
    columns: list[str]             # x labels, one per column
    top: float                     # the value at the top of the plot
    unit: str                      # "bytes" or "cycles": tick labels and tooltips
    items: list[Item]
    lines: list[RefLine] = field(default_factory=list)
    legend: list[tuple[str, str, str]] = field(default_factory=list)   # (css, colour, label)
    height: int = 360
    x_title: str = "operator (index as in `micro-rt info` and `profile`)"
    y_title: str = ""
    snap: str = "nearest"          # "nearest": a box within a few px; "column": the column's bar
    item_class: str = "item"
    # A strip above the plot, split by share (label, bytes, tooltip lines): the arena's tail,
    # which is not per operator and would squash the buffers if drawn on their byte axis.
    band_title: list[str] = field(default_factory=list)     # lines
    band: list[tuple[str, int, list[str]]] = field(default_factory=list)

    def html(self) -> str:
        return render(self)


# ---- ticks -------------------------------------------------------------------------------
def byte_label(n: float) -> str:
    """262144 -> '256 KiB', 1572864 -> '1.5 MiB', 512 -> '512 B'."""
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.2f}".rstrip("0").rstrip(".") + f" {unit}"
    return f"{n:g} B"


def count_label(n: float) -> str:
    """2500000 -> '2.5M'."""
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if n >= scale:
            return f"{n / scale:.2f}".rstrip("0").rstrip(".") + unit
    return f"{n:g}"


def ticks(top: float, unit: str, most: int = 8) -> list[float]:
    """Round tick values from 0 to `top`: powers of two times 1 B/KiB/MiB for bytes (what a
    linker map shows), 1-2-5 steps for counts."""
    if top <= 0:
        return [0]
    if unit == "bytes":
        steps = [m << shift for shift in (0, 10, 20, 30) for m in (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)]
    else:
        steps = [m * 10 ** e for e in range(13) for m in (1, 2, 5)]
    step = next((s for s in steps if top / s <= most), steps[-1])
    return [k * step for k in range(int(top // step) + 1)]


def _label(value: float, unit: str) -> str:
    return byte_label(value) if unit == "bytes" else count_label(value)


# ---- rendering -----------------------------------------------------------------------------
def _pct(value: float) -> str:
    return f"{value * 100:.3f}".rstrip("0").rstrip(".") + "%"


def _label_step(columns: int, plot_px: float) -> int:
    """Label every k-th column, k in 1, 2, 5, 10, 20, ... so labels are LABEL_MIN_PX apart."""
    per = plot_px / max(columns, 1)
    k = 1
    while k * per < LABEL_MIN_PX:
        k = k * 5 // 2 if str(k)[0] == "2" else k * 2
    return k


HEADROOM = 1.07            # room above the highest value for the labels of reference lines


def _merge_lines(lines: Sequence[RefLine], top: float) -> list[tuple[RefLine, str]]:
    """(line, label dy): lines at the same value share one label; a line close below another
    puts its label under itself, so no two labels overlap."""
    merged: list[RefLine] = []
    for line in sorted(lines, key=lambda l: -l.y):
        if merged and merged[-1].y == line.y:
            merged[-1] = RefLine(line.y, f"{merged[-1].label} = {line.label}", merged[-1].css)
        else:
            merged.append(line)
    out = []
    for k, line in enumerate(merged):
        close = k > 0 and (merged[k - 1].y - line.y) < 0.06 * top
        out.append((line, "1.1em" if close else "-0.35em"))
    return out


def render(chart: Chart) -> str:
    n, top = len(chart.columns), (chart.top or 1) * HEADROOM
    cid = html.escape(chart.chart_id)
    y = lambda v: 1 - v / top

    grid, ylabels = [], []
    for v in ticks(chart.top or 1, chart.unit):
        grid.append(f'<line class="grid" x1="0" x2="100%" y1="{_pct(y(v))}" y2="{_pct(y(v))}"/>')
        ylabels.append(f'<text x="66" y="{_pct(y(v))}" dy="{"-0.2em" if v == 0 else "0.32em"}" '
                       f'text-anchor="end">{html.escape(_label(v, chart.unit))}</text>')
    boxes = []
    for i, it in enumerate(chart.items):
        css = f"{chart.item_class} {it.css}".strip()
        boxes.append(f'<rect class="{css}" data-i="{i}" x="{_pct(it.x0 / n)}" '
                     f'y="{_pct(y(it.y1))}" width="{_pct((it.x1 - it.x0 + 1) / n)}" '
                     f'height="{_pct((it.y1 - it.y0) / top)}" fill="{it.colour}"/>')
    refs = []
    for line, dy in _merge_lines(chart.lines, top):
        refs.append(f'<line class="ref {line.css}" x1="0" x2="100%" y1="{_pct(y(line.y))}" '
                    f'y2="{_pct(y(line.y))}"/><text class="ref {line.css}" x="99.5%" '
                    f'y="{_pct(y(line.y))}" dy="{dy}" text-anchor="end">'
                    f"{html.escape(line.label)}</text>")
    step = _label_step(n, ASSUMED_PLOT_PX)
    xlabels = []
    for c, label in enumerate(chart.columns):
        hidden = ' class="thin"' if label.isdigit() and int(label) % step else ""
        xlabels.append(f'<text{hidden} x="{_pct((c + 0.5) / n)}" y="13">{html.escape(label)}</text>')
    data = {"columns": chart.columns, "top": top, "unit": chart.unit, "snap": chart.snap,
            "items": [{"x0": it.x0, "x1": it.x1, "y0": it.y0, "y1": it.y1, "tip": it.tip,
                       "row": it.row} for it in chart.items],
            "band": [tip for _, _, tip in chart.band]}
    total = sum(v for _, v, _ in chart.band) or 1
    band = "".join(f'<div class="seg" data-b="{k}" style="flex:{v / total:.5f}">'
                   f"{html.escape(label) if v / total > 0.12 else ''}</div>"
                   for k, (label, v, _) in enumerate(chart.band))
    band_row = (f'<div class="bandlabel">{"<br>".join(map(html.escape, chart.band_title))}</div>'
                f'<div class="band">{band}</div>') if chart.band else ""
    legend = "".join(f'<span class="key"><svg width="14" height="12"><rect class="{css}" '
                     f'x="1" y="1" width="12" height="10" fill="{colour}"/></svg>'
                     f"{html.escape(label)}</span>" for css, colour, label in chart.legend)
    return f"""<figure class="chart" id="{cid}" style="--h:{chart.height}px">
<div class="tools"><b>{html.escape(chart.title)}</b><span class="axes">y: {html.escape(chart.y_title)} · x: {html.escape(chart.x_title)}</span>
<span class="zoom">zoom <button data-z="x" data-f="2" title="wider">x+</button><button data-z="x" data-f="0.5" title="narrower">x−</button><button data-z="y" data-f="2" title="taller">y+</button><button data-z="y" data-f="0.5" title="shorter">y−</button><button data-z="reset" title="fit the window">fit</button></span></div>
<div class="scroll"><div class="frame{' banded' if chart.band else ''}">{band_row}
<svg class="yaxis" role="presentation">{''.join(ylabels)}</svg>
<svg class="plot" role="img" aria-label="{html.escape(chart.title)}">{''.join(grid)}{''.join(boxes)}{''.join(refs)}</svg>
<div class="corner"></div>
<svg class="xaxis" role="presentation">{''.join(xlabels)}</svg>
</div></div>
<figcaption>{legend}</figcaption>
<script type="application/json" class="chart-data">{_json(data)}</script>
</figure>"""


def _json(data: dict) -> str:
    # "</" would end the script element; JSON allows "<\/".
    return json.dumps(data, separators=(",", ":")).replace("</", "<\\/")


# ---- the three charts ----------------------------------------------------------------------
def step_columns(plan: ArenaPlan, n_ops: int) -> tuple[int, list[str]]:
    """(first TFLM step drawn, column labels): 'none' for tensors no operator touches (when
    there are any), 'in' for step 0 (the model's inputs, before operator 0), then operators."""
    first = -1 if any(b.first_use < 0 for b in plan.buffers) else 0
    return first, (["none"] if first < 0 else []) + ["in"] + [str(i) for i in range(n_ops)]


def _op_range(b: BufferFact) -> str:
    if b.first_op is None:
        return "live at no operator (no operator reads or writes it; TFLM still plans it)"
    name = lambda k: "before op 0 (model input)" if k < 0 else f"op {k}"
    if b.first_op == b.last_op:
        return f"live during {name(b.first_op)}"
    return f"live from {name(b.first_op)} to op {b.last_op}"


def buffer_tip(b: BufferFact) -> list[str]:
    what = (f"scratch of op {b.number}" if b.kind == "scratch"
            else f"tensor {b.number} '{b.name}'")
    lines = [what]
    if b.shape is not None:
        lines.append(f"{b.dtype}[{','.join(map(str, b.shape))}]")
    lines += [f"{b.size:,} B at offset {b.offset:,} (ends at {b.offset + b.size:,})",
              _op_range(b),
              f"made by: {b.producer}"]
    if b.kind != "scratch":
        lines.append(f"read by: {', '.join(b.consumers) or 'nothing'}")
    lines.append(ROLE_LABELS[b.role] + (", placed by the model's offline plan" if b.offline else ""))
    return lines


def lane_chart(chart_id: str, title: str, plan: ArenaPlan, buffers: Sequence[BufferFact],
               n_ops: int, top: Optional[int] = None) -> Chart:
    """x = operators, y = offset in the head; one box per planned buffer (its bytes over the
    operators it is live across); the tail as a band of its own above the plot (drawn on the
    head's byte axis, a large tail would squash the buffers into slivers).
    `top`: the y axis' top, the same for charts shown one above the other."""
    first, columns = step_columns(plan, n_ops)
    top = max(top or 0, plan.head_bytes, 1)
    items = []
    for b, planned in zip(buffers, plan.buffers):
        lo = planned.first_use - first
        hi = planned.last_use - first
        items.append(Item(lo, hi, b.offset, b.offset + b.size, ROLE_COLOURS[b.role],
                          buffer_tip(b), css=f"buf {b.role}" + (" offline" if b.offline else ""),
                          row=f"{chart_id}-b{b.index}"))
    lines = [RefLine(plan.head_bytes, f"head {byte_label(plan.head_bytes)} (planned)", "head"),
             RefLine(plan.lower_bound, f"lower bound {byte_label(plan.lower_bound)}", "bound")]
    # TFLM's tail grows down from the arena's end, allocated once: a band of its own.
    band = [(category, used, [f"tail (persistent): {category}", f"{used:,} B of the "
                              f"{plan.tail_bytes:,} B tail, allocated once for the whole run"])
            for category, used in sorted(plan.tail_breakdown.items(), key=lambda kv: -kv[1])
            if used > 0]
    band_title = ["tail", byte_label(plan.tail_bytes)]
    roles_here = [r for r in ROLES if any(b.role == r for b in buffers)]
    legend = [(f"box buf {r}", ROLE_COLOURS[r], ROLE_LABELS[r]) for r in roles_here]
    if any(b.offline for b in buffers):
        legend.append(("box buf offline", "#eeeeee", "placed by the offline plan (dashed outline)"))
    legend.append(("tail", TAIL_COLOUR, "tail (the band above): persistent allocations at "
                   "the arena's end, by kind"))
    return Chart(chart_id, title, columns, top, "bytes", items, lines, legend,
                 y_title="arena offset in the head", item_class="box", band_title=band_title,
                 band=band)


def live_chart(chart_id: str, plan: ArenaPlan, n_ops: int, subgraphs: Sequence = ()) -> Chart:
    """Bytes live at each operator: the peak is the lower bound no placement can beat; the
    gap up to the head is what the placement loses to fragmentation. `subgraphs`: the
    model's, when it has several (a control-flow operator shows its subgraphs' peak)."""
    first, columns = step_columns(plan, n_ops)
    base, per_step = live_in_main_steps(plan.buffers, subgraphs)
    items = []
    for k, value in enumerate(per_step):
        c = base + k - first
        label = columns[c]
        where = ("before op 0 (model inputs)" if label == "in" else
                 "tensors no operator touches" if label == "none" else f"op {label}")
        items.append(Item(c, c, 0, value, "#76b7b2", [f"{where}: {value:,} B live",
                                                       f"{value / plan.head_bytes:.1%} of the head"
                                                       if plan.head_bytes else ""],
                          css="live" + (" peak" if value == plan.lower_bound else "")))
    top = max(plan.head_bytes, plan.lower_bound, 1)
    lines = [RefLine(plan.head_bytes, f"head {byte_label(plan.head_bytes)} (planned)", "head"),
             RefLine(plan.lower_bound, f"lower bound {byte_label(plan.lower_bound)} "
                                       "(the live-bytes peak)", "bound")]
    return Chart(chart_id, "Live bytes per operator", columns, top, "bytes", items, lines,
                 [("live", "#76b7b2", "bytes of planned buffers live at the operator"),
                  ("live peak", "#3f8f89", "the peak: no placement can use less")],
                 height=220, y_title="bytes live", snap="column", item_class="col")


def cycles_chart(chart_id: str, ops: Sequence[OperatorFact], clock_hz: int) -> Chart:
    """Cycles per operator; operators that ran on a host kernel are drawn as grey columns
    marked "not counted" (their cycles are unknown, not zero)."""
    columns = [str(o.index) for o in ops]
    top = max([o.cycles or 0 for o in ops] + [1])
    items = []
    for o in ops:
        if o.cycles is None:
            items.append(Item(o.index, o.index, 0, top, "#dddddd",
                              [f"op {o.index} {o.op}", "not counted: ran on a host kernel "
                               "(micro_rt has no C kernel for it), so its cycles are unknown"],
                              css="nc", row=f"op-{o.index}"))
            continue
        tip = [f"op {o.index} {o.op}", f"{o.cycles:,} cycles = {o.cycles / clock_hz * 1e3:.3f} ms "
               f"at {clock_hz / 1e6:g} MHz", f"{o.macs:,} MACs"
               + (f", {o.macs_per_cycle:.3f} MACs/cycle" if o.macs_per_cycle else ""),
               f"{o.share:.1%} of the counted cycles" if o.share is not None else ""]
        items.append(Item(o.index, o.index, 0, o.cycles, "#e15759", tip, css="cyc",
                          row=f"op-{o.index}"))
    legend = [("cyc", "#e15759", "cycles on the virtual MCU")]
    if any(o.cycles is None for o in ops):
        legend.append(("nc", "#dddddd", "not counted (host kernel)"))
    return Chart(chart_id, "Cycles per operator", columns, top, "cycles", items, [], legend,
                 height=240, y_title="cycles", snap="column", item_class="col")
