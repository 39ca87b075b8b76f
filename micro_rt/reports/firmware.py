"""The views of a firmware run (`micro-rt emulate`): the summary and tables for text, csv and
markdown, and a section for the HTML page. The payload is FirmwareReport.to_dict()."""
from __future__ import annotations

import html
from typing import Optional

from ..cortexm.demangle import unqualified
from .formats import NAME_WIDTH, Column, Table

TEXT_FUNCTIONS = 25          # functions the text view lists (csv, json, markdown: all)


def summary_lines(p: dict) -> list[str]:
    where = (f"board {p['board']}" if p["board"] else
             f"{p['core']} ({p['core_source']}; {p['memory_map']})")
    lines = [f"{p['file']} on {where}, {p['clock_hz'] / 1e6:g} MHz ({p['clock_source']})",
             f"{p['ending']}: {p['message']}",
             f"{p['cycles']:,} cycles = {p['ms']:.3f} ms, {p['instructions']:,} instructions, "
             f"stack high-water {p['stack_high_water_bytes']:,} B",
             "cycles: " + ", ".join(f"{k.replace('_', ' ')} {v:,}" for k, v in p["cycle_breakdown"].items() if v),
             f"flash interface at reset: {p['flash_interface']['at_reset']}"]
    if p["flash_interface"]["changes"]:
        lines.append(f"flash interface at the end: {p['flash_interface']['at_end']} "
                     f"({len(p['flash_interface']['changes'])} change(s) by the firmware)")
    h = p["heap"]
    calls = ", ".join(f"{k} {v}" for k, v in h["calls"].items() if v)
    lines.append(f"heap: {calls or 'no allocator calls'}; peak in use {h['peak_in_use']:,} B, "
                 f"{h['sbrk_bytes']:,} B from _sbrk" if h["watched"] else "heap: the image has no allocator")
    for what in ("malloc", "calloc", "realloc"):
        by = h["callers"].get(what)
        if by:
            lines.append(f"  {what} called from: " + ", ".join(f"{name} {n}" for name, n in list(by.items())[:5]))
    for name, calls in p["timed_calls"].items():
        lines.append(timed_line(name, calls, name in p["timed_unfinished"]))
    if p["exceptions_taken"]:
        lines.append("exceptions taken: " + ", ".join(f"{k} x{v}" for k, v in p["exceptions_taken"].items()))
    for f in p["faults"]:
        bits = " ".join(f["cfsr"] + f["hfsr"])
        at = f" at {f['address']}" if f["address"] else ""
        lines.append(f"fault: {f['exception']}: {f['cause']}{at} by pc {f['pc']} <{f['symbol']}>"
                     + (f" [{bits}]" if bits else "")
                     + (f"; handled by {f['handled_by']}" if f["handled_by"] else "; no handler ran"))
    for u in p["unaligned"]:
        lines.append(f"unaligned {u['kind']} ({u['size']} B) at {u['address']} by pc {u['pc']} "
                     f"<{u['symbol']}> '{u['instruction']}' x{u['count']}"
                     + (": faults on silicon" if u["faults_on_silicon"] else ""))
    for r in p["regions"]:
        lines.append(f"region {r['region']} ({r['kind']}, {r['base']}): image {r['image_bytes']:,} of "
                     f"{r['size']:,} B" + ("" if r["fits"] else " DOES NOT FIT"))
    if p["ignored_mmio"]:
        n = sum(p["ignored_mmio"].values())
        lines.append(f"--ignore-mmio: {n:,} access(es) to {len(p['ignored_mmio'])} unmodelled peripheral "
                     "address(es) read as 0 / dropped: " + ", ".join(list(p["ignored_mmio"])[:6]))
    if p["system_registers_not_modelled"]:
        lines.append("system registers not modelled (read back as written, no effect): "
                     + ", ".join(list(p["system_registers_not_modelled"])[:6]))
    lines += [f"note: {n}" for n in p["notes"]]
    return lines


def timed_line(name: str, calls: list[dict], unfinished: bool) -> str:
    """One timed function (--time, or the runtime's entry): its calls' cycles, instructions and
    stack, each call when there are a few, else their range."""
    head = f"timed {name}: {len(calls)} call{'' if len(calls) == 1 else 's'}"
    if unfinished:
        head += " (and one not returned at the end)"
    if not calls:
        return head
    stacks = [c["stack_bytes"] for c in calls if c["stack_bytes"] is not None]
    stack = f", stack {max(stacks):,} B below its entry SP" if stacks else ""
    if len(calls) <= 3:
        each = "; ".join(f"{c['cycles']:,} cycles, {c['instructions']:,} instructions" for c in calls)
    else:
        cycles = [c["cycles"] for c in calls]
        each = f"{min(cycles):,} to {max(cycles):,} cycles a call, {sum(cycles):,} in all"
    return f"{head}: {each}{stack}"


def function_table(p: dict, limit: int = 0) -> Table:
    rows = p["functions"][:limit] if limit else p["functions"]
    notes = []
    if limit and len(p["functions"]) > limit:
        notes.append(f"... {len(p['functions']) - limit} more functions (--format csv or json lists all)")
    for name, cycles in p["cycles_outside_functions"].items():
        notes.append(f"{name}: {cycles:,} cycles, not in any function")
    return Table([Column("function", "function", width=NAME_WIDTH), Column("calls", "calls", True),
                  Column("instructions", "instructions", True),
                  Column("exclusive_cycles", "self cycles", True),
                  Column("inclusive_cycles", "total cycles", True),
                  Column("memory_stall_cycles", "flash stalls", True)], rows, "Functions", notes)


def operator_table(p: dict) -> Optional[Table]:
    """A TFLM application's operators, as TFLM invoked them (cortexm/system/tflm_app.py)."""
    t = p.get("tflm")
    if not t:
        return None
    rows = [o | {"dispatched": ", ".join(o["dispatched_to"]) or "-", "kernel": unqualified(o["kernel"]),
                 "op_shown": o["op"] if o["op_source"] == "profiler tag" else f"{o['op']} (from file)"}
            for o in t["operators"]]
    notes = [f"operators: {t['operator_cycles']:,} cycles; TFLM's interpreter between them: "
             f"{t['interpreter_cycles_between_operators']:,} cycles"
             + (" (its MicroProfiler calls included)" if any(o["profiler_ticks"] is not None for o in t["operators"]) else ""),
             "an operator's cycles run from TFLM's call of its invoke function to the return, block by block; "
             "profiler ticks are the application's own DWT_CYCCNT reads around it"]
    if t["arena_used_bytes"] is not None:
        notes.append(f"arena_used_bytes() returned {t['arena_used_bytes']:,} B")
    if t["operators_unfinished"]:
        notes.append(f"{t['operators_unfinished']} operator(s) had not returned when the run ended")
    return Table([Column("index", "#", True), Column("op_shown", "operator", width=28),
                  Column("kernel", "kernel (invoke function)", width=NAME_WIDTH),
                  Column("dispatched", "dispatched to", width=40),
                  Column("cycles", "cycles", True), Column("instructions", "instructions", True),
                  Column("interpreter_cycles_before", "interpreter before", True),
                  Column("profiler_ticks", "profiler ticks", True, missing="-")],
                 rows, "TFLM operators", notes)


def firmware_tables(p: dict) -> tuple[list[str], list[Table]]:
    """csv: the function table (one CSV is one table); markdown: the operators too."""
    ops = operator_table(p)
    return summary_lines(p), [function_table(p)] + ([ops] if ops is not None else [])


def firmware_text(p: dict) -> str:
    parts = summary_lines(p)
    if p["console"]:
        parts += ["console:"] + ["  " + line for line in p["console"].rstrip("\n").split("\n")]
    ops = operator_table(p)
    if ops is not None:
        parts.append(ops.text())
    parts.append(function_table(p, TEXT_FUNCTIONS).text())
    return "\n".join(parts)


def firmware_section(p: dict) -> str:
    """The HTML section of a firmware run: summary, console, the operators of a TFLM
    application, the function table."""
    items = "".join(f"<li>{html.escape(line)}</li>" for line in summary_lines(p))
    console = (f"<h3>Console</h3><pre>{html.escape(p['console'])}</pre>" if p["console"] else "")
    ops = operator_table(p)
    ops_html = f'<div class="tablewrap">{ops.html("operators")}</div>' if ops is not None else ""
    table = function_table(p).html("functions")
    return (f'<h2>Firmware run: {html.escape(p["file"])}</h2><ul class="notes">{items}</ul>'
            f'{console}{ops_html}<div class="tablewrap">{table}</div>')
