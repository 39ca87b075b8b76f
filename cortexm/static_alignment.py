"""Static analysis for the fast alignment check (no memory hook).

A Unicorn memory hook forces every load/store through the slow path (~10x slower). Instead,
the instructions that must be aligned (LDRD/STRD/LDM/STM/LDREX*, base register not SP) are
found statically. For each one, the address it will access is expressed, by a tiny symbolic
evaluation over the instructions before it in its basic block, as
    const + Σ coef_i × R_i   (R_i = register values at a block start)
and checked natively in the block hook when a translation block starts there (reading the
registers then). Candidates whose address is not such a linear expression (e.g. the base was
just loaded from memory) get a native code hook on that one instruction instead.
"""
from __future__ import annotations

import base64
import binascii
import zlib
from array import array
from pathlib import Path
from typing import NamedTuple, Optional, Union

import capstone
from capstone import arm as csarm
from unicorn import arm_const as ua
from unicorn.unicorn_const import UC_MEM_READ, UC_MEM_WRITE

from .elf import ElfImage, load_elf
from .firmware_facts import read_facts, write_facts
from .thumb_decode import DISASSEMBLER

_MASK = 0xFFFFFFFF
# capstone register -> Unicorn register, for the registers a check or a fault report reads
CAPSTONE_TO_UNICORN = {**{getattr(csarm, f"ARM_REG_R{i}"): getattr(ua, f"UC_ARM_REG_R{i}") for i in range(13)},
                       csarm.ARM_REG_SP: ua.UC_ARM_REG_SP, csarm.ARM_REG_LR: ua.UC_ARM_REG_LR,
                       csarm.ARM_REG_PC: ua.UC_ARM_REG_PC}


class Check(NamedTuple):
    """One statically known address check (a tuple: thousands are read at every machine's start)."""
    pc: int
    const: int
    terms: tuple                 # ((register, coef), ...): capstone registers, Unicorn's after static_checks
    mask: int                    # 3: word alignment, 1: halfword
    size: int                    # bytes transferred
    write: bool


_BRANCHY = {"b", "bl", "bx", "blx", "cbz", "cbnz", "tbb", "tbh", "svc", "bkpt", "udf"}
_CAND = {"ldrd": (3, 8, False), "strd": (3, 8, True), "ldm": (3, 0, False), "ldmdb": (3, 0, False),
         "stm": (3, 0, True), "stmdb": (3, 0, True), "ldrex": (3, 4, False), "strex": (3, 4, True),
         "ldrexh": (1, 2, False), "strexh": (1, 2, True), "ldaex": (3, 4, False), "stlex": (3, 4, True),
         "lda": (3, 4, False), "stl": (3, 4, True), "ldah": (1, 2, False), "stlh": (1, 2, True),
         # VFP loads/stores are word-aligned only (the size is fixed up per instruction)
         "vldr": (3, 4, False), "vstr": (3, 4, True), "vldmia": (3, 0, False), "vldmdb": (3, 0, False),
         "vstmia": (3, 0, True), "vstmdb": (3, 0, True)}
_VLDM_NAMES = ("vldmia", "vldmdb", "vstmia", "vstmdb")
_LDM_NAMES = ("ldm", "ldmdb", "stm", "stmdb", "ldmia", "stmia")
_MAX_LOOKBACK = 64           # block starts considered before a candidate


def _vfp_words(insn, ops) -> int:
    """32-bit words transferred by the VFP registers in ops (a D register is two)."""
    return sum(2 if insn.reg_name(op.reg).startswith("d") else 1 for op in ops
               if op.type == csarm.ARM_OP_REG)


def _add(a, b, scale=1):
    if a is None or b is None:
        return None
    c = (a[0] + scale * b[0]) & _MASK
    t = dict(a[1])
    for r, k in b[1].items():
        t[r] = (t.get(r, 0) + scale * k) & _MASK
    return (c, {r: k for r, k in t.items() if k})


def _scaled(expr, factor: int):
    return None if expr is None else ((expr[0] * factor) & _MASK, {r: (k * factor) & _MASK for r, k in expr[1].items()})


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


# ------------------------------------------------------------------------------------------
# symbolic evaluation: {register: expression | None (unknown)}, expression = (const, {reg: coef})
# ------------------------------------------------------------------------------------------

def _value(op, st: dict, pc_val: int):
    """An operand's expression (None when not linear in the block-start registers)."""
    if op.type == csarm.ARM_OP_IMM:
        return (op.imm & _MASK, {})
    if op.type != csarm.ARM_OP_REG:
        return None
    if op.reg == csarm.ARM_REG_PC:
        return (pc_val & _MASK, {})
    v = st.get(op.reg, (0, {op.reg: 1}))
    if v is None:
        return None
    if op.shift.type == 0 or (op.shift.type == csarm.ARM_SFT_LSL and op.shift.value == 0):
        return v
    if op.shift.type == csarm.ARM_SFT_LSL:
        return _scaled(v, 1 << op.shift.value)
    return None


def _data_processing(name: str, ops, val) -> dict:
    """New register expressions of an unconditional MOV / ADD / SUB / LSL (else nothing)."""
    if name in ("mov", "movs", "movw") and len(ops) == 2:
        return {ops[0].reg: val(ops[1])}
    if name in ("add", "adds", "addw", "sub", "subs", "subw") and ops and ops[0].type == csarm.ARM_OP_REG:
        sign = -1 if name.startswith("sub") else 1
        a, b = (val(ops[0]), val(ops[1])) if len(ops) == 2 else (val(ops[1]), val(ops[2]))
        return {ops[0].reg: _add(a, b, sign)}
    if name in ("lsl", "lsls") and len(ops) == 3 and ops[2].type == csarm.ARM_OP_IMM:
        return {ops[0].reg: _scaled(val(ops[1]), 1 << ops[2].imm)}
    return {}


def _writeback(insn, name: str, ops, st: dict, val) -> dict:
    """The base register after a load / store with writeback: base += disp (pre) / += offset
    operand (post) / ± 4N (LDM/STM)."""
    if name in _LDM_NAMES or name in _VLDM_NAMES:
        n = len(ops) - 1 if name[0] != "v" else _vfp_words(insn, ops[1:])
        b = ops[0].reg
        return {b: _add(st.get(b, (0, {b: 1})), (((-4 if name.endswith("db") else 4) * n) & _MASK, {}))}
    mem = [op for op in ops if op.type == csarm.ARM_OP_MEM]
    if not mem:
        return {}
    b = mem[0].mem.base
    cur = st.get(b, (0, {b: 1}))
    if getattr(insn, "post_index", False):
        off = ops[-1]
        return {b: _add(cur, val(off), -1 if off.subtracted else 1)}
    return {b: _add(cur, (mem[0].mem.disp & _MASK, {}))}


def _step(insn, name, st, pc_val):
    """Apply insn to the symbolic state st {reg: expr|None}."""
    _, wr = insn.regs_access()
    ops = insn.operands
    cond = insn.cc not in (csarm.ARM_CC_AL, csarm.ARM_CC_INVALID)

    def val(op):
        return _value(op, st, pc_val)

    new = {} if cond else _data_processing(name, ops, val)
    if insn.writeback and not cond:
        new.update(_writeback(insn, name, ops, st, val))
    for r in wr:
        if r not in new:
            new[r] = None              # written by something we do not model (or a load)
    for r, v in new.items():
        st[r] = None if cond else v


# ------------------------------------------------------------------------------------------
# the analysis
# ------------------------------------------------------------------------------------------

def _disassemble(code: bytes, base: int) -> list:
    """Every instruction of the image, skipping undecodable halfwords."""
    insns = []
    off = 0
    while off < len(code) - 1:
        got = False
        for i in DISASSEMBLER.disasm(code[off:], base + off):
            insns.append(i)
            off = i.address - base + i.size
            got = True
        if not got or off < len(code) - 1:
            off += 2
    return insns


def _straight_line_blocks(insns: list, names: dict) -> list[list]:
    """Straight-line regions: split only after control transfers (a translation block never
    continues past one, but may start anywhere in the region: branch targets, returns, ...)."""
    leaders = set()
    for k, i in enumerate(insns):
        try:
            _, wr = i.regs_access()
        except capstone.CsError:
            wr = ()
        if names[i.address] in _BRANCHY or csarm.ARM_REG_PC in wr:
            if k + 1 < len(insns):
                leaders.add(insns[k + 1].address)
    blocks = []
    cur: list = []
    for i in insns:
        if cur and (i.address in leaders or cur[-1].address + cur[-1].size != i.address):
            blocks.append(cur)
            cur = []
        cur.append(i)
    if cur:
        blocks.append(cur)
    return blocks


def _checks_by_start(blk: list, ci: int, names: dict, cand) -> Optional[list[tuple[int, Check]]]:
    """[(block start, check)] for candidate blk[ci] at each possible block start before it, or
    None when its address is not a linear function of the registers at every one of them."""
    c = blk[ci]
    mask, size, write, breg, disp, post = cand
    checks = []
    for si in range(max(0, ci - _MAX_LOOKBACK), ci + 1):
        st: dict = {}
        for j in range(si, ci):
            _step(blk[j], names[blk[j].address], st, (blk[j].address + 4) & ~3)
        expr = st.get(breg, (0, {breg: 1}))
        if expr is None or len(expr[1]) > 3:
            return None
        e = _add(expr, (disp & _MASK, {}))
        checks.append((blk[si].address, Check(c.address, e[0], tuple(sorted(e[1].items())), mask, size, write)))
    return checks


def analyze(code: bytes, base: int) -> tuple[dict, dict]:
    """Static alignment checks for a code image.

    Returns (by_start, fallback): by_start {block start pc: [Check]} valid when a translation
    block starts at that pc; fallback {pc: Check} (expression in the registers at pc itself)
    for candidates to check with a code hook."""
    insns = _disassemble(code, base)
    names = {i.address: (DISASSEMBLER.insn_name(i.id) or i.mnemonic).lower() for i in insns}
    by_start: dict = {}
    fallback: dict = {}
    for blk in _straight_line_blocks(insns, names):
        for ci, c in enumerate(blk):
            cand = _candidate(c, names[c.address])
            if cand is None:
                continue
            mask, size, write, breg, disp, post = cand
            if breg in (csarm.ARM_REG_SP, csarm.ARM_REG_PC):
                continue                 # SP is always word aligned; literal addresses are static
            checks = _checks_by_start(blk, ci, names, cand)
            if checks is None or ci > _MAX_LOOKBACK:
                # not a linear function of the registers at every possible block start: check
                # it with a code hook on this instruction (expression at the pc itself)
                fallback[c.address] = Check(c.address, disp & _MASK, ((breg, 1),), mask, size, write)
            else:
                for start, chk in checks:
                    by_start.setdefault(start, []).append(chk)
    return by_start, fallback


def _in_unicorn_registers(checks: list[Check]) -> list[Check]:
    """The checks with Unicorn register ids (those reading an unmapped register dropped)."""
    return [c._replace(terms=tuple((CAPSTONE_TO_UNICORN[r], k) for r, k in c.terms)) for c in checks
            if all(r in CAPSTONE_TO_UNICORN for r, _ in c.terms)]


ROW_WORDS = 12        # native_hook.c's check row: pc, const, terms, mask, size, access, (register, coef) x 3
MAX_TERMS = 3
_ACCESS = {False: UC_MEM_READ, True: UC_MEM_WRITE}


class NativeTable(NamedTuple):
    """One table of checks in the layout native_hook.c's mrt_set_checks takes, as little-endian
    uint32 bytes: `starts` (key, first row, rows) triples, `rows` ROW_WORDS words a check. The
    shipped facts hold this layout, so a machine's start hands it over as it is."""
    starts: bytes
    rows: bytes

    @classmethod
    def of(cls, table: dict[int, list[Check]]) -> "NativeTable":
        starts: list[int] = []
        rows: list[int] = []
        for key, checks in table.items():
            starts += [key, len(rows) // ROW_WORDS, len(checks)]
            for c in checks:
                rows += [c.pc, c.const & _MASK, len(c.terms), c.mask, c.size, _ACCESS[c.write]]
                for r, k in list(c.terms) + [(0, 0)] * (MAX_TERMS - len(c.terms)):
                    rows += [r, k & _MASK]
        return cls(array("I", starts).tobytes(), array("I", rows).tobytes())

    def keys(self) -> list[int]:
        return list(array("I", self.starts)[0::3])

    def checks(self) -> dict[int, list[Check]]:
        """The table as Check lists (the Python hooks' form); constants and coefficients mod 2^32."""
        starts, rows = array("I", self.starts), array("I", self.rows)
        out = {}
        for i in range(0, len(starts), 3):
            key, first, n = starts[i:i + 3]
            out[key] = [Check(w[0], w[1], tuple((w[6 + 2 * t], w[7 + 2 * t]) for t in range(w[2])), w[3], w[4],
                              w[5] == UC_MEM_WRITE)
                        for w in (rows[ROW_WORDS * r:ROW_WORDS * (r + 1)] for r in range(first, first + n))]
        return out


class StaticChecks:
    """A firmware's static alignment checks, registers as Unicorn ids: `native` (by_start,
    by_pc) in native_hook.c's layout, what native.HookSet installs; [0] / [1] the same as
    {address: [Check]} dicts, decoded when first asked for (the Python hooks, tests)."""

    def __init__(self, by_start: NativeTable, by_pc: NativeTable):
        self.native = (by_start, by_pc)
        self._decoded: dict[int, dict] = {}

    def keys(self, which: int) -> list[int]:
        """The addresses of table `which` (0: block starts, 1: code-hooked instructions)."""
        return self.native[which].keys()

    def __getitem__(self, which: int) -> dict[int, list[Check]]:
        if which not in self._decoded:
            self._decoded[which] = self.native[which].checks()
        return self._decoded[which]

    def __iter__(self):
        return iter((self[0], self[1]))


_STATIC_CACHE: dict[str, StaticChecks] = {}     # per firmware hash: the analysis is ~1.5 s
FACTS = "alignment"             # cortexm/firmware/<core>.alignment.json (firmware_facts.py)


def static_checks(elf: ElfImage) -> StaticChecks:
    """The static alignment checks of the ELF's executable segments: what native.HookSet
    installs. They depend on the firmware alone, so the shipped firmware carries them beside it
    (`write_shipped`, in the native layout), read when its hash matches the ELF's; any other ELF
    is analysed (once per process)."""
    hit = _STATIC_CACHE.get(elf.sha256)
    if hit is None:
        hit = _shipped(elf) or StaticChecks(*(NativeTable.of(t) for t in _analysed(elf)))
        _STATIC_CACHE[elf.sha256] = hit
    return hit


def _analysed(elf: ElfImage) -> tuple[dict, dict]:
    by_start: dict = {}
    by_pc: dict = {}
    for seg in elf.segments:
        if not seg.executable or not seg.data:
            continue
        starts, fallback = analyze(seg.data, seg.vaddr)
        for table, found in ((by_start, starts), (by_pc, {pc: [c] for pc, c in fallback.items()})):
            for key, checks in found.items():
                mapped = _in_unicorn_registers(checks)
                if mapped:
                    table.setdefault(key, []).extend(mapped)
    return by_start, by_pc


def _shipped(elf: ElfImage) -> Optional[StaticChecks]:
    """The checks written beside the ELF for exactly this ELF, else None."""
    facts = read_facts(elf.path, elf.sha256, FACTS)
    if not isinstance(facts, dict):
        return None
    try:
        tables = [NativeTable(*(zlib.decompress(base64.b64decode(facts[t][part], validate=True))
                                for part in ("starts", "rows"))) for t in ("by_start", "by_pc")]
    except (KeyError, TypeError, ValueError, binascii.Error, zlib.error):
        return None
    if any(len(t.starts) % 12 or len(t.rows) % (4 * ROW_WORDS) for t in tables):
        return None
    return StaticChecks(*tables)


def write_shipped(elf_path: Union[str, Path]) -> Path:
    """Analyse the ELF and write its checks beside it, tied to its hash, in the native layout
    (zlib-compressed, base64: the rows are mostly zero words)."""
    elf = load_elf(elf_path)
    tables = {name: {part: base64.b64encode(zlib.compress(raw, 9)).decode()
                     for part, raw in (("starts", t.starts), ("rows", t.rows))}
              for name, t in zip(("by_start", "by_pc"), (NativeTable.of(x) for x in _analysed(elf)))}
    return write_facts(elf_path, elf.sha256, FACTS, tables)
