"""Before and after: the cycle tables of RESULTS.md at an earlier commit against the tables now.

    python benchmarks/compare_results.py --before REV [--sections op-cycles vmcu-speed ...] [--write]

For each marked section (`<!-- begin:NAME -->`) and each table in it, rows are matched by the
columns both tables have that are neither compared nor a rate or time (model, core, operator,
type, wait states, ...). A column only the earlier table has (the mode, call by call or whole
invoke, that vmcu-runtime and vmcu-memory-speed had) is left out of the match; of the earlier
rows that then look alike, the whole invoke's is kept, the mode that remains. Every column whose
header says instructions, cycles, micro_rt ms or "per" (cycles per MAC or element) is compared. Per table: rows matched,
rows whose instructions are identical, rows whose cycles changed, and the smallest, median and
largest relative change of the cycles; then the rows with the largest changes. Rows found on
one side only are counted apart. Nothing here measures: it reads what the measuring scripts
wrote, so it is re-run whenever they are. --write puts the comparison into RESULTS.md (section
before-after, with REV in its header).
"""
from __future__ import annotations

import argparse
import re
import statistics
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import results_md

ROOT = Path(__file__).resolve().parents[1]
RESULTS = "benchmarks/RESULTS.md"
CYCLE_SECTIONS = ("op-cycles", "op-cycles-flavours", "vmcu-speed", "vmcu-fpu", "vmcu-memory-speed",
                  "vmcu-runtime", "calibration")
TOP_ROWS = 5
_NUMBER = re.compile(r"^([-+]?[\d,]*\.?\d+)(%|x| /MAC| /elem)?$")    # a count, or cycles per MAC / element


@dataclass
class Table:
    header: list[str]
    rows: list[list[str]]


@dataclass
class Comparison:
    section: str
    columns: list[str]
    matched: int = 0
    only_before: int = 0
    only_after: int = 0
    instructions_same: int = 0
    instructions_compared: int = 0
    changes: list[tuple[float, str]] = field(default_factory=list)    # (relative cycle change, row key)


def sections(text: str) -> dict[str, str]:
    """The marked sections of a RESULTS.md text, by name."""
    return dict(re.findall(r"<!-- begin:([\w-]+) -->\n(.*?)<!-- end:\1 -->", text, re.S))


def tables(section: str) -> list[Table]:
    """The markdown tables of a section, in order."""
    found, lines = [], section.splitlines()
    k = 0
    while k < len(lines):
        if lines[k].startswith("|") and k + 1 < len(lines) and re.match(r"^\|[-:| ]+\|$", lines[k + 1]):
            header = _cells(lines[k])
            rows = []
            k += 2
            while k < len(lines) and lines[k].startswith("|"):
                rows.append(_cells(lines[k]))
                k += 1
            found.append(Table(header, rows))
        else:
            k += 1
    return found


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _number(cell: str) -> float | None:
    cell = cell.replace("**", "")
    match = _NUMBER.match(cell)
    return float(match.group(1).replace(",", "")) if match else None


_NOT_KEYS = re.compile(r"wall|CPU|M instr|>=|%| s$| s /|entries", re.I)     # rates, times, counts of entries


def _rows(table: Table, keys: list[str]) -> dict[tuple[str, ...], dict[str, str]]:
    """The table's rows by their key cells; of rows with one key, a whole invoke's wins."""
    found: dict[tuple[str, ...], dict[str, str]] = {}
    for row in table.rows:
        cells = dict(zip(table.header, row))
        key = tuple(f"{h}={cells.get(h, '')}" for h in keys)
        dropped = " ".join(c for h, c in cells.items() if h not in keys)
        if key not in found or re.search(r"whole", dropped, re.I):
            found[key] = cells
    return found


def compare(name: str, before: Table, after: Table) -> Comparison:
    counted = [h for h in after.header if re.search(r"instructions|cycles|micro_rt ms| per$|^int(8|16)$", h, re.I)
               and not re.search(r"per |/|%", h, re.I)]
    result = Comparison(name, counted)
    keys = [h for h in after.header if h in before.header and h not in counted and not _NOT_KEYS.search(h)]
    old, new = _rows(before, keys), _rows(after, keys)
    result.only_before = len(old.keys() - new.keys())
    result.only_after = len(new.keys() - old.keys())
    for key in [k for k in new if k in old]:
        result.matched += 1
        a, b = old[key], new[key]
        for column in counted:
            x, y = _number(a.get(column, "")), _number(b.get(column, ""))
            if x is None or y is None:
                continue
            if re.search(r"instructions", column, re.I):
                result.instructions_compared += 1
                result.instructions_same += x == y
            elif x:
                result.changes.append((y / x - 1, f"{', '.join(key)} ({column}: {x:,.0f} -> {y:,.0f})"))
    return result


def markdown(revision: str, comparisons: list[Comparison], missing: list[str]) -> str:
    lines = [f"Before: `{RESULTS}` at commit {revision}; after: the tables as they are now.", "",
             "| section | table columns compared | rows matched | only before | only after | "
             "instructions identical | cycle values changed | cycle change min / median / max |",
             "|---|---|---:|---:|---:|---:|---:|---|"]
    for c in comparisons:
        changed = [d for d, _ in c.changes if d]
        spread = (f"{min(d for d, _ in c.changes):+.2%} / {statistics.median(d for d, _ in c.changes):+.2%} / "
                  f"{max(d for d, _ in c.changes):+.2%}" if c.changes else "-")
        same = f"{c.instructions_same} of {c.instructions_compared}" if c.instructions_compared else "-"
        lines.append(f"| {c.section} | {', '.join(c.columns) or '-'} | {c.matched} | {c.only_before} | "
                     f"{c.only_after} | {same} | {len(changed)} of {len(c.changes)} | {spread} |")
    for c in comparisons:
        largest = sorted((x for x in c.changes if x[0]), key=lambda x: -abs(x[0]))[:TOP_ROWS]
        if largest:
            lines += ["", f"Largest cycle changes in {c.section}:", ""]
            lines += [f"- {d:+.3%}: {what}" for d, what in largest]
    lines += [""] + [f"- {m}" for m in missing]
    return "\n".join(lines).rstrip() + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="the commit whose RESULTS.md is 'before'")
    parser.add_argument("--sections", nargs="+", default=list(CYCLE_SECTIONS))
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    revision = subprocess.run(["git", "rev-parse", "--short", args.before], cwd=ROOT, check=True,
                              capture_output=True, text=True).stdout.strip()
    old_text = subprocess.run(["git", "show", f"{revision}:{RESULTS}"], cwd=ROOT, check=True,
                              capture_output=True, text=True).stdout
    old, new = sections(old_text), sections((ROOT / RESULTS).read_text())
    comparisons, missing = [], []
    for name in args.sections:
        if name not in old or name not in new:
            missing.append(f"{name}: not in {'the earlier' if name not in old else 'the current'} RESULTS.md")
            continue
        before, after = tables(old[name]), tables(new[name])
        for k, (b, a) in enumerate(zip(before, after)):
            comparisons.append(compare(name if len(after) == 1 else f"{name} (table {k + 1})", b, a))
    body = markdown(revision, comparisons, missing)
    print(body)
    if args.write:
        results_md.write_section("before-after", body)


if __name__ == "__main__":
    main()
