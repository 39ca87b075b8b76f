"""`micro-rt fit` gives a verdict only where it can back it: operators without a kernel, ops that
fell back to a host kernel (no C kernel in the chosen flavour) leave parts of RAM and flash uncounted,
and then the answer is "cannot tell" (exit 3), unless what is counted already does not fit."""
from __future__ import annotations

import json

import pytest

from cli_runner import chain_with, run_cli
from conftest import PROJECT_MODELS
from test_profile import without_softmax

MODEL = str(PROJECT_MODELS / "mobilenet_tiny_int8.tflite")
ATAN = str(PROJECT_MODELS / "custom_atan.tflite")


def _fit(capsys, *argv) -> tuple[int, dict]:
    code, out, _ = run_cli(capsys, "fit", *argv, "--json")
    return code, json.loads(out)


@pytest.fixture
def unresolved_models(tmp_path) -> dict[str, str]:
    """Models with an operator micro_rt has no kernel for: a custom op of a real file, a
    builder-made custom op and a builtin micro_rt does not implement."""
    made = {}
    for name, data in (("custom", chain_with("MY_OP", custom=True)),
                       ("builtin", chain_with("HASHTABLE_LOOKUP"))):
        made[name] = str(tmp_path / f"{name}.tflite")
        (tmp_path / f"{name}.tflite").write_bytes(data)
    return {"ATAN": ATAN, "MY_OP": made["custom"], "HASHTABLE_LOOKUP": made["builtin"]}


@pytest.mark.parametrize("options", [["--kernels", "cmsis-nn"], ["--no-emulate"], ["--target", "host64"]])
def test_unaccounted_operator_gives_no_verdict(capsys, unresolved_models, options):
    for op, path in unresolved_models.items():
        code, verdict = _fit(capsys, path, "--ram", "4M", "--flash", "4M", *options)
        assert code == 3, op
        assert verdict["fits"] is None and verdict["verdict"] == "cannot tell"
        assert any(op in item and "no kernel" in item for item in verdict["not_accounted"]), op
        assert verdict["ram"]["fits"] is None and verdict["ram"]["complete"] is False
        code, out, _ = run_cli(capsys, "fit", path, "--ram", "4M", *options)
        assert code == 3 and out.startswith("CANNOT TELL") and "FITS" not in out
        assert "not accounted for" in out and op in out


def test_counted_part_over_budget_is_a_true_does_not_fit(capsys, unresolved_models):
    for op, path in unresolved_models.items():
        code, verdict = _fit(capsys, path, "--ram", "64", "--kernels", "cmsis-nn")
        assert code == 1 and verdict["fits"] is False and verdict["not_accounted"], op
        code, out, _ = run_cli(capsys, "fit", path, "--ram", "64")
        assert code == 1 and out.startswith("DOES NOT FIT")
        assert "exceeds the RAM budget" in out and "would only add" in out
    # flash alone over its budget is as true
    code, verdict = _fit(capsys, ATAN, "--ram", "1M", "--flash", "100")
    assert code == 1 and verdict["flash"]["fits"] is False and verdict["ram"]["fits"] is None


def test_reference_kernels_are_measured_as_themselves(capsys):
    """--kernels reference runs the reference C kernels (mrt_ref_*): their own stack and code are
    measured, none of the CMSIS-NN-style kernels' is borrowed, and the arena has no CMSIS-NN
    scratch."""
    from micro_rt import Interpreter
    from micro_rt.fit_measure import kernel_measurement
    from micro_rt.inputs import random_inputs
    code, ref = _fit(capsys, MODEL, "--ram", "1M", "--flash", "1M", "--kernels", "reference")
    assert code == 0 and ref["fits"] is True and ref["not_accounted"] == [] and ref["measured_on_virtual_mcu"]
    _, cmsis = _fit(capsys, MODEL, "--ram", "1M", "--flash", "1M", "--kernels", "cmsis-nn")
    with Interpreter.from_file(MODEL, target="cortex-m4", kernels="reference", emulate=True) as it:    # as fit measures
        for i, x in enumerate(random_inputs(it, 0)):
            it.set_input(x, i)
        it.invoke()
        measured, executed = kernel_measurement(it), set(it.executor.functions_used)
    assert ref["ram"]["kernel_stack_bytes"] == measured.stack_bytes
    assert ref["flash"]["kernel_code_bytes"] == measured.code_bytes
    assert {"mrt_ref_conv_s8", "mrt_ref_depthwise_conv_s8"} <= executed
    assert not any(name.startswith(("arm_convolve", "arm_depthwise", "arm_nn_mat", "mrt_gemm")) for name in executed)
    assert ref["ram"]["kernel_stack_bytes"] < cmsis["ram"]["kernel_stack_bytes"]
    assert ref["flash"]["kernel_code_bytes"] != cmsis["flash"]["kernel_code_bytes"]
    assert ref["arena"]["required_bytes"] < cmsis["arena"]["required_bytes"]      # no im2col scratch
    # the arena alone over the budget: DOES NOT FIT stays true
    code, verdict = _fit(capsys, MODEL, "--ram", "4K", "--kernels", "reference")
    assert code == 1 and verdict["fits"] is False


def test_reference_op_without_a_reference_c_kernel_is_not_counted(capsys, tmp_path, monkeypatch):
    """An op whose CMSIS-NN-style C kernel has no reference counterpart (every one has one today:
    the registry is patched to lose the LSTM's) runs on its host kernel with --kernels reference,
    and fit says so (cannot tell), never counting the CMSIS one."""
    from micro_rt.cortexm import ops
    from devtools.op_models.lstm import lstm_model
    monkeypatch.setattr(ops, "WITHOUT_REFERENCE_KERNEL", {("UNIDIRECTIONAL_SEQUENCE_LSTM", "int8")})
    path = tmp_path / "lstm.tflite"
    path.write_bytes(lstm_model("int8", 1, 3, 4, 4))
    code, verdict = _fit(capsys, str(path), "--ram", "1M", "--kernels", "reference")
    assert code == 3 and verdict["fits"] is None
    assert any("UNIDIRECTIONAL_SEQUENCE_LSTM (no reference C kernel" in item
               for item in verdict["not_accounted"]), verdict["not_accounted"]
    code, verdict = _fit(capsys, str(path), "--ram", "1M", "--kernels", "cmsis-nn")
    assert code == 0, verdict["not_accounted"]
    monkeypatch.undo()
    code, verdict = _fit(capsys, str(path), "--ram", "1M", "--kernels", "reference")
    assert code == 0, verdict["not_accounted"]


def test_cmsis_nn_kernels_are_measured_and_give_a_verdict(capsys):
    code, verdict = _fit(capsys, MODEL, "--ram", "1M", "--flash", "1M", "--kernels", "cmsis-nn")
    assert code == 0 and verdict["fits"] is True and verdict["not_accounted"] == []
    assert verdict["ram"]["kernel_stack_bytes"] > 0 and verdict["flash"]["kernel_code_bytes"] > 0


@pytest.mark.parametrize("kernels", ["reference", "cmsis-nn"])
def test_no_emulate_keeps_a_verdict_that_says_its_scope(capsys, kernels):
    code, out, _ = run_cli(capsys, "fit", MODEL, "--ram", "1M", "--no-emulate", "--kernels", kernels)
    first = out.splitlines()[0]
    assert code == 0 and first.startswith("FITS")
    assert "arena and model only (kernel stack and code not measured: --no-emulate)" in first
    code, verdict = _fit(capsys, MODEL, "--ram", "1M", "--no-emulate", "--kernels", kernels)
    assert code == 0 and verdict["fits"] is True and "--no-emulate" in verdict["scope"]
    assert verdict["ram"]["kernel_stack_bytes"] is None


def test_host_target_keeps_its_verdict(capsys):
    code, verdict = _fit(capsys, MODEL, "--ram", "1M", "--target", "host64")
    assert code == 0 and verdict["fits"] is True
    code, verdict = _fit(capsys, MODEL, "--ram", "1K", "--target", "host64")
    assert code == 1 and verdict["fits"] is False


def test_op_that_fell_back_to_the_host_is_not_accounted(capsys, monkeypatch):
    """An operator without a C kernel is a host entry of the plan and runs on its host kernel:
    its stack and code are not measured, so no FITS, and the reason is named."""
    without_softmax(monkeypatch)
    code, verdict = _fit(capsys, MODEL, "--ram", "1M", "--kernels", "cmsis-nn")
    assert code == 3 and verdict["fits"] is None
    assert verdict["not_accounted"] == ["op 9 SOFTMAX (no cmsis-nn C kernel for int8): ran on a host kernel, "
                                        "so its stack and code are not measured"]
    assert verdict["ram"]["kernel_stack_bytes"] > 0     # the rest was measured
    code, verdict = _fit(capsys, MODEL, "--ram", "1K", "--kernels", "cmsis-nn")
    assert code == 1 and verdict["fits"] is False


def test_fit_names_the_kernels_for_what_they_are(capsys):
    code, out, _ = run_cli(capsys, "fit", MODEL, "--ram", "1M", "--kernels", "cmsis-nn")
    assert "cmsis-nn (micro_rt's CMSIS-NN-style kernels)" in out.splitlines()[0]
    _, verdict = _fit(capsys, MODEL, "--ram", "1M", "--kernels", "cmsis-nn")
    assert verdict["kernels"] == "cmsis-nn" and "not Arm's CMSIS-NN library" in verdict["kernels_note"]


def test_call_once_and_resource_variables_are_counted_in_the_plan(capsys, tmp_path):
    """CALL_ONCE and the resource-variable operators run in the device runtime's plan, so the
    whole image is counted; a handle computed at run time makes its operator a host entry:
    cannot tell, and why."""
    from test_vmcu_host_entries import runtime_handle_model
    stream = str(PROJECT_MODELS / "control_flow" / "stream_state_int8.tflite")
    code, verdict = _fit(capsys, stream, "--ram", "1M", "--flash", "1M", "--kernels", "cmsis-nn")
    assert code == 0 and verdict["fits"] is True and verdict["not_accounted"] == []
    assert verdict["flash"]["plan_table_bytes"] > 0 and verdict["ram"]["plan_state_bytes"] > 0
    path = tmp_path / "runtime_handle.tflite"
    path.write_bytes(runtime_handle_model())
    code, verdict = _fit(capsys, str(path), "--ram", "1M", "--flash", "1M", "--kernels", "cmsis-nn")
    assert code == 3 and verdict["fits"] is None
    assert any("known only at run time" in item for item in verdict["not_accounted"]), verdict["not_accounted"]
