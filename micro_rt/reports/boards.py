"""`micro-rt boards MODEL`: the model on every board of the catalog, one row per board.

Each board is measured as `micro-rt report --board B` and `micro-rt fit --board B` measure it
(reports.model_report.gather: the arena planned for the board's core, one emulated inference of
micro_rt's C kernels of the flavour, CMSIS-NN-style unless `--kernels reference`, at the board's
clock through its flash interface, the fit judged on that run), in
worker processes, one board each. Rows are sorted by what a user picks a board for: boards the
model fits first, fastest first; then the ones micro_rt cannot tell about; then the ones it
does not fit.
"""
from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from multiprocessing import get_context
from typing import Optional, Sequence

from ..cortexm.boards import Board
from ..errors import InputError
from ..fit import CANNOT_TELL, DOES_NOT_FIT, FITS
from ..report import KERNELS_NOTES, arena_for, kernels_label
from .formats import Column, Table

_ORDER = {FITS: 0, CANNOT_TELL: 1, DOES_NOT_FIT: 2}


@dataclass
class BoardRow:
    board: str
    core: str
    clock_hz: int
    verdict: str                 # fits / does not fit / cannot tell
    ram_used: Optional[int]
    ram_budget: Optional[int]
    flash_used: Optional[int]
    flash_budget: Optional[int]
    latency_ms: Optional[float]  # None: not measured (see note)
    cycles: Optional[int]
    cycles_complete: bool
    note: str = ""               # why a figure is missing or incomplete
    ram_margin: Optional[int] = None   # the tightest RAM region's margin (fit's)
    arena_in: Optional[str] = None     # the region(s) the arena went in
    placement: str = ""                # where each part of RAM went
    validation: Optional[dict] = None   # cortexm.validation: how far the board answer is known right
    kernels: str = ""            # the flavour measured ("" when the board is not usable)

    @property
    def flash_margin(self) -> Optional[int]:
        return None if self.flash_used is None or self.flash_budget is None else self.flash_budget - self.flash_used

    def as_dict(self) -> dict:
        return {**asdict(self), "flash_margin": self.flash_margin,
                "fits": {FITS: True, DOES_NOT_FIT: False}.get(self.verdict),
                "validated": validated_short(self.validation),
                "arena_for": arena_for(self.kernels, self.core) if self.kernels else None}


def check_arena_region(name: Optional[str], boards: Sequence[Board]) -> None:
    """--arena-region for `boards`: some board must have a RAM region of that name."""
    if name is not None and not any(_region_named(b, name) for b in boards):
        known = sorted({r.name for b in boards for r in b.memory.data_regions})
        raise InputError(f"--arena-region {name}: no board has a RAM region of that name; their "
                         f"RAM regions are {', '.join(known)}")


def _region_named(board: Board, name: str) -> bool:
    return any(r.name.lower() == name.strip().lower() for r in board.memory.data_regions)


def _measure(path: str, data: bytes, board: str, kernels: Optional[str], planner: str, seed: int,
             board_dirs: Optional[Sequence[str]], arena_region: Optional[str] = None,
             runtime: str = "micro_rt") -> BoardRow:
    """One board (in a worker process): errors become a 'cannot tell' row naming them. The
    arena goes in `arena_region` on a board that has a RAM region of that name."""
    from ..cortexm.boards import load_board
    from ..errors import MicroRtError
    from ..run_setup import make_setup
    from .model_report import gather
    notes = []
    try:
        if arena_region is not None and not _region_named(load_board(board, board_dirs), arena_region):
            notes.append(f"no RAM region {arena_region}: the arena placed as without --arena-region")
            arena_region = None
        setup = make_setup(board=board, board_dirs=board_dirs, kernels=kernels, planner=planner,
                           seed=seed, optimize_seconds=0.0, arena_region=arena_region, runtime=runtime)
    except MicroRtError as e:
        return BoardRow(board, "?", 0, CANNOT_TELL, None, None, None, None, None, None,
                        False, f"board not usable: {' '.join(str(e).split())}")
    try:
        report = gather(path, data, setup)
    except MicroRtError as e:
        return BoardRow(setup.board or board, setup.target, setup.clock_hz, CANNOT_TELL, None,
                        setup.ram_budget, None, setup.flash_budget, None, None, False,
                        " ".join(str(e).split()), kernels=setup.flavour)
    p, fit = report.profile, report.fit
    ran = p is not None and p["total_cycles"] is not None
    notes += [f"not accounted for: {n}" for n in fit.not_accounted]
    if not ran:
        notes.insert(0, report.cycles_note or "the model was not run")
    ms, cycles, complete = (p["total_ms"], p["total_cycles"], bool(p["complete"])) if p is not None and ran \
        else (None, None, False)
    placement = fit.placement           # a board's RAM regions: always placed
    assert placement is not None
    return BoardRow(setup.board or board, setup.target, setup.clock_hz, fit.verdict,
                    fit.ram_used, fit.ram_budget, fit.flash_used, setup.flash_budget,
                    ms, cycles, complete, "; ".join(notes),
                    placement.margin, placement.where("arena").name,
                    "; ".join([*placement.lines(), *([placement.problem] if placement.problem else [])]),
                    validation=setup.validation, kernels=setup.flavour)


def check_model(data: bytes, cores: Sequence[str], *, kernels: str = "cmsis-nn",
                planner: str = "greedy") -> None:
    """Before any board is measured: the model loads and prepares as every other command
    prepares it (plan only, so an operator without a kernel is left to the rows as "cannot
    tell"). The boards' cores are tried in turn until one prepares the model; a model none
    prepares (TFLM's prepare refuses it, the planner cannot plan it) raises the first core's
    error, said once instead of once per board."""
    from ..errors import MicroRtError
    from ..interpreter import Interpreter
    first: Optional[MicroRtError] = None
    for core in dict.fromkeys(cores):
        try:
            with Interpreter.from_bytes(data, target=core, kernels=kernels, planner=planner,
                                        plan_only=True):
                return
        except MicroRtError as e:
            first = first or e
    if first is not None:
        raise first


def measure_boards(path: str, data: bytes, boards: Sequence[str], *, kernels: Optional[str] = None,
                   planner: str = "greedy", seed: int = 0, workers: Optional[int] = None,
                   board_dirs: Optional[Sequence[str]] = None,
                   arena_region: Optional[str] = None, runtime: str = "micro_rt") -> list[BoardRow]:
    """Every board's row, sorted: fitting boards fastest first, then cannot tell, then the
    rest. `workers` processes measure boards at once (default: the CPUs). `arena_region`:
    the arena's region on the boards that have one of that name. `kernels` None: each
    board's core's flavour (flavours.default_kernels), as `fit --board` takes it."""
    workers = max(1, min(workers or os.cpu_count() or 1, len(boards)))
    args = [(path, data, b, kernels, planner, seed, board_dirs, arena_region, runtime) for b in boards]
    if workers == 1:
        rows = [_measure(*a) for a in args]
    else:
        # spawn: a fresh interpreter per worker, no Unicorn or BLAS state inherited by fork
        with ProcessPoolExecutor(workers, mp_context=get_context("spawn")) as pool:
            rows = list(pool.map(_measure, *zip(*args)))
    inf = float("inf")
    return sorted(rows, key=lambda r: (_ORDER[r.verdict], not r.cycles_complete,
                                       inf if r.latency_ms is None else r.latency_ms, r.board))


def boards_exit_code(rows: Sequence[BoardRow]) -> int:
    """0 when some board fits, 1 when none does, 3 when none is known to fit but micro_rt
    cannot tell for some."""
    verdicts = {r.verdict for r in rows}
    if FITS in verdicts:
        return 0
    return 3 if CANNOT_TELL in verdicts else 1


def boards_payload(model: str, rows: Sequence[BoardRow], runtime: str = "micro_rt") -> dict:
    """The JSON answer; "kernels" is the flavour the boards were measured with, "arena_for"
    whose arena the RAM figures count. One flavour for all: the one given, else a Cortex-M
    core's (cortexm.boards refuses a board with a host core)."""
    kernels = next((r.kernels for r in rows if r.kernels), None)
    return {"model": model, "kernels": kernels, "runtime_priced": runtime,
            "runtime_checked": tflm_checks(kernels, {r.core for r in rows}) if runtime == "tflm" else None,
            "kernels_note": KERNELS_NOTES.get(kernels) if kernels else None,
            "arena_for": arena_for(kernels, "each board's core") if kernels else None,
            "boards": [r.as_dict() for r in rows],
            "fits_on": [r.board for r in rows if r.verdict == FITS]}


def tflm_checks(kernels: Optional[str], cores: set[str]) -> dict[str, Optional[dict]]:
    """Per core: how far `--runtime tflm` with these kernels came from the real TFLM builds it
    was measured on (runtimes.CoreCosts.validation), None where no build was measured."""
    from ..errors import MicroRtError
    from ..runtimes import TflmPricing, load_tflm_data
    data = load_tflm_data()                      # read once for every core
    out: dict[str, Optional[dict]] = {}
    for core in sorted(cores):
        try:
            out[core] = TflmPricing(core, kernels or "cmsis-nn", data).costs.validation
        except MicroRtError:
            out[core] = None
    return out


def _tflm_checks_line(checks: dict[str, Optional[dict]]) -> str:
    parts = [f"{core} not measured" if v is None else
             f"{core} {v['min_error']:+.0%} to {v['max_error']:+.0%} (mean |error| {v['mean_abs_error']:.0%}, "
             f"{v['applications']} applications)" for core, v in checks.items()]
    return ("TFLM pricing against the real TFLM builds it was measured on (0 wait states): "
            + "; ".join(parts))


def boards_text(p: dict) -> str:
    rows = p["boards"]
    arena_w = max([14] + [len(r["arena_in"] or "-") + 2 for r in rows])    # "SRAM1+SRAM2+SRAM3" and longer
    head = (f"{'board':<20}{'core':<15}{'MHz':>5}  {'verdict':<13}{'RAM used':>11}{'margin':>11}"
            f"{'flash used':>12}{'margin':>11}{'latency ms':>12}  {'arena in':<{arena_w}}validated")
    runtime = "TFLM (measured builds: --runtime tflm)" if p.get("runtime_priced") == "tflm" else "micro_rt's own"
    lines = [f"{p['model']} on {len(rows)} boards, runtime {runtime}, kernels {kernels_label(p['kernels'] or '-')}:",
             *([_tflm_checks_line(p["runtime_checked"])] if p.get("runtime_checked") else []), head]

    def num(v, width):
        return f"{'-' if v is None else f'{v:,}':>{width}}"
    for r in rows:
        ms = "-" if r["latency_ms"] is None else f"{r['latency_ms']:.3f}"
        if r["latency_ms"] is not None and not r["cycles_complete"]:
            ms = f">={ms}"
        lines.append(f"{r['board']:<20}{r['core']:<15}{r['clock_hz'] / 1e6:>5g}  "
                     f"{r['verdict']:<13}{num(r['ram_used'], 11)}{num(r['ram_margin'], 11)}"
                     f"{num(r['flash_used'], 12)}{num(r['flash_margin'], 11)}{ms:>12}  "
                     f"{r['arena_in'] or '-':<{arena_w}}{r['validated']}")
    notes = [f"  {r['board']}: {r['note']}" for r in rows if r["note"]]
    notes += [f"  {r['board']}: {r['validation']['summary']}"
              + (f"; {len(r['validation']['unverified'])} figure(s) unverified (micro-rt fit "
                 f"--board {r['board']} lists them)" if r['validation']['unverified'] else "")
              for r in rows if r["validation"]]
    if notes:
        lines += ["notes (figures missing or incomplete):", *notes]
    arena = f"the {p['arena_for']}" if p["arena_for"] else "arena"
    lines.append(f"RAM = {arena} + stack + static data + plan state, each in its region: static "
                 "data and stack where the board's linker puts them, the arena there or in the "
                 "largest region that holds it (margin: the tightest region's); flash = model "
                 "weights + op constants + plan + code + "
                 "read-only data (micro-rt fit --board B lists each); latency = one inference at "
                 "the board's clock through its flash interface (>= : operators left out)")
    return "\n".join(lines)


def validated_short(validation: Optional[dict]) -> str:
    """'-14%..-7% (7)': the measured error range over that many measurements; 'no': none."""
    if not validation:
        return "-"
    if validation["status"] != "validated":
        return "no"
    return (f"{validation['min_error']:+.0%}..{validation['max_error']:+.0%} "
            f"({validation['measurements']})")


def boards_tables(p: dict) -> tuple[list[str], list[Table]]:
    ms = Column("latency_ms", "latency ms", True, lambda v: f"{v:.3f}", missing="not measured")
    table = Table([Column("board", "board"), Column("core", "core"),
                   Column("clock_hz", "clock Hz", True), Column("verdict", "verdict"),
                   Column("ram_used", "RAM used B", True, missing="-"),
                   Column("ram_budget", "RAM B", True, missing="-"),
                   Column("ram_margin", "RAM margin B", True, missing="-"),
                   Column("flash_used", "flash used B", True, missing="-"),
                   Column("flash_budget", "flash B", True, missing="-"),
                   Column("flash_margin", "flash margin B", True, missing="-"), ms,
                   Column("arena_in", "arena in", missing="-"), Column("placement", "RAM placement"),
                   Column("cycles_complete", "cycles complete"), Column("validated", "validated"),
                   Column("kernels", "kernels"),
                   Column("note", "note")],
                  p["boards"], "Boards")
    summary = [f"**{p['model']}** on {len(p['boards'])} boards, kernels {p['kernels']}"]
    if p["arena_for"]:
        summary.append(f"RAM counts the {p['arena_for']}")
    return summary, [table]
