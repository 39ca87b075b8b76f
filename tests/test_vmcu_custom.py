"""TFLM's own custom operators on the virtual MCU against their numpy twins: CIRCULAR_BUFFER
(cortexm/src/mrt_circular_buffer.c) over streams of invokes, its period counter carried across
invokes and restarted by reset(), the run ending at it (kTfLiteAbort) on the same invokes as on
the host."""
from __future__ import annotations

import numpy as np
import pytest

from micro_rt import Interpreter
from test_circular_buffer import CASES, streaming_model

CORES = ["cortex-m0plus", "cortex-m4"]


@pytest.mark.parametrize("core", CORES)
@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(map(str, c)))
def test_circular_buffer_stream_matches_twin(core, case):
    slots, depth, cycles_max, width = case
    data = streaming_model(slots, depth, cycles_max, width)
    host = Interpreter.from_bytes(data, target=core)
    mcu = Interpreter.from_bytes(data, target=core, kernels="cmsis-nn", emulate=True)
    rng = np.random.default_rng(slots * 10 + depth)
    ended_early = 0
    for n in range(25):
        if n == 14:
            host.reset()
            mcu.reset()
        x = rng.integers(-128, 128, (1, 1, width, depth), dtype=np.int8)
        for it in (host, mcu):
            it.set_input(x, 0)
            it.invoke()
        assert [r.index for r in mcu.last_run] == [r.index for r in host.last_run], n
        for k in range(2):
            assert np.array_equal(host.get_output(k), mcu.get_output(k)), (n, k)
        buffer_record = mcu.last_run[0]
        assert buffer_record.on_mcu and buffer_record.cycles > 0
        assert buffer_record.ended_run == (len(host.last_run) == 1)
        ended_early += buffer_record.ended_run
    if cycles_max is not None and cycles_max > 1:
        assert ended_early, "the period never ended a run early"
