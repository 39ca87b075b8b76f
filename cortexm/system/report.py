"""The record of one firmware run (`micro-rt emulate`): what a user reads off it, as plain data
for the text, json, csv and markdown views (micro_rt/reports/emulate_view.py)."""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Optional

from .profile import FlatProfile
from .tflm_app import TflmRun


class Ending(Enum):
    EXIT = "exit"                        # semihosting SYS_EXIT / SYS_EXIT_EXTENDED
    MAX_CYCLES = "max-cycles"            # --max-cycles reached
    LOCKUP = "lockup"                    # a fault that no handler could take
    UNMODELLED_PERIPHERAL = "unmodelled-peripheral"
    RESET_REQUEST = "reset-request"      # AIRCR.SYSRESETREQ
    BREAKPOINT = "breakpoint"            # a BKPT other than semihosting's (a debugger halts)
    ERROR = "error"                      # the engine stopped for a reason micro_rt cannot model
    BOOT_FAILED = "boot-failed"          # a boot stage entered the image with its flash unreadable

    @property
    def ok(self) -> bool:
        return self is Ending.EXIT


@dataclass
class RegionUse:
    name: str
    kind: str
    base: int
    size: int
    image_bytes: int                     # loaded (flash) or run-time static (.data + .bss) bytes

    def to_dict(self) -> dict:
        return {"region": self.name, "kind": self.kind, "base": f"0x{self.base:08x}", "size": self.size,
                "image_bytes": self.image_bytes, "fits": self.image_bytes <= self.size}


@dataclass
class FirmwareReport:
    file: str
    sha256: str
    core: str
    core_source: str                # "board X", "given", "the ELF's build attributes say v6-M", ...
    board: Optional[str]
    map_source: str
    clock_hz: int
    clock_source: str
    vector_table: int
    initial_sp: int
    reset_handler: str
    ending: Ending
    message: str
    exit_code: Optional[int]
    console: str
    console_sources: list[str]
    cycles: int
    instructions: int
    breakdown: dict
    profile: FlatProfile
    heap: dict
    stack_bytes: int
    faults: list
    unaligned: list
    exceptions: dict                      # name -> times taken
    memory_at_reset: str
    memory_at_end: str
    memory_changes: list                  # (cycle, description)
    regions: list[RegionUse]
    ignored_mmio: dict                    # address -> accesses (with --ignore-mmio)
    system_registers_unmodelled: dict     # address -> accesses
    semihosting_calls: dict
    cyccnt_reads: int
    outputs: dict = field(default_factory=dict)       # symbol -> bytes
    notes: list[str] = field(default_factory=list)
    dropped_symbols: int = 0
    tflm: Optional[TflmRun] = None        # a TFLM application: its operators as TFLM ran them
    timed_calls: dict = field(default_factory=dict)   # function -> [TimedCall] (call_watch.py)
    timed_unfinished: list[str] = field(default_factory=list)   # timed functions still running at the end

    @property
    def seconds(self) -> float:
        return self.cycles / self.clock_hz

    @property
    def exit_status(self) -> int:
        """The process exit status `emulate` returns: the program's own code when it exited,
        else 1 (it did not finish, or faulted with nothing to handle it)."""
        if self.ending is Ending.EXIT and self.exit_code is not None:
            return self.exit_code & 0xFF
        return 1

    def to_dict(self) -> dict:
        return {
            "file": self.file, "sha256": self.sha256, "core": self.core, "core_source": self.core_source,
            "board": self.board,
            "memory_map": self.map_source, "clock_hz": self.clock_hz, "clock_source": self.clock_source,
            "vector_table": f"0x{self.vector_table:08x}", "initial_sp": f"0x{self.initial_sp:08x}",
            "reset_handler": self.reset_handler,
            "ending": self.ending.value, "message": self.message, "exit_code": self.exit_code,
            "console": self.console, "console_sources": self.console_sources,
            "cycles": self.cycles, "instructions": self.instructions, "ms": 1e3 * self.seconds,
            "cycle_breakdown": self.breakdown,
            "functions": [r.to_dict() for r in self.profile.rows],
            "cycles_outside_functions": self.profile.extra,
            "heap": self.heap, "stack_high_water_bytes": self.stack_bytes,
            "faults": [f.__dict__ | {"pc": f"0x{f.pc:08x}",
                                     "address": None if f.address is None else f"0x{f.address:08x}"}
                       for f in self.faults],
            "unaligned": [{"pc": f"0x{e.pc:08x}", "symbol": e.symbol, "address": f"0x{e.address:08x}",
                           "kind": e.kind, "size": e.size, "count": e.count, "faults_on_silicon": e.fatal,
                           "instruction": e.disassembly} for e in self.unaligned],
            "exceptions_taken": self.exceptions,
            "flash_interface": {"at_reset": self.memory_at_reset, "at_end": self.memory_at_end,
                                "changes": [{"cycle": c, "state": d} for c, d in self.memory_changes]},
            "regions": [r.to_dict() for r in self.regions],
            "ignored_mmio": {f"0x{a:08x}": n for a, n in sorted(self.ignored_mmio.items())},
            "system_registers_not_modelled": {f"0x{a:08x}": n for a, n in
                                              sorted(self.system_registers_unmodelled.items())},
            "semihosting_calls": self.semihosting_calls, "cyccnt_reads": self.cyccnt_reads,
            "outputs": {k: list(v) for k, v in self.outputs.items()},
            "notes": self.notes, "symbols_dropped": self.dropped_symbols,
            "tflm": self.tflm.to_dict() if self.tflm is not None else None,
            "timed_calls": {name: [c.to_dict() for c in calls] for name, calls in self.timed_calls.items()},
            "timed_unfinished": self.timed_unfinished,
        }
