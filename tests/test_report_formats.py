"""`--format text|json|csv|markdown` for info, plan, fit and profile: JSON is exactly what
`--json` prints, CSV and markdown carry the same figures as the JSON."""
from __future__ import annotations

import csv
import io
import json

import pytest

from conftest import PROJECT_MODELS, host_kernel_model
from micro_rt.cli import main

MODEL = str(PROJECT_MODELS / "inception_block_int8.tflite")
COMMANDS = {
    "info": ["info", MODEL],
    "plan": ["plan", MODEL, "--kernels", "cmsis-nn"],
    "fit": ["fit", MODEL, "--ram", "64K", "--flash", "1M", "--kernels", "cmsis-nn"],
    "profile": ["profile", MODEL],
}


def _run(capsys, argv) -> tuple[int, str]:
    rc = main(argv)
    return rc, capsys.readouterr().out


@pytest.mark.parametrize("name", COMMANDS)
def test_format_json_is_byte_identical_to_json(name, capsys):
    rc_a, a = _run(capsys, [*COMMANDS[name], "--json"])
    rc_b, b = _run(capsys, [*COMMANDS[name], "--format", "json"])
    if name == "profile":           # wall-clock figures differ run to run
        a, b = (json.dumps({k: v for k, v in json.loads(x).items()
                            if "second" not in k}) for x in (a, b))
    assert rc_a == rc_b and a == b


@pytest.mark.parametrize("name", COMMANDS)
def test_format_text_is_the_default(name, capsys):
    rc_a, a = _run(capsys, COMMANDS[name])
    rc_b, b = _run(capsys, [*COMMANDS[name], "--format", "text"])
    if name == "profile":
        a, b = (x.split("\nemulated in")[0] for x in (a, b))
    assert rc_a == rc_b and a == b


def _csv(text: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(text)))


def test_csv_rows_carry_the_json_figures(capsys):
    info = json.loads(_run(capsys, [*COMMANDS["info"], "--json"])[1])
    rows = _csv(_run(capsys, [*COMMANDS["info"], "--format", "csv"])[1])
    assert [int(r["macs"]) for r in rows] == [o["macs"] for o in info["ops"]]
    assert [r["op"] for r in rows] == [o["op"] for o in info["ops"]]

    plan = json.loads(_run(capsys, [*COMMANDS["plan"], "--json"])[1])
    rows = _csv(_run(capsys, [*COMMANDS["plan"], "--format", "csv"])[1])
    assert sorted((int(r["tensor"]), r["kind"], int(r["offset"]), int(r["size"])) for r in rows) == \
        sorted((b["tensor"], b["kind"], b["offset"], b["size"]) for b in plan["buffers"])

    fit = json.loads(_run(capsys, [*COMMANDS["fit"], "--json"])[1])
    rows = _csv(_run(capsys, [*COMMANDS["fit"], "--format", "csv"])[1])
    assert [(int(r["used"]), int(r["budget"]), int(r["margin"])) for r in rows] == \
        [(fit[k]["used"], fit[k]["budget"], fit[k]["margin"]) for k in ("ram", "flash")]

    profile = json.loads(_run(capsys, [*COMMANDS["profile"], "--json"])[1])
    rows = _csv(_run(capsys, [*COMMANDS["profile"], "--format", "csv"])[1])
    assert [int(r["cycles"]) for r in rows if r["op"] != "(runtime)"] == [o["cycles"] for o in profile["ops"]]
    assert [int(r["cycles"]) for r in rows if r["op"] == "(runtime)"] == [profile["runtime"]["cycles"]]
    assert sum(int(r["cycles"]) for r in rows) == profile["total_cycles"]


def test_csv_leaves_host_kernel_cycles_empty_not_zero(capsys, tmp_path):
    """An operator run on its host kernel (a large SignalRfft here) has unknown cycles: an empty cell, never 0."""
    model = str(host_kernel_model(tmp_path / "host_kernel.tflite"))
    rc, out = _run(capsys, ["profile", model, "--json"])
    profile = json.loads(out)
    rc_csv, text = _run(capsys, ["profile", model, "--format", "csv"])
    host = {o["index"] for o in profile["ops_not_counted"]}
    assert host and rc == rc_csv == 3
    rows = _csv(text)
    runtime = [r for r in rows if r["op"] == "(runtime)"]      # the plan ran, its host entry trapping
    assert len(runtime) == 1 and int(runtime[0]["instructions"]) == profile["runtime"]["instructions"]
    rows = [r for r in rows if r["op"] != "(runtime)"]
    assert len(rows) == len(profile["ops"])
    for r in rows:
        counted = int(r["index"]) not in host
        assert (r["cycles"] != "") == counted and r["counted"] == ("true" if counted else "false")


def test_markdown_has_the_summary_and_a_table(capsys):
    rc, out = _run(capsys, [*COMMANDS["fit"], "--format", "markdown"])
    assert rc == 0
    assert out.startswith("**FITS**")
    assert "| resource | used B | budget B |" in out and "|---|---:|---:|" in out
    rc, out = _run(capsys, [*COMMANDS["profile"], "--format", "markdown"])
    lines = [l for l in out.splitlines() if l.startswith("| ")]
    assert len(lines) == 1 + 9 + 1      # header + one row per operator + the device runtime's
    assert lines[-1].startswith("|  | (runtime) | yes |")


def test_json_and_another_format_is_a_usage_error(capsys):
    assert main([*COMMANDS["info"], "--json", "--format", "csv"]) == 2
    assert "--json is --format json" in capsys.readouterr().err
