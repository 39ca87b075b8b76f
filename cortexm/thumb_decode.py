"""Thumb / Thumb-2 / VFP instructions as the cycle model sees them (capstone, M-profile).

`decode` turns a block's bytes into `Insn` records: a timing class (load, store, multiply,
branch, VFP data processing, ...), the registers read and written (D0-D15 expanded to the S
registers they overlay, so a dependency through an alias is seen), the address registers of a
memory operand, the registers an LDM/STM/PUSH/POP transfers and a direct branch's target. The
core timing models (core_timing.py) price a block from these records alone.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import capstone
from capstone import arm as csarm

R = csarm
PC, SP = R.ARM_REG_PC, R.ARM_REG_SP

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
_S_BY_NUM = {k: r for r, k in _S_REGS.items()}
# capstone's VFP names that do not start with "v": fconsts/fconstd (VMOV immediate), fmstat (VMRS
# APSR_nzcv, FPSCR), fmdhr/fmdlr/fmrdh/fmrdl (VMOV.32 between a core register and half a D)
_VFP_OTHER = ("fconst", "fmstat", "fmdhr", "fmdlr", "fmrdh", "fmrdl")
_VMOV_HALF_D = _VFP_OTHER[2:]

# The kind of a VFP data-processing instruction (cls "fp"); VMOV and its half-D forms are
# kinded by how many core registers they move (see _fp_kind).
_FP_KIND = {**{n: "simple" for n in _FP_SIMPLE}, **{n: "sys" for n in _FP_SYS}, **{n: "cmp" for n in _FP_CMP},
            **{n: "div" for n in _FP_DIV}, **{n: "mac" for n in _FP_MAC}, **{n: "arith" for n in _FP_ARITH}}

# Core (non-VFP) classes with a fixed register count: (names, cls, nregs), first match wins.
_CORE_CLASSES = ((_LD, "ld", 1), (_ST, "st", 1), (_MUL, "mul", 0), (_MAC, "mac", 0), (_DIV, "div", 0),
                 (_BDIRECT, "b", 0), (_BREG, "bx", 0), (_TB, "tb", 0), ({"it"}, "it", 0),
                 (_BARRIER, "barrier", 0))
_CORE_CLASS: dict = {}
for _names, _cls, _nregs in _CORE_CLASSES:
    for _name in _names:
        _CORE_CLASS.setdefault(_name, (_cls, _nregs))
_CORE_CLASS.update(ldrd=("ldrd", 2), strd=("strd", 2))
_BRANCH_CLASSES = ("b", "bx", "tb")          # classes that always write the PC
_BASE_IN_FIRST_OPERAND = ("ldm", "stm", "vldm", "vstm")   # ... except PUSH / POP / VPUSH / VPOP


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


def is_vfp(name: str) -> bool:
    """A VFP instruction by its capstone name."""
    return name[:1] == "v" or name.startswith(_VFP_OTHER)


def is_32bit_halfword(hw: int) -> bool:
    """The first halfword of a 32-bit Thumb-2 encoding."""
    return (hw >> 11) in (0b11101, 0b11110, 0b11111)


def has_fp_instruction(code: bytes) -> bool:
    """Whether Thumb code holds an FP instruction (coprocessor 10 / 11: VFP loads, stores, data
    processing, VMOV, VMRS / VMSR), walked from its first halfword without capstone: the
    encodings 111x 11xx xxxx xxxx : xxxx 101x xxxx xxxx (Armv7-M ARM A6.3 / A7.9)."""
    i, n = 0, len(code) - 1
    while i < n:
        hw = code[i] | code[i + 1] << 8
        if not is_32bit_halfword(hw):
            i += 2
            continue
        if i + 3 < len(code) and hw & 0xEC00 == 0xEC00 and code[i + 3] & 0x0E == 0x0A:
            return True
        i += 4
    return False


def fp_alias(regs) -> frozenset:
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


def disassembler(detail: bool) -> capstone.Cs:
    """A capstone disassembler for M-profile Thumb code (`detail`: with operands and registers)."""
    md = capstone.Cs(capstone.CS_ARCH_ARM, capstone.CS_MODE_THUMB | capstone.CS_MODE_MCLASS)
    md.detail = detail
    return md


# With operand details; the static alignment analysis and the fault reports use it too.
DISASSEMBLER = disassembler(detail=True)


@dataclass
class _Operands:
    """What the cycle model needs from an instruction's operand list."""
    addr_regs: set
    reg_offset: bool
    regs_in_list: int         # register operands (an LDM/STM's base and list)
    target: Optional[int]

    @classmethod
    def of(cls, insn, name: str) -> "_Operands":
        found = cls(set(), False, 0, None)
        for op in insn.operands:
            if op.type == R.ARM_OP_MEM:
                if op.mem.base:
                    found.addr_regs.add(op.mem.base)
                if op.mem.index:
                    found.addr_regs.add(op.mem.index)
                    found.reg_offset = True
            elif op.type == R.ARM_OP_REG:
                found.regs_in_list += 1
            elif op.type == R.ARM_OP_IMM and name in _BDIRECT:
                found.target = op.imm & 0xFFFFFFFF
        return found


@dataclass(frozen=True)
class _VfpRegisters:
    """A VFP instruction's register operands: all, the FP ones, double precision, 32-bit words."""
    regs: tuple = ()
    fregs: tuple = ()
    dp: bool = False
    words: int = 0

    @classmethod
    def of(cls, insn) -> "_VfpRegisters":
        regs = tuple(op.reg for op in insn.operands if op.type == R.ARM_OP_REG)
        fregs = tuple(r for r in regs if r in _FP_REGS)
        return cls(regs, fregs, any(r in _D_REGS for r in fregs), sum(2 if r in _D_REGS else 1 for r in fregs))


def _fp_kind(name: str, vfp: _VfpRegisters) -> str:
    kind = _FP_KIND.get(name)
    if kind is not None:
        return kind
    # VMOV: core <-> FP transfers by the number of core registers involved
    ncore = len(vfp.regs) - len(vfp.fregs)
    return "mov2" if ncore >= 2 else ("mov1" if ncore == 1 else "simple")


def _vfp_class(name: str, vfp: _VfpRegisters) -> Optional[tuple[str, int, str]]:
    """(cls, nregs, fp kind) of a VFP load / store / data-processing instruction, else None."""
    if name in _VLD or name in _VST:
        return ("vld" if name in _VLD else "vst"), (2 if vfp.dp else 1), ""
    if name in _VLDM or name in _VSTM:
        return ("vldm" if name in _VLDM else "vstm"), max(vfp.words, 1), ""
    if name in _FP_KIND or name == "vmov" or name.startswith(_VMOV_HALF_D):
        return "fp", 0, _fp_kind(name, vfp)
    return None


def _core_class(name: str, regs_in_list: int) -> tuple[str, int, str]:
    """(cls, nregs, "") of a core instruction; LDM/STM transfer their list (less the base)."""
    if name in _LDM or name in _STM:
        nregs = regs_in_list if name in ("push", "pop") else max(regs_in_list - 1, 1)
        return ("ldm" if name in _LDM else "stm"), nregs, ""
    cls, nregs = _CORE_CLASS.get(name, ("alu", 0))
    return cls, nregs, ""


def _decode_one(i) -> Insn:
    name = (DISASSEMBLER.insn_name(i.id) or i.mnemonic.split(".")[0]).lower()
    try:
        rd, wr = i.regs_access()
    except capstone.CsError:
        rd, wr = (), ()
    reads, writes = frozenset(rd), frozenset(wr)
    vfp = _VfpRegisters()
    if is_vfp(name):
        reads, writes = fp_alias(reads), fp_alias(writes)
        vfp = _VfpRegisters.of(i)
    ops = _Operands.of(i, name)
    cls, nregs, fp_kind = _vfp_class(name, vfp) or _core_class(name, ops.regs_in_list)
    if cls in _BASE_IN_FIRST_OPERAND and name not in ("push", "pop", "vpush", "vpop") and i.operands:
        ops.addr_regs.add(i.operands[0].reg)
    mul_srcs = fp_alias(vfp.regs[1:3]) if fp_kind == "mac" else frozenset()
    return Insn(i.address, i.size, name, cls, nregs, PC in writes or cls in _BRANCH_CLASSES, reads, writes,
                frozenset(ops.addr_regs), ops.reg_offset, ops.target, fp_kind, vfp.dp,
                vfp.regs[0] if vfp.regs else None, mul_srcs)


def decode(code: bytes, addr: int) -> list[Insn]:
    """The instructions of `code` placed at `addr`, up to the first undecodable bytes."""
    return [_decode_one(i) for i in DISASSEMBLER.disasm(code, addr)]
