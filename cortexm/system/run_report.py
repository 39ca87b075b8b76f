"""The record of a finished firmware run (report.FirmwareReport), assembled from the machine's
counts and parts and from how the run loop (run.py) ended it."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from .. import alignment
from .exceptions import FP_CONTEXT_CYCLES, LATENCY_DOCUMENTED, RETURN_LATENCY, FaultRecord, exception_name
from .machine import FirmwareMachine
from .profile import flat_profile
from .report import Ending, FirmwareReport, RegionUse

__all__ = ["RunOutcome", "firmware_report"]


@dataclass(frozen=True)
class RunOutcome:
    """How the run loop ended a run, and what only it kept."""
    ending: Ending
    message: str
    exit_code: Optional[int]
    faults: list[FaultRecord]
    handlers: frozenset[int]          # the exception handlers entered
    stack_bytes: int                  # the stack's high-water mark


def firmware_report(m: FirmwareMachine, run: RunOutcome) -> FirmwareReport:
    """The record of a finished run: the machine's counts and parts, and how the run ended."""
    symbol = m.fw.image.symbol_at
    bd = m.clock.breakdown()
    cycles = m.clock.total(bd)
    edges = m.clock.edges()
    costs = m.model.block_costs(edges)
    profile = flat_profile(m.fw.image, edges, costs, m.clock.edge_memory_cycles(edges, costs),
                           handlers=set(run.handlers),
                           extra={what: n for what, n in (("exception entry", m.exceptions.entry_cycles),
                                                           ("exception return", m.exceptions.return_cycles),
                                                           ("FP context stacking", m.exceptions.fp_cycles))
                                  if n})
    unaligned = alignment.call_events(m.hooks.unaligned(), m.read_code, symbol, strict=False,
                                      armv6m=m.core == "cortex-m0plus")
    consoles = [("semihosting", m.semihost.console), ("ITM", m.scs.events.console),
                ("UART", m.peripherals.events.console)]
    outputs = {name: m.symbols.read(m.uc, name) for name in m.req.outputs}
    return FirmwareReport(
        file=m.name, sha256=m.fw.image.sha256, core=m.core, core_source=m.core_source,
        board=m.board.name if m.board is not None else None, map_source=m.amap.source,
        clock_hz=m.clock_hz, clock_source=m.clock_source, vector_table=m.vector_table,
        initial_sp=m.initial_sp, reset_handler=symbol(m.reset),
        ending=run.ending, message=run.message, exit_code=run.exit_code,
        console=b"".join(c for _, c in consoles).decode("utf-8", "replace"),
        console_sources=[name for name, c in consoles if c],
        cycles=cycles, instructions=m.clock.instructions,
        breakdown={"core": bd.core, "branches": bd.branches, "fetch_stalls": bd.fetch,
                   "flash_data_stalls": bd.data_flash, "sram_wait_states": bd.sram,
                   "exception_entry": m.exceptions.entry_cycles,
                   "exception_return": m.exceptions.return_cycles,
                   "fp_context_stacking": m.exceptions.fp_cycles},
        profile=profile, heap=m.heap.stats.to_dict(), stack_bytes=run.stack_bytes,
        faults=list(run.faults), unaligned=unaligned,
        exceptions={exception_name(n): k for n, k in sorted(m.exceptions.taken.items())},
        memory_at_reset=m.memory_at_reset, memory_at_end=m.memory_state.describe(),
        memory_changes=m.memory_changes, regions=_regions(m),
        ignored_mmio=dict(m.peripherals.events.ignored),
        system_registers_unmodelled=dict(m.scs.events.unmodelled),
        semihosting_calls=dict(m.semihost.calls), cyccnt_reads=m.scs.events.cyccnt_reads,
        outputs=outputs, notes=_notes(m, run), dropped_symbols=len(m.fw.dropped_symbols),
        tflm=m.tflm.finish() if m.tflm is not None else None,
        timed_calls={w.function.name: list(w.calls) for w in m.timed},
        timed_unfinished=[w.function.name for w in m.timed if w.unfinished])


def _regions(m: FirmwareMachine) -> list[RegionUse]:
    out = []
    for r in m.amap.regions:
        used = 0
        for s in m.fw.image.segments:
            if r.base <= s.paddr < r.end and s.data:
                used += len(s.data)
            if r.base <= s.vaddr < r.end and (s.vaddr != s.paddr or not s.data):
                used += s.memsz
            elif r.base <= s.vaddr < r.end and s.memsz > len(s.data):
                used += s.memsz - len(s.data)
        out.append(RegionUse(r.name, r.kind.value, r.base, r.size, used))
    return out

def _fp_context_note(m: FirmwareMachine) -> str:
    exc = m.exceptions
    entries = f"{exc.fp_frames} exception entr{'y' if exc.fp_frames == 1 else 'ies'} had an FP context"
    lazily = (f": {exc.lazy_frames} reserved its space lazily (FPCCR.LSPEN), and {exc.lazy_saves} "
              "lazy save(s) ran at a handler's first FP instruction" if exc.lazy_frames else
              ": written at entry (FPCCR.LSPEN clear)")
    cost = FP_CONTEXT_CYCLES.get(m.core)
    priced = (f"; each write or read of it is priced at {cost} cycles (Arm knowledge article 103489845)"
              if cost is not None else
              f"; writing and reading it is not priced: no document gives the {m.core}'s figure")
    return entries + lazily + priced

def _notes(m: FirmwareMachine, run: RunOutcome) -> list[str]:
    notes = list(m.boot_notes) + m.core_notes
    if m.amap.generic:
        notes.append(f"no board: the {m.amap.source} (" + ", ".join(str(r) for r in m.amap.regions)
                     + "); no peripherals, no console UART")
    if m.exceptions.taken:
        if not LATENCY_DOCUMENTED[m.core]:
            notes.append(f"exception entry is priced at 12 cycles: no document gives the "
                         f"{m.core}'s interrupt latency")
        if m.core in RETURN_LATENCY:
            notes.append(f"exception return is priced at {RETURN_LATENCY[m.core]} cycles after its branch "
                         "(Arm knowledge article 103489845)")
        else:
            notes.append(f"exception return (unstacking) is not priced beyond its branch: no document "
                         f"gives the {m.core}'s return latency")
        if m.exceptions.fp_frames:
            notes.append(_fp_context_note(m))
    if m.scs.events.cyccnt_reads_without_counter:
        notes.append(f"{m.scs.events.cyccnt_reads_without_counter} read(s) of DWT_CYCCNT while it "
                     + ("does not exist (the Cortex-M0+ has no cycle counter): read as 0"
                        if m.core == "cortex-m0plus" else
                        "was not counting (DEMCR.TRCENA and DWT_CTRL.CYCCNTENA must be set)"))
    if run.faults:
        notes.append("a fault's block is counted whole, though it stopped at the faulting instruction")
    if m.semihost.unknown:
        notes.append("semihosting operations not implemented: "
                     + ", ".join(f"0x{op:x}" for op in sorted(set(m.semihost.unknown))))
    latency = m.memory_state.flash.latency
    if m.board is not None and latency is not None:
        needed = m.board.flash.wait_states_at(m.clock_hz)
        if latency < needed:
            notes.append(f"the flash latency the firmware left, {latency} wait states, is below the "
                         f"{needed} {m.board.mcu} needs at {m.clock_hz / 1e6:g} MHz: the firmware "
                         "did not set the flash up for the clock ms are given at (on silicon it "
                         "runs at its reset clock until it configures one)")
    if m.board is not None and m.peripherals.flash is None:
        notes.append(f"board {m.board.name}'s file names no flash-control register: the flash "
                     "interface stayed as configured for profile, whatever the firmware wrote")
    return notes
