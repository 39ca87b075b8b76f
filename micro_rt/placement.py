"""Where each part of a model's RAM goes on a board, the way a user links it.

A board has several RAM regions (cortexm.boards.MemoryMap: SRAM and TCM blocks). The vendor's
default linker script puts .data and .bss (static data, micro_rt's plan structs) and the stack
in one of them (`arena_regions`; the stack in `stack_region` where the start-up puts it
elsewhere); a user puts the tensor arena, one contiguous uint8 array, in any region with a
section attribute. So by default the arena stays with the static data when everything fits
there, and otherwise goes to the largest block of regions that holds it; `--arena-region`
names the region instead.

The arena cannot span two regions unless they are contiguous in address (the L4R5's SRAM1-3):
the unit a part is placed in is a block, a run of regions each starting where the one before
it ends. A part may only lie in its window (the default data regions, the stack's region, the
arena's region); parts whose windows share a block must fit side by side, which is checked
exactly by laying them out in every order (there are at most four).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum
from itertools import permutations
from typing import Optional, Sequence

from .cortexm.boards import Board, MemoryRegion
from .errors import InputError


class Role(Enum):
    """How a part of RAM is placed."""
    ARENA = "arena"      # a static array a section attribute can put in any region
    STACK = "stack"      # where the vendor's start-up puts the stack
    DATA = "data"        # .data and .bss: where the vendor's linker script puts them


@dataclass(frozen=True)
class Part:
    name: str            # as fit lists it: "arena", "stack", "static data", "plan structs"
    bytes: int
    role: Role


@dataclass(frozen=True)
class Span:
    """Regions contiguous in address, in address order: one block of memory."""
    regions: tuple[MemoryRegion, ...]

    @property
    def name(self) -> str:
        return "+".join(r.name for r in self.regions)

    @property
    def base(self) -> int:
        return self.regions[0].base

    @property
    def end(self) -> int:
        return self.regions[-1].end

    @property
    def size(self) -> int:
        return self.end - self.base

    def holds(self, other: "Span") -> bool:
        return self.base <= other.base and other.end <= self.end

    @property
    def timing(self) -> str:
        """The regions' documented timing ('; '-joined when they differ)."""
        return "; ".join(dict.fromkeys(r.timing for r in self.regions if r.timing))

    def label(self) -> str:
        """'AXI_SRAM (512 KiB at 0x24000000)'."""
        return f"{self.name} ({kib(self.size)} at 0x{self.base:08x})"

    def as_dict(self) -> dict:
        return {"name": self.name, "regions": [r.name for r in self.regions], "base": self.base,
                "size": self.size, "timing": self.timing}


def kib(n: int) -> str:
    return f"{n / 1024:g} KiB" if n % 1024 == 0 else f"{n:,} B"


@dataclass(frozen=True)
class RamLayout:
    """The question: a board's RAM regions, where its vendor's linker puts static data and
    the stack, and the region the user puts the arena in (None: placed here)."""
    board: str
    regions: tuple[MemoryRegion, ...]      # SRAM and TCM, in address order
    data_regions: tuple[str, ...]
    stack_regions: tuple[str, ...]
    arena_region: Optional[str] = None

    def span(self, names: Sequence[str]) -> Span:
        by_name = {r.name: r for r in self.regions}
        return Span(tuple(sorted((by_name[n] for n in names), key=lambda r: r.base)))

    def blocks(self) -> list[Span]:
        """The maximal runs of contiguous regions, in address order."""
        runs: list[list[MemoryRegion]] = []
        for r in self.regions:
            if runs and runs[-1][-1].end == r.base:
                runs[-1].append(r)
            else:
                runs.append([r])
        return [Span(tuple(run)) for run in runs]


def ram_layout(board: Board, arena_region: Optional[str] = None) -> RamLayout:
    """The layout question for `board`; `arena_region` (--arena-region) must name one of its
    SRAM or TCM regions (InputError naming the board's regions otherwise)."""
    memory = board.memory
    data = memory.data_regions
    if arena_region is not None:
        names = {r.name.lower(): r for r in memory.regions}
        region = names.get(arena_region.strip().lower())
        choices = ", ".join(r.name for r in data)
        if region is None:
            raise InputError(f"--arena-region {arena_region}: board {board.name} has no region of "
                             f"that name; its RAM regions are {choices}")
        if not region.holds_data:
            raise InputError(f"--arena-region {arena_region}: {region.name} is a {region.kind} "
                             f"region of board {board.name}, not RAM; its RAM regions are {choices}")
        arena_region = region.name
    return RamLayout(board.name, data, memory.arena_regions, memory.stack_regions, arena_region)


@dataclass(frozen=True)
class PlacedPart:
    part: Part
    span: Span

    def as_dict(self) -> dict:
        return {"part": self.part.name, "bytes": self.part.bytes, "region": self.span.as_dict()}


@dataclass(frozen=True)
class RegionUse:
    """One region (or block of contiguous regions) a part was placed in, and every part that
    must lie inside it: the margin is per region."""
    span: Span
    parts: tuple[Part, ...]

    @property
    def used(self) -> int:
        return sum(p.bytes for p in self.parts)

    @property
    def margin(self) -> int:
        return self.span.size - self.used

    @property
    def fits(self) -> bool:
        return self.used <= self.span.size

    def as_dict(self) -> dict:
        return {**self.span.as_dict(), "parts": [p.name for p in self.parts], "used": self.used,
                "margin": self.margin, "fits": self.fits}


@dataclass(frozen=True)
class Placement:
    """The answer: where each part went and, per region used, what it holds."""
    parts: tuple[PlacedPart, ...]
    regions: tuple[RegionUse, ...]
    how: str                 # why the arena went where it did
    problem: str = ""        # what does not fit, naming the parts and the region

    @property
    def fits(self) -> bool:
        return not self.problem

    @property
    def budget(self) -> int:
        """The size of the outermost regions the parts are in."""
        return sum(r.span.size for r in self.regions
                   if not any(o.span != r.span and o.span.holds(r.span) for o in self.regions))

    @property
    def margin(self) -> int:
        """The tightest region's margin: what the parts inside it can still grow by."""
        return min(r.margin for r in self.regions)

    def where(self, name: str) -> Span:
        return next(p.span for p in self.parts if p.part.name == name)

    def as_dict(self) -> dict:
        return {"parts": [p.as_dict() for p in self.parts],
                "regions": [r.as_dict() for r in self.regions], "how": self.how,
                "problem": self.problem or None}

    def lines(self) -> list[str]:
        """Per region used: 'arena 183,104 B in AXI_SRAM (512 KiB at 0x24000000): timing',
        then its use and margin."""
        out = []
        for use in self.regions:
            own = [p for p in self.parts if p.span == use.span]
            timing = f": {use.span.timing}" if use.span.timing else ""
            what = " + ".join(f"{p.part.name} {p.part.bytes:,} B" for p in own) or "nothing of its own"
            also = "" if len(own) == len(use.parts) else f"; with the parts inside it {use.used:,} B"
            word = "fits" if use.fits else "does NOT fit"
            out.append(f"{what} in {use.span.label()}{also} -> {word}, margin "
                       f"{use.margin:+,} B{timing}")
        return out


def _packs(parts: Sequence[tuple[Part, Span]]) -> bool:
    """Whether the parts fit side by side, each inside its window: for some address order,
    laying each as low as its window and the one before it allow."""
    for order in permutations(parts):
        cursor = 0
        for part, window in order:
            start = max(cursor, window.base)
            cursor = start + part.bytes
            if cursor > window.end:
                break
        else:
            return True
    return False


def _names(parts: Sequence[Part]) -> str:
    """'arena 183,104 B' or 'arena + stack (184,000 B)' (parts of 0 B left out)."""
    named = [p for p in parts if p.bytes] or list(parts)
    total = sum(p.bytes for p in named)
    if len(named) == 1:
        return f"{named[0].name} {total:,} B"
    return f"{' + '.join(p.name for p in named)} ({total:,} B)"


def _problem(block: Span, placed: Sequence[tuple[Part, Span]]) -> str:
    """What does not fit in `block`: the smallest window overflowed by the parts it must hold."""
    windows = sorted({w for _, w in placed} | {block}, key=lambda w: (w.size, w.base))
    for window in windows:
        inside = [p for p, w in placed if window.holds(w)]
        total = sum(p.bytes for p in inside)
        if total > window.size:
            return (f"{_names(inside)} does not fit in {window.label()}: "
                    f"{total - window.size:,} B over")
    return (f"{_names([p for p, _ in placed])} cannot lie side by side in {block.label()} "
            "without splitting one of them across another")


def _try(parts: Sequence[Part], layout: RamLayout, arena: Span) -> Placement:
    windows = {Role.DATA: layout.span(layout.data_regions),
               Role.STACK: layout.span(layout.stack_regions), Role.ARENA: arena}
    placed = [(p, windows[p.role]) for p in parts]
    spans = sorted({w for _, w in placed}, key=lambda w: (w.base, -w.size))
    uses = tuple(RegionUse(w, tuple(p for p, pw in placed if w.holds(pw))) for w in spans)
    problems = []
    for block in layout.blocks():
        here = [(p, w) for p, w in placed if block.holds(w)]
        if here and not _packs(here):
            problems.append(_problem(block, here))
    return Placement(tuple(PlacedPart(p, w) for p, w in placed), uses, "", "; ".join(problems))


def place(parts: Sequence[Part], layout: RamLayout) -> Placement:
    """Place `parts` on the board of `layout`: static data and stack where the vendor's linker
    puts them; the arena in --arena-region, else with the static data when everything fits
    there, else in the largest block of regions that holds it (ties: the lower address)."""
    default = layout.span(layout.data_regions)
    if layout.arena_region is not None:
        arena = layout.span([layout.arena_region])
        return replace(_try(parts, layout, arena), how=f"the arena in {arena.name} (--arena-region)")
    largest = sorted(layout.blocks(), key=lambda b: (-b.size, b.base))
    answer = next((p for p in map(lambda a: _try(parts, layout, a), [default, *largest]) if p.fits),
                  None)
    if answer is None:
        return replace(_try(parts, layout, largest[0]),
                       how=f"nowhere: neither {default.name}, where the vendor's linker puts .bss, nor "
                           f"the largest block of RAM, {largest[0].name}, holds it")
    arena = next((p.span for p in answer.parts if p.part.role is Role.ARENA), default)
    if arena == default:
        how = f"the arena with the static data in {default.name}, where the vendor's linker puts .bss"
    else:
        how = (f"the arena in {arena.name}, the largest block of RAM (a section attribute puts it "
               f"there): {default.name}, where the vendor's linker puts .bss, cannot hold it too")
    return replace(answer, how=how)
