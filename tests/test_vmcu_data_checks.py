"""The checks TFLM makes on run-time values (a zero FLOOR_DIV / int32 DIV divisor, INT32_MIN / -1,
a quantized RSQRT input below its zero point) run in the firmware (mrt_data_checks.c) as calls
of their own before the kernel's: on the MCU they refuse exactly the inputs their twins (the host
kernels) refuse, over seeded random inputs, with TFLM's reason, and the models they are in run as
one firmware plan (whole invoke), the refusal naming the operator there too."""
from __future__ import annotations

import numpy as np
import pytest

from micro_rt import Interpreter, KernelError
from micro_rt.inputs import random_inputs

from conftest import shared_model
from kernel_cases import f32, i32, q8, q16, single_op


def _models():
    return {
        "FLOOR_DIV": single_op("FLOOR_DIV", [f32((2, 6)), f32((6,))], f32((2, 6))),
        "DIV": single_op("DIV", [i32((2, 6)), i32((6,))], i32((2, 6))),
        "RSQRT int8": single_op("RSQRT", [q8((12,), 0.1, 10)], q8((12,), 0.05, -128)),
        "RSQRT int16": single_op("RSQRT", [q16((12,), 0.001)], q16((12,), 0.003)),
    }


def _values(name: str, rng, k: int) -> list[np.ndarray]:
    """Inputs that are refused now and then: zeros, INT32_MIN / -1 pairs, values below the zero
    point, each with some probability."""
    if name == "FLOOR_DIV":
        a = rng.normal(0, 4, (2, 6)).astype(np.float32)
        b = rng.normal(0, 4, (6,)).astype(np.float32)
        b[rng.random(6) < 0.1] = 0.0 if k % 2 else -0.0
        return [a, b]
    if name == "DIV":
        a = rng.integers(-50, 50, (2, 6)).astype(np.int32)
        b = rng.integers(-3, 4, (6,)).astype(np.int32)
        b[b == 0] = 1 if k % 3 else 0
        if k % 4 == 1:
            j = int(rng.integers(6))
            a[int(rng.integers(2)), j], b[j] = np.iinfo(np.int32).min, -1
        return [a, b]
    dtype, zp = (np.int8, 10) if name == "RSQRT int8" else (np.int16, 0)
    x = rng.integers(zp, np.iinfo(dtype).max + 1, (12,)).astype(dtype)
    if k % 3 == 0:                      # now and then one value just below the zero point
        x[int(rng.integers(12))] = zp - 1
    return [x]


def _outcome(it: Interpreter, values: list[np.ndarray]):
    for i, v in enumerate(values):
        it.set_input(v, i)
    try:
        it.invoke()
    except KernelError as e:
        return "refused", str(e)
    return "ran", it.get_output(0).copy()


@pytest.mark.parametrize("name", list(_models()))
def test_the_mcu_refuses_what_the_host_refuses(name):
    data = _models()[name]
    host = Interpreter.from_bytes(data, target="cortex-m4")
    mcu = Interpreter.from_bytes(data, target="cortex-m4", kernels="cmsis-nn", emulate=True)
    rng = np.random.default_rng(5)
    refused = ran = 0
    for k in range(24):
        values = _values(name, rng, k)
        (h, hv), (m, mv) = _outcome(host, values), _outcome(mcu, values)
        assert h == m, (name, k, hv, mv)
        if h == "ran":
            ran += 1
            assert np.array_equal(hv, mv, equal_nan=np.dtype(hv.dtype).kind == "f"), (name, k)
        else:
            refused += 1
            assert "op 0 " in mv, mv
            reason = hv.split(": ", 1)[1][:24]
            assert reason in mv, (hv, mv)
    assert refused and ran
    assert not mcu.executor.host_entries()
    assert mcu.last_run is None or all(r.on_mcu for r in mcu.last_run)
    host.close()
    mcu.close()


@pytest.mark.parametrize("name", ["audio_preprocessor_int8.tflite", "audio_preprocessor_float.tflite"])
def test_audio_preprocessors_run_as_one_plan(name):
    path = str(shared_model(name))
    host = Interpreter.from_file(path, target="cortex-m4")
    mcu = Interpreter.from_file(path, target="cortex-m4", kernels="cmsis-nn", emulate=True)
    for seed in range(3):              # the Signal kernels' state carries over from invoke to invoke
        inputs = random_inputs(host, seed)
        outs = []
        for it in (host, mcu):
            for i, x in enumerate(inputs):
                it.set_input(x, i)
            it.invoke()
            outs.append([it.get_output(i).copy() for i in range(it.num_outputs)])
        assert not mcu.executor.host_entries()
        assert all(np.array_equal(a, b) for a, b in zip(*outs))
        assert [r.index for r in host.last_run] == [r.index for r in mcu.last_run]
        assert all(r.on_mcu and r.instructions > 0 for r in mcu.last_run)
    host.close()
    mcu.close()
