"""Arm semihosting (BKPT 0xAB on M-profile) as newlib's `rdimon.specs` start-up and syscalls
use it (Arm "Semihosting for AArch32 and AArch64", version 2: operation numbers, parameter
blocks, the `:tt` and `:semihosting-features` special files, SYS_EXIT reasons).

The run has no host file system: only `:tt` (the console) and `:semihosting-features` open;
any other name fails with ENOENT, which newlib turns into an fopen error. Time comes from the
modelled cycles: SYS_CLOCK is centiseconds and SYS_TIME seconds since the run began, so output
that prints times is the same on every run. SYS_HEAPINFO answers what a debugger would: the heap
from the end of the image's RAM up to the initial stack pointer, the stack from there down (newlib's
crt0 sets its stack pointer from it, so it must be the vector table's).
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Callable, Optional

import unicorn
from unicorn.arm_const import UC_ARM_REG_R0, UC_ARM_REG_R1

SEMIHOSTING_BKPT = 0xAB
ENOENT, EBADF, ENOSYS = 2, 9, 88
FEATURES_FILE = b"SHFB\x03"       # magic, then SH_EXT_EXIT_EXTENDED | SH_EXT_STDOUT_STDERR
ADP_STOPPED_APPLICATION_EXIT = 0x20026
MAX_STRING = 1 << 16


class Op(IntEnum):
    OPEN = 0x01
    CLOSE = 0x02
    WRITEC = 0x03
    WRITE0 = 0x04
    WRITE = 0x05
    READ = 0x06
    READC = 0x07
    ISERROR = 0x08
    ISTTY = 0x09
    SEEK = 0x0A
    FLEN = 0x0C
    TMPNAM = 0x0D
    REMOVE = 0x0E
    RENAME = 0x0F
    CLOCK = 0x10
    TIME = 0x11
    SYSTEM = 0x12
    ERRNO = 0x13
    GET_CMDLINE = 0x15
    HEAPINFO = 0x16
    EXIT = 0x18
    ELAPSED = 0x30
    TICKFREQ = 0x31
    EXIT_EXTENDED = 0x20


@dataclass
class OpenFile:
    name: str
    mode: int
    data: bytes = b""       # the features file's content
    pos: int = 0

    @property
    def tty(self) -> bool:
        return self.name == ":tt"


@dataclass
class ExitRequest:
    code: int
    reason: int


@dataclass
class Semihost:
    """One run's semihosting: the console it prints to and the files it opened."""
    cycles: Callable[[], int]                    # modelled cycles since the run began
    clock_hz: int
    cmdline: str = ""
    heap_info: tuple = (0, 0, 0, 0)              # heap base, heap limit, stack base (top), stack limit
    console: bytearray = field(default_factory=bytearray)
    calls: dict = field(default_factory=dict)    # operation name -> count
    errno: int = 0
    files: dict = field(default_factory=dict)    # handle -> OpenFile
    exit: Optional[ExitRequest] = None
    unknown: list = field(default_factory=list)  # operation numbers not implemented

    def _str(self, uc, addr: int, length: Optional[int] = None) -> bytes:
        if length is not None:
            return bytes(uc.mem_read(addr, min(length, MAX_STRING)))
        out = bytearray()
        while len(out) < MAX_STRING:
            # up to the next 64-byte boundary: a string that ends near the top of mapped memory
            # is read without reading past it (memory is mapped in whole pages)
            at = addr + len(out)
            chunk = bytes(uc.mem_read(at, 64 - at % 64))
            end = chunk.find(b"\0")
            if end >= 0:
                return bytes(out + chunk[:end])
            out += chunk
        return bytes(out)

    def _words(self, uc, addr: int, n: int) -> tuple[int, ...]:
        return struct.unpack(f"<{n}I", bytes(uc.mem_read(addr, 4 * n)))

    def call(self, uc: unicorn.Uc) -> None:
        """Carry out the operation in r0 with the parameter in r1; the result goes to r0. A
        memory fault reading the parameters is raised as unicorn.UcError (the run reports it)."""
        op, arg = uc.reg_read(UC_ARM_REG_R0), uc.reg_read(UC_ARM_REG_R1)
        try:
            name = Op(op).name
        except ValueError:
            name = f"0x{op:x}"
        self.calls[name] = self.calls.get(name, 0) + 1
        result = self._do(uc, op, arg)
        if result is not None:
            uc.reg_write(UC_ARM_REG_R0, result & 0xFFFFFFFF)

    def _fail(self, errno: int) -> int:
        self.errno = errno
        return -1

    def _do(self, uc, op: int, arg: int) -> Optional[int]:
        if op == Op.OPEN:
            ptr, mode, length = self._words(uc, arg, 3)
            fname = self._str(uc, ptr, length).decode("latin-1")
            if fname == ":tt":
                handle = max(self.files, default=0) + 1
                self.files[handle] = OpenFile(fname, mode)
                return handle
            if fname == ":semihosting-features":
                handle = max(self.files, default=0) + 1
                self.files[handle] = OpenFile(fname, mode, FEATURES_FILE)
                return handle
            return self._fail(ENOENT)
        if op == Op.CLOSE:
            (handle,) = self._words(uc, arg, 1)
            return 0 if self.files.pop(handle, None) is not None else self._fail(EBADF)
        if op == Op.WRITEC:
            self.console += bytes(uc.mem_read(arg, 1))
            return None
        if op == Op.WRITE0:
            self.console += self._str(uc, arg)
            return None
        if op == Op.WRITE:
            handle, buf, length = self._words(uc, arg, 3)
            f = self.files.get(handle)
            if f is None or not f.tty:
                self._fail(EBADF)
                return length
            self.console += self._str(uc, buf, length)
            return 0                                  # bytes not written
        if op == Op.READ:
            handle, buf, length = self._words(uc, arg, 3)
            f = self.files.get(handle)
            if f is None:
                self._fail(EBADF)
                return length
            part = f.data[f.pos:f.pos + length]
            if part:
                uc.mem_write(buf, part)
            f.pos += len(part)
            return length - len(part)                 # the console has no input: end of file
        if op == Op.READC:
            return -1
        if op == Op.ISERROR:
            (status,) = self._words(uc, arg, 1)
            return int(status & 0x8000_0000 != 0)
        if op == Op.ISTTY:
            (handle,) = self._words(uc, arg, 1)
            f = self.files.get(handle)
            return int(f.tty) if f is not None else self._fail(EBADF)
        if op == Op.SEEK:
            handle, pos = self._words(uc, arg, 2)
            f = self.files.get(handle)
            if f is None:
                return self._fail(EBADF)
            f.pos = pos
            return 0
        if op == Op.FLEN:
            (handle,) = self._words(uc, arg, 1)
            f = self.files.get(handle)
            return len(f.data) if f is not None else self._fail(EBADF)
        if op in (Op.TMPNAM, Op.REMOVE, Op.RENAME, Op.SYSTEM):
            return self._fail(ENOSYS)
        if op == Op.CLOCK:
            return self.cycles() * 100 // self.clock_hz
        if op == Op.TIME:
            return self.cycles() // self.clock_hz
        if op == Op.ERRNO:
            return self.errno
        if op == Op.GET_CMDLINE:
            buf, length = self._words(uc, arg, 2)
            text = self.cmdline.encode()[:max(0, length - 1)] + b"\0"
            uc.mem_write(buf, text)
            uc.mem_write(arg + 4, struct.pack("<I", len(text) - 1))
            return 0
        if op == Op.HEAPINFO:
            (block,) = self._words(uc, arg, 1)
            uc.mem_write(block, struct.pack("<4I", *self.heap_info))
            return 0
        if op == Op.EXIT:
            self.exit = ExitRequest(0 if arg == ADP_STOPPED_APPLICATION_EXIT else 1, arg)
            return None
        if op == Op.EXIT_EXTENDED:
            reason, code = self._words(uc, arg, 2)
            self.exit = ExitRequest(code if reason == ADP_STOPPED_APPLICATION_EXIT else 1, reason)
            return None
        if op == Op.ELAPSED:
            n = self.cycles()
            uc.mem_write(arg, struct.pack("<Q", n))
            return 0
        if op == Op.TICKFREQ:
            return -1
        self.unknown.append(op)
        return self._fail(ENOSYS)
