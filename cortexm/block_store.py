"""Block costs kept on disk between processes, so a firmware's blocks are disassembled once.

Pricing a translation block (core_timing.block_cost) decodes it with capstone: about 30 µs an
instruction, a tenth of a second on the first invoke of an int8 CNN, paid again by every new
process (`profile`, `boards`, a sweep's workers). The cost depends only on the block's bytes, the
core and the timing code, so it is kept in the cache directory (MICRO_RT_CACHE, else
~/.cache/micro_rt; native_library.cache_dir) in one file per (firmware hash, core, timing code):

    block_costs/<firmware sha256[:16]>-<core>-<timing code hash>.jsonl

Each line is a JSON list of blocks priced together, each [addr, size, code digest, n_insns,
cycles, taken_extra, last, loads]. A stored cost is used only when the digest of the bytes the
machine reads at that block now equals the one it was priced from, so a cache never serves
another build's block (or code a program rewrote). Lines are appended (one write each); a line
that cannot be read is skipped and its blocks priced again, with one warning, and the file is
rewritten with the readable blocks alone; a cache that cannot be written warns once and the
costs are computed as without it.
"""
from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Optional

from .core_timing import BlockCost, CodeReader

# The sources a block's cost is computed by: editing one starts a new file.
TIMING_SOURCES = ("core_timing.py", "thumb_decode.py")


def timing_code_hash() -> str:
    here = Path(__file__).parent
    h = hashlib.sha256()
    for name in TIMING_SOURCES:
        h.update((here / name).read_bytes())
    return h.hexdigest()[:12]


def code_digest(code: bytes) -> str:
    return hashlib.blake2b(code, digest_size=8).hexdigest()


_ROW_TYPES = (int, int, str, int, int, int, str, int)


def _row(digest: str, c: BlockCost) -> list:
    """One block as a line of the file holds it."""
    return [c.addr, c.size, digest, c.n_insns, c.cycles, c.taken_extra, c.last, c.loads]


def _well_formed(row) -> bool:
    return isinstance(row, list) and len(row) == len(_ROW_TYPES) and \
        all(type(v) is t for v, t in zip(row, _ROW_TYPES))


def _cost(row: list) -> BlockCost:
    addr, size, _digest, n, cycles, extra, last, loads = row
    return BlockCost(addr, size, n, cycles, extra, last, loads)


class BlockStore:
    """The stored block costs of one firmware on one core, read once, appended to as blocks are
    priced."""

    def __init__(self, path: Optional[Path]):
        self.path = path
        # (addr, size) -> row (_row): the file's blocks, read at first use, and those added since
        self._stored: Optional[dict[tuple[int, int], list]] = None
        self._warned = False

    @classmethod
    def for_firmware(cls, firmware_sha256: str, core: str) -> "BlockStore":
        from .native_library import cache_dir
        try:
            name = f"{firmware_sha256[:16]}-{core}-{timing_code_hash()}.jsonl"
        except OSError:                   # the timing sources are not there to hash: no store
            return cls(None)
        return cls(cache_dir() / "block_costs" / name)

    def lookup(self, addr: int, size: int, read: CodeReader) -> Optional[BlockCost]:
        """The stored cost of the block, if it was priced from the bytes `read` gives now."""
        row = self._entries().get((addr, size))
        if row is None or not _well_formed(row) or row[2] != code_digest(read(addr, size)):
            return None                     # a row of the wrong types is priced again
        return _cost(row)

    def add(self, costs: list[BlockCost], read: CodeReader) -> None:
        """Append newly priced blocks (one line)."""
        if not costs:
            return
        rows = []
        entries = self._entries()
        for c in costs:
            row = _row(code_digest(read(c.addr, c.size)), c)
            rows.append(row)
            entries[(c.addr, c.size)] = row
        if self.path is None:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # one unbuffered write of the whole line: processes appending at once do not interleave
            with open(self.path, "ab", buffering=0) as fh:
                fh.write((json.dumps(rows, separators=(",", ":")) + "\n").encode())
        except OSError as e:
            self._warn(f"cannot write {self.path} ({e.strerror or e})")
            self.path = None

    def _entries(self) -> dict[tuple[int, int], list]:
        if self._stored is None:
            self._stored = self._read()
        return self._stored

    def _read(self) -> dict[tuple[int, int], list]:
        """The file's rows by (addr, size), each checked for its shape here and for its types when
        it is looked up (a process reads thousands and looks up a few hundred)."""
        found: dict[tuple[int, int], list] = {}
        if self.path is None:
            return found
        try:
            text = self.path.read_text(encoding="utf-8")
        except (FileNotFoundError, NotADirectoryError):      # nothing stored yet
            return found
        except (OSError, UnicodeDecodeError) as e:
            self._warn(f"cannot read {self.path} ({e})")
            return found
        bad = 0
        for line in text.splitlines():
            try:
                rows = json.loads(line)
                if type(rows) is not list or not all(type(r) is list and len(r) == len(_ROW_TYPES) for r in rows):
                    raise ValueError("not a list of block rows")
                keyed = {(r[0], r[1]): r for r in rows}
            except (ValueError, TypeError):        # TypeError: an unhashable address or size
                bad += 1
                continue
            found.update(keyed)
        if bad:
            self._warn(f"{bad} unreadable line(s) in {self.path}; those blocks are priced again")
            self._rewrite(found)
        return found

    def _rewrite(self, found: dict[tuple[int, int], list]) -> None:
        """Replace the file by its readable blocks, so the next process does not warn again (a
        line another process appends meanwhile is lost: its blocks are priced once more)."""
        if self.path is None:
            return
        rows = list(found.values())
        tmp = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
        try:
            tmp.write_text(json.dumps(rows, separators=(",", ":")) + "\n" if rows else "", encoding="utf-8")
            os.replace(tmp, self.path)
        except OSError:
            tmp.unlink(missing_ok=True)

    def _warn(self, what: str) -> None:
        if not self._warned:
            self._warned = True
            sys.stderr.write(f"micro_rt: warning: block-cost cache: {what}\n")
            sys.stderr.flush()
