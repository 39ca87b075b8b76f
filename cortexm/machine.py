"""The virtual Cortex-M: a Unicorn CPU with flash, SRAM, a zero-copy tensor arena and a stack,
exact instruction counting, a per-core cycle model and alignment checking.

Memory map (all cores):
    FLASH 0x0800_0000: firmware image | return trampoline (BKPT) | WEIGHTS area (grows as needed,
          up to SRAM_BASE: at most FLASH_LIMIT bytes in all)
    SRAM  0x2000_0000: .data/.bss | ARGS (4 KiB) | ... | ARENA (host numpy buffer, zero-copy,
          page aligned; arena_base = mapping + arena_misalign) | guard page (unmapped) | STACK
The guard page makes an arena overrun or a stack overflow fault instead of corrupting memory.

Every region is host memory (numpy) mapped zero-copy, so the Unicorn engine holds no state of
its own between calls: after `recycle_every` calls the engine is replaced by a fresh one over
the same memory (Unicorn 2.1's emu_start keeps a few hundred bytes per call that only closing
the engine returns; see benchmarks/bench_mcu_memory.py).
"""
from __future__ import annotations

import gc
import hashlib
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Union

import numpy as np
import unicorn
from unicorn import unicorn_const as UC
from unicorn.arm_const import (UC_ARM_REG_FPSCR, UC_ARM_REG_LR, UC_ARM_REG_PC, UC_ARM_REG_R0, UC_ARM_REG_R1,
                               UC_ARM_REG_R2, UC_ARM_REG_R3, UC_ARM_REG_SP,
                               UC_CPU_ARM_CORTEX_M0, UC_CPU_ARM_CORTEX_M33, UC_CPU_ARM_CORTEX_M4,
                               UC_CPU_ARM_CORTEX_M7)

from micro_rt.errors import EmulationError
from micro_rt.targets import get_target

from . import alignment as _al
from . import cycles as _cy
from .core_timing import block_cost
from .memory_system import MemorySystem, default_memory_system
from .thumb_decode import DISASSEMBLER
from .alignment import AlignmentEvent
from .elf import ElfImage, load_elf
from .native import HookSet
from .static_alignment import CAPSTONE_TO_UNICORN, static_checks

FLASH_BASE = 0x0800_0000
SRAM_BASE = 0x2000_0000
PAGE = 0x1000
ARGS_BYTES = 4096
DEFAULT_FLASH = 2 * 1024 * 1024
FLASH_LIMIT = SRAM_BASE - FLASH_BASE     # 384 MiB: flash must end where SRAM starts
STACK_PAINT = 0xA5
RECYCLE_EVERY = 10_000                   # emu_start calls before the engine is replaced

CPU_MODELS = {
    "cortex-m0plus": UC_CPU_ARM_CORTEX_M0,     # Unicorn has no M0+: same ISA (Armv6-M)
    "cortex-m4": UC_CPU_ARM_CORTEX_M4,
    "cortex-m7": UC_CPU_ARM_CORTEX_M7,
    "cortex-m33": UC_CPU_ARM_CORTEX_M33,
}

# QEMU exception numbers seen through UC_HOOK_INTR
_EXCP = {1: "undefined instruction (UsageFault)", 2: "SVC", 3: "prefetch abort (instruction fetch fault)",
         4: "data abort", 5: "IRQ", 6: "FIQ", 7: "breakpoint (BKPT)", 8: "exception return",
         17: "coprocessor not present (NOCP UsageFault)", 18: "invalid state (INVSTATE UsageFault)",
         19: "stack limit overflow (STKOF)", 22: "unaligned access (UsageFault)"}

_PAINT_CACHE: dict[int, bytes] = {}
_COST_CACHE: dict[tuple[str, str], dict] = {}


def _round_up(x: int, a: int) -> int:
    return (x + a - 1) // a * a


def page_aligned_buffer(nbytes: int) -> np.ndarray:
    """A zeroed uint8 array whose data pointer is 4 KiB aligned and whose length is a multiple
    of 4 KiB (>= nbytes). The returned view keeps its backing allocation alive."""
    n = max(PAGE, _round_up(int(nbytes), PAGE))
    raw = np.zeros(n + PAGE, dtype=np.uint8)
    off = (-raw.ctypes.data) % PAGE
    buf = raw[off:off + n]
    assert buf.ctypes.data % PAGE == 0
    return buf


@dataclass
class CallResult:
    return_value: int                    # r0 as signed int32
    instructions: int                    # exact executed instructions
    cycles: int                          # cycle model total (core + branches + memory system)
    stack_bytes: int                     # stack high-water mark of the call (bytes below SP at entry)
    alignment_events: list = field(default_factory=list)   # list[AlignmentEvent]
    breakdown: Optional[_cy.CycleBreakdown] = None          # core / branches / fetch / data_flash
    blocks: int = 0                      # executed translation blocks
    flash_data_reads: int = 0            # data loads from flash (when the memory hook is on)
    seconds: float = 0.0                 # cycles / clock_hz


class BudgetExceeded(EmulationError):
    """A call ran `instructions` (at least) against its `budget` without returning."""

    def __init__(self, message: str, *, function: str, budget: int, instructions: int, pc: int,
                 symbol: str, in_code: bool):
        super().__init__(message)
        self.function, self.budget, self.instructions = function, budget, instructions
        self.pc, self.symbol, self.in_code = pc, symbol, in_code


def _to_bytes(data) -> bytes:
    if isinstance(data, np.ndarray):
        return np.ascontiguousarray(data).tobytes()
    return bytes(data)


class VirtualMCU:
    """One emulated microcontroller. See module docstring for the memory map.

    check_alignment: record unaligned LDRD/STRD/LDM/STM/PUSH/POP (and every unaligned access when
    strict_alignment) through a native memory hook; costs speed (see benchmarks/bench_emulator.py).
    On the M0+ (Unicorn's M0) every unaligned access faults and raises EmulationError anyway.
    Raises EmulationError when used after `close()`.
    """

    def __init__(self, core: str, elf_path: Union[str, Path, None] = None, *, arena_bytes: int,
                 flash_wait_states: int = 0, clock_hz: int = 100_000_000,
                 strict_alignment: bool = False, arena_misalign: int = 0, stack_bytes: int = 8192,
                 check_alignment: bool = True, flash_bytes: int = DEFAULT_FLASH,
                 memory_system: Optional[MemorySystem] = None, native: bool = True,
                 model_flash_data: bool = True, weights_bytes: int = 0,
                 recycle_every: int = RECYCLE_EVERY):
        """flash_bytes: flash mapped at least; weights_bytes: room for constants after the
        firmware image (flash is sized to hold both, or EmulationError says by how much it cannot).
        recycle_every: replace the Unicorn engine after this many calls (0: never)."""
        target = get_target(core)
        if target.cpu is None or target.name not in CPU_MODELS:
            raise EmulationError(f"target '{core}' is not an emulated Cortex-M core")
        self.core = target.name
        self.target = target
        if elf_path is None:
            elf_path = Path(__file__).parent / "firmware" / f"{self.core}.elf"
            if not Path(elf_path).exists():
                raise EmulationError(f"firmware {elf_path} not built (run `make firmware`)")
        self.elf: ElfImage = load_elf(elf_path)
        self.clock_hz = int(clock_hz)
        self.strict_alignment = bool(strict_alignment)
        self.arena_misalign = int(arena_misalign)
        self.arena_bytes = int(arena_bytes)
        self.stack_bytes = _round_up(max(int(stack_bytes), 256), 8)
        self.flash_wait_states = int(flash_wait_states)
        self.memory_system = memory_system or default_memory_system(self.core, self.flash_wait_states)
        if memory_system is not None:
            self.flash_wait_states = memory_system.wait_states
        self.armv6m = self.core == "cortex-m0plus"
        # Armv6-M faults on every unaligned access by itself: no hook needed for alignment there
        self.check_alignment = bool(check_alignment) and not self.armv6m

        # --- flash: firmware image, then the weights area sized by `weights_bytes` ---
        image_end = FLASH_BASE
        for seg in self.elf.segments:
            for a in {seg.vaddr, seg.paddr}:
                if FLASH_BASE <= a < SRAM_BASE:
                    image_end = max(image_end, a + (len(seg.data) if a == seg.paddr else seg.memsz))
        self.ret_addr = _round_up(image_end, 4)
        self.weights_base = _round_up(self.ret_addr + 4, 16)
        self._weights_ptr = self.weights_base
        need = self.weights_base - FLASH_BASE + int(weights_bytes)
        if need > FLASH_LIMIT:
            raise EmulationError(
                f"the model's constants need {int(weights_bytes):,} bytes of flash; the emulated "
                f"flash holds at most {FLASH_LIMIT - (self.weights_base - FLASH_BASE):,} bytes of "
                f"constants ({FLASH_LIMIT:,} bytes from 0x{FLASH_BASE:08x} to SRAM at "
                f"0x{SRAM_BASE:08x}, less the {self.weights_base - FLASH_BASE:,}-byte firmware image)")
        self.flash_size = min(FLASH_LIMIT, max(_round_up(int(flash_bytes), PAGE), _round_up(need, PAGE)))

        # --- SRAM: data/bss + args, then the arena window, a guard page, the stack ---
        data_end = SRAM_BASE
        for seg in self.elf.segments:
            if seg.vaddr >= SRAM_BASE:
                data_end = max(data_end, seg.vaddr + seg.memsz)
        self.args_base = _round_up(data_end, 16)
        self.args_end = self.args_base + ARGS_BYTES
        self._args_ptr = self.args_base
        self._low_end = _round_up(self.args_end, PAGE)
        self.arena_map = self._low_end
        self.arena_base = self.arena_map + self.arena_misalign

        # Host memory behind every region: {address: (buffer, protection)}.
        self._regions: dict[int, tuple[np.ndarray, int]] = {
            FLASH_BASE: (page_aligned_buffer(self.flash_size), UC.UC_PROT_ALL),
            SRAM_BASE: (page_aligned_buffer(self._low_end - SRAM_BASE), UC.UC_PROT_ALL),
        }
        self._arena_buf: Optional[np.ndarray] = None
        self._arena_len = 0
        self._stack_region: Optional[tuple[int, int]] = None

        # --- hooks' configuration (installed on every engine before its first emu_start) ---
        # Alignment: strict mode (every LDR/STR) or a flash wait-state model (which needs the data
        # loads from flash anyway) use a native memory hook on every access (slow path, ~10x).
        # Otherwise only LDRD/STRD/LDM/STM/LDREX* can fault; they are found statically and checked
        # in the block hook (or a code hook on the instruction): near full speed.
        mem = self.memory_system
        self.model_flash_data = bool(model_flash_data) and mem.wait_states > 0
        self._memory_hook = self.model_flash_data or (self.check_alignment and self.strict_alignment)
        self._static = None
        if self.check_alignment and not self._memory_hook:
            self._static = static_checks(self.elf)
        self.alignment_mode = ("off" if not self.check_alignment else
                               "memory hook" if self._memory_hook else "static + block hook")
        self._native = native
        self.hooks: Optional[HookSet] = None
        self.uc: Optional[unicorn.Uc] = None
        self.recycle_every = int(recycle_every)
        self.engines_started = 0
        self._fault: Optional[tuple] = None
        self._intr: Optional[tuple] = None
        # FPU cores (the firmware uses VFP through -mfloat-abi=softfp): IEEE 754 defaults in FPSCR,
        # i.e. FZ=0 (denormals are kept, not flushed), DN=0 (NaN operands propagate), AHP=0,
        # RMode=0 (round to nearest even): the numpy twins' float32 semantics. Unicorn's reset
        # value is already 0; it is written explicitly so every call (context restore) starts so.
        # Unicorn/QEMU executes VFP instructions without the CPACR enable a reset handler would do.
        self.has_fpu = not self.armv6m
        self._start_engine()
        self.map_arena(self.new_arena_buffer(self.arena_bytes))

        # --- load the image ---
        for seg in self.elf.segments:
            for a in sorted({seg.vaddr, seg.paddr}):
                self._load(a, seg.data, seg.memsz if a == seg.vaddr else len(seg.data))
        self.uc.mem_write(self.ret_addr, b"\x00\xbe\x00\xbe")          # BKPT #0 (stop address)
        self._costs = _COST_CACHE.setdefault((self.elf.sha256, self.core), {})
        self._warm_lines: set = set()
        self._const_cache: dict = {}
        self._const_ids: dict = {}

    # ------------------------------------------------------------------ the engine
    def _start_engine(self) -> None:
        """A fresh Unicorn engine over the same host memory, with the same hooks (and hook state:
        the flash data-cache lines carry over), registers at their reset values."""
        self._retire_engine()
        # CPU: THUMB mode + explicit model first (UC_MODE_MCLASS would force an M33)
        uc = unicorn.Uc(UC.UC_ARCH_ARM, UC.UC_MODE_THUMB)
        uc.ctl_set_cpu_model(CPU_MODELS[self.core])
        for addr, (buffer, prot) in sorted(self._regions.items()):
            uc.mem_map_ptr(addr, buffer.nbytes, prot, buffer.ctypes.data)
        if self.hooks is None:
            self.hooks = HookSet(uc, memory_hook=self._memory_hook,
                                 check_alignment=self.check_alignment and self._memory_hook,
                                 flash_lo=FLASH_BASE, flash_hi=FLASH_BASE + self.flash_size,
                                 line_bytes=self.memory_system.line_bytes,
                                 dcache_lines=self.memory_system.dcache_lines,
                                 prefer_native=self._native, static_checks=self._static)
        else:
            self.hooks.attach(uc)
        self._own_hooks = [uc.hook_add(UC.UC_HOOK_MEM_UNMAPPED | UC.UC_HOOK_MEM_PROT, self._on_invalid_mem),
                           uc.hook_add(UC.UC_HOOK_INTR, self._on_intr)]
        if self.has_fpu:
            uc.reg_write(UC_ARM_REG_FPSCR, 0)
        self._ctx0 = uc.context_save()
        self.uc = uc
        self.engines_started += 1
        self._calls_on_engine = 0

    def _retire_engine(self) -> None:
        """Unhook the current engine and let go of it; it is closed (uc_close) and its memory
        freed when the last reference goes. Unicorn's Python hook wrappers keep the engine in a
        reference cycle, so a collection is run when dropping it was not enough."""
        if self.uc is None:
            return
        if self.hooks is not None:
            self.hooks.detach()
        for handle in self._own_hooks:
            self.uc.hook_del(handle)
        self._own_hooks = []
        self._ctx0 = None
        engine = weakref.ref(self.uc)
        self.uc = None
        if engine() is not None:
            gc.collect()

    def _map(self, addr: int, buffer: np.ndarray, prot: int) -> None:
        self.uc.mem_map_ptr(addr, buffer.nbytes, prot, buffer.ctypes.data)
        self._regions[addr] = (buffer, prot)

    def _unmap(self, addr: int) -> None:
        buffer, _ = self._regions.pop(addr)
        self.uc.mem_unmap(addr, buffer.nbytes)

    # ------------------------------------------------------------------ memory layout
    def _load(self, addr: int, data: bytes, memsz: int):
        if not (FLASH_BASE <= addr < FLASH_BASE + self.flash_size or SRAM_BASE <= addr < self._low_end):
            raise EmulationError(f"ELF segment at 0x{addr:08x} is outside flash/SRAM")
        if data:
            self.uc.mem_write(addr, bytes(data))
        if memsz > len(data):
            self.uc.mem_write(addr + len(data), bytes(memsz - len(data)))

    def new_arena_buffer(self, nbytes: int) -> np.ndarray:
        """Page-aligned zeroed uint8 buffer for `map_arena`: length a multiple of 4 KiB, with
        `arena_misalign` bytes of slack at the front (arena offset 0 is buf[arena_misalign])."""
        return page_aligned_buffer(int(nbytes) + self.arena_misalign)

    def map_arena(self, buffer: np.ndarray) -> None:
        """Map a host buffer (page aligned, length multiple of 4 KiB) as the arena, zero-copy:
        the emulated kernels read and write the very bytes numpy sees. Keeps a reference."""
        if not isinstance(buffer, np.ndarray) or buffer.dtype != np.uint8 or not buffer.flags["C_CONTIGUOUS"]:
            raise EmulationError("map_arena needs a C-contiguous uint8 numpy array")
        ptr, n = buffer.ctypes.data, buffer.nbytes
        if ptr % PAGE or n % PAGE or n == 0:
            raise EmulationError("map_arena buffer must be 4 KiB aligned with a length multiple of 4 KiB "
                                 "(use VirtualMCU.new_arena_buffer)")
        if n < self.arena_misalign + 1:
            raise EmulationError("arena buffer smaller than arena_misalign")
        if buffer.flags["WRITEABLE"] is False:
            raise EmulationError("arena buffer must be writeable")
        if self._arena_buf is not None:
            self._unmap(self.arena_map)
        self._map(self.arena_map, buffer, UC.UC_PROT_ALL)
        self._arena_buf = buffer
        self._arena_len = n
        # the stack sits above the arena window with one unmapped guard page in between
        stack_lo = self.arena_map + n + PAGE
        stack_len = _round_up(self.stack_bytes, PAGE)
        if self._stack_region is None or self._stack_region[0] < stack_lo:
            if self._stack_region is not None:
                self._unmap(self._stack_region[0])
            self._map(stack_lo, page_aligned_buffer(stack_len), UC.UC_PROT_READ | UC.UC_PROT_WRITE)
            self._stack_region = (stack_lo, stack_len)
        self.stack_top = self._stack_region[0] + self._stack_region[1]

    @property
    def arena(self) -> np.ndarray:
        """The mapped arena as numpy (offset 0 = arena_base)."""
        return self._arena_buf[self.arena_misalign:]

    # ------------------------------------------------------------------ symbols & memory access
    def symbol(self, name: str) -> int:
        return self.elf.symbol(name)

    def symbol_at(self, pc: int) -> str:
        pc &= ~1
        if pc == self.ret_addr:
            return "return_trampoline"
        if self.weights_base <= pc < self._weights_ptr:
            return f"weights+0x{pc - self.weights_base:x}"
        return self.elf.symbol_at(pc)

    def region_of(self, addr: int) -> str:
        if FLASH_BASE <= addr < self.weights_base:
            return "flash (firmware)"
        if self.weights_base <= addr < FLASH_BASE + self.flash_size:
            return "flash (weights)"
        if self.args_base <= addr < self.args_end:
            return "SRAM (args)"
        if SRAM_BASE <= addr < self.args_base:
            return "SRAM (.data/.bss)"
        if self.arena_map <= addr < self.arena_map + self._arena_len:
            return "SRAM (arena)"
        lo, ln = self._stack_region
        if self.arena_map + self._arena_len <= addr < lo:
            return "guard page between arena end and stack (arena overrun or stack overflow)"
        if lo <= addr < lo + ln:
            return "SRAM (stack)"
        return "unmapped"

    def write(self, addr: int, data) -> None:
        try:
            self.uc.mem_write(addr, _to_bytes(data))
        except unicorn.UcError as exc:
            raise EmulationError(f"write of {len(data)} bytes at 0x{addr:08x}: {exc}") from None

    def read(self, addr: int, n: int) -> bytes:
        try:
            return bytes(self.uc.mem_read(addr, n))
        except unicorn.UcError as exc:
            raise EmulationError(f"read of {n} bytes at 0x{addr:08x}: {exc}") from None

    def _grow_flash(self, end: int):
        if end - FLASH_BASE > FLASH_LIMIT:
            raise EmulationError(
                f"flash full: placing constants up to 0x{end:08x} needs {end - FLASH_BASE:,} bytes "
                f"of flash; the emulated flash holds at most {FLASH_LIMIT:,} bytes (it ends where "
                f"SRAM starts, 0x{SRAM_BASE:08x})")
        new_size = min(FLASH_LIMIT, _round_up(end - FLASH_BASE, PAGE))
        self._map(FLASH_BASE + self.flash_size, page_aligned_buffer(new_size - self.flash_size),
                  UC.UC_PROT_ALL)
        self.flash_size = new_size
        self.hooks.set_flash_range(FLASH_BASE, FLASH_BASE + self.flash_size)

    def place_constant(self, data, align: int = 16) -> int:
        """Copy constant data into the WEIGHTS flash area once; the same object (or the same
        bytes) placed again returns the same address. Flash grows as needed."""
        key_id = id(data)
        hit = self._const_ids.get(key_id)
        if hit is not None and hit[0] is data:
            return hit[1]
        raw = _to_bytes(data)
        digest = (hashlib.blake2b(raw, digest_size=16).digest(), align)
        addr = self._const_cache.get(digest)
        if addr is None:
            addr = _round_up(self._weights_ptr, max(1, align))
            end = addr + len(raw)
            if end > FLASH_BASE + self.flash_size:
                self._grow_flash(end)
            if raw:
                self.uc.mem_write(addr, raw)
            self._weights_ptr = end
            self._const_cache[digest] = addr
        self._const_ids[key_id] = (data, addr)
        return addr

    def args_reset(self) -> None:
        self._args_ptr = self.args_base

    def args_alloc(self, data, align: int = 4) -> int:
        raw = _to_bytes(data)
        addr = _round_up(self._args_ptr, max(1, align))
        if addr + len(raw) > self.args_end:
            raise EmulationError(f"ARGS area ({ARGS_BYTES} B) full: cannot place {len(raw)} more bytes")
        if raw:
            self.uc.mem_write(addr, raw)
        self._args_ptr = addr + len(raw)
        return addr

    # ------------------------------------------------------------------ hooks (rare paths)
    def _on_invalid_mem(self, uc, access, address, size, value, _):
        self._fault = (access, address, size, uc.reg_read(UC_ARM_REG_PC))
        return False

    def _on_intr(self, uc, intno, _):
        self._intr = (intno, uc.reg_read(UC_ARM_REG_PC))
        uc.emu_stop()

    # ------------------------------------------------------------------ calling
    call_budget = 2_000_000_000      # instructions one call may run when the caller gives no budget

    def call(self, func: Union[str, int], *args: int, budget: Optional[int] = None) -> CallResult:
        if self.uc is None:
            raise EmulationError("the virtual MCU was closed: create a new one")
        if self.recycle_every and self._calls_on_engine >= self.recycle_every:
            self._start_engine()
        self._calls_on_engine += 1
        uc = self.uc
        budget = self.call_budget if budget is None else budget
        if isinstance(func, str):
            name, entry = func, self.symbol(func)
        else:
            entry = int(func) & ~1
            name = self.symbol_at(entry)
        vals = [int(a) & 0xFFFFFFFF for a in args]
        # stack: paint, then stacked arguments (AAPCS: 5th.. args at [sp], sp 8-aligned)
        lo, ln = self._stack_region
        paint_lo = self.stack_top - self.stack_bytes
        paint = _PAINT_CACHE.get(self.stack_bytes)
        if paint is None:
            paint = _PAINT_CACHE.setdefault(self.stack_bytes, bytes([STACK_PAINT]) * self.stack_bytes)
        uc.mem_write(paint_lo, paint)
        sp = self.stack_top
        extra = vals[4:]
        if extra:
            sp = (sp - 4 * len(extra)) & ~7
            uc.mem_write(sp, b"".join(v.to_bytes(4, "little") for v in extra))
        uc.context_restore(self._ctx0)
        for reg, v in zip((UC_ARM_REG_R0, UC_ARM_REG_R1, UC_ARM_REG_R2, UC_ARM_REG_R3), vals[:4]):
            uc.reg_write(reg, v)
        uc.reg_write(UC_ARM_REG_SP, sp)
        uc.reg_write(UC_ARM_REG_LR, self.ret_addr | 1)
        self._fault = None
        self._intr = None
        self.hooks.reset(budget, 0)
        try:
            uc.emu_start(entry | 1, self.ret_addr)
            err = None
        except unicorn.UcError as exc:
            err = exc
        stats = self.hooks.stats()
        pc = uc.reg_read(UC_ARM_REG_PC)
        if err is not None:
            self._raise_fault(name, err, pc)
        if stats.budget_hit:
            self._raise_budget(name, budget, budget + 1, pc)
        if self._intr is not None:
            self._raise_intr(name, *self._intr)
        if pc != self.ret_addr:
            raise EmulationError(f"{name}: stopped at pc 0x{pc:08x} <{self.symbol_at(pc)}> "
                                 f"instead of returning")
        # ---- results ----
        edges = self.hooks.edges()
        self.last_edges = edges
        costs = self._costs
        reader = self._code_reader
        for (p, ps, c, cs) in edges:
            if (c, cs) not in costs:
                costs[(c, cs)] = block_cost(self.core, c, cs, reader)
        insns, bd, blocks = _cy.account(edges, costs, stats.last_block, self.memory_system,
                                        (FLASH_BASE, FLASH_BASE + self.flash_size),
                                        stats.flash_read_misses, self._warm_lines)
        if insns > budget:
            self._raise_budget(name, budget, insns, pc)
        r0 = uc.reg_read(UC_ARM_REG_R0)
        if r0 & 0x80000000:
            r0 -= 1 << 32
        stack_used = self._stack_high_water(paint_lo, sp)
        events = self._alignment_events() if stats.unaligned_total else []
        cycles = bd.total
        return CallResult(r0, insns, cycles, stack_used, events, bd, blocks, stats.flash_reads,
                          cycles / self.clock_hz)

    def _raise_budget(self, name: str, budget: int, insns: int, pc: int):
        """The call did not return within its budget. Stopped in the firmware's code it is a
        kernel that did not finish; stopped anywhere else, it ran away."""
        in_code = self.elf.function_at(pc) is not None or pc == self.ret_addr
        what = ("did not finish" if in_code else
                f"ran away: executing {self.region_of(pc)}, not the firmware's code")
        raise BudgetExceeded(f"{name}: {what} within its instruction budget of {budget:,} "
                             f"(stopped at pc 0x{pc:08x} <{self.symbol_at(pc)}>)",
                             function=name, budget=budget, instructions=insns, pc=pc,
                             symbol=self.symbol_at(pc), in_code=in_code)

    def _code_reader(self, addr: int, n: int) -> bytes:
        try:
            return bytes(self.uc.mem_read(addr, n))
        except unicorn.UcError:
            return b""

    def _stack_high_water(self, paint_lo: int, sp: int) -> int:
        data = self.uc.mem_read(paint_lo, sp - paint_lo)
        stripped = data.lstrip(bytes([STACK_PAINT]))
        lowest = paint_lo + (len(data) - len(stripped))
        return max(0, sp - lowest)

    def _alignment_events(self) -> list[AlignmentEvent]:
        return _al.call_events(self.hooks.unaligned(), self._code_reader, self.symbol_at,
                               strict=self.strict_alignment, armv6m=self.armv6m)

    # ------------------------------------------------------------------ faults
    def _where(self, pc: int) -> str:
        return f"pc 0x{pc:08x} <{self.symbol_at(pc)}>"

    def _raise_fault(self, name: str, err: unicorn.UcError, pc: int):
        code = err.errno
        if self._fault is not None:
            access, address, size, fpc = self._fault
            kind = {UC.UC_MEM_READ_UNMAPPED: "read of unmapped memory",
                    UC.UC_MEM_WRITE_UNMAPPED: "write to unmapped memory",
                    UC.UC_MEM_FETCH_UNMAPPED: "instruction fetch from unmapped memory",
                    UC.UC_MEM_WRITE_PROT: "write to read-only memory",
                    UC.UC_MEM_READ_PROT: "read of protected memory",
                    UC.UC_MEM_FETCH_PROT: "instruction fetch from non-executable memory"}.get(access, f"memory fault {access}")
            if access in (UC.UC_MEM_FETCH_UNMAPPED, UC.UC_MEM_FETCH_PROT):
                fpc = address
                where = f"pc 0x{address:08x} (jumped there; lr 0x{self.uc.reg_read(UC_ARM_REG_LR):08x} " \
                        f"<{self.symbol_at(self.uc.reg_read(UC_ARM_REG_LR))}>)"
            else:
                where = self._where(fpc)
            region = self.region_of(address)
            sp = self.uc.reg_read(UC_ARM_REG_SP)
            if region.startswith("guard") and sp < self._stack_region[0] + 64:
                region = f"stack overflow: SP 0x{sp:08x} is at the bottom of the {self.stack_bytes} B stack"
            raise EmulationError(f"{name}: {kind} at address 0x{address:08x} ({size} B, "
                                 f"{region}) by {where}")
        if code == UC.UC_ERR_INSN_INVALID:
            dis = _al.decode_one(self._code_reader(pc, 4), pc)[1]
            raise EmulationError(f"{name}: invalid instruction '{dis}' at {self._where(pc)} "
                                 f"(address 0x{pc:08x}; not in {self.core}'s instruction set?)")
        raise EmulationError(f"{name}: emulation error '{err}' at {self._where(pc)} (address 0x{pc:08x})")

    def _raise_intr(self, name: str, intno: int, pc: int):
        what = _EXCP.get(intno, f"exception {intno}")
        if intno in (4, 22) or (intno == 3 and self.armv6m):
            m, dis = _al.decode_one(self._code_reader(pc, 4), pc)
            addr = self._effective_address(pc)
            if addr is not None and (addr & 3) and m in _al.ALWAYS_ALIGNED | _al.SINGLE_LDST or \
                    (addr is not None and addr & 1 and m in ("ldrh", "strh", "ldrsh")):
                ev = AlignmentEvent(pc, addr, 0, _al.kind_name(m), self.symbol_at(pc), dis, 1, True)
                err = EmulationError(f"{name}: unaligned access fault: {ev.kind} at address 0x{addr:08x} "
                                     f"by {self._where(pc)} '{dis}'"
                                     + (" (Armv6-M faults on every unaligned access)" if self.armv6m else ""))
                err.event = ev
                raise err
            raise EmulationError(f"{name}: {what} at {self._where(pc)} '{dis}'"
                                 + (f", address 0x{addr:08x} ({self.region_of(addr)})" if addr is not None else ""))
        if intno == 7:
            raise EmulationError(f"{name}: hit a breakpoint (BKPT) at {self._where(pc)} (address 0x{pc:08x})")
        if intno == 1:
            dis = _al.decode_one(self._code_reader(pc, 4), pc)[1]
            raise EmulationError(f"{name}: {what}: '{dis}' at {self._where(pc)} (address 0x{pc:08x})")
        raise EmulationError(f"{name}: {what} at {self._where(pc)} (address 0x{pc:08x}): "
                             "HardFault-like condition")

    def _effective_address(self, pc: int) -> Optional[int]:
        """Address accessed by the load/store at pc, from the current registers."""
        from capstone import arm as csarm
        try:
            insn = next(DISASSEMBLER.disasm(self._code_reader(pc, 4), pc, count=1))
        except StopIteration:
            return None
        regmap = CAPSTONE_TO_UNICORN
        for op in insn.operands:
            if op.type == csarm.ARM_OP_MEM:
                base = self._reg(regmap, op.mem.base, pc)
                idx = self._reg(regmap, op.mem.index, pc) if op.mem.index else 0
                if op.mem.index and op.mem.lshift:
                    idx <<= op.mem.lshift
                if op.subtracted:
                    idx = -idx
                return (base + idx + op.mem.disp) & 0xFFFFFFFF
        name = insn.mnemonic.split(".")[0]
        if name.startswith(("ldm", "stm")) and insn.operands:
            return self._reg(regmap, insn.operands[0].reg, pc)
        if name.startswith(("push", "pop")):
            sp = self.uc.reg_read(UC_ARM_REG_SP)
            return sp - 4 * len(insn.operands) if name.startswith("push") else sp
        return None

    def _reg(self, regmap, csreg: int, pc: int) -> int:
        from capstone import arm as csarm
        if csreg == csarm.ARM_REG_PC:
            return (pc + 4) & ~3
        return self.uc.reg_read(regmap[csreg])

    def close(self) -> None:
        """Free the engine and the hooks' native state now; later calls raise EmulationError."""
        self._retire_engine()
        if self.hooks is not None:
            self.hooks.close()
