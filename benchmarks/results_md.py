"""Writing one script's section of benchmarks/RESULTS.md, between its markers:

    <!-- begin:NAME -->
    ...the script's own text...
    <!-- end:NAME -->

The section is replaced in place when the markers exist, else appended at the end.
"""
from __future__ import annotations

from pathlib import Path

RESULTS = Path(__file__).resolve().with_name("RESULTS.md")


def write_section(name: str, text: str, path: Path = RESULTS) -> None:
    begin, end = f"<!-- begin:{name} -->", f"<!-- end:{name} -->"
    block = f"{begin}\n{text.rstrip()}\n{end}"
    old = path.read_text() if path.exists() else "# Benchmark results\n"
    if begin in old and end in old:
        head, rest = old.split(begin, 1)
        _, tail = rest.split(end, 1)
        new = head + block + tail
    else:
        new = old.rstrip() + "\n\n" + block + "\n"
    path.write_text(new)
