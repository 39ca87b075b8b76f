"""Where everything lies in the virtual MCU's address space, and the host memory behind it.

Memory map (all cores):
    FLASH 0x0800_0000: firmware image | return trampoline (BKPT) | WEIGHTS area (grows as needed,
          up to SRAM_BASE: at most FLASH_LIMIT bytes in all)
    SRAM  0x2000_0000: .data/.bss | ARGS (4 KiB) | ... | ARENA (host numpy buffer, zero-copy,
          page aligned; arena_base = mapping + arena_misalign) | guard page (unmapped) | STACK
          0x3000_0000: PLAN RAM (a whole-invoke plan's argument structs and kernel state; mapped
          by map_plan_ram, apart, so the arena lies where it does in every mode)
The guard page makes an arena overrun or a stack overflow fault instead of corrupting memory.

Every region is host memory (numpy) mapped zero-copy into the Unicorn engine, so the engine
holds no state of its own between calls and can be replaced by a fresh one over the same
memory (engine.py).
"""
from __future__ import annotations

from typing import Optional

import numpy as np
import unicorn
from unicorn import unicorn_const as UC

from micro_rt.errors import EmulationError

from .elf import ElfImage

FLASH_BASE = 0x0800_0000
SRAM_BASE = 0x2000_0000
PAGE = 0x1000
ARGS_BYTES = 4096
DEFAULT_FLASH = 2 * 1024 * 1024
FLASH_LIMIT = SRAM_BASE - FLASH_BASE     # 384 MiB: flash must end where SRAM starts
PLAN_RAM_BASE = 0x3000_0000


def round_up(x: int, a: int) -> int:
    return (x + a - 1) // a * a


def page_aligned_buffer(nbytes: int) -> np.ndarray:
    """A zeroed uint8 array whose data pointer is 4 KiB aligned and whose length is a multiple
    of 4 KiB (>= nbytes). The returned view keeps its backing allocation alive."""
    n = max(PAGE, round_up(int(nbytes), PAGE))
    raw = np.zeros(n + PAGE, dtype=np.uint8)
    off = (-raw.ctypes.data) % PAGE
    buf = raw[off:off + n]
    assert buf.ctypes.data % PAGE == 0
    return buf


def as_bytes(data) -> bytes:
    """Bytes of a numpy array (C order) or of anything bytes() takes."""
    if isinstance(data, np.ndarray):
        return np.ascontiguousarray(data).tobytes()
    return bytes(data)


def _check_arena_buffer(buffer: np.ndarray, arena_misalign: int) -> None:
    if not isinstance(buffer, np.ndarray) or buffer.dtype != np.uint8 or not buffer.flags["C_CONTIGUOUS"]:
        raise EmulationError("map_arena needs a C-contiguous uint8 numpy array")
    ptr, n = buffer.ctypes.data, buffer.nbytes
    if ptr % PAGE or n % PAGE or n == 0:
        raise EmulationError("map_arena buffer must be 4 KiB aligned with a length multiple of 4 KiB "
                             "(use VirtualMCU.new_arena_buffer)")
    if n < arena_misalign + 1:
        raise EmulationError("arena buffer smaller than arena_misalign")
    if buffer.flags["WRITEABLE"] is False:
        raise EmulationError("arena buffer must be writeable")


WEIGHTS_OFFSET = 0x4_0000      # 256 KiB into flash: the firmware image stays below it
WEIGHTS_ALIGN = 0x1_0000       # past it, the next 64 KiB boundary after the image


class MemoryMap:
    """The layout of one machine (from its firmware image and sizes) and the host buffers behind
    its regions. Regions are mapped on the current Unicorn engine through the methods taking
    `uc`, and recorded so that a replacement engine maps the same memory (`map_into`)."""

    def __init__(self, elf: ElfImage, *, flash_bytes: int, weights_bytes: int, arena_misalign: int,
                 stack_bytes: int):
        # flash: firmware image, return trampoline, then the weights area sized by `weights_bytes`
        self.ret_addr = round_up(elf.flash_end(FLASH_BASE, SRAM_BASE), 4)
        # At a fixed address while the image fits below it: a kernel added to the firmware must
        # not move the weights (their flash lines and cache sets decide data-fetch stalls).
        self.weights_base = max(FLASH_BASE + WEIGHTS_OFFSET, round_up(self.ret_addr + 4, WEIGHTS_ALIGN))
        need = self.weights_base - FLASH_BASE + int(weights_bytes)
        if need > FLASH_LIMIT:
            raise EmulationError(
                f"the model's constants need {int(weights_bytes):,} bytes of flash; the emulated "
                f"flash holds at most {FLASH_LIMIT - (self.weights_base - FLASH_BASE):,} bytes of "
                f"constants ({FLASH_LIMIT:,} bytes from 0x{FLASH_BASE:08x} to SRAM at "
                f"0x{SRAM_BASE:08x}, less the {self.weights_base - FLASH_BASE:,}-byte firmware image)")
        self.flash_size = min(FLASH_LIMIT, max(round_up(int(flash_bytes), PAGE), round_up(need, PAGE)))
        # SRAM: .data/.bss and ARGS, then the arena window, a guard page and the stack
        self.args_base = round_up(elf.ram_end(SRAM_BASE), 16)
        self.args_end = self.args_base + ARGS_BYTES
        self.sram_low_end = round_up(self.args_end, PAGE)
        self.arena_map = self.sram_low_end
        self.arena_misalign = int(arena_misalign)
        self.arena_base = self.arena_map + self.arena_misalign
        self.stack_bytes = int(stack_bytes)
        # host memory behind every region: {address: (buffer, protection)}
        self.regions: dict[int, tuple[np.ndarray, int]] = {
            FLASH_BASE: (page_aligned_buffer(self.flash_size), UC.UC_PROT_ALL),
            SRAM_BASE: (page_aligned_buffer(self.sram_low_end - SRAM_BASE), UC.UC_PROT_ALL),
        }
        self.arena_buffer: Optional[np.ndarray] = None
        self.arena_len = 0
        self.stack_region: Optional[tuple[int, int]] = None      # (lowest address, bytes)
        self.stack_top = 0

    @property
    def flash_end(self) -> int:
        return FLASH_BASE + self.flash_size

    def fault_ranges(self) -> list[tuple[int, int]]:
        """Where an access faults: the gaps between the mapped regions over the 32-bit address
        space (every region is mapped for all accesses but the stack's fetches, which
        Engine.run catches), as inclusive (first, last) address pairs."""
        gaps, at = [], 0
        for addr, (buffer, _) in sorted(self.regions.items()):
            if addr > at:
                gaps.append((at, addr - 1))
            at = max(at, addr + buffer.nbytes)
        if at < 1 << 32:
            gaps.append((at, (1 << 32) - 1))
        return gaps

    def flash_segments(self) -> list[tuple[int, int, int]]:
        """The host memory behind the flash: [(lo, hi, host address)]."""
        return [(addr, addr + buffer.nbytes, buffer.ctypes.data)
                for addr, (buffer, _) in sorted(self.regions.items())
                if FLASH_BASE <= addr < self.flash_end]

    # ------------------------------------------------------------------ mapping
    def map_into(self, uc: unicorn.Uc) -> None:
        """Map every region on a (fresh) engine."""
        for addr, (buffer, prot) in sorted(self.regions.items()):
            uc.mem_map_ptr(addr, buffer.nbytes, prot, buffer.ctypes.data)

    def _map(self, uc: unicorn.Uc, addr: int, buffer: np.ndarray, prot: int) -> None:
        uc.mem_map_ptr(addr, buffer.nbytes, prot, buffer.ctypes.data)
        self.regions[addr] = (buffer, prot)

    def _unmap(self, uc: unicorn.Uc, addr: int) -> None:
        buffer, _ = self.regions.pop(addr)
        uc.mem_unmap(addr, buffer.nbytes)

    def map_arena(self, uc: unicorn.Uc, buffer: np.ndarray) -> None:
        """Map a host buffer (page aligned, length multiple of 4 KiB) as the arena, zero-copy,
        with the stack above it past one unmapped guard page. Keeps a reference."""
        _check_arena_buffer(buffer, self.arena_misalign)
        if self.arena_buffer is not None:
            self._unmap(uc, self.arena_map)
        self._map(uc, self.arena_map, buffer, UC.UC_PROT_ALL)
        self.arena_buffer = buffer
        self.arena_len = buffer.nbytes
        stack_lo = self.arena_map + self.arena_len + PAGE
        stack_len = round_up(self.stack_bytes, PAGE)
        if self.stack_region is None or self.stack_region[0] < stack_lo:
            if self.stack_region is not None:
                self._unmap(uc, self.stack_region[0])
            self._map(uc, stack_lo, page_aligned_buffer(stack_len), UC.UC_PROT_READ | UC.UC_PROT_WRITE)
            self.stack_region = (stack_lo, stack_len)
        self.stack_top = self.stack_region[0] + self.stack_region[1]

    def grow_flash(self, uc: unicorn.Uc, end: int) -> None:
        """Map more flash so that it reaches `end` (EmulationError past FLASH_LIMIT)."""
        if end - FLASH_BASE > FLASH_LIMIT:
            raise EmulationError(
                f"flash full: placing constants up to 0x{end:08x} needs {end - FLASH_BASE:,} bytes "
                f"of flash; the emulated flash holds at most {FLASH_LIMIT:,} bytes (it ends where "
                f"SRAM starts, 0x{SRAM_BASE:08x})")
        new_size = min(FLASH_LIMIT, round_up(end - FLASH_BASE, PAGE))
        self._map(uc, self.flash_end, page_aligned_buffer(new_size - self.flash_size), UC.UC_PROT_ALL)
        self.flash_size = new_size

    def map_plan_ram(self, uc: unicorn.Uc, nbytes: int) -> int:
        """Map (once; again: the same or a larger size) `nbytes` of RAM for a whole-invoke
        plan at PLAN_RAM_BASE; its address."""
        nbytes = max(PAGE, round_up(int(nbytes), PAGE))
        if self.stack_top > PLAN_RAM_BASE:
            raise EmulationError(f"the arena and stack reach 0x{self.stack_top:08x}, past the plan's RAM "
                                 f"at 0x{PLAN_RAM_BASE:08x}")
        held = self.regions.get(PLAN_RAM_BASE)
        if held is None or held[0].nbytes < nbytes:
            if held is not None:
                self._unmap(uc, PLAN_RAM_BASE)
            self._map(uc, PLAN_RAM_BASE, page_aligned_buffer(nbytes), UC.UC_PROT_READ | UC.UC_PROT_WRITE)
        return PLAN_RAM_BASE

    def check_segment(self, addr: int) -> None:
        """An ELF segment must load into the mapped flash or the SRAM below ARGS' page end."""
        if not (FLASH_BASE <= addr < self.flash_end or SRAM_BASE <= addr < self.sram_low_end):
            raise EmulationError(f"ELF segment at 0x{addr:08x} is outside flash/SRAM")

    # ------------------------------------------------------------------ naming
    def region_of(self, addr: int) -> str:
        if FLASH_BASE <= addr < self.weights_base:
            return "flash (firmware)"
        if self.weights_base <= addr < self.flash_end:
            return "flash (weights)"
        if self.args_base <= addr < self.args_end:
            return "SRAM (args)"
        if SRAM_BASE <= addr < self.args_base:
            return "SRAM (.data/.bss)"
        if self.arena_map <= addr < self.arena_map + self.arena_len:
            return "SRAM (arena)"
        if self.stack_region is not None:
            lo, ln = self.stack_region
            if self.arena_map + self.arena_len <= addr < lo:
                return "guard page between arena end and stack (arena overrun or stack overflow)"
            if lo <= addr < lo + ln:
                return "SRAM (stack)"
        if PLAN_RAM_BASE in self.regions and PLAN_RAM_BASE <= addr < PLAN_RAM_BASE + self.regions[PLAN_RAM_BASE][0].nbytes:
            return "SRAM (the plan's argument structs and kernel state)"
        return "unmapped"
