"""Per-core cycle model for the virtual MCU.

cycles(call) = Σ_blocks count × static cost of the block            (core pipeline, below)
             + Σ_taken-edges count × refill cost of the branch        (from the block-edge counts)
             + instruction-fetch stalls from flash                    (MemorySystem, wait states)
             + data-load stalls from flash (weights, literal pools)   (native memory hook counts)

The static cost of a translation block is computed once from a capstone disassembly and cached
per (ELF, core). The block hook counts *edges* (previous block -> block), so a conditional branch
is charged as taken exactly when the next block executed is not the fall-through one.

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

import capstone
from capstone import arm as csarm

R = csarm
PC, SP, LR = R.ARM_REG_PC, R.ARM_REG_SP, R.ARM_REG_LR

_MUL = {"mul", "muls", "smull", "umull", "smulbb", "smulbt", "smultb", "smultt", "smulwb", "smulwt",
        "smmul", "smmulr", "smuad", "smuadx", "smusd", "smusdx"}
_MAC = {"mla", "mls", "smlal", "umlal", "umaal", "smlad", "smladx", "smlsd", "smlsdx", "smlabb",
        "smlabt", "smlatb", "smlatt", "smlawb", "smlawt", "smmla", "smmlar", "smmls", "smmlsr",
        "smlald", "smlaldx", "smlsld", "smlsldx", "smlalbb", "smlalbt", "smlaltb", "smlaltt", "usada8"}
_DIV = {"sdiv", "udiv"}
_LD = {"ldr", "ldrb", "ldrh", "ldrsb", "ldrsh", "ldrt", "ldrbt", "ldrht", "ldrsbt", "ldrsht",
       "ldrex", "ldrexb", "ldrexh", "lda", "ldab", "ldah", "ldaex", "ldaexb", "ldaexh"}
_ST = {"str", "strb", "strh", "strt", "strbt", "strht", "strex", "strexb", "strexh", "stl", "stlb",
       "stlh", "stlex", "stlexb", "stlexh"}
_LDM = {"ldm", "ldmdb", "ldmia", "pop"}
_STM = {"stm", "stmdb", "stmia", "push"}
_BDIRECT = {"b", "bl", "cbz", "cbnz"}
_BREG = {"bx", "blx", "bxns", "blxns"}
_TB = {"tbb", "tbh"}
_BARRIER = {"dmb", "dsb", "isb"}
# VFP (capstone instruction names; conditions are not part of the name)
_VLD = {"vldr"}
_VST = {"vstr"}
_VLDM = {"vldmia", "vldmdb", "vldm", "vpop"}
_VSTM = {"vstmia", "vstmdb", "vstm", "vpush"}
_FP_ARITH = {"vadd", "vsub", "vmul", "vnmul", "vcvt", "vcvtr", "vcvta", "vcvtn", "vcvtp", "vcvtm",
             "vcvtb", "vcvtt", "vrintr", "vrintz", "vrintx", "vrinta", "vrintn", "vrintp", "vrintm"}
_FP_SIMPLE = {"vabs", "vneg", "vseleq", "vselge", "vselgt", "vselvs", "vmaxnm", "vminnm", "fconsts",
              "fconstd"}
_FP_CMP = {"vcmp", "vcmpe"}
_FP_MAC = {"vmla", "vmls", "vnmla", "vnmls", "vfma", "vfms", "vfnma", "vfnms"}
_FP_DIV = {"vdiv", "vsqrt"}
_FP_SYS = {"vmrs", "vmsr", "fmstat"}
_S_REGS = {getattr(R, f"ARM_REG_S{k}"): k for k in range(32)}
_D_REGS = {getattr(R, f"ARM_REG_D{k}"): k for k in range(32)}
_FP_REGS = set(_S_REGS) | set(_D_REGS)


def _fp_alias(regs) -> frozenset:
    """Registers with D0-D15 expanded to the two S registers they overlay (D0 = S0:S1), so a
    dependency through an alias (VLDR d0 then VMOV r0, s1) is seen."""
    out = set()
    for r in regs:
        d = _D_REGS.get(r)
        if d is not None and d < 16:
            out.add(_S_BY_NUM[2 * d])
            out.add(_S_BY_NUM[2 * d + 1])
        else:
            out.add(r)
    return frozenset(out)


_S_BY_NUM = {k: r for r, k in _S_REGS.items()}
# capstone's VFP names that do not start with "v": fconsts/fconstd (VMOV immediate), fmstat (VMRS
# APSR_nzcv, FPSCR), fmdhr/fmdlr/fmrdh/fmrdl (VMOV.32 between a core register and half a D)
_VFP_OTHER = ("fconst", "fmstat", "fmdhr", "fmdlr", "fmrdh", "fmrdl")


def _is_vfp(name: str) -> bool:
    return name[:1] == "v" or name.startswith(_VFP_OTHER)


@dataclass
class Insn:
    addr: int
    size: int
    name: str                 # base mnemonic (no condition, no .w)
    cls: str                  # alu mul mac div ld st ldrd strd ldm stm b bx tb it barrier,
                              # fp vld vst vldm vstm (VFP)
    nregs: int                # registers transferred (LDM/STM/PUSH/POP), 32-bit words (VFP
                              # loads/stores), else 0/2
    writes_pc: bool
    reads: frozenset
    writes: frozenset
    addr_regs: frozenset      # base/index registers of a memory operand
    reg_offset: bool          # memory operand with an index register
    target: Optional[int]     # direct branch target
    fp: str = ""              # VFP data processing (cls "fp"): arith simple cmp mac div mov1 mov2 sys
    dp: bool = False          # VFP: double precision operands (D registers)
    dest: Optional[int] = None   # VFP: destination register (the addend of a multiply-accumulate)
    mul_srcs: frozenset = frozenset()   # VFP multiply-accumulate: the two multiplicand registers


@dataclass
class BlockCost:
    addr: int
    size: int
    n_insns: int
    cycles: int               # core cycles, control transfer at the end not taken
    taken_extra: int          # extra cycles when the block is left by a taken control transfer
    last: str                 # class of the last instruction


def _disassembler() -> capstone.Cs:
    md = capstone.Cs(capstone.CS_ARCH_ARM, capstone.CS_MODE_THUMB | capstone.CS_MODE_MCLASS)
    md.detail = True
    return md


_MD = _disassembler()


def decode(code: bytes, addr: int) -> list[Insn]:
    out = []
    for i in _MD.disasm(code, addr):
        name = _MD.insn_name(i.id) or i.mnemonic.split(".")[0]
        name = name.lower()
        try:
            rd, wr = i.regs_access()
        except capstone.CsError:
            rd, wr = (), ()
        reads, writes = frozenset(rd), frozenset(wr)
        if _is_vfp(name):
            reads, writes = _fp_alias(reads), _fp_alias(writes)
        addr_regs = set()
        reg_offset = False
        regs_in_list = 0
        target = None
        for op in i.operands:
            if op.type == R.ARM_OP_MEM:
                if op.mem.base:
                    addr_regs.add(op.mem.base)
                if op.mem.index:
                    addr_regs.add(op.mem.index)
                    reg_offset = True
            elif op.type == R.ARM_OP_REG:
                regs_in_list += 1
            elif op.type == R.ARM_OP_IMM and name in _BDIRECT:
                target = op.imm & 0xFFFFFFFF
        writes_pc = PC in writes
        fp_kind, dp, dest = "", False, None
        regs, fregs, words, mul_srcs = [], [], 0, frozenset()
        if _is_vfp(name):
            regs = [op.reg for op in i.operands if op.type == R.ARM_OP_REG]
            fregs = [r for r in regs if r in _FP_REGS]
            dp = any(r in _D_REGS for r in fregs)
            words = sum(2 if r in _D_REGS else 1 for r in fregs)
            dest = regs[0] if regs else None
        if name in _VLD or name in _VST:
            cls, nregs = ("vld" if name in _VLD else "vst"), (2 if dp else 1)
        elif name in _VLDM or name in _VSTM:
            cls, nregs = ("vldm" if name in _VLDM else "vstm"), max(words, 1)
            if name not in ("vpush", "vpop") and i.operands:
                addr_regs.add(i.operands[0].reg)
        elif name in _FP_ARITH or name in _FP_SIMPLE or name in _FP_CMP or name in _FP_MAC \
                or name in _FP_DIV or name in _FP_SYS or name == "vmov" or name.startswith(_VFP_OTHER[2:]):
            cls, nregs = "fp", 0
            if name in _FP_ARITH:
                fp_kind = "arith"
            elif name in _FP_MAC:
                fp_kind = "mac"
                mul_srcs = _fp_alias(regs[1:3])
            elif name in _FP_DIV:
                fp_kind = "div"
            elif name in _FP_CMP:
                fp_kind = "cmp"
            elif name in _FP_SYS:
                fp_kind = "sys"
            elif name == "vmov" or name.startswith(_VFP_OTHER[2:]):
                # VMOV: core <-> FP transfers by the number of core registers involved
                ncore = len(regs) - len(fregs)
                fp_kind = "mov2" if ncore >= 2 else ("mov1" if ncore == 1 else "simple")
            else:
                fp_kind = "simple"
        elif name in _LDM or name in _STM:
            cls = "ldm" if name in _LDM else "stm"
            nregs = regs_in_list if name in ("push", "pop") else max(regs_in_list - 1, 1)
            if name not in ("push", "pop") and i.operands:
                addr_regs.add(i.operands[0].reg)
        elif name == "ldrd":
            cls, nregs = "ldrd", 2
        elif name == "strd":
            cls, nregs = "strd", 2
        elif name in _LD:
            cls, nregs = "ld", 1
        elif name in _ST:
            cls, nregs = "st", 1
        elif name in _MUL:
            cls, nregs = "mul", 0
        elif name in _MAC:
            cls, nregs = "mac", 0
        elif name in _DIV:
            cls, nregs = "div", 0
        elif name in _BDIRECT:
            cls, nregs = "b", 0
            writes_pc = True
        elif name in _BREG:
            cls, nregs = "bx", 0
            writes_pc = True
        elif name in _TB:
            cls, nregs = "tb", 0
            writes_pc = True
        elif name == "it":
            cls, nregs = "it", 0
        elif name in _BARRIER:
            cls, nregs = "barrier", 0
        else:
            cls, nregs = "alu", 0
        out.append(Insn(i.address, i.size, name, cls, nregs, writes_pc, reads, writes,
                        frozenset(addr_regs), reg_offset, target, fp_kind, dp, dest, mul_srcs))
    return out


def _is_32bit_halfword(hw: int) -> bool:
    return (hw >> 11) in (0b11101, 0b11110, 0b11111)


# ------------------------------------------------------------------------------------------
# core models
# ------------------------------------------------------------------------------------------

def _cost_m0plus(insns: list[Insn], read: Callable[[int, int], bytes]) -> tuple[int, int]:
    """[M0+] TRM 3.3: 2-stage pipeline; costs below are the table's, split into
    (not-taken part, extra when taken)."""
    cyc = 0
    extra = 0
    for k, ins in enumerate(insns):
        last = k == len(insns) - 1
        c = ins.cls
        if c in ("ld", "st"):
            cyc += 2                                   # LDR*/STR* 2
        elif c in ("ldm", "stm"):
            cyc += 1 + ins.nregs                       # LDM/STM/PUSH/POP 1+N
            if ins.writes_pc and last:
                extra = 2                              # POP {..,PC} 3+N
        elif c == "b":
            if ins.name == "bl":
                cyc += 2
                extra = 1 if last else 0               # BL 3 (32-bit; always taken)
            else:
                cyc += 1
                extra = 1 if last else 0               # B 2; B<cond> 2 taken / 1 not taken
        elif c == "bx":
            cyc += 1
            extra = 1 if last else 0                   # BX/BLX 2
        elif c in ("mul", "mac"):
            cyc += 1                                   # MULS 1 (fast multiplier configuration)
        elif c == "barrier":
            cyc += 3                                   # DMB/DSB/ISB 3
        else:
            cyc += 1                                   # data processing 1
            if ins.writes_pc and last:
                extra = 1                              # ADD/MOV PC 2
    return cyc, extra


def _direct_refill(ins: Insn, read: Callable[[int, int], bytes]) -> int:
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
    return 2 if (ins.target & 2) and _is_32bit_halfword(hw) else 1


# [M4-FPU] Table 7-1 issue cycles of the VFP data-processing kinds (see decode)
_M4_FP_CYCLES = {"arith": 1, "simple": 1, "cmp": 1, "mac": 3, "div": 14, "mov1": 1, "mov2": 2, "sys": 1}
_FP_RESULT_KINDS = ("arith", "mac", "div")


def _fp_consumed(ins: Insn, nxt: Optional[Insn]) -> bool:
    """The FP arithmetic result of `ins` is read by `nxt` (other than as the addend of a
    multiply-accumulate, which [M4-FPU] reads a cycle later)."""
    if nxt is None:
        return False
    if nxt.cls == "fp" and nxt.fp == "mac":
        return bool(nxt.mul_srcs & ins.writes)
    return bool(nxt.reads & ins.writes)


def _cost_m4(insns: list[Insn], read: Callable[[int, int], bytes], div_cycles: int = 7) -> tuple[int, int]:
    cyc = 0
    extra = 0
    prev: Optional[Insn] = None
    P_INDIRECT = 2      # BX/BLX/MOV PC: target known only in execute (not speculated early)
    P_LOAD = 3          # [M4] 3.3.2: LDR PC / POP PC / TBB: blocking, 3-cycle pipeline reload
    for k, ins in enumerate(insns):
        last = k == len(insns) - 1
        c = ins.cls
        if c in ("ld", "st", "ldrd", "strd", "ldm", "stm", "vld", "vst", "vldm", "vstm"):
            # [M4] 3.3.2: address depending on the previous data-processing result: +1 stall
            agu = 1 if (prev is not None and prev.cls not in ("ld", "ldrd", "ldm", "st", "strd", "stm",
                                                              "vld", "vst", "vldm", "vstm")
                        and ins.addr_regs & prev.writes) else 0
            if c in ("vld", "vst"):
                cyc += (3 if ins.dp else 2) + agu      # [M4-FPU] VLDR/VSTR .32 2, .64 3
            elif c in ("vldm", "vstm"):
                cyc += 1 + ins.nregs + agu             # [M4-FPU] VLDM/VSTM/VPUSH/VPOP 1+N (words)
            elif c == "ld":
                if ins.writes_pc:
                    cyc += 2 + agu
                    extra = P_LOAD if last else 0      # LDR PC: 2+P (blocking)
                elif (prev is not None and prev.cls == "ld" and not prev.writes_pc
                      and not (ins.addr_regs & prev.writes)):
                    cyc += 1                           # pipelined after a preceding LDR: 1
                else:
                    cyc += 2 + agu                     # LDR 2
            elif c == "st":
                if prev is not None and prev.cls in ("st", "strd", "stm"):
                    cyc += 2                           # nothing pipelines after a store
                elif ins.reg_offset:
                    cyc += 2 + agu                     # STR [Rn,Rm]: 2
                elif prev is not None and prev.cls == "ld":
                    cyc += 1                           # STR pipelined after LDR
                else:
                    cyc += 1 + agu                     # STR [Rn,#imm]: 1 (data phase overlaps)
            elif c in ("ldrd", "strd"):
                cyc += 1 + 2 + agu                     # LDRD/STRD 1+N, N=2
            else:
                cyc += 1 + ins.nregs + agu             # LDM/STM/PUSH/POP 1+N
                if ins.writes_pc and last:
                    extra = P_LOAD                     # ... +P with PC in the list
        elif c == "fp":
            cyc += _M4_FP_CYCLES[ins.fp]               # [M4-FPU] Table 7-1
            if ins.fp in _FP_RESULT_KINDS and _fp_consumed(ins, insns[k + 1] if not last else None):
                cyc += 1                               # [M4-FPU] result used by the next insn: +1
        elif c in ("mul", "mac"):
            cyc += 1                                   # MUL/MLA/MLS/SMULL/SMLAL/SMLAD...: 1
        elif c == "div":
            cyc += div_cycles                          # SDIV/UDIV 2..12 (early termination): middle
        elif c == "b":
            cyc += 1                                   # B/BL/CBZ: 1 (+P when taken)
            if last:
                extra = _direct_refill(ins, read)
        elif c == "bx":
            cyc += 1                                   # BX/BLX: 1+P
            if last:
                extra = P_INDIRECT
        elif c == "tb":
            cyc += 3                                   # TBB/TBH: load + add, then 3-cycle refill
            if last:
                extra = P_LOAD
        elif c == "it":
            # [M3/M4] IT folds onto a preceding 16-bit instruction: 0 cycles, else 1
            cyc += 0 if (prev is not None and prev.size == 2) else 1
        elif c == "barrier":
            cyc += 1 + (P_INDIRECT if ins.name == "isb" else 0)   # DMB/DSB 1+B (B>=0); ISB 1+P
        else:
            cyc += 1                                   # data processing 1
            if ins.writes_pc and last:
                extra = P_INDIRECT                     # MOV/ADD PC: 1+P
        prev = ins
    return cyc, extra


def _cost_m33(insns, read):
    return _cost_m4(insns, read, div_cycles=6)


def _cost_m7(insns: list[Insn], read: Callable[[int, int], bytes]) -> tuple[int, int]:
    # single-issue cost per instruction, then greedy dual issue
    costs = []
    extra = 0
    n = len(insns)
    for k, ins in enumerate(insns):
        last = k == n - 1
        c = ins.cls
        if c in ("ldm", "stm"):
            cost = 1 + (ins.nregs + 1) // 2            # 64-bit data path: two registers per beat
            if ins.writes_pc and last:
                extra = 3
        elif c == "div":
            cost = 7
        elif c in ("vldm", "vstm"):
            cost = 1 + (ins.nregs + 1) // 2            # [M7-FPU] 64-bit data path: two words per beat
        elif c == "fp" and ins.fp == "div":
            cost = 30 if ins.dp else 16                # [M7-FPU] VDIV/VSQRT, charged as blocking
        elif c == "ld" and ins.writes_pc:
            cost = 1
            if last:
                extra = 3
        elif c == "b":
            cost = 1
            if last:
                extra = 1                              # predicted taken branch: 1 fetch bubble
        elif c in ("bx", "tb"):
            cost = 1 + (1 if c == "tb" else 0)
            if last:
                extra = 3                              # indirect: not predicted early
        elif c == "it":
            cost = 0                                   # folded
        elif c == "barrier":
            cost = 2
        else:
            cost = 1
            if ins.writes_pc and last:
                extra = 3
        # load-to-use / multiply-to-use latency 2: +1 when the next instruction needs the result
        if c in ("ld", "ldrd", "mul", "mac", "vld") and k + 1 < n and insns[k + 1].reads & ins.writes - {PC, SP}:
            cost += 1
        elif c == "fp" and ins.fp in ("arith", "mac", "mov1", "mov2"):
            # [M7-FPU] result latency L: the next instruction waits L-1, the one after L-2
            if ins.fp == "arith":
                lat = (7 if ins.name in ("vmul", "vnmul") else 4) if ins.dp else 3
            elif ins.fp == "mac":
                lat = 11 if ins.dp else 6
            else:
                lat = 2                                # VMOV to/from core registers: like a load
            if k + 1 < n and _fp_consumed(ins, insns[k + 1]):
                cost += lat - 1
            elif k + 2 < n and _fp_consumed(ins, insns[k + 2]):
                cost += max(0, lat - 2)
        costs.append(cost)
    cyc = 0
    k = 0
    mem = {"ld", "st", "ldrd", "strd", "ldm", "stm", "vld", "vst", "vldm", "vstm"}
    solo = {"div", "ldm", "stm", "barrier", "tb", "it", "vldm", "vstm"}
    while k < n:
        a = insns[k]
        if k + 1 < n and costs[k] == 1 and costs[k + 1] == 1:
            b = insns[k + 1]
            if (a.cls not in solo and b.cls not in solo and not a.writes_pc
                    and not (a.cls in mem and b.cls in mem)
                    and not (a.cls in ("mul", "mac") and b.cls in ("mul", "mac"))
                    and not (a.cls == "fp" and b.cls == "fp")   # [M7-FPU] one FP issue per cycle
                    and not (b.reads & a.writes - {PC})):
                cyc += 1                               # dual issue
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


def block_cost(core: str, addr: int, size: int, read: Callable[[int, int], bytes]) -> BlockCost:
    code = read(addr, size)
    insns = decode(code, addr)
    decoded = sum(i.size for i in insns)
    n = len(insns)
    if decoded < size:      # undecodable tail (should not happen for executed code): 1 each
        n += (size - decoded) // 2
    cyc, extra = CORE_MODELS[core](insns, read)
    cyc += (size - decoded) // 2
    return BlockCost(addr, size, n, cyc, extra, insns[-1].cls if insns else "?")


# ------------------------------------------------------------------------------------------
# memory system
# ------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class MemorySystem:
    """Flash interface in front of the core. Defaults per core model typical parts:

    - cortex-m0plus: 64-bit flash lines with a prefetch buffer, no cache (STM32G0/L0-like).
    - cortex-m4: ART accelerator of the STM32F4: 128-bit lines, prefetch, 1 KiB instruction cache
      (64 lines), 8-line data cache for constant loads.
    - cortex-m7: L1 caches of STM32F7/H7-class parts: 16 KiB I-cache and 16 KiB D-cache, 32-byte
      lines (cache hits cost nothing, a line fill costs the wait states).
    - cortex-m33: STM32U5/L5-like 8 KiB instruction cache, 16-byte lines, 4 KiB data cache.
    Assumption for all: a line fill costs `wait_states` stall cycles; SRAM has zero wait states.
    """
    wait_states: int = 0
    line_bytes: int = 16
    prefetch: bool = True
    icache_bytes: int = 0
    dcache_lines: int = 1


def default_memory_system(core: str, wait_states: int) -> MemorySystem:
    if core == "cortex-m0plus":
        return MemorySystem(wait_states, 8, True, 0, 1)
    if core == "cortex-m4":
        return MemorySystem(wait_states, 16, True, 1024, 8)
    if core == "cortex-m7":
        return MemorySystem(wait_states, 32, True, 16384, 512)
    if core == "cortex-m33":
        return MemorySystem(wait_states, 16, True, 8192, 256)
    raise ValueError(core)


@dataclass
class CycleBreakdown:
    core: int = 0
    branches: int = 0
    fetch: int = 0
    data_flash: int = 0

    @property
    def total(self) -> int:
        return self.core + self.branches + self.fetch + self.data_flash


def _lines(addr: int, size: int, line: int) -> range:
    return range(addr // line, (addr + max(size, 1) - 1) // line + 1)


def account(edges: dict, costs: dict, last_block: Optional[tuple[int, int]], mem: MemorySystem,
            flash: tuple[int, int], data_flash_misses: int, warm_lines: Optional[set] = None
            ) -> tuple[int, CycleBreakdown, int]:
    """(instructions, cycle breakdown, executed block count) of one call.

    edges: {(prev, prev_size, cur, cur_size): count}; costs: {(addr, size): BlockCost}.
    warm_lines: I-cache content carried over between calls (updated in place)."""
    bd = CycleBreakdown()
    insns = 0
    blocks = 0
    W = mem.wait_states
    L = mem.line_bytes
    flo, fhi = flash
    fetch_exec: dict = {}        # (addr,size) -> (count, taken-entries)
    for (p, ps, c, cs), n in edges.items():
        bc = costs[(c, cs)]
        insns += n * bc.n_insns
        blocks += n
        bd.core += n * bc.cycles
        sequential = (p + ps == c)
        if p and not sequential:
            bd.branches += n * costs[(p, ps)].taken_extra if (p, ps) in costs else 0
        if W and flo <= c < fhi:
            f = fetch_exec.setdefault((c, cs), [0, 0])
            f[0] += n
            # a taken transfer (or the call entry) refetches the target line; a sequential entry
            # continuing in the line the previous block ended in does not
            if not sequential or (p + ps - 1) // L != c // L:
                f[1] += n
    if last_block is not None and last_block in costs:
        bd.branches += costs[last_block].taken_extra        # the final return
    if W:
        if mem.icache_bytes:
            cap = mem.icache_bytes // L
            foot = set()
            for (c, cs) in fetch_exec:
                foot.update(_lines(c, cs, L))
            warm = warm_lines if warm_lines is not None else set()
            cold = len(foot - warm) if len(foot) <= cap else len(foot)
            stalls = cold * W
            if len(foot) > cap:
                # capacity misses: each line fetch hits with probability cap/footprint
                miss = 1.0 - cap / len(foot)
                refs = sum(f[0] * len(_lines(c, cs, L)) for (c, cs), f in fetch_exec.items())
                stalls += int(round(refs * miss * W))
            bd.fetch = stalls
            if warm_lines is not None:
                warm_lines.clear()
                if len(foot) <= cap:
                    warm_lines.update(foot)
        else:
            stalls = 0
            for (c, cs), (n, entries) in fetch_exec.items():
                bc = costs[(c, cs)]
                nl = len(_lines(c, cs, L))
                if mem.prefetch:
                    # the next line is prefetched while this one executes: a sequential line
                    # stalls only for what its execution time does not hide
                    per_line = bc.cycles / nl
                    seq = max(0.0, W + 1 - per_line)
                    stalls += entries * W + (n * nl - entries) * seq
                else:
                    stalls += n * nl * W
            bd.fetch = int(round(stalls))
    bd.data_flash = data_flash_misses * W
    return insns, bd, blocks
