"""Whole models on the virtual MCU: same outputs as the host kernels, cycles per operator,
alignment reports in the user's terms, and fit's measured stack and code."""
from __future__ import annotations

import json

import numpy as np
import pytest

from conftest import PROJECT_MODELS, requires, shared_model
from micro_rt import EmulationError, Interpreter
from micro_rt.cli import main
from micro_rt.inputs import random_inputs

pytestmark = requires((PROJECT_MODELS.parent / "cortexm" / "firmware" / "cortex-m4.elf").exists(),
                      "firmware not built (make firmware)")
INT8_MODELS = ["mobilenet_tiny_int8.tflite", "residual_block_int8.tflite", "inception_block_int8.tflite",
               "pooling_int8.tflite", "elementwise_int8.tflite", "activations_int8.tflite",
               "shape_ops_int8.tflite", "requantize_int8.tflite", "fully_connected_int8.tflite",
               "depthwise_variants_int8.tflite", "conv_variants_int8.tflite"]


def _emulated_equals_host(data: bytes, core: str, seeds=range(2)) -> Interpreter:
    host = Interpreter.from_bytes(data, target=core)
    emu = Interpreter.from_bytes(data, target=core, kernels="cmsis-nn", emulate=True)
    for seed in seeds:
        for i, x in enumerate(random_inputs(host, seed)):
            host.set_input(x, i)
            emu.set_input(x, i)
        host.invoke()
        emu.invoke()
        for k in range(host.num_outputs):
            np.testing.assert_array_equal(emu.get_output(k), host.get_output(k))
    return emu


@pytest.mark.parametrize("core", ["cortex-m0plus", "cortex-m4"])
@pytest.mark.parametrize("name", INT8_MODELS)
def test_project_models_run_bit_exact_on_the_mcu(name, core):
    emu = _emulated_equals_host((PROJECT_MODELS / name).read_bytes(), core)
    assert any(r.on_mcu for r in emu.last_run)
    for r in emu.last_run:
        if r.on_mcu:
            assert r.instructions > 0 and r.cycles >= r.instructions // 4


@pytest.mark.parametrize("core", ["cortex-m0plus", "cortex-m4", "cortex-m7", "cortex-m33"])
def test_person_detect_runs_whole_on_every_core(core):
    emu = _emulated_equals_host(shared_model("person_detect.tflite").read_bytes(), core, seeds=[0])
    assert all(r.on_mcu for r in emu.last_run)


def test_dsp_cores_need_fewer_cycles_than_m0plus():
    data = (PROJECT_MODELS / "mobilenet_tiny_int8.tflite").read_bytes()
    cycles = {}
    for core in ("cortex-m0plus", "cortex-m4"):
        it = Interpreter.from_bytes(data, target=core, kernels="cmsis-nn", emulate=True)
        it.invoke()
        cycles[core] = sum(r.cycles for r in it.last_run)
    assert cycles["cortex-m4"] < cycles["cortex-m0plus"]


def test_profile_json(capsys):
    code = main(["profile", str(PROJECT_MODELS / "mobilenet_tiny_int8.tflite"), "--target", "cortex-m4",
                 "--clock", "120MHz", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0
    for key in ("target", "clock_hz", "total_cycles", "total_instructions", "emulation_seconds", "ops"):
        assert key in report
    assert report["clock_hz"] == 120_000_000
    assert report["total_cycles"] == sum(op["cycles"] for op in report["ops"]) + report["runtime"]["cycles"]
    assert {"index", "op", "instructions", "cycles", "macs", "stack_bytes"} <= set(report["ops"][0])
    conv = next(op for op in report["ops"] if op["op"] == "CONV_2D")
    assert conv["macs"] > 0 and conv["stack_bytes"] > 0
    assert abs(report["total_ms"] - report["total_cycles"] / 120e3) < 1e-6


def test_profile_table_and_wait_states(capsys):
    path = str(PROJECT_MODELS / "fully_connected_int8.tflite")
    main(["profile", path, "--json"])
    fast = json.loads(capsys.readouterr().out)["total_cycles"]
    main(["profile", path, "--flash-wait-states", "5", "--json"])
    slow = json.loads(capsys.readouterr().out)["total_cycles"]
    assert slow > fast
    assert main(["profile", path]) == 0
    assert "cycles" in capsys.readouterr().out


def test_misplaced_arena_is_reported_by_tensor_and_instruction():
    """Shift the arena base by 2 bytes: with strict alignment every word access into a tensor
    is reported, naming the operator, the tensor, the PC, the function and the instruction."""
    data = (PROJECT_MODELS / "mobilenet_tiny_int8.tflite").read_bytes()
    it = Interpreter.from_bytes(data, target="cortex-m4", kernels="cmsis-nn", emulate=True,
                                mcu_options={"arena_misalign": 2, "strict_alignment": True})
    it.invoke()
    in_arena = lambda run: [a for r in run for a in r.alignment if not a.tensor.startswith("constant")]
    reports = in_arena(it.last_run)
    assert reports
    a = reports[0]
    assert a.op and a.symbol and a.instruction and a.pc
    assert "tensor" in a.tensor or "scratch" in a.tensor
    assert "faults on silicon" in str(a)
    aligned = Interpreter.from_bytes(data, target="cortex-m4", kernels="cmsis-nn", emulate=True,
                                     mcu_options={"strict_alignment": True})
    aligned.invoke()
    assert not in_arena(aligned.last_run)     # (weight rows of odd length still are, in flash)


def test_runaway_kernel_is_stopped_and_named():
    it = Interpreter.from_bytes((PROJECT_MODELS / "mobilenet_tiny_int8.tflite").read_bytes(),
                                target="cortex-m4", kernels="cmsis-nn", emulate=True, mcu_options={"budget": 1000})
    with pytest.raises(EmulationError, match=r"the invoke exceeded its instruction budget of 10,000 \(the sum of "
                                             r"its operators' budgets, 1,000 each as the caller set\): operator 0 "
                                             r"CONV_2D was running when it ran out \(the emulator stopped at pc "
                                             r"0x[0-9a-f]{8} <arm_convolve"):
        it.invoke()


def test_fit_adds_stack_and_code(capsys):
    path = str(PROJECT_MODELS / "mobilenet_tiny_int8.tflite")
    main(["fit", path, "--ram", "1M", "--flash", "1M", "--kernels", "cmsis-nn", "--json"])
    measured = json.loads(capsys.readouterr().out)
    main(["fit", path, "--ram", "1M", "--flash", "1M", "--kernels", "cmsis-nn", "--no-emulate", "--json"])
    plain = json.loads(capsys.readouterr().out)
    assert measured["measured_on_virtual_mcu"] and not plain["measured_on_virtual_mcu"]
    assert measured["ram"]["kernel_stack_bytes"] > 0 and measured["flash"]["kernel_code_bytes"] > 0
    ram, flash = measured["ram"], measured["flash"]
    assert ram["used"] == plain["ram"]["used"] + ram["kernel_stack_bytes"] + ram["static_bytes"] \
        + ram["plan_state_bytes"]
    # micro_rt's image keeps the model's constant tensors (not the .tflite file), the operators'
    # constants and the plan, and the code and data a --gc-sections link keeps
    assert plain["flash"]["used"] == plain["flash"]["model_file_bytes"] == flash["model_file_bytes"]
    assert 0 < flash["model_bytes"] < flash["model_file_bytes"]
    assert flash["used"] == sum(flash[k] for k in ("model_bytes", "op_constants_bytes", "plan_bytes",
                                                   "kernel_code_bytes", "rodata_bytes", "data_init_bytes",
                                                   "padding_bytes"))
    assert flash["used"] == sum(p["bytes"] for p in flash["parts"])


def test_cmsis_nn_arena_for_person_detect_is_near_tflm_published():
    """TFLM publishes 84,436 B (55,296 head + 29,140 tail) for person_detect with CMSIS-NN on a
    Cortex-M4; micro_rt's model of that build must be within 5%."""
    plan = Interpreter.from_bytes(shared_model("person_detect.tflite").read_bytes(), target="cortex-m4",
                                  kernels="cmsis-nn", plan_only=True).plan
    assert plan.head_bytes == 55296
    assert abs(plan.total_bytes - 84436) / 84436 < 0.05


def without_softmax(monkeypatch) -> None:
    """The C kernels as if SOFTMAX had none (the plan makes it a host entry)."""
    from micro_rt.cortexm import ops
    from micro_rt.cortexm.ops.context import UnsupportedOnMcu
    original = ops.describe

    def describe(mcu, node, *rest, **kw):
        if node.op_name == "SOFTMAX":
            raise UnsupportedOnMcu(f"op {node.index} SOFTMAX: no cmsis-nn C kernel for int8")
        return original(mcu, node, *rest, **kw)
    monkeypatch.setattr(ops, "describe", describe)


def test_profile_total_that_leaves_ops_out_is_incomplete(capsys, monkeypatch):
    """An op with no C kernel is a host entry of the plan: it runs on its host kernel and costs
    no cycles, so the total is labelled incomplete, JSON says so and lists it with the reason,
    and the exit code is 3 (cannot tell)."""
    path = str(PROJECT_MODELS / "mobilenet_tiny_int8.tflite")
    without_softmax(monkeypatch)
    code = main(["profile", path, "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 3 and report["complete"] is False
    assert report["ops_not_counted"] == [{"index": 9, "op": "SOFTMAX",
                                          "reason": "ran on a host kernel (no cmsis-nn C kernel for int8)"}]
    assert report["runtime"]["instructions"] > 0       # the rest ran as the plan
    assert all(op["on_mcu"] and op["cycles"] > 0 for op in report["ops"] if op["op"] != "SOFTMAX")
    assert main(["profile", path]) == 3
    out = capsys.readouterr().out
    total = next(line for line in out.splitlines() if "cycles =" in line)
    assert total.startswith("INCOMPLETE total (1 operator not counted)")
    assert "INCOMPLETE: the total leaves out 9 SOFTMAX" in out


def test_profile_complete_run(capsys):
    code = main(["profile", str(PROJECT_MODELS / "mobilenet_tiny_int8.tflite"), "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0 and report["complete"] is True and report["ops_not_counted"] == []


def test_profile_model_with_unresolved_op_cannot_tell(capsys):
    path = str(PROJECT_MODELS / "custom_atan.tflite")
    code = main(["profile", path, "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 3 and report["complete"] is False
    assert report["total_cycles"] is None and report["total_ms"] is None
    assert report["ops_not_counted"][0]["op"].startswith("0 ATAN")
    code = main(["profile", str(shared_model("person_detect_vela.tflite"))])
    out = capsys.readouterr().out
    assert code == 3 and "cannot profile" in out and "ethos-u" in out and "no total" in out


def test_profile_names_the_kernels_for_what_they_are(capsys):
    path = str(PROJECT_MODELS / "fully_connected_int8.tflite")
    main(["profile", path])
    assert "cmsis-nn (micro_rt's CMSIS-NN-style kernels)" in capsys.readouterr().out
    main(["profile", path, "--json"])
    report = json.loads(capsys.readouterr().out)
    assert report["kernels"] == "cmsis-nn" and "not Arm's CMSIS-NN library" in report["kernels_note"]


@pytest.mark.parametrize("text, hz", [("120MHz", 120_000_000), ("120mhz", 120_000_000),
                                      ("0.5GHz", 500_000_000), ("32768Hz", 32_768), ("48 kHz", 48_000)])
def test_profile_clock_with_units(capsys, text, hz):
    main(["profile", str(PROJECT_MODELS / "fully_connected_int8.tflite"), "--clock", text, "--json"])
    report = json.loads(capsys.readouterr().out)
    assert report["clock_hz"] == hz
    assert abs(report["total_ms"] - report["total_cycles"] / hz * 1e3) < 1e-9
