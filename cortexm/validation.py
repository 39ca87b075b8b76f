"""How far a board answer is known to be from silicon: the validation status every board answer
prints (fit, profile, boards, report, compare), in text and in every --format.

The figures come from measurements/validation.json, which benchmarks/bench_calibration.py
writes: micro_rt's latency against every in-scope published CMSIS-NN measurement, per board and
per core. That file records a fingerprint of the code it measured; `summary_is_current` tells a
test whether the firmware, the cycle model or the board files moved on since (then the script
must be re-run). The status also names the board's figures that no document backs
('unverified' citations), so the doubt is carried into the answer instead of hidden.
"""
from __future__ import annotations

import enum
import hashlib
import json
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Optional

from .boards import ANSWER_SECTIONS, SHIPPED_DIR, Board

SUMMARY_PATH = SHIPPED_DIR / "measurements" / "validation.json"
_HERE = Path(__file__).resolve().parent
# What a board answer's cycles depend on: the kernels' machine code, the cycle and memory-system
# model, and the board figures (the catalog: its records, how a file is read, how a board maps
# to the memory system). A change to any of them invalidates the measured errors.
FINGERPRINT_FILES = ("core_timing.py", "cycles.py", "memory_system.py", "native_hook.c",
                     "op_windows.py", "boards.py", "board_file.py", "board_fields.py", "board_file_boot.py",
                     "board_records.py")


class Status(enum.Enum):
    VALIDATED = "validated"
    NOT_VALIDATED = "not validated"


@dataclass(frozen=True)
class BoardValidation:
    """The validation status of one board answer."""
    status: Status
    summary: str                       # one line: "validated: -4% to +7% over 8 measurements ..."
    measurements: int = 0
    min_error: Optional[float] = None
    max_error: Optional[float] = None
    mean_abs_error: Optional[float] = None
    unverified: tuple[str, ...] = field(default_factory=tuple)   # "section: why"

    def lines(self) -> list[str]:
        """The status and each figure no document backs, as text lines."""
        return status_lines(self.as_dict())

    def as_dict(self) -> dict:
        return {"status": self.status.value, "summary": self.summary,
                "measurements": self.measurements, "min_error": self.min_error,
                "max_error": self.max_error, "mean_abs_error": self.mean_abs_error,
                "unverified": list(self.unverified)}


def status_lines(validation: Optional[dict]) -> list[str]:
    """A board answer's status and each figure no document backs, as text lines, from
    `BoardValidation.as_dict()` (as Setup and the JSON answers carry it); [] for None."""
    if not validation:
        return []
    return [validation["summary"]] + [f"unverified figure ({u}); the answer carries that doubt"
                                      for u in validation["unverified"]]


def code_fingerprint() -> str:
    """sha256 (16 hex digits) of the firmware images, the cycle-model sources and the shipped
    board files: what the validation figures were measured on."""
    h = hashlib.sha256()
    paths = sorted((_HERE / "firmware").glob("*.elf")) + [_HERE / f for f in FINGERPRINT_FILES] \
        + sorted(SHIPPED_DIR.glob("*.json"))
    for path in paths:
        h.update(path.name.encode())
        h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()[:16]


@lru_cache(maxsize=1)
def _summary() -> dict:
    if not SUMMARY_PATH.exists():
        return {"boards": {}, "cores": {}, "code_fingerprint": None, "benchmarks": []}
    return json.loads(SUMMARY_PATH.read_text(encoding="utf-8"))


def summary_is_current() -> bool:
    """Whether validation.json was measured on the code and boards shipped now."""
    return _summary().get("code_fingerprint") == code_fingerprint()


def _percent(x: float) -> str:
    return f"{x:+.0%}" if abs(x) >= 0.005 else "0%"


VALIDATED_KERNELS = "cmsis-nn"       # the flavour of every measurement in the validation table


def board_validation(board: Board, clock_hz: Optional[int] = None,
                     kernels: str = VALIDATED_KERNELS) -> BoardValidation:
    """The status of an answer for `board` at `clock_hz` (None: the board's clock) with `kernels`.
    The published measurements all ran CMSIS-NN: an answer with other kernels is not validated
    by them (they check the board's core and memory model on CMSIS-NN code, which is said). The
    figures no document backs are those of the sections the answer is computed from
    (ANSWER_SECTIONS: not `peripherals`, which serves the emulation of firmware from reset)."""
    unverified = tuple(f"{section}: {c.source}" for section, c in board.citations()
                       if c.status == "unverified" and section in ANSWER_SECTIONS)
    data = _summary()
    shipped = board.path.resolve().parent == SHIPPED_DIR.resolve()
    entry = data["boards"].get(board.name) if shipped else None
    if entry and kernels != VALIDATED_KERNELS:
        return BoardValidation(Status.NOT_VALIDATED,
                               f"not validated for {kernels} kernels: the {entry['measurements']} published "
                               f"measurements on this board ran CMSIS-NN (micro_rt's CMSIS-NN-style kernels "
                               f"came {_percent(entry['min_error'])} to {_percent(entry['max_error'])} from "
                               "them: a check of the board's core and memory model, not of these kernels)",
                               unverified=unverified)
    if entry:
        text = (f"validated: {_percent(entry['min_error'])} to {_percent(entry['max_error'])} "
                f"over {entry['measurements']} published CMSIS-NN measurement"
                f"{'s' if entry['measurements'] != 1 else ''} on this board "
                f"(mean |error| {entry['mean_abs_error']:.0%}; MLPerf Tiny, "
                f"benchmarks/RESULTS.md 'Validation')")
        if clock_hz is not None and clock_hz != board.clock.default_hz:
            text += f"; measured at {board.clock.default_hz / 1e6:g} MHz, not at this clock"
        return BoardValidation(Status.VALIDATED, text, entry["measurements"], entry["min_error"],
                               entry["max_error"], entry["mean_abs_error"], unverified)
    if not shipped:
        why = f"the board file {board.path} is not the catalog's"
    else:
        why = "no published CMSIS-NN measurement on this board"
    core = data["cores"].get(board.core)
    elsewhere = (f"the same core ({board.core}) is {_percent(core['min_error'])} to "
                 f"{_percent(core['max_error'])} over {core['measurements']} measurements on "
                 f"{', '.join(core['boards'])}, but this board's memory system is not checked"
                 if core else f"no {board.core} board has one, so the core model is unchecked too")
    return BoardValidation(Status.NOT_VALIDATED,
                           f"not validated: {why}; these figures are estimates: {elsewhere}",
                           unverified=unverified)
