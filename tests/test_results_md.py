"""Every table in benchmarks/RESULTS.md is written by the script that measures it: it lies
between <!-- begin:NAME --> / <!-- end:NAME --> markers, and exactly one benchmark script
writes section NAME."""
from __future__ import annotations

import re

from conftest import ROOT

BENCH = ROOT / "benchmarks"
RESULTS = BENCH / "RESULTS.md"


def _sections(text: str) -> list[tuple[str, int, int]]:
    found = []
    for m in re.finditer(r"<!-- begin:([\w-]+) -->", text):
        end = text.find(f"<!-- end:{m.group(1)} -->", m.end())
        assert end > 0, f"section {m.group(1)} has no end marker"
        found.append((m.group(1), m.start(), end))
    return found


def test_every_table_is_inside_a_written_section():
    text = RESULTS.read_text()
    sections = _sections(text)
    assert sections
    for m in re.finditer(r"^\|.*\|$", text, re.M):
        assert any(a < m.start() < b for _, a, b in sections), \
            f"table row outside any script-written section: {m.group(0)[:80]}"


def test_each_section_has_one_writer_script():
    names = [n for n, _, _ in _sections(RESULTS.read_text())]
    assert len(names) == len(set(names)), names
    scripts = {p.name: p.read_text() for p in BENCH.glob("*.py")}
    for name in names:
        writers = [s for s, text in scripts.items() if re.search(rf"""write_section\(\s*["']{name}["']""", text)]
        assert len(writers) == 1, f"section {name}: written by {writers}"


def test_benchmarks_pin_blas_threads_before_numpy():
    """Timed host code runs on one BLAS thread, set before numpy loads, and the header says so."""
    for path in BENCH.glob("bench_*.py"):
        text = path.read_text()
        if "write_section" not in text or "unpinned-blas-on-purpose" in text:
            continue
        pin = text.find("pin_blas_threads()")
        numpy = min([i for i in (text.find("import numpy"), text.find("from micro_rt")) if i >= 0],
                    default=len(text))
        assert 0 <= pin < numpy, f"{path.name}: pin_blas_threads() must come before numpy loads"
