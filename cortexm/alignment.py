"""Classification of unaligned memory accesses by the instruction that made them.

Armv7-M / Armv8-M (Cortex-M4/M7/M33) allow unaligned LDR/STR/LDRH/STRH/LDRSH (when
CCR.UNALIGN_TRP is 0, the reset value) but *always* fault (UsageFault, UNALIGNED) on unaligned
LDRD/STRD, LDM/STM/PUSH/POP and the exclusive accesses (Armv7-M ARM, A3.2.1 "Alignment
behavior"). Armv6-M (Cortex-M0/M0+) faults on every unaligned access (Armv6-M ARM, A3.2.1).

QEMU (hence Unicorn) does not raise those faults on its M4/M7/M33 models, so the virtual MCU
records every unaligned access in a memory hook and classifies it here from the instruction at
the access's PC (decoded with capstone, cached per PC).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import capstone
from capstone import arm as csarm

# instructions whose unaligned use always faults on Armv7-M/Armv8-M
ALWAYS_ALIGNED = {
    "ldrd", "strd", "ldm", "ldmia", "ldmdb", "ldmfd", "ldmea", "stm", "stmia", "stmdb", "stmfd",
    "stmea", "push", "pop", "ldrex", "ldrexb", "ldrexh", "strex", "strexb", "strexh", "lda", "ldah",
    "stl", "stlh", "ldaex", "ldaexh", "stlex", "stlexh", "vldr", "vstr", "vldm", "vstm", "vpush",
    "vpop", "vldmia", "vldmdb", "vstmia", "vstmdb",
}
# ordinary single loads/stores: unaligned is allowed on v7-M/v8-M unless CCR.UNALIGN_TRP=1
SINGLE_LDST = {"ldr", "ldrh", "ldrsh", "str", "strh", "ldrt", "ldrht", "ldrsht", "strt", "strht"}


@dataclass
class AlignmentEvent:
    pc: int
    address: int          # first unaligned address seen at this pc
    size: int             # access size in bytes
    kind: str             # "LDRD", "LDM", "PUSH", ... or "LDR"/"STRH" (strict mode / Armv6-M)
    symbol: str           # function containing pc ("name+0xoff")
    disassembly: str      # e.g. "ldrd r2, r3, [r1]"
    count: int = 1        # how many unaligned accesses this pc made during the call
    fatal: bool = True    # faults on silicon (always for LDRD/LDM..., for every access on M0+ or strict)

    def __str__(self) -> str:
        return (f"unaligned {self.kind} ({self.size} B) at 0x{self.address:08x} by pc 0x{self.pc:08x} "
                f"<{self.symbol}> '{self.disassembly}' x{self.count}")


def _md() -> capstone.Cs:
    md = capstone.Cs(capstone.CS_ARCH_ARM, capstone.CS_MODE_THUMB | capstone.CS_MODE_MCLASS)
    md.detail = False
    return md


_MD = _md()


def base_mnemonic(mnemonic: str, cc: int | None = None) -> str:
    m = mnemonic.lower().split(".")[0]
    if cc is not None and cc not in (csarm.ARM_CC_AL, csarm.ARM_CC_INVALID) and len(m) > 2:
        m = m[:-2]
    return m


_CONDS = ("eq", "ne", "cs", "hs", "cc", "lo", "mi", "pl", "vs", "vc", "hi", "ls", "ge", "lt", "gt", "le")


def _strip_cond(m: str) -> str:
    if m in ALWAYS_ALIGNED or m in SINGLE_LDST:
        return m
    for c in _CONDS:
        if m.endswith(c) and (m[:-2] in ALWAYS_ALIGNED or m[:-2] in SINGLE_LDST):
            return m[:-2]
    return m


def decode_one(code: bytes, pc: int) -> tuple[str, str]:
    """(base mnemonic, full disassembly) of the instruction at pc given its bytes (>= 4)."""
    for insn in _MD.disasm(code, pc, count=1):
        m = _strip_cond(insn.mnemonic.lower().split(".")[0])
        return m, f"{insn.mnemonic} {insn.op_str}".strip()
    return "?", f".inst 0x{int.from_bytes(code[:2], 'little'):04x}"


def classify(mnemonic: str, *, strict: bool, armv6m: bool) -> tuple[bool, bool]:
    """(is_event, fatal_on_silicon) for an unaligned access made by `mnemonic`."""
    if mnemonic in ALWAYS_ALIGNED:
        return True, True
    if armv6m:
        return True, True
    if strict:
        return True, True
    return False, False


@lru_cache(maxsize=None)
def _kind(m: str) -> str:
    for prefix, kind in (("ldm", "LDM"), ("stm", "STM")):
        if m.startswith(prefix):
            return kind
    return m.upper()


def kind_name(mnemonic: str) -> str:
    return _kind(mnemonic)


# ------------------------------------------------------------------------------------------
# Static analysis for the fast alignment check (no memory hook)
# ------------------------------------------------------------------------------------------
# A Unicorn memory hook forces every load/store through the slow path (~10x slower). Instead,
# the instructions that must be aligned (LDRD/STRD/LDM/STM/LDREX*, base register not SP) are
# found statically. For each one, the address it will access is expressed, by a tiny symbolic
# evaluation over the instructions before it in its basic block, as
#     const + Σ coef_i × R_i   (R_i = register values at a block start)
# and checked natively in the block hook when a translation block starts there (reading the
# registers then). Candidates whose address is not such a linear expression (e.g. the base was
# just loaded from memory) get a native code hook on that one instruction instead.

@dataclass
class Check:
    pc: int
    const: int
    terms: tuple                 # ((capstone reg, coef), ...)
    mask: int                    # 3: word alignment, 1: halfword
    size: int                    # bytes transferred
    write: bool


_SKIP_BASES = None


def _regs():
    R = csarm
    return {R.ARM_REG_R0 + i for i in range(13)} | {R.ARM_REG_LR}


def _detail_md() -> capstone.Cs:
    md = capstone.Cs(capstone.CS_ARCH_ARM, capstone.CS_MODE_THUMB | capstone.CS_MODE_MCLASS)
    md.detail = True
    return md


_MDD = _detail_md()
_BRANCHY = {"b", "bl", "bx", "blx", "cbz", "cbnz", "tbb", "tbh", "svc", "bkpt", "udf"}
_CAND = {"ldrd": (3, 8, False), "strd": (3, 8, True), "ldm": (3, 0, False), "ldmdb": (3, 0, False),
         "stm": (3, 0, True), "stmdb": (3, 0, True), "ldrex": (3, 4, False), "strex": (3, 4, True),
         "ldrexh": (1, 2, False), "strexh": (1, 2, True), "ldaex": (3, 4, False), "stlex": (3, 4, True),
         "lda": (3, 4, False), "stl": (3, 4, True), "ldah": (1, 2, False), "stlh": (1, 2, True),
         # VFP loads/stores are word-aligned only (the size is fixed up per instruction)
         "vldr": (3, 4, False), "vstr": (3, 4, True), "vldmia": (3, 0, False), "vldmdb": (3, 0, False),
         "vstmia": (3, 0, True), "vstmdb": (3, 0, True)}
_VLDM_NAMES = ("vldmia", "vldmdb", "vstmia", "vstmdb")


def _vfp_words(insn, ops) -> int:
    """32-bit words transferred by the VFP registers in ops (a D register is two)."""
    return sum(2 if insn.reg_name(op.reg).startswith("d") else 1 for op in ops
               if op.type == csarm.ARM_OP_REG)


def _add(a, b, scale=1):
    if a is None or b is None:
        return None
    c = (a[0] + scale * b[0]) & 0xFFFFFFFF
    t = dict(a[1])
    for r, k in b[1].items():
        t[r] = (t.get(r, 0) + scale * k) & 0xFFFFFFFF
    return (c, {r: k for r, k in t.items() if k})


def _candidate(insn, name):
    """(mask, size, write, base reg, disp, post) or None."""
    info = _CAND.get(name)
    if info is None:
        return None
    mask, size, write = info
    ops = insn.operands
    if name in ("ldm", "ldmdb", "stm", "stmdb"):
        base = ops[0].reg
        n = len(ops) - 1
        disp = -4 * n if name.endswith("db") else 0
        return mask, 4 * n, write, base, disp, False
    if name in _VLDM_NAMES:
        base = ops[0].reg
        n = _vfp_words(insn, ops[1:])
        disp = -4 * n if name.endswith("db") else 0
        return mask, 4 * n, write, base, disp, False
    if name in ("vldr", "vstr"):
        size = 4 * _vfp_words(insn, ops[:1])
    for op in ops:
        if op.type == csarm.ARM_OP_MEM:
            if op.mem.index:
                return None            # no register-offset forms exist for these
            post = bool(getattr(insn, "post_index", False))
            return mask, size, write, op.mem.base, 0 if post else op.mem.disp, post
    return None


def _step(insn, name, st, pc_val):
    """Apply insn to the symbolic state st {reg: expr|None}."""
    R = csarm
    rd, wr = insn.regs_access()
    ops = insn.operands
    cond = insn.cc not in (R.ARM_CC_AL, R.ARM_CC_INVALID)

    def val(op):
        if op.type == R.ARM_OP_IMM:
            return (op.imm & 0xFFFFFFFF, {})
        if op.type == R.ARM_OP_REG:
            if op.reg == R.ARM_REG_PC:
                return (pc_val & 0xFFFFFFFF, {})
            v = st.get(op.reg, (0, {op.reg: 1}))
            if v is None:
                return None
            if op.shift.type == 0 or (op.shift.type == R.ARM_SFT_LSL and op.shift.value == 0):
                return v
            if op.shift.type == R.ARM_SFT_LSL:
                s = 1 << op.shift.value
                return ((v[0] * s) & 0xFFFFFFFF, {r: (k * s) & 0xFFFFFFFF for r, k in v[1].items()})
            return None
        return None

    new = {}
    base_name = name
    if not cond and base_name in ("mov", "movs", "movw") and len(ops) == 2:
        new[ops[0].reg] = val(ops[1])
    elif not cond and base_name in ("add", "adds", "addw", "sub", "subs", "subw") and ops \
            and ops[0].type == R.ARM_OP_REG:
        sign = -1 if base_name.startswith("sub") else 1
        if len(ops) == 2:
            a, b = val(ops[0]), val(ops[1])
        else:
            a, b = val(ops[1]), val(ops[2])
        new[ops[0].reg] = _add(a, b, sign) if a is not None and b is not None else None
    elif not cond and base_name in ("lsl", "lsls") and len(ops) == 3 and ops[2].type == R.ARM_OP_IMM:
        a = val(ops[1])
        s = 1 << ops[2].imm
        new[ops[0].reg] = None if a is None else ((a[0] * s) & 0xFFFFFFFF,
                                                   {r: (k * s) & 0xFFFFFFFF for r, k in a[1].items()})
    # writeback of loads/stores: base += disp (pre) / += offset operand (post) / ± 4N (LDM/STM)
    if insn.writeback and not cond:
        if name in ("ldm", "ldmdb", "stm", "stmdb", "ldmia", "stmia") or name in _VLDM_NAMES:
            n = len(ops) - 1 if name[0] != "v" else _vfp_words(insn, ops[1:])
            b = ops[0].reg
            new[b] = _add(st.get(b, (0, {b: 1})), (((-4 if name.endswith("db") else 4) * n) & 0xFFFFFFFF, {}))
        else:
            mem = [op for op in ops if op.type == R.ARM_OP_MEM]
            if mem:
                b = mem[0].mem.base
                cur = st.get(b, (0, {b: 1}))
                if getattr(insn, "post_index", False):
                    off = ops[-1]
                    v = val(off)
                    new[b] = _add(cur, v, -1 if off.subtracted else 1) if v is not None else None
                else:
                    new[b] = _add(cur, (mem[0].mem.disp & 0xFFFFFFFF, {}))
    for r in wr:
        if r not in new:
            new[r] = None              # written by something we do not model (or a load)
    for r, v in new.items():
        if cond:
            v = None
        st[r] = v


def analyze(code: bytes, base: int, data_ranges=()) -> tuple[dict, dict]:
    """Static alignment checks for a code image.

    Returns (by_start, fallback): by_start {block start pc: [Check]} valid when a translation
    block starts at that pc; fallback {pc: Check} (expression in the registers at pc itself)
    for candidates to check with a code hook."""
    insns = []
    off = 0
    while off < len(code) - 1:
        got = False
        for i in _MDD.disasm(code[off:], base + off):
            insns.append(i)
            off = i.address - base + i.size
            got = True
        if not got or off < len(code) - 1:
            off += 2
    # straight-line regions: split only after control transfers (a translation block never
    # continues past one, but may start anywhere in the region: branch targets, returns, ...)
    leaders = set()
    names = {}
    for k, i in enumerate(insns):
        name = (_MDD.insn_name(i.id) or i.mnemonic).lower()
        names[i.address] = name
        try:
            rd, wr = i.regs_access()
        except capstone.CsError:
            wr = ()
        if name in _BRANCHY or csarm.ARM_REG_PC in wr:
            if k + 1 < len(insns):
                leaders.add(insns[k + 1].address)
    by_start: dict = {}
    fallback: dict = {}
    blocks = []
    cur = []
    for i in insns:
        if cur and (i.address in leaders or cur[-1].address + cur[-1].size != i.address):
            blocks.append(cur)
            cur = []
        cur.append(i)
    if cur:
        blocks.append(cur)
    for blk in blocks:
        for ci, c in enumerate(blk):
            name = names[c.address]
            cand = _candidate(c, name)
            if cand is None:
                continue
            mask, size, write, breg, disp, post = cand
            if breg in (csarm.ARM_REG_SP, csarm.ARM_REG_PC):
                continue                 # SP is always word aligned; literal addresses are static
            checks = []
            for si in range(max(0, ci - 64), ci + 1):
                st: dict = {}
                for j in range(si, ci):
                    _step(blk[j], names[blk[j].address], st, (blk[j].address + 4) & ~3)
                expr = st.get(breg, (0, {breg: 1}))
                if expr is None or len(expr[1]) > 3:
                    checks = None
                    break
                e = _add(expr, (disp & 0xFFFFFFFF, {}))
                checks.append((blk[si].address,
                               Check(c.address, e[0], tuple(sorted(e[1].items())), mask, size, write)))
            if checks is None or ci > 64:
                # not a linear function of the registers at every possible block start: check
                # it with a code hook on this instruction (expression at the pc itself)
                fallback[c.address] = Check(c.address, disp & 0xFFFFFFFF, ((breg, 1),), mask, size, write)
            else:
                for start, chk in checks:
                    by_start.setdefault(start, []).append(chk)
    return by_start, fallback
