"""The memory-system model run natively, against its reference twins.

1. The flash data port (native.py, native_hook.c) against the memory hook. With flash wait
   states the cycle model needs every data load from flash, in order. The port sees them through
   an MMIO alias that a virtual TLB maps flash pages' loads onto; the reference is a memory hook
   on every access. Both feed the same data-cache model.
2. The native pricing of a call's edges (native_hook.c mrt_account) against cycles.account.
3. The native flash-interface simulation (instruction fetches and data loads, native_hook.c
   flash_fetch / flash_data_read) against its Python twin (memory_system.FlashInterface, run by
   the Python hooks).

Every count must be equal: instructions, cycles and their breakdown, flash data loads, and the
values read, on every core and memory system (the cores' defaults and every board's), across
calls (warm caches carried), flash growth and engine recycling.
"""
from __future__ import annotations

import numpy as np
import pytest

from conftest import requires_arm_gcc, shared_models
from micro_rt.cortexm.boards import list_boards, simulator_parameters
from micro_rt.cortexm.cycles import CycleModel
from micro_rt.cortexm.memory_system import MemorySystem, default_memory_system
from micro_rt.cortexm.native import HookSet
from vmcu_test_firmware import CORES, elfs, mcu  # noqa: F401 (fixture)


def memory_systems(core: str) -> list[MemorySystem]:
    """The core's default interface at 0 and 5 wait states, no-cache variants, I-caches too
    small for the code (capacity misses, fully and set associative), every board's."""
    out = [default_memory_system(core, 0), default_memory_system(core, 5),
           MemorySystem(3, 16, False, 0, 1), MemorySystem(2, 8, True, 0, 1),
           MemorySystem(2, 16, True, 64, 2), MemorySystem(7, 32, False, 128, 4),
           MemorySystem(6, 16, True, 128, 8, icache_ways=2, dcache_ways=2, data_unit_bytes=8,
                        data_miss_cycles=2),
           # more ways than native_hook.c scans (LRU_SCAN_WAYS): its hashed look-up, with evictions
           MemorySystem(4, 16, True, 256, 16, data_unit_bytes=4, data_miss_cycles=3),
           MemorySystem(4, 16, True, 512, 32, icache_ways=16, dcache_ways=16)]
    for board in list_boards():
        sp = simulator_parameters(board)
        if sp.target == core:
            out.append(MemorySystem(**sp.memory_system))
    return out


class Twin:
    """Prices every call of a machine once more with the Python reference (cycles.account, from
    the flash stalls the hooks counted) and checks the native pricing against it."""

    def __init__(self, m):
        self.m = m
        self.model = CycleModel(m.core, m.elf.sha256, m.memory_system, m.read_code)
        self.checked = 0

    def call(self, *args):
        r = self.m.call(*args)
        stats = self.m.hooks.stats()
        insns, bd, blocks = self.model.count(self.m.last_edges, stats.last_block, stats.flash)
        assert (r.instructions, r.breakdown, r.blocks) == (insns, bd, blocks), args
        self.checked += 1
        return r


def _calls(m, weights: np.ndarray, words: np.ndarray) -> list:
    """A mix of flash data loads: bytes (dot), words (sum_words), unaligned words straddling
    flash lines (ldr_at, Armv7-M/8-M only), repeated so warm cache lines matter; each call's
    native pricing checked against the Python twin."""
    w = m.place_constant(weights)
    p = m.place_constant(words)
    twin = Twin(m)
    out = []
    for _ in range(2):
        out.append(twin.call("dot", w, m.arena_base, len(weights)))
        out.append(twin.call("sum_words", p, len(words)))
        out.append(twin.call("count_loop", 50))
        if not m.armv6m:
            for off in (1, 2, 3, 6, 13, 14, 15, 29, 31):
                out.append(twin.call("ldr_at", p + off))
    assert twin.checked == len(out)
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
            assert got[0].flash_data_reads >= len(weights) and got[1].flash_data_reads >= len(words)
        port.close()
        ref.close()


@pytest.mark.parametrize("core", CORES)
def test_native_flash_interface_equals_its_python_twin(elfs, core):
    """The same calls with the native hooks and with the Python hooks (FlashInterface): equal
    instructions, cycles, fetch stalls, line fills and data misses on every memory system, the
    caches' content carried from call to call."""
    rng = np.random.default_rng(2)
    weights = rng.integers(-128, 128, 3000).astype(np.int8)
    words = rng.integers(-2**31, 2**31, 700).astype(np.int32)
    for ms in memory_systems(core):
        runs = []
        for native in (True, False):
            m = mcu(elfs, core, memory_system=ms, native=native)
            assert m.hooks.native == native
            got = []
            for r in _calls(m, weights, words):
                got.append(_facts(r))
            stats = m.hooks.stats()
            runs.append((got, stats.fetch_stalls, stats.line_fills))
            m.close()
        assert runs[0] == runs[1], ms
        if ms.wait_states:
            assert any(f[5] for f in runs[0][0]), ms       # fetch stalls were counted


def test_lru_cache_keeps_the_most_recent_lines():
    from micro_rt.cortexm.memory_system import LruCache
    c = LruCache(4, 2)                 # 2 sets of 2 ways: even lines in set 0
    assert [c.access(x) for x in (0, 2, 0, 4, 0, 2)] == [False, False, True, False, True, False]
    full = LruCache(3)
    assert [full.access(x) for x in (1, 2, 3, 1, 4, 2, 1)] == [False, False, False, True, False, False, True]
    assert LruCache(0).access(1) is False


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
        for k in range(24):      # more flash segments than a fixed table would hold
            words = np.arange(k * 1000, k * 1000 + 16 * 1024, dtype=np.int32)
            addr = m.place_constant(words)
            r = m.call("sum_words", addr, len(words))
            assert r.return_value == int(np.int32(words.sum(dtype=np.int64) & 0xFFFFFFFF)), (port, k)
            facts.append(_facts(r))
        assert m.memory.flash_end > first_end and m.engines_started >= 2
        assert len(m.memory.flash_segments()) > 20
        results[port] = facts
        m.close()
    assert results[True] == results[False]


@pytest.mark.parametrize("name", shared_models(["person_detect.tflite"]))
@pytest.mark.parametrize("core", CORES)
def test_port_on_a_model_equals_the_memory_hook(name, core, monkeypatch):
    """Two invokes of a real model (kernels, literal pools, lookup tables in flash), per operator,
    at 5 wait states and on one board of the core: the flash data port priced natively gives the
    numbers of the memory hook priced by cycles.account."""
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
            if not port:          # the reference: memory hook, Python pricing
                monkeypatch.setattr(HookSet, "account", lambda *args, **kw: None)
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
            monkeypatch.undo()
        assert runs[True] == runs[False], options


@pytest.mark.parametrize("core", ["cortex-m0plus", "cortex-m4"])
@pytest.mark.parametrize("wait_states", [0, 3])
def test_faults_are_explained_with_the_virtual_tlb(elfs, core, wait_states):
    """Fault hooks cover only the unmapped ranges now (so stores to mapped pages stay fast), and
    the flash alias lies beyond 32-bit addresses: every fault still names its address and kind."""
    from micro_rt.errors import EmulationError
    m = mcu(elfs, core, flash_wait_states=wait_states)
    cases = [(("jump_to", (m.stack_top - 64) | 1), "instruction fetch from non-executable memory at address "
              f"0x{m.stack_top - 64:08x} (2 B, SRAM (stack))"),
             (("bad_read",), "read of unmapped memory at address 0x40000000 (4 B, unmapped)"),
             (("bad_write", 5), "write to unmapped memory at address 0x50000010 (4 B, unmapped)"),
             (("ldr_at", 0xA000_0000), "read of unmapped memory at address 0xa0000000 (4 B, unmapped)"),
             (("ldr_at", m.arena_base + 8192 + 16), "(4 B, guard page between arena end and stack")]
    for args, message in cases:
        with pytest.raises(EmulationError) as ei:
            m.call(*args)
        assert message in str(ei.value), args
        assert m.call("count_loop", 3).return_value == 3        # the machine still works


@pytest.mark.parametrize("name", shared_models(["audio_preprocessor_float.tflite",
                                                "audio_preprocessor_int8.tflite"]))
@pytest.mark.parametrize("core", CORES)
def test_audio_preprocessor_stream_with_the_memory_system(oracle, name, core, monkeypatch):
    """The audio preprocessors over a stream of frames (the noise estimate carried on the MCU,
    reset() on the way) at 5 wait states, through the flash data port and through the memory
    hook: every frame's features equal TFLM's, every Signal operator ran on the MCU, and the
    port's per-operator instructions and cycles equal the hook's. (Their RFFT's copy loop loads
    inside an IT block; a virtual-TLB miss there broke it: test_vmcu_it_state.py.)"""
    from conftest import SHARED_MODELS
    from micro_rt import Interpreter
    from devtools.op_models.signal import audio_frames
    data = (SHARED_MODELS / name).read_bytes()
    frames, reset_at = audio_frames(8), 5
    theirs = oracle.interpreter(data)
    expected = []
    for n, x in enumerate(frames):
        if n == reset_at:
            theirs.reset()
        oracle.invoke(theirs, [x])
        expected.append(np.array(theirs.get_output(0)))
    runs = {}
    for port in (True, False):
        if not port:          # the reference: memory hook, Python pricing
            monkeypatch.setattr(HookSet, "account", lambda *args, **kw: None)
        it = Interpreter.from_bytes(data, target=core, kernels="cmsis-nn", emulate=True,
                                    mcu_options={"flash_wait_states": 5, "flash_port": port})
        per_op = []
        for n, x in enumerate(frames):
            if n == reset_at:
                it.reset()
            it.set_input(x, 0)
            it.invoke()
            assert np.array_equal(it.get_output(0), expected[n]), (core, port, n)
            signal = [r for r in it.last_run if r.op.startswith("Signal")]
            assert signal and all(r.on_mcu for r in signal), (core, port)
            per_op.append([(r.op, r.instructions, r.cycles) for r in it.last_run])
        assert it.executor.mcu.hooks.flash_port == port
        runs[port] = per_op
        it.close()
        monkeypatch.undo()
    assert runs[True] == runs[False]


@pytest.mark.parametrize("core", ["cortex-m4", "cortex-m33"])
def test_sram_wait_states_cost_the_words_loaded_from_sram(elfs, core):
    """A board's SRAM wait states (EK-RA6M4: one above 100 MHz) are charged per 32-bit word
    loaded from SRAM: summing words in the arena pays one per word (and the call's own stack
    loads), summing the same words in flash pays only the stack's; native = Python twin."""
    n = 256
    words = np.arange(n, dtype=np.int32)
    costs = {}
    for native in (True, False):
        for ws in (0, 1):
            m = mcu(elfs, core, memory_system=MemorySystem(2, 16, True, 1024, 8, sram_wait_states=ws),
                    native=native)
            m.write(m.arena_base, words.tobytes())
            in_sram = m.call("sum_words", m.arena_base, n)
            in_flash = m.call("sum_words", m.place_constant(words), n)
            costs[native, ws] = (in_sram.cycles, in_sram.breakdown.sram, in_flash.cycles,
                                 in_flash.breakdown.sram)
            m.close()
    assert costs[True, 0] == costs[False, 0] and costs[True, 1] == costs[False, 1]
    sram0, _, flash0, _ = costs[True, 0]
    sram1, sram_stalls, flash1, flash_stalls = costs[True, 1]
    assert sram_stalls >= n and sram1 - sram0 == sram_stalls
    assert flash_stalls < 16 and flash1 - flash0 == flash_stalls
