"""Tables in the four forms the CLI prints (`--format text|json|csv|markdown`) and the report
page shows (HTML): one `Table` declares its columns once, and each renderer reads it.

CSV carries the raw values (bytes as integers, no units, empty for "not counted") so a
spreadsheet can sum them; markdown and text carry the same values formatted for a person.
Long names are elided in the middle in text and markdown (a column's `width`) and a long list
is shown as its count and first few (`summarise_items`), so the numeric columns stay in view;
CSV and JSON keep them whole, and the HTML table wraps such a cell and carries the whole text
as its tooltip.
"""
from __future__ import annotations

import csv
import html
import io
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence

from ..report import ELLIPSIS, elide

FORMATS = ("text", "json", "csv", "markdown")


def group_digits(value: Any) -> str:
    """12345 -> '12,345'; None -> '' (not counted / not applicable); other values as str."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.3f}"
    return str(value)


NAME_WIDTH = 40               # a name column's width in text and markdown
FIRST_ITEMS = 3               # of a long list, the items shown


def summarise_items(items: Sequence[str], noun: str, first: int = FIRST_ITEMS,
                    separator: str = " ") -> str:
    """'int8[4,6] int8[4,6]', or for more than `first` + 1 items '49 outputs: int8[4,6]
    int8[4,6] int8[4,6] …' (a 49-output UNPACK stays one short cell)."""
    if len(items) <= first + 1:
        return separator.join(items)
    return f"{len(items)} {noun}: {separator.join(items[:first])}{separator}{ELLIPSIS}"


@dataclass(frozen=True)
class Shown:
    """A cell whose text for a person is shorter than its value: CSV carries `full`, the
    HTML table shows `text` with `full` as its tooltip."""
    full: str
    text: str

    def __str__(self) -> str:
        return self.full


@dataclass
class Column:
    key: str                       # the row's field
    title: str
    numeric: bool = False          # right-aligned, sorted as a number
    show: Callable[[Any], str] = group_digits     # value -> text for a person
    missing: str = ""              # shown for None (e.g. "not counted")
    width: Optional[int] = None    # longer text is elided (text, markdown) or wrapped (HTML)


@dataclass
class Table:
    columns: list[Column]
    rows: list[dict]
    title: str = ""
    notes: list[str] = field(default_factory=list)    # lines printed after the table

    def _cell(self, column: Column, row: dict) -> str:
        """The whole text for a person (the HTML cell's)."""
        value = row.get(column.key)
        if value is None:
            return column.missing
        return value.text if isinstance(value, Shown) else column.show(value)

    def _short_cell(self, column: Column, row: dict) -> str:
        """The text and markdown cell: a long one elided to the column's width."""
        text = self._cell(column, row)
        return text if column.width is None else elide(text, column.width)

    def csv(self) -> str:
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow([c.key for c in self.columns])
        for row in self.rows:
            writer.writerow(["" if row.get(c.key) is None else _raw(row.get(c.key))
                             for c in self.columns])
        return out.getvalue().rstrip("\n")

    def markdown(self) -> str:
        def escape(text: str) -> str:
            return text.replace("|", "\\|").replace("\n", " ")
        lines = [f"### {self.title}", ""] if self.title else []
        lines.append("| " + " | ".join(escape(c.title) for c in self.columns) + " |")
        lines.append("|" + "|".join("---:" if c.numeric else "---" for c in self.columns) + "|")
        for row in self.rows:
            lines.append("| " + " | ".join(escape(self._short_cell(c, row)) for c in self.columns) + " |")
        lines += [""] + [f"{n}" for n in self.notes] if self.notes else []
        return "\n".join(lines)

    def text(self) -> str:
        cells = [[self._short_cell(c, row) for c in self.columns] for row in self.rows]
        widths = [max([len(c.title)] + [len(r[i]) for r in cells]) for i, c in enumerate(self.columns)]

        def line(values: Sequence[str]) -> str:
            return "  ".join(v.rjust(w) if c.numeric else v.ljust(w)
                             for v, w, c in zip(values, widths, self.columns)).rstrip()
        lines = [self.title] if self.title else []
        lines += [line([c.title for c in self.columns])] + [line(r) for r in cells] + self.notes
        return "\n".join(lines)

    def html(self, table_id: str, row_attrs: Optional[Callable[[dict], str]] = None) -> str:
        """A sortable table: a cell whose text is not its raw value (12,345 for 12345) carries
        the raw value in data-v for the page's sort."""
        head = "".join(f'<th{_NUM if c.numeric else ""} data-k="{c.key}">'
                       f"{html.escape(c.title)}</th>" for c in self.columns)
        body = []
        for row in self.rows:
            tds = []
            for c in self.columns:
                value = row.get(c.key)
                shown = self._cell(c, row)
                raw = "" if value is None else str(_raw(value))
                unknown = (value is None and bool(c.missing)
                           or isinstance(value, str) and value.startswith("not "))
                wrap = c.width is not None and len(shown) > c.width
                css = " ".join(k for k, on in (("num", c.numeric), ("nc", unknown),
                                               ("wrap", wrap)) if on)
                tip = raw if isinstance(value, Shown) and raw != shown else shown if wrap else ""
                attrs = (f' class="{css}"' if css else "") + (
                    f' data-v="{html.escape(raw, quote=True)}"' if raw != shown else "") + (
                    f' title="{html.escape(tip, quote=True)}"' if tip else "")
                tds.append(f"<td{attrs}>{html.escape(shown)}</td>")
            attrs = f" {row_attrs(row)}" if row_attrs else ""
            body.append(f"<tr{attrs}>{''.join(tds)}</tr>")
        return (f'<table class="sortable" id="{table_id}"><thead><tr>{head}</tr></thead>'
                f"<tbody>{''.join(body)}</tbody></table>")


_NUM = ' class="num"'


def _raw(value: Any) -> Any:
    """A value as CSV and the HTML sort carry it: booleans as in JSON."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, (list, tuple)):
        return " ".join(str(v) for v in value)
    if isinstance(value, Shown):
        return value.full
    return value


def render(fmt: str, summary: Sequence[str], tables: Sequence[Table]) -> str:
    """A command's answer as csv (the first table only: one CSV is one table) or markdown
    (the summary lines, then every table)."""
    if fmt == "csv":
        return tables[0].csv()
    if fmt == "markdown":
        parts = ["\n".join(f"{line}  " if line else "" for line in summary).rstrip()]
        parts += [t.markdown() for t in tables]
        return "\n\n".join(p for p in parts if p)
    raise ValueError(f"render takes csv or markdown, not {fmt!r}")
