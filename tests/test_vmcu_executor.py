"""The virtual MCU behind an interpreter (issue 10): flash sized from the model, no raw Unicorn
error out of invoke, no invoke after close, the engine recycled without changing a result,
and instruction budgets from each operator's work with messages that say what happened."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from micro_rt import EmulationError, InputError, Interpreter
from micro_rt.builder import ModelBuilder
from micro_rt.cortexm import executor as executor_module
from micro_rt.cortexm import machine as machine_module

CORES = ["cortex-m0plus", "cortex-m4", "cortex-m7", "cortex-m33"]
def _relu_model(big_constant: int = 0) -> bytes:
    """RELU on int8[1, 8]; with `big_constant`, an unused constant of that many bytes."""
    b = ModelBuilder()
    x = b.add_tensor("x", [1, 8], "INT8", scale=0.5, zero_point=0)
    y = b.add_tensor("y", [1, 8], "INT8", scale=0.5, zero_point=0)
    b.add_operator("RELU", [x], [y])
    b.inputs, b.outputs = [x], [y]
    if big_constant:
        b.add_tensor("big", [big_constant], "INT8", data=np.zeros(big_constant, np.int8))
    return b.build()


def _conv_model(h: int, cin: int, cout: int, dtype: str = "INT8") -> bytes:
    rng = np.random.default_rng(0)
    b = ModelBuilder()
    q = dict(scale=0.05, zero_point=0) if dtype == "INT8" else {}
    x = b.add_tensor("x", [1, h, h, cin], dtype, **q)
    w = b.add_tensor("w", [cout, 3, 3, cin], dtype, data=rng.integers(-127, 128, (cout, 3, 3, cin)),
                     **(dict(scale=[0.01] * cout, zero_point=0) if dtype == "INT8" else {}))
    bias = b.add_tensor("b", [cout], "INT32" if dtype == "INT8" else dtype, data=np.zeros(cout),
                        **(dict(scale=[0.0005] * cout) if dtype == "INT8" else {}))
    y = b.add_tensor("y", [1, h, h, cout], dtype, **q)
    b.add_operator("CONV_2D", [x, w, bias], [y], options={"padding": "SAME", "stride_w": 1, "stride_h": 1})
    b.inputs, b.outputs = [x], [y]
    return b.build()


def _mcu_interpreter(data: bytes, core: str = "cortex-m4", **mcu_options) -> Interpreter:
    return Interpreter.from_bytes(data, target=core, kernels="cmsis-nn", emulate=True, mcu_options=mcu_options)


def test_constant_larger_than_flash_is_refused_with_the_numbers(monkeypatch):
    # Constants beyond the flash window (384 MiB between flash and SRAM: Unicorn used to refuse
    # the mapping with a raw UcError(UC_ERR_MAP) escaping invoke()). The window is narrowed to
    # 1 MiB here, so a 2 MiB constant shows it without building a 400 MiB file.
    from micro_rt.cortexm import memory_map
    monkeypatch.setattr(memory_map, "FLASH_LIMIT", 1 << 20)
    it = _mcu_interpreter(_relu_model(big_constant=2 << 20))
    with pytest.raises(EmulationError, match=r"the model's constants need 2,097,152 bytes of flash; "
                                             r"the emulated flash holds at most [\d,]+ bytes of constants"):
        it.invoke()


def test_flash_is_sized_from_the_model():
    it = _mcu_interpreter(_conv_model(4, 8, 16))
    it.invoke()
    mcu = it.executor.mcu
    constants = 16 * 3 * 3 * 8 + 16 * 4
    # The model's constants, then what the glue derives from them (per-channel multipliers
    # and shifts) placed after them: flash ends at the page after the last one.
    assert mcu.constants.end - mcu.weights_base >= constants
    assert mcu.flash_size == -(-(mcu.constants.end - machine_module.FLASH_BASE) // 4096) * 4096


def test_no_raw_unicorn_error_escapes_invoke(monkeypatch):
    import unicorn

    def broken(*args, **kwargs):
        raise unicorn.UcError(unicorn.UC_ERR_NOMEM)
    monkeypatch.setattr(executor_module, "VirtualMCU", broken)
    it = _mcu_interpreter(_relu_model())
    with pytest.raises(EmulationError, match=r"the virtual MCU could not be set up for this model: "
                                             r".*UC_ERR_NOMEM"):
        it.invoke()


def test_invoke_after_close_is_refused():
    it = _mcu_interpreter(_relu_model())
    it.invoke()
    it.close()
    with pytest.raises(InputError, match="the interpreter was closed"):
        it.invoke()
    assert it.executor is None             # no new machine was built
    it.close()
    host = Interpreter.from_bytes(_relu_model())
    with host:
        host.invoke()
    with pytest.raises(InputError, match="the interpreter was closed"):
        host.invoke()


@pytest.mark.parametrize("core", CORES)
def test_engine_recycle_keeps_outputs_records_and_state(core):
    """An interpreter whose MCU replaces its engine at every call (one per invoke) gives
    bit-identical outputs, instruction and cycle counts over invokes that cross the recycle
    boundary."""
    data = (Path(__file__).parents[1] / "models" / "residual_block_int8.tflite").read_bytes()
    runs = []
    for every in (0, 1):
        it = _mcu_interpreter(data, core, recycle_every=every, flash_wait_states=1)
        rng = np.random.default_rng(5)
        details = it.get_input_details(0)
        out = []
        for _ in range(4):
            it.set_input(rng.integers(-128, 128, tuple(details["shape"])).astype(np.int8), 0)
            it.invoke()
            out.append((it.get_output(0).tobytes(),
                        [(r.instructions, r.cycles, r.stack_bytes) for r in it.last_run]))
        runs.append((out, it.executor.mcu.engines_started))
        it.close()
    assert runs[0][0] == runs[1][0]
    assert runs[0][1] == 1 and runs[1][1] >= 4


def test_op_budget_scales_with_the_work():
    # A 2.4 GMAC convolution (112x112x84 -> 256 channels, 3x3) must get a budget well above
    # what the kernel needs: measured on a small convolution of the same kind, per MAC.
    small = _mcu_interpreter(_conv_model(14, 84, 256))
    small.invoke()
    per_mac = small.last_run[0].instructions / small.last_run[0].macs
    big = _mcu_interpreter(_conv_model(112, 84, 256))
    limit = big._mcu().op_budget(big.nodes[0])
    assert limit.macs == 112 * 112 * 256 * 9 * 84 > 2.4e9
    assert limit.expected > 2 * per_mac * limit.macs
    assert limit.budget == executor_module.BUDGET_MARGIN * limit.expected
    assert big.executor.invoke_budget == limit.budget


# The operators whose instructions per unit of work are the highest seen (few-channel depthwise,
# transcendental activations, soft-float on the M0+, pooling windows).
_BUDGET_MODELS = ["depthwise_variants_int8", "depthwise_variants_f32", "activations_int8",
                  "activations_f32", "pooling_f32", "conv_variants_int8"]


@pytest.mark.parametrize("core", ["cortex-m0plus", "cortex-m4"])
def test_expected_instructions_are_an_upper_bound(core):
    from micro_rt.inputs import random_inputs
    for name in _BUDGET_MODELS:
        it = _mcu_interpreter((Path(__file__).parents[1] / "models" / f"{name}.tflite").read_bytes(), core)
        for i, x in enumerate(random_inputs(it, 0)):
            it.set_input(x, i)
        it.invoke()
        for r in it.last_run:
            if r.on_mcu:
                expected = it.executor.op_budget(it.nodes[r.index]).expected
                assert r.instructions <= expected, (name, r.index, r.op, r.instructions, expected)


def test_budget_messages_say_what_happened(monkeypatch):
    data = _conv_model(8, 8, 8)
    monkeypatch.setattr(executor_module, "CALL_OVERHEAD", 100)
    monkeypatch.setattr(executor_module, "EXPECTED_RATES",
                        {k: executor_module.WorkRates(per_mac=0, per_element=0) for k in
                         executor_module.EXPECTED_RATES})
    with pytest.raises(EmulationError, match=r"^the invoke exceeded its instruction budget of 400 \(the sum of "
                                             r"its operators' budgets\): operator 0 CONV_2D was running when it "
                                             r"ran out \(the emulator stopped at pc 0x[0-9a-f]+ <\w+.*\); it was "
                                             r"expected to need at most 100 instructions for 36,864 MACs$") as info:
        _mcu_interpreter(data).invoke()
    assert "ran away" not in str(info.value)
    monkeypatch.undo()
    with pytest.raises(EmulationError, match=r"^the invoke exceeded its instruction budget of 5,000 \(set by the "
                                             r"caller\): operator 0 CONV_2D was running when it ran out"):
        _mcu_interpreter(data, invoke_budget=5000).invoke()
