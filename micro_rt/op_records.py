"""What an invoke records per operator: its cost on the virtual MCU (or that it ran on the host),
the unaligned accesses it made, and how the operators of control-flow subgraphs add up. The
interpreter and the MCU executor fill them; profile.py and fit.py read them.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional


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
    subgraph: int = 0          # operators of other subgraphs run through IF / WHILE / CALL_ONCE
    runs: int = 1              # times it ran in the invoke (a loop body's: once per iteration)
    # IF / WHILE / CALL_ONCE: what the operators of the subgraphs it ran cost (IF: the branch
    # taken; WHILE: cond and body, every iteration), beyond its own copies in `cycles`
    subgraph_cycles: int = 0
    subgraph_instructions: int = 0
    ended_run: bool = False    # its kernel returned kTfLiteAbort: the operators after it did not run
    host_reason: str = ""      # on the virtual MCU, why it ran on its host kernel (a host entry of the plan)

    def as_dict(self, with_subgraph: bool = False) -> dict:
        where = {"subgraph": self.subgraph} if with_subgraph else {}
        runs = {"runs": self.runs, "cycles_with_subgraphs": self.cycles + self.subgraph_cycles,
                "instructions_with_subgraphs": self.instructions + self.subgraph_instructions} \
            if with_subgraph else {}
        ended: dict[str, object] = {"ended_run": True} if self.ended_run else {}
        ended.update({"host_reason": self.host_reason} if self.host_reason else {})
        return {**where, "index": self.index, "op": self.op, "on_mcu": self.on_mcu, **runs, **ended,
                "instructions": self.instructions, "cycles": self.cycles, "macs": self.macs,
                "macs_per_cycle": round(self.macs / self.cycles, 4) if self.cycles else None,
                "stack_bytes": self.stack_bytes,
                "alignment": [str(a) for a in self.alignment]}

    def add_run(self, other: "OpRecord") -> None:
        """Another run of the same operator (a loop): counts add up, the deepest stack stays."""
        self.runs += other.runs
        self.on_mcu = self.on_mcu and other.on_mcu
        self.instructions += other.instructions
        self.cycles += other.cycles
        self.macs += other.macs
        self.subgraph_cycles += other.subgraph_cycles
        self.subgraph_instructions += other.subgraph_instructions
        self.stack_bytes = max(self.stack_bytes, other.stack_bytes)
        self.alignment += other.alignment


class RunRecords:
    """An invoke's records, one per operator that ran (in the order operators first started:
    a control-flow operator before those of the subgraphs it runs), repeated runs summed."""

    def __init__(self) -> None:
        self.records: list[Optional[OpRecord]] = []
        self._slot: dict[tuple[int, int], int] = {}
        self._running: list[list[int]] = []     # per operator running: [cycles, instructions] inside

    def finished(self) -> list[OpRecord]:
        """The records of the operators that finished (one still running has none yet)."""
        return [r for r in self.records if r is not None]

    def start(self, subgraph: int, index: int) -> None:
        if (subgraph, index) not in self._slot:
            self._slot[(subgraph, index)] = len(self.records)
            self.records.append(None)
        self._running.append([0, 0])

    def finish(self, subgraph: int, record: OpRecord) -> None:
        """The operator that started last has run: what ran inside it (its subgraphs' operators)
        is its subgraph cost, and it all counts towards the operator that ran it, if any."""
        record.subgraph = subgraph
        inner_cycles, inner_instructions = self._running.pop()
        record.subgraph_cycles += inner_cycles
        record.subgraph_instructions += inner_instructions
        if self._running:
            self._running[-1][0] += record.cycles + record.subgraph_cycles
            self._running[-1][1] += record.instructions + record.subgraph_instructions
        slot = self._slot[(subgraph, record.index)]
        earlier = self.records[slot]
        if earlier is None:
            self.records[slot] = record
        else:
            earlier.add_run(record)
