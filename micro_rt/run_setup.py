"""Where a model is judged and timed: a bare target with the user's figures, or a board of the
catalog (micro_rt.cortexm.boards) with its core, clock, flash interface and memory as budgets.

One home for that mapping, so `fit`, `profile`, `report`, `compare` and `boards` read a board
the same way; every figure the user gives (--clock, --flash-wait-states, --ram, --flash)
overrides the board's (wait states no fewer than the board's flash needs at the clock).
A wait state is the datasheet's: one flash-interface clock cycle more per flash access; what a
line fill then costs in core cycles is cortexm.boards' (board_flash, core_flash). Without --kernels the flavour is the one TFLM is
built with for the core (flavours.default_kernels), decided once the core is known.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Optional, Sequence

from .flavours import default_kernels

DEFAULT_CLOCK_HZ = 100_000_000          # `micro-rt profile` without a board
DEFAULT_TARGET = "cortex-m4"


@dataclass
class Setup:
    """What a command was asked for: where the model runs and what it is judged against."""
    target: str = DEFAULT_TARGET
    kernels: Optional[str] = None      # None: the target's own (flavours.default_kernels)
    planner: str = "greedy"
    clock_hz: int = DEFAULT_CLOCK_HZ
    flash_wait_states: int = 0         # the datasheet's wait states: flash-interface cycles per access
    line_fill_cycles: int = 0          # what they cost: core stall cycles per flash line fill
    flash_note: str = ""               # what a wait state costs on this flash interface
    strict_alignment: bool = False     # report every unaligned access, as `profile` does
    # One RAM budget: --ram, or a board's default data region(s) (what its linker script gives
    # .bss, as `export` links); with `ram_layout` set, fit and report judge the layout instead.
    ram_budget: Optional[int] = None
    flash_budget: Optional[int] = None
    budget_source: str = ""            # where the budgets come from, said in the output
    # A board's RAM regions and where each part goes (micro_rt.placement); None: one budget.
    ram_layout: Optional[Any] = None
    board: Optional[str] = None
    board_notes: list[str] = field(default_factory=list)
    # The flash interface (fields of cortexm.memory_system.MemorySystem, wait_states = the line
    # fill's stall cycles): the board's, or the core's default one (cortexm.boards).
    memory_system: Optional[dict] = None
    # How far the board's figures are known to be from silicon (cortexm.validation): status,
    # summary line, measured error range, the board's unverified figures. None without a board.
    validation: Optional[dict] = None
    cycles: bool = True                # run the emulated inference
    runtime: str = "micro_rt"          # whose runtime the answer prices (runtimes.Runtime)
    optimize_seconds: float = 2.0      # 0: no optimize suggestion
    seed: int = 0

    def __post_init__(self) -> None:
        if self.kernels is None:
            self.kernels = default_kernels(self.target)

    @property
    def flavour(self) -> str:
        """The kernel flavour: `kernels`, which __post_init__ sets when it was left out."""
        assert self.kernels is not None
        return self.kernels

    def as_dict(self) -> dict:
        out = {k: getattr(self, k) for k in self.__dataclass_fields__}
        out["ram_layout"] = None if self.ram_layout is None else asdict(self.ram_layout)
        return out

    def mcu_memory_system(self) -> Any:
        """The virtual MCU's flash interface for this setup (None on the host target)."""
        if self.memory_system is None:
            return None
        from .cortexm.memory_system import MemorySystem
        return MemorySystem(**self.memory_system)

    @property
    def where(self) -> str:
        return f"board {self.board} ({self.target})" if self.board else self.target


def make_setup(*, board: Optional[str] = None, target: Optional[str] = None,
               clock_hz: Optional[int] = None, flash_wait_states: Optional[int] = None,
               ram_budget: Optional[int] = None, flash_budget: Optional[int] = None,
               board_dirs: Optional[Sequence[str]] = None, arena_region: Optional[str] = None,
               **common) -> Setup:
    """A board's core, clock, flash timing and budgets, each overridden by what is given
    (the CLI's --clock, --flash-wait-states, --ram, --flash), or a bare target (default
    cortex-m4). `board_dirs`: user directories of board files searched before the catalog.
    `arena_region` (--arena-region): the board's region the arena goes in. `common`: the other
    Setup fields (kernels, planner, cycles, ...); kernels None (or left out): the flavour TFLM
    is built with for the target or the board's core."""
    from .errors import InputError
    given = [name for name, value in (("--ram", ram_budget), ("--flash", flash_budget))
             if value is not None]
    if arena_region is not None and (not board or ram_budget is not None):
        raise InputError(f"--arena-region {arena_region} names a RAM region of a board: give "
                         "--board, and no --ram (which replaces the board's regions with one budget)")
    if not board:
        setup = Setup(target=target or DEFAULT_TARGET, clock_hz=clock_hz or DEFAULT_CLOCK_HZ,
                      ram_budget=ram_budget, flash_budget=flash_budget,
                      budget_source=f"given with {' and '.join(given)}" if given else "",
                      **common)
        from .targets import get_target
        if not get_target(setup.target).is_host:
            from .cortexm.boards import core_flash
            flash = core_flash(setup.target, flash_wait_states or 0)
            setup.flash_wait_states, setup.line_fill_cycles = flash.wait_states, flash.line_fill_cycles
            setup.memory_system, setup.flash_note = flash.memory_system, f"flash: {flash.description}"
        return setup
    setup = board_setup(board, clock_hz, board_dirs, arena_region, flash_wait_states, common.get("kernels"))
    if target and target != setup.target:
        raise InputError(f"--target {target} and --board {setup.board} disagree: the board's "
                         f"core is {setup.target} (give one of them)")
    for key, value in common.items():
        setattr(setup, key, value)
    setup.kernels = setup.kernels or default_kernels(setup.target)   # None: the core's flavour
    if ram_budget is not None:
        setup.ram_budget, setup.ram_layout = ram_budget, None
    setup.flash_budget = setup.flash_budget if flash_budget is None else flash_budget
    if given:
        setup.budget_source += f"; {' and '.join(given)} given instead"
    return setup


def board_setup(name: str, clock_hz: Optional[int] = None,
                board_dirs: Optional[Sequence[str]] = None,
                arena_region: Optional[str] = None, flash_wait_states: Optional[int] = None,
                kernels: Optional[str] = None) -> Setup:
    """A Setup from the board catalog: its core, clock, flash interface (line size, prefetch,
    caches, the cost of a line fill at that clock with its wait states, default the table's),
    and as budgets its code flash and its RAM regions, each part of RAM placed as a user links
    it (micro_rt.placement: static data and stack where the vendor's linker script puts them,
    the arena there or in the largest region that holds it, or in `arena_region`)."""
    from .cortexm.boards import board_flash, load_board, simulator_parameters
    from .cortexm.validation import board_validation
    from .placement import ram_layout
    board = load_board(name, board_dirs)
    sim = simulator_parameters(board, clock_hz, flash_wait_states)
    flash = board_flash(board, sim.clock_hz, flash_wait_states)
    layout = ram_layout(board, arena_region)
    validation = board_validation(board, sim.clock_hz, kernels or default_kernels(board.core))
    acc, mem = board.accelerator, sim.memory_system
    region_names = ", ".join(board.memory.arena_regions)
    stack = (f", the stack in {board.memory.stack_region} (where its start-up puts it)"
             if board.memory.stack_region else "")
    arena = (f"the arena in {layout.arena_region} (--arena-region)" if layout.arena_region else
             "the arena there when everything fits, else in the largest region that holds it")
    cache = (f"{mem['icache_bytes']:,} B instruction cache" if mem["icache_bytes"] else
             "no instruction cache")
    notes = [f"{board.title} ({board.vendor} {board.mcu}), {board.core} at "
             f"{sim.clock_hz / 1e6:g} MHz",
             f"flash: {flash.description}; the board's "
             f"{acc.kind} modelled as {mem['line_bytes']}-byte lines, "
             f"{'prefetch, ' if mem['prefetch'] else ''}{cache}, "
             f"{mem['dcache_lines']} data line{'s' if mem['dcache_lines'] != 1 else ''} "
             "for constants read from flash", *validation.lines()]
    if layout.arena_region:
        span = layout.span([layout.arena_region])
        timing = f"; {span.timing}" if span.timing else ""
        notes.append(f"arena in {span.label()} (--arena-region){timing}; the cycle model prices "
                     "every SRAM region alike (the board's SRAM wait states, if any)")
    header = board.boot.header_bytes if board.boot is not None else 0
    flash_budget = sim.flash_bytes - header
    header_note = (f" less the {header:,} B its boot ROM reads before the image"
                   if header else "")
    return Setup(target=board.core, clock_hz=sim.clock_hz, flash_wait_states=sim.flash_wait_states,
                 line_fill_cycles=sim.line_fill_cycles, flash_note=notes[1],
                 ram_budget=sim.arena_bytes,
                 flash_budget=flash_budget, board=board.name, board_notes=notes,
                 memory_system=dict(mem), ram_layout=layout, validation=validation.as_dict(),
                 budget_source=f"board {board.name}: RAM = its SRAM and TCM regions, static data "
                               f"in {region_names} ({sim.arena_bytes:,} B, where its linker puts "
                               f".bss){stack}, {arena}; flash = {board.memory.code_region} "
                               f"({sim.flash_bytes:,} B{header_note})")
