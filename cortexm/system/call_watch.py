"""Each call of one function of a firmware run, timed: what a DWT cycle counter read around the
call would give, its exact instruction count, and the stack it took below its entry SP.

`micro-rt emulate --time FUNCTION` asks for it, and two functions are timed without asking:
micro_rt's own `mrt_invoke` in an exported project (what `profile` counts) and TFLM's
`MicroInterpreter::Invoke` in a TFLM application (system/tflm_app.py).

A code hook at the function's first instruction starts a call and one at its return address
(the caller's LR then, hooked for the call with that address's translation dropped, as a code
hook added after translation is missed) ends it. The running clock counts a block when it
starts (clock.RunningCycles), so at either hook the block holding the hooked instruction is
counted already: the instructions are made exact by taking that block's instructions from the
hooked one on out of each reading (decoded from the code, 16- and 32-bit Thumb encodings), so a
call counts from its first instruction to its last, as `profile` counts mrt_invoke. The cycles
stay block-granular: from the end of the calling block to the end of the block the call
returns to. A call entered again before it returned (recursion) is counted as one call, the
outermost.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from unicorn import unicorn_const as UC
from unicorn.arm_const import UC_ARM_REG_LR, UC_ARM_REG_SP

from ..calling import StackProbe
from ..elf import Symbol
from ..thumb_decode import is_32bit_halfword


@dataclass(frozen=True)
class TimedCall:
    """One call of a timed function, entry to return."""
    cycles: int
    instructions: int
    stack_bytes: Optional[int]       # below the entry SP; None where there was no room to paint

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def instructions_between(read_code: Callable[[int, int], bytes], start: int, end: int) -> int:
    """Thumb instructions from `start` up to (not including) `end`, by their encodings' widths."""
    code = read_code(start, max(0, end - start)) or b""
    n = i = 0
    while i + 2 <= len(code):
        i += 4 if is_32bit_halfword(int.from_bytes(code[i:i + 2], "little")) else 2
        n += 1
    return n


class CallWatch:
    """Times every call of one function (see the module's docstring)."""

    def __init__(self, uc, function: Symbol, read_code: Callable[[int, int], bytes],
                 cycles: Callable[[], int], instructions: Callable[[], int],
                 last_block: Callable[[], Optional[tuple[int, int]]],
                 stack_floor: Callable[[], int],
                 on_return_to: Callable[[int, Callable], None]):
        """cycles(), instructions(): the run's so far (instructions read after cycles, which
        brings them up to date); last_block(): (address, size) of the block counted last;
        stack_floor(): the lowest address the stack may reach now (above static data and the
        heap): painted from there up to the entry SP; on_return_to(address, handler): run
        handler(uc, address) each time the code at a return address runs."""
        self.function = function
        self.calls: list[TimedCall] = []
        self._uc = uc
        self._read_code = read_code
        self._cycles, self._instructions, self._last_block = cycles, instructions, last_block
        self._stack_floor = stack_floor
        self._on_return_to = on_return_to
        self._open: Optional[tuple[int, int, int, Optional[int]]] = None   # cycles, insns, SP, floor
        self._returns: set[int] = set()
        uc.hook_add(UC.UC_HOOK_CODE, self._on_entry, begin=function.addr, end=function.addr)

    def _instructions_before(self, pc: int) -> int:
        """The run's instructions before the one at `pc`, the one a code hook is at."""
        insns = self._instructions()
        block = self._last_block()
        if block is None or not block[0] <= pc < block[0] + block[1]:
            return insns
        addr, size = block
        return insns - instructions_between(self._read_code, addr, addr + size) \
            + instructions_between(self._read_code, addr, pc)

    def _on_entry(self, uc, address, _size, _user) -> None:
        if self._open is not None:
            return                                       # re-entered: the outermost call is timed
        cycles = self._cycles()
        insns = self._instructions_before(address)
        sp = uc.reg_read(UC_ARM_REG_SP)
        floor: Optional[int] = (self._stack_floor() + 7) & ~7
        if sp > floor:
            StackProbe(sp - floor).paint(uc, sp)
        else:
            floor = None                                 # no room to paint: the stack is not measured
        self._open = (cycles, insns, sp, floor)
        back = uc.reg_read(UC_ARM_REG_LR) & ~1
        if back not in self._returns:
            self._returns.add(back)
            self._on_return_to(back, self._on_return)

    def _on_return(self, uc, address) -> None:
        if self._open is None or uc.reg_read(UC_ARM_REG_SP) != self._open[2]:
            return                                       # not this call's return (the same site, deeper)
        cycles, insns, sp, floor = self._open
        self._open = None
        now = self._cycles()
        stack = StackProbe.high_water(uc, floor, sp) if floor is not None else None
        self.calls.append(TimedCall(now - cycles, self._instructions_before(address) - insns, stack))

    @property
    def unfinished(self) -> bool:
        return self._open is not None


class ReturnHooks:
    """Code hooks at return addresses, added while the run goes on: each address is hooked once,
    with its translation dropped (a code hook added after the code was translated is missed),
    and runs every handler asked for there, in the order asked."""

    def __init__(self, uc):
        self._uc = uc
        self._handlers: dict[int, list[Callable]] = {}

    def on(self, address: int, handler: Callable) -> None:
        """Run handler(uc, address) each time the code at `address` runs."""
        handlers = self._handlers.get(address)
        if handlers is None:
            self._handlers[address] = [handler]
            self._uc.hook_add(UC.UC_HOOK_CODE, self._dispatch, begin=address, end=address)
            self._uc.ctl_remove_cache(address, address + 2)
        elif handler not in handlers:
            handlers.append(handler)

    def _dispatch(self, uc, address, _size, _user) -> None:
        for handler in list(self._handlers[address]):
            handler(uc, address)
