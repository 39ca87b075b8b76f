"""The fields of a board file's JSON objects, read with their checks: every error names the file
and the field (board_file.py and board_file_boot.py read the sections with it)."""
from __future__ import annotations

from pathlib import Path
from typing import Any, NoReturn, Optional, Sequence

from micro_rt.errors import InputError

from .board_records import CITATION_STATUSES, Citation

__all__ = ["Fields"]


class Fields:
    """One JSON object of a board file; every error names the file and the field (`at(key)`: a
    field's full name, e.g. memory.regions[0].base)."""

    def __init__(self, path: Path, data: Any, where: str):
        self.path, self.where = path, where
        if not isinstance(data, dict):
            self.fail(where, f"must hold a JSON object, not {type(data).__name__}")
        self.data: dict = data

    def fail(self, field: str, problem: str) -> NoReturn:
        what = f"field '{field}'" if field else "the file"
        raise InputError(f"board file {self.path}: {what} {problem}")

    def check_keys(self, required: Sequence[str], optional: Sequence[str] = ()) -> None:
        for key in required:
            if key not in self.data:
                self.fail(self.at(key), "is missing")
        for key in self.data:
            if key not in required and key not in optional:
                self.fail(self.at(key), f"is not a known field (expected one of "
                                         f"{', '.join([*required, *optional])})")

    def at(self, key: str) -> str:
        return f"{self.where}.{key}" if self.where else key

    def get(self, key: str, kind: type, default: Any = None) -> Any:
        value = self.data.get(key, default)
        if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
            self.fail(self.at(key), f"must be an integer, not {value!r}")
        if not isinstance(value, kind):
            self.fail(self.at(key), f"must be a {kind.__name__}, not {value!r}")
        return value

    def text(self, key: str, default: Optional[str] = None) -> str:
        value = self.get(key, str, default)
        if not value.strip() and default is None:
            self.fail(self.at(key), "must not be empty")
        return value

    def count(self, key: str, minimum: int = 0, default: Optional[int] = None) -> int:
        value = self.get(key, int, default)
        if value < minimum:
            self.fail(self.at(key), f"must be >= {minimum}, not {value}")
        return value

    def choice(self, key: str, choices: Sequence[str]) -> str:
        value = self.text(key)
        if value not in choices:
            self.fail(self.at(key), f"must be one of {', '.join(choices)}, not '{value}'")
        return value

    def obj(self, key: str) -> "Fields":
        return Fields(self.path, self.data.get(key), self.at(key))

    def items(self, key: str, default: Optional[list] = None) -> list:
        return self.get(key, list, default)

    def citations(self) -> tuple[Citation, ...]:
        raw = self.items("cite")
        if not raw:
            self.fail(self.at("cite"), "needs at least one citation")
        out = []
        for i, item in enumerate(raw):
            f = Fields(self.path, item, f"{self.at('cite')}[{i}]")
            f.check_keys(("status", "source"))
            out.append(Citation(f.choice("status", CITATION_STATUSES), f.text("source")))
        return tuple(out)

    def clock_table(self, key: str, default: Optional[list] = None) -> tuple[tuple[int, int], ...]:
        """[[max_hz, value], ...] with max_hz rising and value not falling."""
        raw = self.items(key, default)
        if not raw:
            self.fail(self.at(key), "needs at least one [max_hz, value] entry")
        table: list[tuple[int, int]] = []
        for i, entry in enumerate(raw):
            if (not isinstance(entry, list) or len(entry) != 2
                    or not all(isinstance(v, int) and not isinstance(v, bool) for v in entry)
                    or entry[0] <= 0 or entry[1] < 0):
                self.fail(f"{self.at(key)}[{i}]", f"must be [max_hz, count] with "
                                                   f"max_hz > 0 and count >= 0, not {entry!r}")
            if table and (entry[0] <= table[-1][0] or entry[1] < table[-1][1]):
                self.fail(f"{self.at(key)}[{i}]", "must have a higher max_hz than the entry "
                                                   "before it and no fewer wait states")
            table.append((entry[0], entry[1]))
        return tuple(table)
