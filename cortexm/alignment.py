"""Classification of unaligned memory accesses by the instruction that made them.

Armv7-M / Armv8-M (Cortex-M4/M7/M33) allow unaligned LDR/STR/LDRH/STRH/LDRSH (when
CCR.UNALIGN_TRP is 0, the reset value) but *always* fault (UsageFault, UNALIGNED) on unaligned
LDRD/STRD, LDM/STM/PUSH/POP and the exclusive accesses (Armv7-M ARM, A3.2.1 "Alignment
behavior"). Armv6-M (Cortex-M0/M0+) faults on every unaligned access (Armv6-M ARM, A3.2.1).

QEMU (hence Unicorn) does not raise those faults on its M4/M7/M33 models, so the virtual MCU
records unaligned accesses in its native hooks (a memory hook, or the static checks of
static_alignment.py) and classifies them here from the instruction at the access's PC
(decoded with capstone, cached per PC).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Iterable

from .thumb_decode import disassembler

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


_MD = disassembler(detail=False)
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
def kind_name(mnemonic: str) -> str:
    """The event's kind: LDM / STM for every multiple-transfer variant, else the mnemonic."""
    for prefix, kind in (("ldm", "LDM"), ("stm", "STM")):
        if mnemonic.startswith(prefix):
            return kind
    return mnemonic.upper()


def call_events(unaligned: Iterable[tuple[int, int, int, int, int]], read_code: Callable[[int, int], bytes],
                symbol_at: Callable[[int], str], *, strict: bool, armv6m: bool) -> list[AlignmentEvent]:
    """The alignment events of one call from the hooks' unaligned accesses
    [(pc, first address, size, access type, count)], by pc."""
    out = []
    for pc, addr, size, _typ, count in unaligned:
        m, dis = decode_one(read_code(pc, 4), pc)
        is_event, fatal = classify(m, strict=strict, armv6m=armv6m)
        if is_event:
            out.append(AlignmentEvent(pc, addr, size, kind_name(m), symbol_at(pc), dis, count, fatal))
    out.sort(key=lambda e: e.pc)
    return out
