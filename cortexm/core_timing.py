"""Per-core static cost of a translation block: the core pipeline part of the cycle model.

A block's cost is computed once from its decoded instructions (thumb_decode.py) as
(cycles when its final control transfer is not taken, extra cycles when it is); cycles.py
multiplies it by how often the block ran and adds the taken-branch refills and the memory
system's stalls.

Sources (rules are commented where they are applied):
- [M0+] Arm Cortex-M0+ Technical Reference Manual (DDI 0484), 3.3 "Instruction set summary"
  (cycle column: ALU 1, LDR/STR 2, LDM/STM/PUSH/POP 1+N, POP {..,PC} 3+N, B/BX/BLX 2,
  B<cond> 2 taken / 1 not taken, BL 3, MULS 1 (fast multiplier) or 32, DMB/DSB/ISB 3).
- [M4] Arm Cortex-M4 Technical Reference Manual (DDI 0439), 3.3.1 "Table of processor
  instructions" (Table 3-1: P = pipeline refill 1..3, N = registers; MUL/MLA/MLS/SMULL/UMULL/
  SMLAL/UMLAL 1, SDIV/UDIV 2..12, LDR 2, LDRD/STRD 1+N, LDM/STM 1+N, +P with PC, B 1+P,
  B<cond> 1 or 1+P, BL/BX/BLX 1+P, CBZ 1 or 1+P, TBB/TBH 2+P, IT 1 but can be folded) and
  3.3.2 "Load/store timings" (neighbouring LDRs pipeline: the 2nd and later take 1; STR
  [Rn,#imm] completes in 1 because its data phase overlaps the next instruction; nothing
  pipelines after a store; a load/store whose address depends on the previous data-processing
  result stalls 1 cycle; LDR PC and TBB/TBH are blocking: 2 (3 for TBx) + 3-cycle refill).
- [M3] Cortex-M3 TRM (DDI 0337) 3.3.1 / "IT folding": an IT can fold onto the preceding 16-bit
  instruction (0 cycles) — the same front end is used by the M4.
- [M33] Arm Cortex-M33 TRM (100230) gives no per-instruction cycle table; the M33 is an in-order
  3-stage Armv8-M Mainline pipeline like the M4's, so the M4 rules are used, with
  SDIV/UDIV 2..11 (M33 TRM "Integer divide" note) -> 6.
- [M7] Arm Cortex-M7 TRM (DDI 0489) 1.2 "Features": six-stage in-order superscalar pipeline that
  can dual-issue, 64-bit instruction fetch and data paths, branch target address cache. There is
  no cycle table; approximated: 1 cycle/instruction, greedy dual issue of adjacent independent
  instructions (at most one load/store and one multiply per pair, branch only in the 2nd slot),
  load-to-use and multiply-to-use latency 2, LDM/STM 1+ceil(N/2), LDRD/STRD 1, predicted direct
  branches 1 extra cycle when taken, indirect branches/returns 3 extra.
- Division has an operand-dependent early-terminating latency; statically we charge the middle
  of the documented range (M4: 7, M33: 6, M7: 7).
- [M4-FPU] Cortex-M4 TRM (DDI 0439) chapter 7 "Floating Point Unit", 7.2.3 "FPU instruction
  set", Table 7-1: VADD/VSUB/VMUL/VNMUL/VABS/VNEG/VCMP/VCVT 1; VMLA/VMLS/VNMLA/VNMLS and
  VFMA/VFMS/VFNMA/VFNMS 3; VDIV/VSQRT 14; VLDR.32/VSTR.32 2, VLDR.64/VSTR.64 3; VLDM/VSTM/
  VPUSH/VPOP 1+N (N = 32-bit words: 1+2N for N doubles); VMOV immediate / register / one core
  register <-> S 1, two core registers <-> two S / one D 2; VMRS/VMSR 1. The notes below the
  table: floating-point arithmetic (add, subtract, multiply, divide, square root, all multiply-
  accumulates, conversions) takes one cycle longer if its result is consumed by the following
  instruction, except as the addend of a following multiply-accumulate (read a cycle later).
- [M33-FPU] the M33 TRM (100230) has no FPU cycle table; its FPv5-SP unit is the M4's
  single-issue coprocessor design extended with the Armv8-M instructions (VSEL, VMAXNM, VRINT,
  VCVT{A,N,P,M}: 1 like the other simple data-processing ones): the [M4-FPU] rules are used.
- [M7-FPU] the M7 TRM (DDI 0489) has no FPU timing either; approximated from the Arm-contributed
  LLVM scheduling model (llvm/lib/Target/ARM/ARMScheduleM7.td): one FP data-processing
  instruction issues per cycle (it can pair with an integer instruction, not with another FP
  one), result latency 3 (single precision ALU/multiply/convert), 6 (multiply-accumulate), 4 / 7
  / 11 (double ALU / multiply / multiply-accumulate); VDIV/VSQRT .F32 16, .F64 30 (charged as
  blocking); VLDR like LDR (latency 2), VLDM/VSTM 1+ceil(words/2) on the 64-bit data path.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from .thumb_decode import PC, SP, Insn, decode, is_32bit_halfword

CodeReader = Callable[[int, int], bytes]       # (address, size) -> the code bytes there


@dataclass
class BlockCost:
    addr: int
    size: int
    n_insns: int
    cycles: int               # core cycles, control transfer at the end not taken
    taken_extra: int          # extra cycles when the block is left by a taken control transfer
    last: str                 # class of the last instruction
    loads: int = 0            # 32-bit words the block loads (LDR 1, LDRD 2, LDM / POP / VLDM their
                              # registers): what a wait-stated SRAM delays, less the loads from flash


# ------------------------------------------------------------------------------------------
# Cortex-M0+
# ------------------------------------------------------------------------------------------

def _m0plus_insn(ins: Insn) -> tuple[int, int]:
    """[M0+] TRM 3.3 cost of one instruction, split into (not-taken part, extra when taken)."""
    c = ins.cls
    if c in ("ld", "st"):
        return 2, 0                                    # LDR*/STR* 2
    if c in ("ldm", "stm"):
        return 1 + ins.nregs, (2 if ins.writes_pc else 0)   # LDM/STM/PUSH/POP 1+N; POP {..,PC} 3+N
    if c == "b":
        return (2 if ins.name == "bl" else 1), 1       # BL 3 (32-bit; always taken); B 2; B<cond> 2 / 1
    if c == "bx":
        return 1, 1                                    # BX/BLX 2
    if c in ("mul", "mac"):
        return 1, 0                                    # MULS 1 (fast multiplier configuration)
    if c == "barrier":
        return 3, 0                                    # DMB/DSB/ISB 3
    return 1, (1 if ins.writes_pc else 0)              # data processing 1; ADD/MOV PC 2


def _cost_m0plus(insns: list[Insn], read: CodeReader) -> tuple[int, int]:
    """[M0+] 2-stage pipeline: the table's costs, summed; the last instruction's extra."""
    cyc = extra = 0
    for k, ins in enumerate(insns):
        cycles, taken = _m0plus_insn(ins)
        cyc += cycles
        if k == len(insns) - 1:
            extra = taken
    return cyc, extra


# ------------------------------------------------------------------------------------------
# Cortex-M4 (and M33)
# ------------------------------------------------------------------------------------------

_MEMORY_CLASSES = ("ld", "st", "ldrd", "strd", "ldm", "stm", "vld", "vst", "vldm", "vstm")
_P_INDIRECT = 2       # BX/BLX/MOV PC: target known only in execute (not speculated early)
_P_LOAD = 3           # [M4] 3.3.2: LDR PC / POP PC / TBB: blocking, 3-cycle pipeline reload
# [M4-FPU] Table 7-1 issue cycles of the VFP data-processing kinds (see thumb_decode)
_M4_FP_CYCLES = {"arith": 1, "simple": 1, "cmp": 1, "mac": 3, "div": 14, "mov1": 1, "mov2": 2, "sys": 1}
_FP_RESULT_KINDS = ("arith", "mac", "div")


def _direct_refill(ins: Insn, read: CodeReader) -> int:
    """[M4] Table 3-1 note: P is 1..3 'depending on the alignment and width of the target
    instruction, and whether the processor manages to speculate the address early'. Direct
    branches are speculated in decode: P = 1, or 2 when the target is a 32-bit instruction at a
    halfword (not word) aligned address (it needs two fetches)."""
    if ins.target is None:
        return 1
    try:
        hw = int.from_bytes(read(ins.target, 2), "little")
    except Exception:
        return 1
    return 2 if (ins.target & 2) and is_32bit_halfword(hw) else 1


def _fp_consumed(ins: Insn, nxt: Optional[Insn]) -> bool:
    """The FP arithmetic result of `ins` is read by `nxt` (other than as the addend of a
    multiply-accumulate, which [M4-FPU] reads a cycle later)."""
    if nxt is None:
        return False
    if nxt.cls == "fp" and nxt.fp == "mac":
        return bool(nxt.mul_srcs & ins.writes)
    return bool(nxt.reads & ins.writes)


def _m4_load_store(ins: Insn, prev: Optional[Insn]) -> tuple[int, int]:
    """[M4] 3.3.2 cost of a load / store, (cycles, extra when it is the block's taken exit)."""
    # an address depending on the previous data-processing result: +1 stall
    agu = 1 if (prev is not None and prev.cls not in _MEMORY_CLASSES and ins.addr_regs & prev.writes) else 0
    c = ins.cls
    if c in ("vld", "vst"):
        return (3 if ins.dp else 2) + agu, 0           # [M4-FPU] VLDR/VSTR .32 2, .64 3
    if c in ("vldm", "vstm"):
        return 1 + ins.nregs + agu, 0                  # [M4-FPU] VLDM/VSTM/VPUSH/VPOP 1+N (words)
    if c == "ld":
        if ins.writes_pc:
            return 2 + agu, _P_LOAD                    # LDR PC: 2+P (blocking)
        if prev is not None and prev.cls == "ld" and not prev.writes_pc and not (ins.addr_regs & prev.writes):
            return 1, 0                                # pipelined after a preceding LDR: 1
        return 2 + agu, 0                              # LDR 2
    if c == "st":
        if prev is not None and prev.cls in ("st", "strd", "stm"):
            return 2, 0                                # nothing pipelines after a store
        if ins.reg_offset:
            return 2 + agu, 0                          # STR [Rn,Rm]: 2
        if prev is not None and prev.cls == "ld":
            return 1, 0                                # STR pipelined after LDR
        return 1 + agu, 0                              # STR [Rn,#imm]: 1 (data phase overlaps)
    if c in ("ldrd", "strd"):
        return 1 + 2 + agu, 0                          # LDRD/STRD 1+N, N=2
    return 1 + ins.nregs + agu, (_P_LOAD if ins.writes_pc else 0)   # LDM/STM/PUSH/POP 1+N, +P with PC


def _m4_other(ins: Insn, prev: Optional[Insn], nxt: Optional[Insn], read: CodeReader,
              div_cycles: int) -> tuple[int, int]:
    """[M4] Table 3-1 cost of a non-memory instruction, (cycles, extra when taken)."""
    c = ins.cls
    if c == "fp":
        consumed = ins.fp in _FP_RESULT_KINDS and _fp_consumed(ins, nxt)
        return _M4_FP_CYCLES[ins.fp] + (1 if consumed else 0), 0   # [M4-FPU] result used next: +1
    if c in ("mul", "mac"):
        return 1, 0                                    # MUL/MLA/MLS/SMULL/SMLAL/SMLAD...: 1
    if c == "div":
        return div_cycles, 0                           # SDIV/UDIV 2..12 (early termination): middle
    if c == "b":
        return 1, (_direct_refill(ins, read) if nxt is None else 0)   # B/BL/CBZ: 1 (+P when taken)
    if c == "bx":
        return 1, _P_INDIRECT                          # BX/BLX: 1+P
    if c == "tb":
        return 3, _P_LOAD                              # TBB/TBH: load + add, then 3-cycle refill
    if c == "it":
        # [M3/M4] IT folds onto a preceding 16-bit instruction: 0 cycles, else 1
        return (0 if (prev is not None and prev.size == 2) else 1), 0
    if c == "barrier":
        return 1 + (_P_INDIRECT if ins.name == "isb" else 0), 0   # DMB/DSB 1+B (B>=0); ISB 1+P
    return 1, (_P_INDIRECT if ins.writes_pc else 0)   # data processing 1; MOV/ADD PC: 1+P


def _cost_m4(insns: list[Insn], read: CodeReader, div_cycles: int = 7) -> tuple[int, int]:
    cyc = extra = 0
    prev: Optional[Insn] = None
    for k, ins in enumerate(insns):
        nxt = insns[k + 1] if k + 1 < len(insns) else None
        if ins.cls in _MEMORY_CLASSES:
            cycles, taken = _m4_load_store(ins, prev)
        else:
            cycles, taken = _m4_other(ins, prev, nxt, read, div_cycles)
        cyc += cycles
        if nxt is None:
            extra = taken
        prev = ins
    return cyc, extra


def _cost_m33(insns: list[Insn], read: CodeReader) -> tuple[int, int]:
    return _cost_m4(insns, read, div_cycles=6)


# ------------------------------------------------------------------------------------------
# Cortex-M7
# ------------------------------------------------------------------------------------------

_M7_SOLO = {"div", "ldm", "stm", "barrier", "tb", "it", "vldm", "vstm"}    # never dual-issued


def _m7_single_issue(ins: Insn) -> tuple[int, int]:
    """[M7] single-issue cost of one instruction, (cycles, extra when it is the taken exit)."""
    c = ins.cls
    if c in ("ldm", "stm"):
        return 1 + (ins.nregs + 1) // 2, (3 if ins.writes_pc else 0)   # 64-bit data path: two registers per beat
    if c == "div":
        return 7, 0
    if c in ("vldm", "vstm"):
        return 1 + (ins.nregs + 1) // 2, 0             # [M7-FPU] 64-bit data path: two words per beat
    if c == "fp" and ins.fp == "div":
        return (30 if ins.dp else 16), 0               # [M7-FPU] VDIV/VSQRT, charged as blocking
    if c == "ld" and ins.writes_pc:
        return 1, 3
    if c == "b":
        return 1, 1                                    # predicted taken branch: 1 fetch bubble
    if c in ("bx", "tb"):
        return 1 + (1 if c == "tb" else 0), 3          # indirect: not predicted early
    if c == "it":
        return 0, 0                                    # folded
    if c == "barrier":
        return 2, 0
    return 1, (3 if ins.writes_pc else 0)


def _m7_result_wait(insns: list[Insn], k: int) -> int:
    """Cycles the instructions after insns[k] wait for its result."""
    ins, n = insns[k], len(insns)
    c = ins.cls
    # load-to-use / multiply-to-use latency 2: +1 when the next instruction needs the result
    if c in ("ld", "ldrd", "mul", "mac", "vld") and k + 1 < n and insns[k + 1].reads & ins.writes - {PC, SP}:
        return 1
    if c == "fp" and ins.fp in ("arith", "mac", "mov1", "mov2"):
        # [M7-FPU] result latency L: the next instruction waits L-1, the one after L-2
        if ins.fp == "arith":
            lat = (7 if ins.name in ("vmul", "vnmul") else 4) if ins.dp else 3
        elif ins.fp == "mac":
            lat = 11 if ins.dp else 6
        else:
            lat = 2                                    # VMOV to/from core registers: like a load
        if k + 1 < n and _fp_consumed(ins, insns[k + 1]):
            return lat - 1
        if k + 2 < n and _fp_consumed(ins, insns[k + 2]):
            return max(0, lat - 2)
    return 0


def _m7_pairs(a: Insn, b: Insn) -> bool:
    """[M7] a and the next instruction b issue together (both single-cycle)."""
    return (a.cls not in _M7_SOLO and b.cls not in _M7_SOLO and not a.writes_pc
            and not (a.cls in _MEMORY_CLASSES and b.cls in _MEMORY_CLASSES)
            and not (a.cls in ("mul", "mac") and b.cls in ("mul", "mac"))
            and not (a.cls == "fp" and b.cls == "fp")   # [M7-FPU] one FP issue per cycle
            and not (b.reads & a.writes - {PC}))


def _cost_m7(insns: list[Insn], read: CodeReader) -> tuple[int, int]:
    """Single-issue cost per instruction (plus result waits), then greedy dual issue."""
    costs = []
    extra = 0
    n = len(insns)
    for k, ins in enumerate(insns):
        cost, taken = _m7_single_issue(ins)
        if k == n - 1:
            extra = taken
        costs.append(cost + _m7_result_wait(insns, k))
    cyc = 0
    k = 0
    while k < n:
        if k + 1 < n and costs[k] == 1 and costs[k + 1] == 1 and _m7_pairs(insns[k], insns[k + 1]):
            cyc += 1                                   # dual issue
            k += 2
            continue
        cyc += costs[k]
        k += 1
    return cyc, extra


CORE_MODELS = {
    "cortex-m0plus": _cost_m0plus,
    "cortex-m4": _cost_m4,
    "cortex-m7": _cost_m7,
    "cortex-m33": _cost_m33,
}


# 32-bit words one load instruction of a class reads; LDM / VLD / VLDM: their register count
LOAD_WORDS = {"ld": 1, "ldrd": 2}


def block_cost(core: str, addr: int, size: int, read: CodeReader) -> BlockCost:
    """The static cost of the translation block of `size` bytes at `addr` on `core`."""
    code = read(addr, size)
    insns = decode(code, addr)
    decoded = sum(i.size for i in insns)
    n = len(insns)
    if decoded < size:      # undecodable tail (should not happen for executed code): 1 each
        n += (size - decoded) // 2
    cyc, extra = CORE_MODELS[core](insns, read)
    cyc += (size - decoded) // 2
    loads = sum(LOAD_WORDS.get(i.cls, 0) or (i.nregs if i.cls in ("ldm", "vld", "vldm") else 0)
                for i in insns)
    return BlockCost(addr, size, n, cyc, extra, insns[-1].cls if insns else "?", loads)

