"""Per-operator figures as node data for Google's Model Explorer (ai-edge-model-explorer).

    micro-rt report MODEL --model-explorer DIR
    model-explorer MODEL --node_data_paths=DIR/MODEL.cycles.json,DIR/MODEL.macs.json,...

shows them as heat maps on the graph. The format is the package's ModelNodeData as its
`to_json_string` writes it: {graph id: GraphNodeData}, with `results` keyed by node id. Model
Explorer's TFLite adapter names the first subgraph's graph "main" and each operator's node by
its operator index ("0", "1", ...), the index `micro-rt info` and `profile` print; only the
first subgraph is reported (it is the one micro_rt plans and profiles). One file per figure:
each file is one "run" Model Explorer can switch between.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Callable, Optional

from ..errors import MicroRtError
from .facts import OperatorFact

MAIN_GRAPH = "main"
# Light to dark: small values pale, the costliest operators red.
GRADIENT = [{"stop": 0, "bgColor": "#fff5eb"}, {"stop": 0.5, "bgColor": "#fd8d3c"},
            {"stop": 1, "bgColor": "#a63603"}]

# (file suffix, run name, value per operator or None for "no data").
FIGURES: list[tuple[str, str, Callable[[OperatorFact], Optional[float]]]] = [
    ("cycles", "micro_rt cycles", lambda o: o.cycles),
    ("macs", "micro_rt MACs", lambda o: o.macs),
    ("macs_per_cycle", "micro_rt MACs/cycle", lambda o: o.macs_per_cycle),
    ("live_bytes", "micro_rt arena bytes live", lambda o: o.live_bytes),
    ("weight_bytes", "micro_rt weight bytes", lambda o: o.weight_bytes),
    ("scratch_bytes", "micro_rt scratch bytes", lambda o: o.scratch_bytes),
    ("unaligned", "micro_rt unaligned accesses",
     lambda o: sum(_count(a) for a in o.alignment) if o.on_mcu is not None else None),
]


def _count(alignment_line: str) -> int:
    """'... x12 (slow on silicon)' -> 12: an AlignmentReport's access count."""
    for word in reversed(alignment_line.split()):
        if word.startswith("x") and word[1:].isdigit():
            return int(word[1:])
    return 1


def node_data(name: str, ops: list[OperatorFact],
              value: Callable[[OperatorFact], Optional[float]]) -> Optional[dict]:
    """One figure as ModelNodeData JSON; None when no operator has a value (e.g. cycles of a
    model that was not emulated)."""
    results = {str(o.index): {"value": v} for o in ops if (v := value(o)) is not None}
    if not results:
        return None
    graph = {"results": results, "name": name, "thresholds": [], "gradient": GRADIENT,
             "hideInAggregatedStatsTable": False, "hideInChildrenStatsTable": False,
             "showExpandedSummaryOnGroupNode": False,
             "showLabelCountColumnsInChildrenStatsTable": False}
    return {MAIN_GRAPH: graph}


def write_node_data(directory: str, model_name: str, ops: list[OperatorFact],
                    cycles_complete: bool) -> list[Path]:
    """One file per figure that has values (unaligned accesses only when there are some);
    returns the paths written."""
    out = Path(directory)
    stem = Path(model_name).stem
    written = []
    try:
        out.mkdir(parents=True, exist_ok=True)
        for suffix, name, value in FIGURES:
            if suffix == "cycles" and not cycles_complete:
                name += " (incomplete: operators on host kernels have no value)"
            data = node_data(name, ops, value)
            if data is None or (suffix == "unaligned" and not any(
                    r["value"] for r in data[MAIN_GRAPH]["results"].values())):
                continue
            path = out / f"{stem}.{suffix}.json"
            path.write_text(json.dumps(data, indent=2))
            written.append(path)
    except OSError as e:
        raise MicroRtError(f"cannot write Model Explorer node data to '{directory}': "
                           f"{e.strerror}") from None
    return written
