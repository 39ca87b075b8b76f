"""A firmware run's data symbols by name: `--input` written into them, `--output` read from
them. An input goes into .data's initial image (the load image the start-up copies from) before
the image is loaded; one with no initial image (.bss, which the start-up zeroes) is written when
`main` is entered."""
from __future__ import annotations

import unicorn
from unicorn import unicorn_const as UC

from micro_rt.errors import FirmwareError

from ..elf import Symbol
from .firmware import FirmwareFile

__all__ = ["DataSymbols"]


class DataSymbols:
    """The data objects of one image that a run reads and writes by name (`name`: the file's, for
    the errors)."""

    def __init__(self, fw: FirmwareFile, name: str):
        self.fw, self.name = fw, name
        self._at_main: dict[int, bytes] = {}        # address -> bytes written when main is entered

    def symbol(self, name: str, what: str) -> Symbol:
        """The data object `name` (FirmwareError naming it and `what` asked for it otherwise)."""
        sym = self.fw.image.symbols.get(name)
        if sym is None:
            raise FirmwareError(f"{self.name}: no symbol '{name}' for {what}")
        if sym.is_func or not sym.size:
            raise FirmwareError(f"{self.name}: symbol '{name}' for {what} is "
                                f"{'a function' if sym.is_func else 'of size 0'}, not a data object")
        return sym

    def place_inputs(self, inputs: dict[str, bytes]) -> None:
        """--input, before the image is loaded: into .data's initial image, the rest kept for
        `write_at_main`."""
        for name, data in inputs.items():
            sym = self.symbol(name, "--input")
            if len(data) > sym.size:
                raise FirmwareError(f"{self.name}: --input {name}: {len(data)} B does not fit the "
                                    f"symbol's {sym.size} B")
            seg = next((s for s in self.fw.image.segments if s.vaddr <= sym.addr < s.vaddr + s.memsz), None)
            if seg is not None and sym.addr + len(data) <= seg.vaddr + len(seg.data):
                off = sym.addr - seg.vaddr
                seg.data = seg.data[:off] + data + seg.data[off + len(data):]
            else:
                self._at_main[sym.addr] = data
        if self._at_main:
            main = self.fw.image.symbols.get("main")
            if main is None or not main.is_func:
                raise FirmwareError(f"{self.name}: --input into .bss is written when main is entered, "
                                    "and the image has no function 'main'")

    def write_at_main(self, uc: unicorn.Uc) -> None:
        """Hook main's first instruction to write the inputs with no initial image (if any)."""
        if self._at_main:
            main = self.fw.image.symbols["main"]
            uc.hook_add(UC.UC_HOOK_CODE, self._write, begin=main.addr, end=main.addr)

    def _write(self, uc: unicorn.Uc, address: int, size: int, _user) -> None:
        for addr, data in self._at_main.items():
            uc.mem_write(addr, data)
        self._at_main = {}

    def read(self, uc: unicorn.Uc, name: str) -> bytes:
        """--output: the bytes of the data object `name` now."""
        sym = self.symbol(name, "--output")
        return bytes(uc.mem_read(sym.addr, sym.size))
