"""The `--format csv|markdown` answers of info, plan, fit and profile.

Each is built from the command's JSON payload (the same dict `--format json` prints), so the
four formats cannot disagree: (summary lines, tables); CSV prints the first table.
"""
from __future__ import annotations

from ..cortexm.validation import status_lines
from ..report import OP_WIDTH
from .formats import NAME_WIDTH, Column, Shown, Table, summarise_items


def _labels(items: list) -> list[str]:
    return [f"{d['type'].lower()}[{','.join(map(str, d['shape']))}]" for d in items]


def _shapes(items: list) -> str:
    return " ".join(_labels(items))


def _shape_list(items: list, noun: str) -> Shown:
    """Whole in CSV; its count and first few for a person when long (a 49-output UNPACK)."""
    return Shown(_shapes(items), summarise_items(_labels(items), noun))


def info_tables(p: dict) -> tuple[list[str], list[Table]]:
    summary = [f"**{p['model']}**: {p['file_bytes']:,} B, {len(p['ops'])} operators, "
               f"{len(p['tensors'])} tensors, weights {p['weight_bytes']:,} B, "
               f"{p['total_macs']:,} MACs",
               f"inputs: {_shapes(p['inputs'])}; outputs: {_shapes(p['outputs'])}"]
    if p["unsupported_ops"]:
        summary.append(f"not supported by micro_rt's kernels: {', '.join(p['unsupported_ops'])}")
    rows = [{"index": o["index"], "op": o["op"], "version": o["version"], "macs": o["macs"],
             "inputs": _shape_list(o["inputs"], "inputs"),
             "outputs": _shape_list(o["outputs"], "outputs"),
             "supported": o["supported"]} for o in p["ops"]]
    ops = Table([Column("index", "#", True), Column("op", "op", width=OP_WIDTH),
                 Column("version", "v", True),
                 Column("macs", "MACs", True), Column("inputs", "inputs"),
                 Column("outputs", "outputs"), Column("supported", "kernel")], rows, "Operators")
    io = [{"io": kind, "index": i, "name": d["name"], "type": d["type"].lower(),
           "shape": "[" + ",".join(map(str, d["shape"])) + "]", **_quantization_cells(d["quantization"])}
          for kind in ("input", "output") for i, d in enumerate(p[f"{kind}s"])]
    tensors = Table([Column("io", "model"), Column("index", "#", True), Column("name", "tensor", width=NAME_WIDTH),
                     Column("type", "type"), Column("shape", "shape"),
                     Column("scale", "scale", True, lambda v: f"{v:.8g}", missing="–"),
                     Column("zero_point", "zero point", True, missing="–"),
                     Column("quantization", "quantization")], io, "Inputs and outputs")
    return summary, [ops, tensors]


def _quantization_cells(q) -> dict:
    """info's quantization fields (micro_rt.report.quantization_fields) as table cells."""
    if q is None:
        return {"scale": None, "zero_point": None, "quantization": "none"}
    if q.get("per_channel"):
        return {"scale": None, "zero_point": None,
                "quantization": f"per-channel: {q['channels']} scales on dimension "
                                f"{q['quantized_dimension']}"}
    return {"scale": q["scale"], "zero_point": q["zero_point"], "quantization": "per-tensor"}


def plan_tables(p: dict) -> tuple[list[str], list[Table]]:
    summary = [f"target {p['target']}, planner {p['planner']}, kernels {p['kernels']}: "
               f"{p['arena_for']}",
               f"head (planned activations + scratch): {p['head_bytes']:,} B; lower bound "
               f"{p['lower_bound']:,} B (efficiency {p['efficiency']:.1%})",
               f"tail (persistent): {p['tail_bytes']:,} B",
               f"total (head + tail): {p['total_bytes']:,} B; smallest arena that works: "
               f"{p['required_bytes']:,} B"]
    rows = sorted(p["buffers"], key=lambda b: (b["offset"], b["first_use"]))
    buffers = Table([Column("tensor", "tensor", True), Column("kind", "kind"),
                     Column("offset", "offset", True), Column("size", "size", True),
                     Column("first_use", "first step", True), Column("last_use", "last step", True),
                     Column("name", "name")], rows, "Buffers (steps: operator i runs at step i + 1)")
    tail = Table([Column("category", "tail category"), Column("bytes", "bytes", True)],
                 [{"category": k, "bytes": v} for k, v in
                  sorted(p["tail_breakdown"].items(), key=lambda kv: -kv[1])], "Tail")
    return summary, [buffers, tail]


def _validation_column(p: dict, rows: list[dict]) -> list[Column]:
    """CSV prints one table, so a board answer carries its validation status as a column."""
    v = p.get("validation")
    if not v:
        return []
    for row in rows:
        row["validation"] = v["summary"]
    return [Column("validation", "validation")]


def fit_tables(p: dict) -> tuple[list[str], list[Table]]:
    word = {"fits": "FITS", "does not fit": "DOES NOT FIT", "cannot tell": "CANNOT TELL"}
    summary = [f"**{word[p['verdict']]}** on {p['target']}, kernels {p['kernels']}; "
               f"scope: {p['scope']}", f"RAM counts the {p['arena_for']}", *status_lines(p.get("validation"))]
    verdicts = {True: "fits", False: "does not fit", None: "cannot tell"}
    rows = []
    for name in ("ram", "flash"):
        r = p[name]
        parts = ", ".join(f"{k.replace('_bytes', '').replace('_', ' ')} {v:,}"
                          for k, v in r.items() if k.endswith("_bytes") and v is not None)
        placement = r.get("placement")
        where = None if not placement else "; ".join(
            f"{', '.join(q['part'] for q in placement['parts'] if q['region']['name'] == use['name'])}"
            f" in {use['name']}" for use in placement["regions"]
            if any(q["region"]["name"] == use["name"] for q in placement["parts"]))
        rows.append({"resource": name.upper() if name == "ram" else name, "used": r["used"],
                     "budget": r["budget"], "margin": r["margin"],
                     "verdict": verdicts[r["fits"]] if r["budget"] is not None else None,
                     "complete": r["complete"], "parts": parts, "where": where})
    table = Table([Column("resource", "resource"), Column("used", "used B", True),
                   Column("budget", "budget B", True, missing="none"),
                   Column("margin", "margin B", True, missing="–"),
                   Column("verdict", "verdict", missing="not judged"),
                   Column("complete", "complete"), Column("parts", "made of (B)"),
                   Column("where", "placed in", missing="–"), *_validation_column(p, rows)], rows,
                  "Budget", notes=[f"- not accounted for: {n}" for n in p["not_accounted"]])
    placement = p["ram"].get("placement")
    if not placement:
        return summary, [table]
    regions = Table([Column("name", "region"), Column("base", "base", show=lambda v: f"0x{v:08x}"),
                     Column("size", "size B", True), Column("parts", "parts", show=", ".join),
                     Column("used", "used B", True), Column("margin", "margin B", True),
                     Column("fits", "fits"), Column("timing", "timing", missing="–")],
                    [dict(r, timing=r["timing"] or None) for r in placement["regions"]],
                    "RAM placement", notes=[f"- {placement['how']}"] +
                    ([f"- does not fit: {placement['problem']}"] if placement["problem"] else []))
    return summary, [table, regions]


def profile_tables(p: dict) -> tuple[list[str], list[Table]]:
    where = f"{p['target']} at {p['clock_hz'] / 1e6:g} MHz, kernels {p['kernels']}"
    if p["total_cycles"] is None:
        summary = [f"cannot profile on {where}: the model was not run (no kernel registered "
                   f"for {', '.join(o['op'] for o in p['ops_not_counted'])})"]
    else:
        label = "total" if p["complete"] else "INCOMPLETE total"
        summary = [f"{label} on {where}: {p['total_cycles']:,} cycles = {p['total_ms']:.3f} ms, "
                   f"{p['total_macs']:,} MACs, max stack {p['max_stack_bytes']} B",
                   f"run in the {p['arena_for']} ({p['arena_bytes']:,} B)"]
        if not p["complete"]:
            summary.append("not counted (ran on host kernels): " + ", ".join(
                f"{o['index']} {o['op']}" for o in p["ops_not_counted"]))
        if p.get("runtime_not_measured"):
            summary.append(f"runtime overhead not measured ({p['runtime_not_measured']}): the total is "
                           "the operators' alone")
    summary += [f"alignment: {a}" for a in p["alignment"]]
    if p.get("fit"):                  # profile --board: whether the model fits the board
        summary.append(p["fit"]["summary"])
    summary += status_lines(p.get("validation"))
    clock = p["clock_hz"]
    rows = [dict(o, counted=o["on_mcu"],
                 cycles=o["cycles"] if o["on_mcu"] else None,
                 instructions=o["instructions"] if o["on_mcu"] else None,
                 ms=o["cycles"] / clock * 1e3 if o["on_mcu"] else None) for o in p["ops"]]
    own = p.get("runtime")
    if own is not None:       # the device runtime between the operators: part of the total
        rows.append(dict(index=None, op="(runtime)", counted=True, instructions=own["instructions"],
                         cycles=own["cycles"], macs=0, macs_per_cycle=None, stack_bytes=own["frame_bytes"],
                         ms=own["cycles"] / clock * 1e3))
    nc = "not counted"
    ops = Table([Column("index", "#", True), Column("op", "op"),
                 Column("counted", "counted"),
                 Column("instructions", "instructions", True, missing=nc),
                 Column("cycles", "cycles", True, missing=nc), Column("macs", "MACs", True),
                 Column("macs_per_cycle", "MACs/cycle", True, lambda v: f"{v:.3f}", missing="–"),
                 Column("stack_bytes", "stack B", True),
                 Column("ms", "ms", True, lambda v: f"{v:.3f}", missing=nc),
                 *_validation_column(p, rows)], rows, "Operators")
    return summary, [ops]


def report_tables(report) -> tuple[list[str], list[Table]]:
    """`micro-rt report --format csv|markdown`: the summary, then the per-operator table."""
    from .model_report import report_text
    from .page import operator_table
    return report_text(report).splitlines(), [operator_table(report)]
