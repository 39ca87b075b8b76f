"""Runners of TFLM's own custom operators that are not Signal ops: CIRCULAR_BUFFER
(cortexm/src/mrt_circular_buffer.c). Parameters come from the host kernel's op data
(node.user_data, filled by init and prepare as TFLM's are).

CIRCULAR_BUFFER's period counter (TFLM's OpDataCircularBuffer) is kept by the host kernel
between invokes, so reset() and a fall-back to the host see the same count: it travels through
the ARGS area for the call (written before, read back after), and the kernel's return value ends
the invoke (KernelCall.ends_run) as the host kernel's ABORT does.
"""
from __future__ import annotations

import numpy as np

from .ops_context import CallContext, KernelCall, uwords, words


def run_circular_buffer(c: CallContext) -> list[KernelCall]:
    state = c.node.user_data
    out = c.out(0)
    slots = int(out.shape[1])
    depth = int(np.prod(out.shape)) // slots            # the twin's row: h * w for batch 1
    state_addr = c.args(words(state.cycles_until_run, state.cycles_max))
    block = c.args(uwords(c.in_addr(0), c.out_addr(0), state_addr) + words(slots, depth))

    def read_back(mcu) -> None:
        state.cycles_until_run = int(np.frombuffer(mcu.read(state_addr, 4), "<i4")[0])

    return [c.call("mrt_circular_buffer_s8", block, after=read_back, ends_run=True)]
