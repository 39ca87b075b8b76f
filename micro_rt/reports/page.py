"""Self-contained HTML pages: `micro-rt report`, `plan --html`, `optimize --html`, `compare --html`.

One file, no fetch of anything (no src=, href= or @import): CSS and JS are inline, charts are
SVG (charts.py). The JS is optional: without it the page still shows every figure.
"""
from __future__ import annotations

import html
from typing import Optional, Sequence

from ..allocator import ArenaPlan
from ..fit import CANNOT_TELL, DOES_NOT_FIT, FITS
from ..model import Subgraph
from ..report import kernels_label
from .charts import ROLE_COLOURS, TAIL_COLOUR, byte_label, cycles_chart, lane_chart, live_chart
from .facts import BufferFact, buffer_facts, main_view
from .formats import NAME_WIDTH, Column, Shown, Table
from .model_report import ModelReport

PAGE_CSS = """
:root{--ink:#1d2228;--muted:#5b6570;--line:#d8dde3;--bg:#fff;--hot:#ffd54a}
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--ink);background:var(--bg);margin:0 auto;padding:16px 20px 40px;max-width:2400px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid var(--line);padding-bottom:4px}
.sub{color:var(--muted);margin:0 0 12px}
.verdict{display:grid;grid-template-columns:repeat(auto-fit,minmax(320px,1fr));gap:12px 28px;align-items:start}
.big{font-size:20px;font-weight:700;padding:6px 12px;border-radius:6px;display:inline-block}
.fits{background:#e3f4e1;color:#1d5e1a}.nofit{background:#fde2e1;color:#8c1d18}.tell{background:#fff3cd;color:#6b4e00}.none{background:#eef1f4;color:#3a4550}
.meter{margin:6px 0 14px}.meter .lbl{display:flex;justify-content:space-between;gap:12px;font-size:13px}
.meter-bar{position:relative;height:22px;background:#eef1f4;border-radius:4px;display:flex}
.meter-bar .seg{height:100%;border-right:1px solid #fff}.meter-bar .seg:first-child{border-radius:4px 0 0 4px}
.meter-bar .budget{position:absolute;top:-5px;bottom:-5px;border-left:2px solid #1d2228}
.keys{font-size:12px;color:var(--muted)}.keys i{display:inline-block;width:10px;height:10px;margin:0 4px 0 10px;vertical-align:-1px}
ul.notes{margin:4px 0;padding-left:20px}ul.notes li{margin:2px 0}
.warn li{color:#8c1d18}.hint li{color:#1d4e7a}
figure.chart{margin:8px 0 20px;border:1px solid var(--line);border-radius:6px;padding:8px 8px 4px}
.tools{display:flex;flex-wrap:wrap;gap:6px 16px;align-items:baseline;font-size:13px;margin-bottom:4px}
.tools .axes{color:var(--muted)}.tools .zoom{margin-left:auto;color:var(--muted)}
.tools button{font:12px system-ui,sans-serif;margin-left:3px;padding:1px 7px;border:1px solid var(--line);background:#f7f8fa;border-radius:4px;cursor:pointer}
.scroll{overflow:auto;max-height:78vh;position:relative;padding-top:8px}
.frame{display:grid;grid-template-columns:70px 1fr;grid-template-rows:calc(var(--h) * var(--zy,1)) 20px;width:calc(70px + (100% - 70px) * var(--zx,1))}
.frame.banded{grid-template-rows:26px calc(var(--h) * var(--zy,1)) 20px;row-gap:0}
.bandlabel{position:sticky;left:0;z-index:2;background:var(--bg);font-size:10px;line-height:10px;text-align:right;padding:1px 4px 0 0;color:#6b4f35}
.band{display:flex;margin-bottom:6px;border:1px solid #b39a80;background:#cdb49a}
.band .seg{background:#cdb49a;border-right:1px solid #fff;font-size:11px;color:#4a3624;padding:2px 4px;overflow:hidden;white-space:nowrap;text-overflow:ellipsis}
.band .seg:nth-child(even){background:#dcc8b3}.band .seg.hot{outline:2px solid #000;outline-offset:-2px}
.frame svg{width:100%;height:100%;display:block;overflow:visible;font-size:11px;fill:var(--ink)}
.yaxis{position:sticky;left:0;background:var(--bg);z-index:2}.corner{position:sticky;left:0;background:var(--bg);z-index:2}
.plot{background:#fbfcfd;outline:1px solid var(--line)}
.grid{stroke:#e4e8ec;stroke-width:1}
.box{stroke:rgba(0,0,0,.45);stroke-width:.6}.box.offline{stroke:#000;stroke-dasharray:3 2;stroke-width:1.1}
.box.tail{stroke:rgba(255,255,255,.7)}
rect.nc{stroke:none;fill-opacity:.55}
rect.live.peak{fill:#3f8f89}
.hot{stroke:#000!important;stroke-width:2.2!important;filter:brightness(1.15)}
line.ref{stroke-width:1.3;stroke-dasharray:6 4}line.head{stroke:#1d2228}line.bound{stroke:#c0392b}line.arena{stroke:#7d3c98}line.tailline{stroke:#7a5a3c;stroke-dasharray:2 3}
text.ref{font-size:11px;paint-order:stroke;stroke:#fff;stroke-width:3px}text.head{fill:#1d2228}text.bound{fill:#c0392b}text.arena{fill:#7d3c98}text.tailline{fill:#7a5a3c}
.xaxis text{text-anchor:middle}.xaxis text.thin{display:none}
figcaption{font-size:12px;color:var(--muted);padding:4px 0}.key{margin-right:14px;white-space:nowrap}.key svg{vertical-align:-1px;margin-right:4px}
#tip{position:fixed;pointer-events:none;background:#1d2228;color:#fff;font-size:12px;line-height:1.35;padding:6px 9px;border-radius:5px;max-width:440px;z-index:10;display:none;box-shadow:0 2px 8px rgba(0,0,0,.3)}
#tip div:first-child{font-weight:600}
.tablewrap{overflow:auto;max-height:70vh;border:1px solid var(--line);border-radius:6px}
table{border-collapse:collapse;font-size:12.5px;width:100%}
th,td{padding:3px 8px;border-bottom:1px solid #edf0f3;text-align:left;white-space:nowrap}
th{position:sticky;top:0;background:#f3f5f7;cursor:pointer;user-select:none;z-index:1}
th.num,td.num{text-align:right;font-variant-numeric:tabular-nums}
th[aria-sort=ascending]::after{content:" ▲"}th[aria-sort=descending]::after{content:" ▼"}
td.wrap{white-space:normal;overflow-wrap:anywhere;min-width:12em;max-width:28em}td.nc{color:#8c1d18;font-style:italic}tr.hot td{background:var(--hot)}tbody tr:hover td{background:#fff7d6}
td.share{min-width:90px}
.cols{display:grid;grid-template-columns:repeat(auto-fit,minmax(280px,1fr));gap:4px 24px}
dl{margin:0;display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;font-size:13px}dt{color:var(--muted)}dd{margin:0}
details summary{cursor:pointer;color:var(--muted);margin:6px 0}
"""

# Tooltip (hit-tested per column: the box under the pointer, else the nearest within 6 px),
# zoom (CSS factors on the frame, labels thinned to what fits), table sort, and the link
# between a drawn box and its table row.
PAGE_JS = r"""
(function(){
const tip=document.getElementById('tip');
const data=new Map();
document.querySelectorAll('figure.chart').forEach(fig=>{
  data.set(fig,JSON.parse(fig.querySelector('script.chart-data').textContent));
  thin(fig);
});
function thin(fig){
  const plot=fig.querySelector('svg.plot'),d=data.get(fig),n=d.columns.length;
  const per=plot.getBoundingClientRect().width/Math.max(n,1);let k=1;
  while(k*per<30){k=String(k)[0]==='2'?k*5/2:k*2;}
  fig.querySelectorAll('.xaxis text').forEach(t=>{const v=t.textContent;
    t.classList.toggle('thin',/^[0-9]+$/.test(v)&&(+v)%k!==0);});
}
function hit(fig,ev){
  const d=data.get(fig),r=fig.querySelector('svg.plot').getBoundingClientRect();
  const c=Math.floor((ev.clientX-r.left)/r.width*d.columns.length);
  const v=d.top*(1-(ev.clientY-r.top)/r.height);const pxPer=r.height/d.top;
  let best=-1,dist=1e9;
  d.items.forEach((it,i)=>{
    if(c<it.x0||c>it.x1)return;
    const gap=v<it.y0?(it.y0-v):v>it.y1?(v-it.y1):0;
    const px=gap*pxPer;
    const score=px===0?-(1/(it.y1-it.y0+1)):px;
    if(score<dist){dist=score;best=i;}
  });
  if(best<0||(d.snap!=='column'&&dist>6))return -1;
  return best;
}
let hotBox=null,hotRow=null;
function light(fig,i){
  if(hotBox)hotBox.classList.remove('hot');if(hotRow)hotRow.classList.remove('hot');hotBox=hotRow=null;
  if(!fig||i<0)return;
  hotBox=fig.querySelector('svg.plot [data-i="'+i+'"]');if(hotBox)hotBox.classList.add('hot');
  const row=data.get(fig).items[i].row;hotRow=row?document.getElementById(row):null;
  if(hotRow)hotRow.classList.add('hot');
}
function show(lines,x,y){
  tip.replaceChildren(...lines.filter(l=>l).map(l=>{const e=document.createElement('div');e.textContent=l;return e;}));
  tip.style.display='block';
  const w=tip.offsetWidth,h=tip.offsetHeight;
  tip.style.left=Math.min(x+14,innerWidth-w-8)+'px';tip.style.top=(y+h+20>innerHeight?y-h-12:y+16)+'px';
}
document.querySelectorAll('svg.plot').forEach(plot=>{
  const fig=plot.closest('figure');
  plot.addEventListener('mousemove',ev=>{const i=hit(fig,ev);light(fig,i);
    if(i<0){tip.style.display='none';return;}show(data.get(fig).items[i].tip,ev.clientX,ev.clientY);});
  plot.addEventListener('mouseleave',()=>{tip.style.display='none';light(null,-1);});
  plot.addEventListener('click',ev=>{const i=hit(fig,ev);if(i<0)return;const row=data.get(fig).items[i].row;
    const el=row&&document.getElementById(row);if(el)el.scrollIntoView({block:'nearest'});});
});
document.querySelectorAll('.band .seg').forEach(seg=>{
  const fig=seg.closest('figure');
  seg.addEventListener('mousemove',ev=>{light(null,-1);seg.classList.add('hot');
    show(data.get(fig).band[+seg.dataset.b],ev.clientX,ev.clientY);});
  seg.addEventListener('mouseleave',()=>{seg.classList.remove('hot');tip.style.display='none';});
});
document.querySelectorAll('tr[data-item]').forEach(tr=>{
  const [fid,i]=tr.dataset.item.split(':');const fig=document.getElementById(fid);
  tr.addEventListener('mouseenter',()=>{if(fig)light(fig,+i);});
  tr.addEventListener('mouseleave',()=>light(null,-1));
});
document.querySelectorAll('.zoom button').forEach(b=>b.addEventListener('click',()=>{
  const fig=b.closest('figure'),frame=fig.querySelector('.frame'),s=frame.style;
  if(b.dataset.z==='reset'){s.setProperty('--zx',1);s.setProperty('--zy',1);}
  else{const k='--z'+b.dataset.z,v=parseFloat(s.getPropertyValue(k)||1)*parseFloat(b.dataset.f);
    s.setProperty(k,Math.min(64,Math.max(1,v)));}
  thin(fig);
}));
addEventListener('resize',()=>document.querySelectorAll('figure.chart').forEach(thin));
document.querySelectorAll('table.sortable th').forEach((th,col)=>th.addEventListener('click',()=>{
  const tb=th.closest('table').tBodies[0],num=th.classList.contains('num');
  const dir=th.getAttribute('aria-sort')==='descending'?1:-1;
  th.closest('tr').querySelectorAll('th').forEach(h=>h.removeAttribute('aria-sort'));
  th.setAttribute('aria-sort',dir>0?'ascending':'descending');
  const key=r=>{const c=r.cells[col],v=c.dataset.v??c.textContent;if(!num)return v;return v===''||isNaN(+v)?-Infinity:+v;};
  const rows=[...tb.rows].sort((a,b)=>{const x=key(a),y=key(b);return (x<y?-1:x>y?1:0)*dir;});
  tb.append(...rows);
}));
})();
"""


def page(title: str, heading: str, subtitle: str, body: str) -> str:
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>{html.escape(title)}</title><style>{PAGE_CSS}</style></head>
<body><h1>{html.escape(heading)}</h1><p class="sub">{subtitle}</p>
{body}
<div id="tip" role="tooltip"></div>
<script>{PAGE_JS}</script>
</body></html>
"""


# ---- tables --------------------------------------------------------------------------------
def _ops_live(first: Optional[int], last: Optional[int]) -> str:
    if first is None:
        return "none"
    lo = "in" if first < 0 else str(first)
    return lo if first == last else f"{lo}–{last}"


def buffer_table(chart_id: str, buffers: Sequence[BufferFact]) -> Table:
    rows = [{"index": b.index, "role": b.role + (" (offline)" if b.offline else ""),
             "what": f"scratch of op {b.number}" if b.kind == "scratch" else f"tensor {b.number}",
             "name": b.name, "type": "" if b.shape is None else
             f"{b.dtype}[{','.join(map(str, b.shape))}]",
             "size": b.size, "offset": b.offset, "end": b.offset + b.size,
             "live": _ops_live(b.first_op, b.last_op), "producer": b.producer,
             "consumers": ", ".join(b.consumers), "_item": f"{chart_id}:{b.index}",
             "_id": f"{chart_id}-b{b.index}"} for b in buffers]
    return Table([Column("index", "#", True), Column("role", "role"), Column("what", "buffer"),
                  Column("name", "name", width=NAME_WIDTH), Column("type", "type"),
                  Column("size", "bytes", True), Column("offset", "offset", True),
                  Column("end", "end", True), Column("live", "live at ops"),
                  Column("producer", "made by"), Column("consumers", "read by")], rows)


def _percent(v: float) -> str:
    return f"{v:.1%}"


def _mpc(v: float) -> str:
    return f"{v:.3f}"


def _ms(v: float) -> str:
    return f"{v:.3f}"


def operator_table(report: ModelReport) -> Table:
    measured = report.profile is not None and report.profile["total_cycles"] is not None
    rows = []
    for o in report.operators:
        row = dict(o.as_dict(), _id=f"op-{o.index}", shapes=Shown(o.shapes, o.shapes_summary),
                   _item=f"cycles:{o.index}" if measured else None)
        if measured and o.cycles is None:
            row["cycles"] = "not counted"
        rows.append(row)
    missing = "not measured"
    return Table([Column("index", "#", True), Column("op", "op"), Column("shapes", "inputs -> outputs"),
                  Column("dtype", "dtype"), Column("macs", "MACs", True),
                  Column("weight_bytes", "weights B", True),
                  Column("activation_bytes", "activations B", True),
                  Column("scratch_bytes", "scratch B", True),
                  Column("live_bytes", "live B", True),
                  Column("cycles", "cycles", True, missing=missing),
                  Column("macs_per_cycle", "MACs/cycle", True, _mpc, missing="–"),
                  Column("ms", "ms", True, _ms, missing="–"),
                  Column("share", "share", True, _percent, missing="–")], rows)


def _table_html(table: Table, table_id: str) -> str:
    def attrs(row: dict) -> str:
        out = f'id="{html.escape(row["_id"])}"'
        if row.get("_item"):
            out += f' data-item="{html.escape(row["_item"])}"'
        return out
    return f'<div class="tablewrap">{table.html(table_id, attrs)}</div>'


# ---- sections ------------------------------------------------------------------------------
def _meter(name: str, used: int, budget: Optional[int], parts: list[tuple[str, int, str]],
           complete: bool) -> str:
    scale = max(used, budget or 0, 1) * 1.04
    segs = "".join(f'<div class="seg" style="width:{v / scale:.3%};background:{c}" '
                   f'title="{html.escape(n)}: {v:,} B"></div>' for n, v, c in parts if v > 0)
    keys = "".join(f'<i style="background:{c}"></i>{html.escape(n)} {byte_label(v)}'
                   for n, v, c in parts if v > 0)
    counted = "" if complete else " counted so far"
    if budget is None:
        right = "no budget given"
        marker = ""
    else:
        margin = budget - used
        right = (f"{byte_label(used)}{counted} of {byte_label(budget)} · margin "
                 f"{'+' if margin >= 0 else '−'}{byte_label(abs(margin))} ({margin / budget:+.1%})")
        marker = (f'<div class="budget" style="left:{budget / scale:.3%}" '
                  f'title="budget {budget:,} B"></div>')
    return (f'<div class="meter"><div class="lbl"><b>{name} {used:,} B{counted}</b>'
            f'<span>{right}</span></div><div class="meter-bar">{segs}{marker}</div>'
            f'<div class="keys">{keys}</div></div>')


def verdict_section(r: ModelReport) -> str:
    fit, plan = r.fit, r.plan
    if r.judged:
        css = {FITS: "fits", DOES_NOT_FIT: "nofit", CANNOT_TELL: "tell"}[fit.verdict]
        word = {FITS: "FITS", DOES_NOT_FIT: "DOES NOT FIT", CANNOT_TELL: "CANNOT TELL"}[fit.verdict]
        why = ("" if fit.verdict != CANNOT_TELL else
               f" — {len(fit.not_accounted)} part(s) not accounted for (listed under warnings)")
        headline = f'<span class="big {css}">{word}</span>{html.escape(why)}'
        source = f'<p class="sub">budgets: {html.escape(r.setup.budget_source)}</p>'
        placement = fit.placement
        if placement is not None:
            source += "".join(f'<p class="sub">{html.escape(line)}</p>' for line in
                              [f"placed: {placement.how}", *placement.lines()])
    else:
        headline = ('<span class="big none">no verdict</span> no budget given: '
                    "pass --ram/--flash or --board for one")
        source = ""
    temp = plan.required_bytes - plan.total_bytes
    ram_parts = [("arena head", plan.head_bytes, ROLE_COLOURS["activation"]),
                 ("arena tail", plan.tail_bytes, TAIL_COLOUR),
                 ("temp peak and rounding", temp, "#b8bec6")]
    # the rest of each as fit counts it (micro_rt.fit.FitReport.ram_parts / flash_parts)
    colours = ("#4e79a7", "#76b7b2", "#59a14f", "#b07aa1", "#edc948", "#ff9da7", "#9c755f", "#bab0ac")
    ram_parts += [(name, n, colours[k % len(colours)]) for k, (name, n, _) in enumerate(fit.ram_parts()[1:])]
    flash_parts = [(name, n, colours[(k + 2) % len(colours)]) for k, (name, n, _) in enumerate(fit.flash_parts())]
    complete = not fit.not_accounted
    meters = (_meter("RAM", fit.ram_used, fit.ram_budget if r.judged else None, ram_parts, complete)
              + _meter("Flash", fit.flash_used, r.setup.flash_budget, flash_parts, complete))
    scope = f'<p class="sub">{html.escape(fit.scope)}</p>' if fit.scope else ""
    return (f'<h2>Verdict</h2><div class="verdict"><div>{headline}{source}{scope}{meters}</div>'
            f"<div>{latency_html(r)}</div></div>")


def latency_html(r: ModelReport) -> str:
    p = r.profile
    if p is None or p["total_cycles"] is None:
        why = (r.cycles_note if p is None else "no total: the model was not run (no kernel "
               "registered for " + ", ".join(o["op"] for o in p["ops_not_counted"]) + ")")
        return f'<b>Latency</b><p class="sub">{html.escape(why)}</p>'
    ms = p["total_ms"]
    n = len(p["ops_not_counted"])
    if p["complete"]:
        head = f'<span class="big fits" style="background:#e8eef7;color:#1d3f6e">{ms:.2f} ms</span>'
        label = "per inference"
    else:
        head = f'<span class="big tell">≥ {ms:.2f} ms</span>'
        label = (f"INCOMPLETE: {n} operator{'s' if n != 1 else ''} ran on host kernels and "
                 "are not counted, so the true total is higher")
    facts = [("cycles", f"{p['total_cycles']:,}" + ("" if p["complete"] else " (incomplete)")),
             ("clock", f"{p['clock_hz'] / 1e6:g} MHz"), ("MACs", f"{p['total_macs']:,}"),
             ("MACs/cycle", f"{p['total_macs'] / p['total_cycles']:.3f}"
              if p["total_cycles"] and p["complete"] else "– (needs every operator's cycles)"),
             ("max stack", f"{p['max_stack_bytes']:,} B"),
             ("kernels", kernels_label(p["kernels"]))]
    dl = "".join(f"<dt>{html.escape(k)}</dt><dd>{html.escape(v)}</dd>" for k, v in facts)
    return (f"<b>Latency</b> {label}<div>{head}</div><dl>{dl}</dl>"
            f'<p class="sub">{html.escape(r.cycles_note)}</p>')


def _notes(title: str, css: str, items: Sequence[str]) -> str:
    if not items:
        return ""
    lis = "".join(f"<li>{html.escape(i)}</li>" for i in items)
    return f'<h2>{title}</h2><ul class="notes {css}">{lis}</ul>'


def lane_section(chart_id: str, title: str, plan: ArenaPlan, sg: Subgraph,
                 top: Optional[int] = None, table_open: bool = True,
                 subgraphs: Sequence[Subgraph] = ()) -> str:
    """`subgraphs`: the model's, when it has several (the columns stay subgraph 0's operators)."""
    buffers = buffer_facts(sg, plan, subgraphs)
    chart = lane_chart(chart_id, title, main_view(plan, subgraphs), buffers, len(sg.operators), top)
    table = _table_html(buffer_table(chart_id, buffers), f"{chart_id}-table")
    summary = (f"head {plan.head_bytes:,} B · tail {plan.tail_bytes:,} B · total "
               f"{plan.total_bytes:,} B · lower bound {plan.lower_bound:,} B (efficiency "
               f"{plan.efficiency:.1%}) · smallest arena {plan.required_bytes:,} B")
    return (f'<p class="sub">{html.escape(summary)}</p>{chart.html()}'
            f'<details{" open" if table_open else ""}><summary>{len(buffers)} planned buffers '
            f"(hover a row to find its box)</summary>{table}</details>")


def report_page(r: ModelReport, sg: Subgraph) -> str:
    s = r.setup
    where = f"board {s.board}" if s.board else s.target
    subtitle = html.escape(f"{r.model_bytes:,} B model · {len(r.operators)} operators · {where} · "
                           f"kernels {kernels_label(s.flavour)} · planner {s.planner}")
    board = "".join(f"<li>{html.escape(n)}</li>" for n in s.board_notes)
    body = [verdict_section(r)]
    if board:
        body.append(f'<ul class="notes">{board}</ul>')
    body.append(_notes("Warnings", "warn", r.warnings))
    body.append(_notes("Suggestions", "hint", r.suggestions))
    body.append("<h2>Operators</h2>" + _table_html(operator_table(r), "ops-table"))
    if r.profile is not None and r.profile["total_cycles"] is not None:
        body.append("<h2>Cycles</h2>" + cycles_chart("cycles", r.operators, s.clock_hz).html())
    body.append("<h2>Arena</h2>" + lane_section("lanes", "Arena lanes", r.plan, sg,
                                                 subgraphs=r.subgraphs))
    body.append(live_chart("live", r.plan, len(sg.operators), r.subgraphs).html())
    return page(f"micro_rt report: {r.name}", f"{r.name} on {where}", subtitle, "".join(body))


def plans_html(plans: Sequence[tuple[str, ArenaPlan, Subgraph]], model_name: str,
               subgraphs: Sequence[Subgraph] = ()) -> str:
    """`plan --html` (one plan) and `optimize --html` (before and after; the optimized model's
    operators may be reordered, so each plan comes with its subgraph): each plan's lane chart
    on the same byte scale and its buffer table; for one plan also its live bytes."""
    top = max(p.head_bytes for _, p, _ in plans)
    body = []
    for k, (title, plan, sg) in enumerate(plans):
        body.append(f"<h2>{html.escape(title)}</h2>"
                    + lane_section(f"lanes{k}", title, plan, sg, top, table_open=len(plans) == 1,
                                   subgraphs=subgraphs))
    if len(plans) == 1:
        _, plan, sg = plans[0]
        body.append(live_chart("live", plan, len(sg.operators), subgraphs).html())
    _, first, sg = plans[0]
    subtitle = html.escape(f"{len(sg.operators)} operators · target {first.target} · planner "
                           f"{first.planner}")
    return page(f"micro_rt arena plan: {model_name}", f"Arena plan: {model_name}", subtitle,
                "".join(body))
