"""`micro-rt compare A B`: two reports side by side (original vs optimized, int8 vs int16, one
model on two boards), with the difference B - A.

Operators are matched by operator name and first output tensor name, so an optimized model
whose operators were reordered still lines up with its original. When the names do not match
one to one (an int8 model and its int16 twin from another conversion), operators are matched
by position when both models have the same operators in the same order; the output says which
way they were matched. Otherwise there is no per-operator comparison (said so), never a
guessed one.
"""
from __future__ import annotations

import html
from dataclasses import dataclass
from enum import Enum
from typing import Optional

from ..model import Subgraph
from .formats import Column, Table
from .model_report import ModelReport
from .page import _table_html, lane_section, page
from .facts import OperatorFact


@dataclass
class Side:
    label: str                 # "model.tflite on cortex-m4"
    report: ModelReport
    sg: Subgraph


def _cycles(r: ModelReport) -> Optional[int]:
    return r.profile["total_cycles"] if r.profile else None


def _ms(r: ModelReport) -> Optional[float]:
    return r.profile["total_ms"] if r.profile and r.profile["total_cycles"] is not None else None


def _incomplete(r: ModelReport) -> bool:
    return r.profile is not None and bool(r.profile) and not r.profile["complete"]


def _verdict(r: ModelReport) -> str:
    return r.fit.verdict if r.judged else "no budget given"


METRICS = [
    ("model bytes", lambda r: r.model_bytes),
    ("operators", lambda r: len(r.operators)),
    ("MACs", lambda r: sum(o.macs for o in r.operators)),
    ("weight bytes", lambda r: sum(o.weight_bytes for o in r.operators)),
    ("arena head bytes", lambda r: r.plan.head_bytes),
    ("arena tail bytes", lambda r: r.plan.tail_bytes),
    ("smallest arena bytes", lambda r: r.plan.required_bytes),
    ("head lower bound bytes", lambda r: r.plan.lower_bound),
    ("RAM used bytes", lambda r: r.fit.ram_used),
    ("flash used bytes", lambda r: r.fit.flash_used),
    ("max kernel stack bytes", lambda r: r.fit.measured.stack_bytes if r.fit.measured else None),
    ("cycles", _cycles),
    ("ms", _ms),
    ("verdict", _verdict),
]


def summary_table(a: Side, b: Side) -> Table:
    rows = []
    for name, value in METRICS:
        va, vb = value(a.report), value(b.report)
        row = {"metric": name, "a": va, "b": vb, "delta": None, "change": None}
        if name in ("cycles", "ms"):
            for key, r in (("a", a.report), ("b", b.report)):
                if row[key] is not None and _incomplete(r):
                    row[key] = f"{_fmt(row[key])} (incomplete)"
        numeric = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (row["a"], row["b"]))
        if numeric:
            row["delta"] = vb - va
            row["change"] = (vb - va) / va if va else None
        rows.append(row)
    na = "not measured"
    return Table([Column("metric", "metric"), Column("a", "A", True, _fmt, missing=na),
                  Column("b", "B", True, _fmt, missing=na),
                  Column("delta", "B - A", True, _signed, missing="–"),
                  Column("change", "change", True, lambda v: f"{v:+.1%}", missing="–")],
                 rows, "Side by side",
                 notes=[f"A: {a.label}", f"B: {b.label}"])


def _fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:,.3f}"
    if isinstance(v, int):
        return f"{v:,}"
    return str(v)


def _signed(v) -> str:
    return f"{v:+,.3f}" if isinstance(v, float) else f"{v:+,}"


def _key(sg: Subgraph, o: OperatorFact) -> tuple[str, str]:
    op = sg.operators[o.index]
    first = op.outputs[0] if op.outputs and op.outputs[0] >= 0 else None
    return o.op, sg.tensors[first].name if first is not None else ""


class Matching(Enum):
    """How compare paired A's operators with B's; the value is said in the output."""
    NAMES = "operator and output tensor name"
    POSITION = "position and operator: the output tensor names differ"


@dataclass
class OperatorMatch:
    by: Matching
    pairs: list[tuple[OperatorFact, OperatorFact]]


def match_operators(a: Side, b: Side) -> Optional[OperatorMatch]:
    """A's operators paired with B's by (op, first output's name) when those match one to
    one; else position by position when both have the same operators in the same order;
    else None."""
    ops_a, ops_b = a.report.operators, b.report.operators
    if len(ops_a) != len(ops_b):
        return None
    keys_a = [_key(a.sg, o) for o in ops_a]
    keys_b = {_key(b.sg, o): o for o in ops_b}
    if len(set(keys_a)) == len(keys_a) and set(keys_a) == set(keys_b):
        return OperatorMatch(Matching.NAMES, [(o, keys_b[k]) for o, k in zip(ops_a, keys_a)])
    if all(oa.op == ob.op for oa, ob in zip(ops_a, ops_b)):
        return OperatorMatch(Matching.POSITION, list(zip(ops_a, ops_b)))
    return None


def operator_table(a: Side, b: Side) -> Optional[Table]:
    match = match_operators(a, b)
    if match is None:
        return None
    rows = []
    for oa, ob in match.pairs:
        rows.append({"index": oa.index, "b_index": ob.index, "op": oa.op,
                     "cycles_a": _op_cycles(oa), "cycles_b": _op_cycles(ob),
                     "delta": ob.cycles - oa.cycles if oa.cycles is not None and ob.cycles is not None else None,
                     "live_a": oa.live_bytes, "live_b": ob.live_bytes,
                     "macs_a": oa.macs, "macs_b": ob.macs})
    return Table([Column("index", "# A", True), Column("b_index", "# B", True), Column("op", "op"),
                  Column("cycles_a", "cycles A", True, _fmt, missing="not measured"),
                  Column("cycles_b", "cycles B", True, _fmt, missing="not measured"),
                  Column("delta", "cycles B - A", True, _signed, missing="–"),
                  Column("live_a", "live bytes A", True), Column("live_b", "live bytes B", True),
                  Column("macs_a", "MACs A", True), Column("macs_b", "MACs B", True)],
                 rows, f"Per operator (matched by {match.by.value})")


def _op_cycles(o: OperatorFact):
    if o.cycles is not None:
        return o.cycles
    return "not counted" if o.on_mcu is False else None


def no_match_note(a: Side, b: Side) -> str:
    return (f"no per-operator comparison: the operators match one to one neither by operator "
            f"and output tensor name nor by position and operator ({len(a.report.operators)} "
            f"in A, {len(b.report.operators)} in B)")


def compare_dict(a: Side, b: Side) -> dict:
    ops, match = operator_table(a, b), match_operators(a, b)     # ops is None exactly when match is
    return {"a": {"label": a.label, **a.report.as_dict()},
            "b": {"label": b.label, **b.report.as_dict()},
            "summary": summary_table(a, b).rows,
            "operators": None if ops is None else ops.rows,
            "operators_matched_by": None if match is None else match.by.name.lower()}


def compare_page(a: Side, b: Side) -> str:
    top = max(a.report.plan.head_bytes, b.report.plan.head_bytes)
    ops, match = operator_table(a, b), match_operators(a, b)
    body = ["<h2>Side by side</h2>",
            f'<ul class="notes"><li>A: {html.escape(a.label)}</li><li>B: {html.escape(b.label)}</li></ul>',
            _table_html(_rows_with_ids(summary_table(a, b), "m"), "compare-table")]
    if ops is not None and match is not None:
        body += ["<h2>Per operator</h2>",
                 f'<p class="sub">operators matched by {html.escape(match.by.value)}</p>',
                 _table_html(_rows_with_ids(ops, "o"), "compare-ops")]
    else:
        body.append(f'<p class="sub">{html.escape(no_match_note(a, b))}</p>')
    for k, side in enumerate((a, b)):
        body.append(f"<h2>Arena {'AB'[k]}: {html.escape(side.label)}</h2>"
                    + lane_section(f"lanes{k}", f"Arena lanes {'AB'[k]}", side.report.plan,
                                   side.sg, top, table_open=False,
                                   subgraphs=side.report.subgraphs))
    return page(f"micro_rt compare: {a.report.name} vs {b.report.name}",
                f"{a.report.name} vs {b.report.name}",
                "the same byte scale for both lane charts; B - A: positive means B needs more",
                "".join(body))


def _rows_with_ids(table: Table, prefix: str) -> Table:
    for k, row in enumerate(table.rows):
        row["_id"] = f"{prefix}{k}"
    return table


def compare_tables(a: Side, b: Side) -> tuple[list[str], list[Table]]:
    ops = operator_table(a, b)
    return ([f"A: {a.label}", f"B: {b.label}"] + ([] if ops else [no_match_note(a, b)]),
            [summary_table(a, b)] + ([ops] if ops else []))


def compare_text(a: Side, b: Side) -> str:
    ops = operator_table(a, b)
    return "\n\n".join([summary_table(a, b).text(), ops.text() if ops else no_match_note(a, b)])
