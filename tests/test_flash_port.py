"""The flash data port (native.py, native_hook.c) against the memory-hook reference.

With flash wait states the cycle model needs every data load from flash, in order. The port sees
them through an MMIO alias that a virtual TLB maps flash pages' loads onto; the reference is a
memory hook on every access. Both feed the same data-cache model, so every count must be equal:
instructions, cycles and their breakdown, flash data loads, and the values read, on every core
and memory system (the cores' defaults and every board's), across calls (warm caches carried),
flash growth and engine recycling.
"""
from __future__ import annotations

import numpy as np
import pytest

from conftest import requires_arm_gcc, shared_models
from micro_rt.cortexm.boards import list_boards, simulator_parameters
from micro_rt.cortexm.memory_system import MemorySystem, default_memory_system
from vmcu_test_firmware import CORES, elfs, mcu  # noqa: F401 (fixture)


def memory_systems(core: str) -> list[MemorySystem]:
    """The core's default interface at 0 and 5 wait states, no-cache variants, every board's."""
    out = [default_memory_system(core, 0), default_memory_system(core, 5),
           MemorySystem(3, 16, False, 0, 1), MemorySystem(2, 8, True, 0, 1)]
    for board in list_boards():
        sp = simulator_parameters(board)
        if sp.target == core:
            out.append(MemorySystem(**sp.memory_system))
    return out


def _calls(m, weights: np.ndarray, words: np.ndarray) -> list:
    """A mix of flash data loads: bytes (dot), words (sum_words), unaligned words straddling
    flash lines (ldr_at, Armv7-M/8-M only), repeated so warm cache lines matter."""
    w = m.place_constant(weights)
    p = m.place_constant(words)
    out = []
    for _ in range(2):
        out.append(m.call("dot", w, m.arena_base, len(weights)))
        out.append(m.call("sum_words", p, len(words)))
        if not m.armv6m:
            for off in (1, 2, 3, 6, 13, 14, 15, 29, 31):
                out.append(m.call("ldr_at", p + off))
    return out


def _facts(r) -> tuple:
    bd = r.breakdown
    return (r.return_value, r.instructions, r.cycles, bd.core, bd.branches, bd.fetch, bd.data_flash,
            r.flash_data_reads, r.blocks)


pytestmark = requires_arm_gcc


@pytest.mark.parametrize("core", CORES)
def test_port_counts_equal_the_memory_hook(elfs, core):
    rng = np.random.default_rng(1)
    weights = rng.integers(-128, 128, 3000).astype(np.int8)
    words = rng.integers(-2**31, 2**31, 700).astype(np.int32)
    for ms in memory_systems(core):
        port = mcu(elfs, core, memory_system=ms)
        ref = mcu(elfs, core, memory_system=ms, flash_port=False)
        assert port.hooks.flash_port == (ms.wait_states > 0)
        assert not ref.hooks.flash_port and ref.hooks.memory_hook == (ms.wait_states > 0)
        got, want = _calls(port, weights, words), _calls(ref, weights, words)
        assert [_facts(r) for r in got] == [_facts(r) for r in want], ms
        if ms.wait_states:
            assert all(r.flash_data_reads for r in got)
        port.close()
        ref.close()


@pytest.mark.parametrize("core", ["cortex-m0plus", "cortex-m4"])
def test_port_reads_the_right_bytes_after_flash_grows_and_the_engine_is_recycled(elfs, core):
    """Constants placed past the first flash mapping (a new host segment, a new MMIO alias) and
    engines replaced every 3 calls: the kernels read the constants' bytes, counts as the hook."""
    ms = default_memory_system(core, 4)
    results = {}
    for port in (True, False):
        m = mcu(elfs, core, memory_system=ms, flash_port=port, flash_bytes=0, recycle_every=3)
        first_end = m.memory.flash_end
        facts = []
        for k in range(6):
            words = np.arange(k * 1000, k * 1000 + 64 * 1024, dtype=np.int32)
            addr = m.place_constant(words)
            r = m.call("sum_words", addr, len(words))
            assert r.return_value == int(np.int32(words.sum(dtype=np.int64) & 0xFFFFFFFF)), (port, k)
            facts.append(_facts(r))
        assert m.memory.flash_end > first_end and m.engines_started >= 2
        results[port] = facts
        m.close()
    assert results[True] == results[False]


@pytest.mark.parametrize("name", shared_models(["person_detect.tflite"]))
@pytest.mark.parametrize("core", CORES)
def test_port_on_a_model_equals_the_memory_hook(name, core):
    """Two invokes of a real model (kernels, literal pools, lookup tables in flash), per operator,
    at 5 wait states and on one board of the core: the same numbers either way."""
    from conftest import SHARED_MODELS
    from micro_rt import Interpreter
    from micro_rt.inputs import random_inputs
    configs = [{"flash_wait_states": 5}]
    boards = [simulator_parameters(b) for b in list_boards()]
    sp = next(s for s in boards if s.target == core)
    configs.append({"memory_system": MemorySystem(**sp.memory_system), "clock_hz": sp.clock_hz})
    for options in configs:
        runs = {}
        for port in (True, False):
            it = Interpreter.from_file(str(SHARED_MODELS / name), target=core, kernels="cmsis-nn",
                                       emulate=True, mcu_options={**options, "flash_port": port})
            per_op = []
            for seed in (0, 1):
                for i, x in enumerate(random_inputs(it, seed)):
                    it.set_input(x, i)
                it.invoke()
                per_op.append([(r.instructions, r.cycles) for r in it.last_run])
                per_op.append([o.tobytes() for o in (it.get_output(0),)])
            assert it.executor.mcu.hooks.flash_port == port
            runs[port] = per_op
            it.close()
        assert runs[True] == runs[False], options
