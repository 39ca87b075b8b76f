"""Where a model is judged and timed: a bare target with the user's figures, or a board of the
catalog (micro_rt.cortexm.boards) with its core, clock, flash interface and memory as budgets.

One home for that mapping, so `fit`, `profile`, `report`, `compare`, `boards` and `export` read
a board the same way; every figure the user gives (--clock, --flash-wait-states, --ram, --flash,
--kernels) overrides the board's. Without --kernels the flavour is the one TFLM is built with
for the core (flavours.default_kernels), decided once the core is known.
"""
from __future__ import annotations

from dataclasses import dataclass, field
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
    flash_wait_states: int = 0         # core stall cycles per flash line fill, as in `profile`
    strict_alignment: bool = False     # report every unaligned access, as `profile` does
    ram_budget: Optional[int] = None
    flash_budget: Optional[int] = None
    budget_source: str = ""            # where the budgets come from, said in the output
    board: Optional[str] = None
    board_notes: list[str] = field(default_factory=list)
    # The board's flash interface (fields of cortexm.memory_system.MemorySystem); None: the
    # core's default interface with `flash_wait_states`.
    memory_system: Optional[dict] = None
    cycles: bool = True                # run the emulated inference
    optimize_seconds: float = 2.0      # 0: no optimize suggestion
    seed: int = 0

    def __post_init__(self) -> None:
        if self.kernels is None:
            self.kernels = default_kernels(self.target)

    def as_dict(self) -> dict:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}

    def mcu_memory_system(self) -> Any:
        """The virtual MCU's flash interface for this setup (None: the core's default)."""
        if self.memory_system is None:
            return None
        from .cortexm.memory_system import MemorySystem
        return MemorySystem(**{**self.memory_system, "wait_states": self.flash_wait_states})

    @property
    def where(self) -> str:
        return f"board {self.board} ({self.target})" if self.board else self.target


def make_setup(*, board: Optional[str] = None, target: Optional[str] = None,
               clock_hz: Optional[int] = None, flash_wait_states: Optional[int] = None,
               ram_budget: Optional[int] = None, flash_budget: Optional[int] = None,
               board_dirs: Optional[Sequence[str]] = None, **common) -> Setup:
    """A board's core, clock, flash timing and budgets, each overridden by what is given
    (the CLI's --clock, --flash-wait-states, --ram, --flash), or a bare target (default
    cortex-m4). `board_dirs`: user directories of board files searched before the catalog.
    `common`: the other Setup fields (kernels, planner, cycles, ...); kernels None (or left
    out): the flavour TFLM is built with for the target or the board's core."""
    given = [name for name, value in (("--ram", ram_budget), ("--flash", flash_budget))
             if value is not None]
    if not board:
        return Setup(target=target or DEFAULT_TARGET, clock_hz=clock_hz or DEFAULT_CLOCK_HZ,
                     flash_wait_states=flash_wait_states or 0, ram_budget=ram_budget,
                     flash_budget=flash_budget,
                     budget_source=f"given with {' and '.join(given)}" if given else "",
                     **common)
    setup = board_setup(board, clock_hz, board_dirs)
    if target and target != setup.target:
        from .errors import InputError
        raise InputError(f"--target {target} and --board {setup.board} disagree: the board's "
                         f"core is {setup.target} (give one of them)")
    for key, value in common.items():
        setattr(setup, key, value)
    setup.kernels = setup.kernels or default_kernels(setup.target)   # None: the core's flavour
    if flash_wait_states is not None:
        setup.flash_wait_states = flash_wait_states
        setup.board_notes.append(f"flash line fill set to {flash_wait_states} cycles by "
                                 "--flash-wait-states")
    setup.ram_budget = setup.ram_budget if ram_budget is None else ram_budget
    setup.flash_budget = setup.flash_budget if flash_budget is None else flash_budget
    if given:
        setup.budget_source += f"; {' and '.join(given)} given instead"
    return setup


def board_setup(name: str, clock_hz: Optional[int] = None,
                board_dirs: Optional[Sequence[str]] = None) -> Setup:
    """A Setup from the board catalog: its core, clock, flash interface (line size, prefetch,
    caches, the cost of a line fill at that clock), and as budgets its code flash and the
    contiguous SRAM its vendor's linker script puts .bss (the arena) in."""
    from .cortexm.boards import load_board, simulator_parameters
    board = load_board(name, board_dirs)
    sim = simulator_parameters(board, clock_hz)
    acc, mem = board.accelerator, sim.memory_system
    region_names = ", ".join(board.memory.arena_regions)
    cache = (f"{mem['icache_bytes']:,} B instruction cache" if mem["icache_bytes"] else
             "no instruction cache")
    notes = [f"{board.title} ({board.vendor} {board.mcu}), {board.core} at "
             f"{sim.clock_hz / 1e6:g} MHz",
             f"flash: {sim.flash_wait_states} wait states at this clock, so a line fill of "
             f"{mem['line_bytes']} B costs {sim.line_fill_cycles} core cycles; the board's "
             f"{acc.kind} modelled as {mem['line_bytes']}-byte lines, "
             f"{'prefetch, ' if mem['prefetch'] else ''}{cache}, "
             f"{mem['dcache_lines']} data line{'s' if mem['dcache_lines'] != 1 else ''} "
             "for constants read from flash"]
    return Setup(target=board.core, clock_hz=sim.clock_hz,
                 flash_wait_states=sim.line_fill_cycles, ram_budget=sim.arena_bytes,
                 flash_budget=sim.flash_bytes, board=board.name, board_notes=notes,
                 memory_system=dict(mem),
                 budget_source=f"board {board.name}: RAM = SRAM {region_names} "
                               f"({sim.arena_bytes:,} B, where its linker puts the arena), "
                               f"flash = {board.memory.code_region} ({sim.flash_bytes:,} B)")
