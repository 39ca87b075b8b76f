"""Facts that depend on a firmware ELF alone, computed once per firmware build and shipped beside
it: its static alignment checks (static_alignment.py) and its reference graph (image.py). Each
takes a second or more to compute with capstone, and every emulated run needs them.

`make firmware` writes `<core>.<kind>.json` next to cortexm/firmware/<core>.elf, tied to the ELF's
sha256; `read_facts` returns them only for exactly that ELF (another build's file, or one that
cannot be read, is ignored and the caller computes the facts itself), so a stale file can cost
time but never give a wrong answer.

    python -m micro_rt.cortexm.write_firmware_facts cortexm/firmware/*.elf

This module only reads and writes the files; the command that computes them is
write_firmware_facts.py (it needs image.py and static_alignment.py, which read through here).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional, Union

FORMAT = 1


def facts_path(elf_path: Union[str, Path], kind: str) -> Path:
    path = Path(elf_path)
    return path.with_name(f"{path.stem}.{kind}.json")


def read_facts(elf_path: Union[str, Path], sha256: str, kind: str) -> Optional[Any]:
    """The facts of `kind` written beside the ELF for the ELF of this hash, else None."""
    try:
        data = json.loads(facts_path(elf_path, kind).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("sha256") != sha256:
        return None
    return data.get("facts")


def write_facts(elf_path: Union[str, Path], sha256: str, kind: str, facts: Any) -> Path:
    out = facts_path(elf_path, kind)
    out.write_text(json.dumps({"format": FORMAT, "sha256": sha256, "facts": facts}, separators=(",", ":")) + "\n")
    return out
