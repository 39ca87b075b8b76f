"""One kernel default for every verb (issue 20): without --kernels each command takes the
flavour TFLM is built with for its target, decided once the target is known (cmsis-nn on a
Cortex-M core or board, reference on host64); every answer says whose arena it reports; and the
model runs on the virtual MCU only when asked, in the CLI and in the Python API."""
from __future__ import annotations


import numpy as np
import pytest

from cli_runner import run_cli, run_json
from conftest import PROJECT_MODELS
from micro_rt import Interpreter
from micro_rt.cli import COMMANDS
from micro_rt.cortexm import boards
from micro_rt.errors import InputError
from micro_rt.inputs import random_inputs

MODEL = PROJECT_MODELS / "mobilenet_tiny_int8.tflite"
CMSIS_M4 = "arena for TFLM with CMSIS-NN kernels on cortex-m4"
REFERENCE_HOST = "arena for TFLM with reference kernels on host64"


@pytest.fixture(autouse=True)
def _no_user_boards(monkeypatch):
    monkeypatch.delenv(boards.ENV_VAR, raising=False)


def _json(capsys, *argv) -> tuple[int, dict]:
    return run_json(capsys, *argv)


# ---- the CLI's default, decided after the target -------------------------------------------
# info reads no kernels; emulate runs a firmware image, which brings its own
@pytest.mark.parametrize("command", sorted(set(COMMANDS) - {"info", "emulate"}))
def test_every_verb_takes_kernels_and_says_its_default(capsys, command):
    code, out, _ = run_cli(capsys, command, "--help")
    assert code == 0 and "--kernels {reference,cmsis-nn}" in out
    squeezed = "".join(out.split())          # argparse wraps lines, also inside "cmsis-nn"

    def says(text: str) -> bool:
        return "".join(text.split()) in squeezed
    if command in ("boards", "export"):      # a board's core is always a Cortex-M
        assert says("(default: cmsis-nn, the flavour TFLM is built with for a board's Cortex-M core)")
    else:
        assert says("(default: the flavour TFLM is built with for the target, decided after "
                    "--target or --board: cmsis-nn on a Cortex-M core, reference on host64)")


def test_info_has_no_kernels(capsys):
    code, out, _ = run_cli(capsys, "info", "--help")
    assert code == 0 and "--kernels" not in out


def test_plan_defaults_to_cmsis_nn_on_cortex_m_and_reference_on_host64(capsys):
    _, m4 = _json(capsys, "plan", str(MODEL))
    _, m4_cmsis = _json(capsys, "plan", str(MODEL), "--kernels", "cmsis-nn")
    _, m4_reference = _json(capsys, "plan", str(MODEL), "--kernels", "reference")
    assert (m4["kernels"], m4["arena_for"]) == ("cmsis-nn", CMSIS_M4) and m4 == m4_cmsis
    # the two flavours plan different arenas for this model (CMSIS-NN's scratch and op data)
    assert m4_reference["required_bytes"] < m4["required_bytes"]
    _, host = _json(capsys, "plan", str(MODEL), "--target", "host64")
    _, host_reference = _json(capsys, "plan", str(MODEL), "--target", "host64", "--kernels", "reference")
    assert (host["kernels"], host["arena_for"]) == ("reference", REFERENCE_HOST) and host == host_reference
    code, text, _ = run_cli(capsys, "plan", str(MODEL), "--target", "m7")
    assert code == 0 and "arena for TFLM with CMSIS-NN kernels on cortex-m7:" in text


def test_fit_profile_report_optimize_default_to_the_cores_flavour(capsys, tmp_path):
    _, fit = _json(capsys, "fit", str(MODEL), "--ram", "64K")
    assert (fit["kernels"], fit["arena_for"]) == ("cmsis-nn", CMSIS_M4)
    _, fit_host = _json(capsys, "fit", str(MODEL), "--ram", "64K", "--target", "host64")
    assert (fit_host["kernels"], fit_host["arena_for"]) == ("reference", REFERENCE_HOST)
    _, fit_m0 = _json(capsys, "fit", str(MODEL), "--board", "nucleo-g0b1re", "--no-emulate")
    assert fit_m0["arena_for"] == "arena for TFLM with CMSIS-NN kernels on cortex-m0plus"
    code, text, _ = run_cli(capsys, "fit", str(MODEL), "--ram", "64K", "--no-emulate")
    assert code == 0 and f"{CMSIS_M4}: head" in text
    _, profile = _json(capsys, "profile", str(MODEL))
    _, reference = _json(capsys, "profile", str(MODEL), "--kernels", "reference")
    assert (profile["kernels"], profile["arena_for"]) == ("cmsis-nn", CMSIS_M4)
    assert profile["arena_bytes"] == fit["arena"]["required_bytes"]
    assert reference["arena_bytes"] < profile["arena_bytes"]
    code, text, _ = run_cli(capsys, "profile", str(MODEL), "--quiet")
    assert code == 0 and f"run in the {CMSIS_M4} ({profile['arena_bytes']:,} B" in text
    _, report = _json(capsys, "report", str(MODEL), "--no-cycles", "--optimize-seconds", "0")
    _, report_host = _json(capsys, "report", str(MODEL), "--target", "host64", "--optimize-seconds", "0")
    assert report["kernels"] == report["setup"]["kernels"] == "cmsis-nn"
    assert report_host["kernels"] == "reference" and report_host["arena_for"] == REFERENCE_HOST
    _, optimized = _json(capsys, "optimize", str(MODEL), "-o", str(tmp_path / "o.tflite"),
                         "--time-limit", "1", "--no-check")
    assert optimized["kernels"] == "cmsis-nn"
    assert optimized["original_head"] == fit["arena"]["head_bytes"]


def test_compare_decides_each_sides_flavour_after_its_target(capsys):
    _, both = _json(capsys, "compare", str(MODEL), str(MODEL), "--target-b", "host64", "--no-cycles")
    _, plan_m4 = _json(capsys, "plan", str(MODEL))
    _, plan_host = _json(capsys, "plan", str(MODEL), "--target", "host64")
    assert (both["a"]["kernels"], both["b"]["kernels"]) == ("cmsis-nn", "reference")
    assert both["a"]["plan"]["required_bytes"] == plan_m4["required_bytes"]
    assert both["b"]["plan"]["required_bytes"] == plan_host["required_bytes"]


def test_fit_board_and_boards_agree_on_ram_for_the_same_model_and_board(capsys):
    """The issue's case: `fit --board` answered for reference kernels and `boards` for
    cmsis-nn, so they disagreed on RAM; both now take the board's core's flavour by default,
    and the one given with --kernels."""
    _, table = _json(capsys, "boards", str(MODEL), "--workers", "2")
    _, table_ref = _json(capsys, "boards", str(MODEL), "--workers", "2", "--kernels", "reference")
    assert (table["kernels"], table_ref["kernels"]) == ("cmsis-nn", "reference")
    assert table["arena_for"] == "arena for TFLM with CMSIS-NN kernels on each board's core"
    rows = {r["board"]: r for r in table["boards"]}
    rows_ref = {r["board"]: r for r in table_ref["boards"]}
    for name in ("nucleo-l4r5zi", "nucleo-g0b1re", "ek-ra6m4"):
        _, fit = _json(capsys, "fit", str(MODEL), "--board", name)
        _, fit_ref = _json(capsys, "fit", str(MODEL), "--board", name, "--kernels", "reference")
        row, row_ref = rows[name], rows_ref[name]
        assert row["ram_used"] == fit["ram"]["used"] and row["flash_used"] == fit["flash"]["used"]
        assert row_ref["ram_used"] == fit_ref["ram"]["used"]
        assert row_ref["flash_used"] == fit_ref["flash"]["used"]
        assert (row["kernels"], row_ref["kernels"]) == (fit["kernels"], fit_ref["kernels"])
        assert row["arena_for"] == fit["arena_for"] == \
            f"arena for TFLM with CMSIS-NN kernels on {fit['target']}"
        assert row_ref["arena_for"] == fit_ref["arena_for"] == \
            f"arena for TFLM with reference kernels on {fit['target']}"
        # the flavours differ on this model, so agreeing is not a coincidence
        assert fit["ram"]["used"] != fit_ref["ram"]["used"]
    code, text, _ = run_cli(capsys, "boards", str(MODEL), "--workers", "2", "--quiet",
                            "--kernels", "reference")
    assert code == 0 and "kernels reference:" in text.splitlines()[0]
    assert "RAM = the arena for TFLM with reference kernels on each board's core" in text
    code, csv, _ = run_cli(capsys, "boards", str(MODEL), "--workers", "2", "--quiet", "--format", "csv")
    header, first = csv.splitlines()[:2]
    assert code == 0 and "kernels" in header.split(",") and "cmsis-nn" in first.split(",")


def test_kernels_refused_outside_the_flavours(capsys):
    for command in ("boards", "export"):
        code, _, err = run_cli(capsys, command, str(MODEL), "--kernels", "fast")
        assert code == 2 and "--kernels" in err and "'fast'" in err


# ---- execution stays on the host unless asked --------------------------------------------
def test_run_executes_on_the_host_unless_emulate_is_given(capsys):
    _, host = _json(capsys, "run", str(MODEL), "--seed", "2")
    _, emulated = _json(capsys, "run", str(MODEL), "--seed", "2", "--emulate")
    _, reference = _json(capsys, "run", str(MODEL), "--seed", "2", "--kernels", "reference")
    assert (host["executed_on"], emulated["executed_on"]) == ("host", "virtual_mcu")
    assert host["kernels"] == emulated["kernels"] == "cmsis-nn" and host["arena_for"] == CMSIS_M4
    assert host["outputs"] == emulated["outputs"] == reference["outputs"]
    assert reference["arena_bytes"] < host["arena_bytes"]
    code, text, _ = run_cli(capsys, "run", str(MODEL), "--quiet")
    assert code == 0 and text.startswith("ran on the host's kernels")
    assert f"in the {CMSIS_M4} ({host['arena_bytes']:,} B)" in text.splitlines()[0]
    code, _, err = run_cli(capsys, "run", str(MODEL), "--target", "host64", "--emulate")
    assert code == 2 and "needs a Cortex-M target, not host64" in err


def _outputs(it: Interpreter) -> list[np.ndarray]:
    for i, x in enumerate(random_inputs(it, 3)):
        it.set_input(x, i)
    it.invoke()
    return [it.get_output(i) for i in range(it.num_outputs)]


def test_interpreter_with_cmsis_nn_on_cortex_m4_does_not_emulate_unless_asked():
    data = MODEL.read_bytes()
    host = Interpreter.from_bytes(data, target="cortex-m4", kernels="cmsis-nn")
    assert host.emulate is False
    host_outputs = _outputs(host)
    assert host.executor is None and host.last_run and not any(r.on_mcu for r in host.last_run)
    with Interpreter.from_bytes(data, target="cortex-m4", kernels="cmsis-nn", emulate=True) as mcu:
        mcu_outputs = _outputs(mcu)
        assert mcu.executor is not None and all(r.on_mcu for r in mcu.last_run)
    for a, b in zip(host_outputs, mcu_outputs):      # bit-exact either way
        np.testing.assert_array_equal(a, b)
    # the same arena: the flavour plans it, wherever the kernels run
    assert host.plan.required_bytes == mcu.plan.required_bytes
    with pytest.raises(InputError, match="pass emulate=True"):
        Interpreter.from_bytes(data, target="cortex-m4", kernels="cmsis-nn",
                               mcu_options={"budget": 1000})


def test_interpreter_default_kernels_follow_the_target():
    data = MODEL.read_bytes()
    default = Interpreter.from_bytes(data)               # tflite_micro's call: target cortex-m4
    assert (default.target.name, default.kernels, default.emulate) == ("cortex-m4", "cmsis-nn", False)
    assert default.plan.as_dict() == Interpreter.from_bytes(data, kernels="cmsis-nn").plan.as_dict()
    host = Interpreter.from_bytes(data, target="host64")
    assert host.kernels == "reference"
    assert host.plan.as_dict() == Interpreter.from_bytes(data, target="host64",
                                                         kernels="reference").plan.as_dict()
    assert Interpreter.from_bytes(data, target="m0+").kernels == "cmsis-nn"
    with pytest.raises(InputError, match="unknown kernels 'fast'"):
        Interpreter.from_bytes(data, kernels="fast")
