"""Every board answer says how far it is known to be from silicon (cortexm/validation.py), and
the figures it says so from were measured on the code shipped now."""
from __future__ import annotations

import json

import pytest

from cli_runner import run_cli
from micro_rt.cortexm import boards, validation
from micro_rt.cortexm.validation import Status, board_validation

MEASUREMENTS = boards.SHIPPED_DIR / "measurements" / "published_latency.json"
MODEL = "models/mobilenet_tiny_int8.tflite"


@pytest.fixture(autouse=True)
def _no_user_boards(monkeypatch):
    monkeypatch.delenv(boards.ENV_VAR, raising=False)


def test_validation_summary_was_measured_on_the_shipped_code():
    """validation.json carries the fingerprint of the firmware, cycle model and board files it
    measured: a change to any of them without re-running benchmarks/bench_calibration.py
    --write leaves every board answer quoting errors of other code."""
    data = json.loads(validation.SUMMARY_PATH.read_text())
    assert data["code_fingerprint"] == validation.code_fingerprint(), (
        "re-run: python benchmarks/bench_calibration.py --models DIR --write")


def test_every_listed_measurement_has_a_scope_and_a_reason():
    entries = json.loads(MEASUREMENTS.read_text())["entries"]
    for e in entries:
        v = e["validation"]
        assert v["scope"] in ("in", "apart", "other-kernels"), e["source"]
        assert len(v["reason"]) > 40, e["source"]
        if v["scope"] == "in":      # CMSIS-NN's kernels ran
            assert e["tflm_with_cmsis_nn"] or "CMSIS_NN" in e["libraries"], e["source"]


def test_validated_boards_are_those_with_in_scope_measurements():
    entries = json.loads(MEASUREMENTS.read_text())["entries"]
    in_scope = {e["board"] for e in entries if e["validation"]["scope"] == "in"}
    for board in boards.list_boards():
        v = board_validation(board)
        assert (v.status is Status.VALIDATED) == (board.name in in_scope), board.name
        if v.status is Status.VALIDATED:
            assert v.summary.startswith("validated: ") and "measurement" in v.summary
            assert v.min_error <= v.max_error and v.measurements >= 1
        else:
            assert v.summary.startswith("not validated: ") and "estimates" in v.summary
        unverified = [c for s, c in board.citations()
                      if c.status == "unverified" and s != "peripherals"]
        assert len(v.unverified) == len(unverified), board.name
        assert not any(u.startswith("peripherals:") for u in v.unverified), board.name


def test_a_user_board_file_is_not_validated(tmp_path):
    data = json.loads((boards.SHIPPED_DIR / "nucleo-l4r5zi.json").read_text())
    (tmp_path / "nucleo-l4r5zi.json").write_text(json.dumps(data))
    board = boards.load_board("nucleo-l4r5zi", [tmp_path])
    v = board_validation(board)
    assert v.status is Status.NOT_VALIDATED and "is not the catalog's" in v.summary


def test_fit_and_profile_print_the_status(capsys):
    code, out, _ = run_cli(capsys, *["fit", MODEL, "--board", "nucleo-l4r5zi", "--quiet"])
    assert code in (0, 1) and "validated: " in out
    code, out, _ = run_cli(capsys, *["fit", MODEL, "--board", "nucleo-l4r5zi", "--format", "json", "--quiet"])
    assert json.loads(out)["validation"]["status"] == "validated"
    code, out, _ = run_cli(capsys, *["profile", MODEL, "--board", "nucleo-g0b1re", "--format", "json",
                            "--quiet"])
    payload = json.loads(out)
    assert payload["validation"]["status"] == "not validated"
    assert payload["validation"]["unverified"], "the G0B1 has unverified figures"
    code, out, _ = run_cli(capsys, *["profile", MODEL, "--board", "nucleo-g0b1re", "--quiet"])
    assert "not validated: no published CMSIS-NN measurement on this board" in out
    assert "unverified figure" in out


def test_other_kernels_are_not_validated_by_cmsis_nn_measurements(capsys):
    """Every published measurement ran CMSIS-NN: an answer with the reference kernels is not
    validated by them, on a board that has some, and the answer says what they do check."""
    board = boards.load_board("nucleo-l4r5zi")
    assert board_validation(board).status is Status.VALIDATED
    v = board_validation(board, kernels="reference")
    assert v.status is Status.NOT_VALIDATED and v.measurements == 0
    assert v.summary.startswith("not validated for reference kernels: ") and "ran CMSIS-NN" in v.summary
    for command in ("fit", "profile"):
        code, out, _ = run_cli(capsys, command, MODEL, "--board", "nucleo-l4r5zi", "--kernels", "reference",
                               "--format", "json", "--quiet")
        assert json.loads(out)["validation"]["status"] == "not validated", command
        code, out, _ = run_cli(capsys, command, MODEL, "--board", "nucleo-l4r5zi", "--kernels", "cmsis-nn",
                               "--format", "json", "--quiet")
        assert json.loads(out)["validation"]["status"] == "validated", command


def test_csv_and_markdown_carry_the_status(capsys):
    for command in ("fit", "profile"):
        code, out, _ = run_cli(capsys, command, MODEL, "--board", "nucleo-l4r5zi", "--format", "csv",
                               "--quiet")
        header, first = out.splitlines()[:2]
        assert header.split(",")[-1] == "validation" and "validated: " in first, command
        code, out, _ = run_cli(capsys, command, MODEL, "--board", "nucleo-g0b1re", "--format",
                               "markdown", "--quiet")
        assert "not validated: " in out and "unverified figure" in out, command
    code, out, _ = run_cli(capsys, "boards", MODEL, "--format", "csv", "--workers", "1", "--quiet")
    header = out.splitlines()[0].split(",")
    assert "validated" in header


def test_report_text_says_the_status_on_a_board_and_no_budget_without_one(capsys):
    code, out, _ = run_cli(capsys, "report", MODEL, "--board", "nucleo-g0b1re",
                           "--optimize-seconds", "0", "--quiet")
    assert "not validated: " in out and "unverified figure" in out
    code, out, _ = run_cli(capsys, "report", MODEL, "--target", "cortex-m4",
                           "--optimize-seconds", "0", "--quiet")
    assert "no budget given: no verdict" in out and "validated" not in out


def test_the_published_binaries_are_the_published_rows():
    """published_binaries.json (benchmarks/measure_binaries.py: the measured software itself on
    the virtual board) quotes each published figure as published_latency.json holds it, and says
    what it could not reproduce."""
    data = json.loads((MEASUREMENTS.parent / "published_binaries.json").read_text())
    published = {(e["source"]["name"], e["benchmark"]): e for e in json.loads(MEASUREMENTS.read_text())["entries"]}
    assert data["not_reproduced"] and data["sources"] and data["timed"]
    assert len(data["rows"]) >= 4
    for r in data["rows"]:
        e = published[(data["published_source"], r["benchmark"])]
        assert e["board"] == data["board"] and e["cycles_per_inference"] == r["published_cycles"]
        assert r["scope"] == e["validation"]["scope"]
        assert r["binary_cycles"] > 0 and r["binary_instructions"] > 0 and r["micro_rt_cycles"] > 0
