"""Per-operator run records and the profile report built from them.

An `OpRecord` is what one operator cost on the virtual MCU (or that it ran on the host);
`profile_report` turns a run into the table and JSON of `micro-rt profile`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class AlignmentReport:
    """One unaligned access, in the user's terms."""
    op_index: int
    op: str
    tensor: str            # what the touched bytes belong to
    pc: int
    symbol: str
    instruction: str
    address: int
    kind: str
    count: int
    faults_on_silicon: bool

    def __str__(self) -> str:
        verdict = "faults on silicon" if self.faults_on_silicon else "slow on silicon"
        return (f"op {self.op_index} {self.op}: unaligned {self.kind} of {self.tensor} at "
                f"0x{self.address:08x} by pc 0x{self.pc:08x} <{self.symbol}> '{self.instruction}' "
                f"x{self.count} ({verdict})")


@dataclass
class OpRecord:
    index: int
    op: str
    on_mcu: bool
    instructions: int = 0
    cycles: int = 0
    macs: int = 0
    stack_bytes: int = 0
    alignment: list[AlignmentReport] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {"index": self.index, "op": self.op, "on_mcu": self.on_mcu,
                "instructions": self.instructions, "cycles": self.cycles, "macs": self.macs,
                "macs_per_cycle": round(self.macs / self.cycles, 4) if self.cycles else None,
                "stack_bytes": self.stack_bytes,
                "alignment": [str(a) for a in self.alignment]}


def profile_report(interpreter: Any, records: list[OpRecord], clock_hz: int,
                   emulation_seconds: float) -> dict:
    """The `micro-rt profile` JSON: per-operator costs and totals at the given clock."""
    total_cycles = sum(r.cycles for r in records)
    total_instructions = sum(r.instructions for r in records)
    host_ops = [f"{r.index} {r.op}" for r in records if not r.on_mcu]
    return {
        "target": interpreter.target.name,
        "kernels": interpreter.kernels,
        "clock_hz": clock_hz,
        "total_cycles": total_cycles,
        "total_instructions": total_instructions,
        "total_ms": total_cycles / clock_hz * 1e3,
        "total_macs": sum(r.macs for r in records),
        "max_stack_bytes": max((r.stack_bytes for r in records), default=0),
        "emulation_seconds": emulation_seconds,
        "instructions_per_second": total_instructions / emulation_seconds if emulation_seconds else None,
        "ops_not_emulated": host_ops,
        "alignment": [str(a) for r in records for a in r.alignment],
        "ops": [r.as_dict() for r in records],
    }


def profile_table(report: dict) -> str:
    lines = [f"{'#':>4}  {'op':<20}{'instructions':>14}{'cycles':>14}{'MACs':>12}{'MAC/cyc':>9}"
             f"{'stack':>7}{'ms':>9}"]
    clock = report["clock_hz"]
    for op in report["ops"]:
        if not op["on_mcu"]:
            lines.append(f"{op['index']:>4}  {op['op']:<20}{'(host kernel: no C kernel)':>56}")
            continue
        mpc = f"{op['macs_per_cycle']:.3f}" if op["macs_per_cycle"] is not None else "-"
        lines.append(f"{op['index']:>4}  {op['op']:<20}{op['instructions']:>14,}{op['cycles']:>14,}"
                     f"{op['macs']:>12,}{mpc:>9}{op['stack_bytes']:>7}{op['cycles'] / clock * 1e3:>9.3f}")
    lines.append(f"total on {report['target']} at {clock / 1e6:g} MHz: {report['total_cycles']:,} cycles = "
                 f"{report['total_ms']:.2f} ms, {report['total_instructions']:,} instructions, "
                 f"{report['total_macs']:,} MACs, max stack {report['max_stack_bytes']} B")
    if report["instructions_per_second"]:
        lines.append(f"emulated in {report['emulation_seconds']:.2f} s "
                     f"({report['instructions_per_second'] / 1e6:.0f} M instructions/s)")
    if report["ops_not_emulated"]:
        lines.append("ran on host kernels (no C kernel, not counted): " + ", ".join(report["ops_not_emulated"]))
    for a in report["alignment"]:
        lines.append(f"alignment: {a}")
    return "\n".join(lines)
