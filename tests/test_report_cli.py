"""`micro-rt report` and `micro-rt compare`: the figures come from the commands' own code
paths (plan, profile, fit), verdicts only with a budget, "not counted" never shown as 0."""
from __future__ import annotations

import json

import pytest

from conftest import PROJECT_MODELS, host_kernel_model
from micro_rt.cli import main
from micro_rt.cortexm import boards
from micro_rt.cortexm.memory_system import MemorySystem
from micro_rt.profile import emulated_profile

MODEL = PROJECT_MODELS / "inception_block_int8.tflite"


def _json(capsys, argv) -> tuple[int, dict]:
    rc = main([*argv, "--json"])
    return rc, json.loads(capsys.readouterr().out)


@pytest.fixture(autouse=True)
def _no_user_boards(monkeypatch):
    monkeypatch.delenv(boards.ENV_VAR, raising=False)


def test_report_figures_are_plan_profile_and_info_figures(capsys):
    rc, report = _json(capsys, ["report", str(MODEL), "--optimize-seconds", "0"])
    assert rc == 0
    _, plan = _json(capsys, ["plan", str(MODEL), "--kernels", "cmsis-nn"])
    _, profile = _json(capsys, ["profile", str(MODEL)])
    _, info = _json(capsys, ["info", str(MODEL)])
    assert {k: report["plan"][k] for k in plan if k in report["plan"]} == \
        {k: plan[k] for k in report["plan"]}
    ops = report["operators"]
    assert [o["cycles"] for o in ops] == [o["cycles"] for o in profile["ops"]]
    assert [o["macs"] for o in ops] == [o["macs"] for o in info["ops"]]
    assert [o["op"] for o in ops] == [o["op"] for o in info["ops"]]
    runtime_share = profile["runtime"]["cycles"] / profile["total_cycles"]     # the device runtime's part
    assert sum(o["share"] for o in ops) + runtime_share == pytest.approx(1.0)
    for o in ops:
        assert o["ms"] == pytest.approx(o["cycles"] / 100e6 * 1e3)
    assert report["fit"] is None          # no budget given: no verdict


def test_no_budget_no_verdict_on_the_page(tmp_path, capsys):
    page = tmp_path / "r.html"
    assert main(["report", str(MODEL), "-o", str(page), "--optimize-seconds", "0"]) == 0
    out = capsys.readouterr().out
    assert "no budget given: no verdict" in out
    html = page.read_text()
    assert "no verdict" in html and "FITS" not in html and "DOES NOT FIT" not in html


def test_budget_verdicts_and_exit_codes(tmp_path, capsys):
    page = tmp_path / "r.html"
    rc = main(["report", str(MODEL), "-o", str(page), "--ram", "64K", "--flash", "1M",
               "--optimize-seconds", "0"])
    assert rc == 0 and "FITS" in page.read_text()
    capsys.readouterr()
    rc, report = _json(capsys, ["report", str(MODEL), "--ram", "4K", "--optimize-seconds", "0"])
    assert rc == 1 and report["fit"]["verdict"] == "does not fit"
    assert report["fit"]["ram"]["margin"] == 4096 - report["ram_used"]


def test_operator_without_a_kernel_is_said_and_no_total_claimed(tmp_path, capsys):
    page = tmp_path / "r.html"
    model = PROJECT_MODELS / "custom_atan.tflite"
    rc = main(["report", str(model), "-o", str(page), "--ram", "1M", "--optimize-seconds", "0"])
    out = capsys.readouterr().out
    assert rc == 3 and "CANNOT TELL" in out
    assert "no kernel registered" in out
    html = page.read_text()
    assert "CANNOT TELL" in html and "no total: the model was not run" in html


def test_host_kernel_operators_are_not_counted_and_the_total_is_incomplete(capsys, tmp_path):
    model = host_kernel_model(tmp_path / "host_kernel.tflite")     # its SignalRfft runs on the host
    rc, report = _json(capsys, ["report", str(model), "--optimize-seconds", "0"])
    assert rc == 3
    host = [o for o in report["operators"] if o["on_mcu"] is False]
    assert host and all(o["cycles"] is None and o["share"] is None for o in host)
    assert not report["profile"]["complete"]
    rc = main(["report", str(model), "--optimize-seconds", "0"])
    text = capsys.readouterr().out
    assert "latency: INCOMPLETE, at least" in text
    assert sum("ran on a host kernel" in line for line in text.splitlines()) == len(host)


def test_board_gives_core_clock_wait_states_and_budgets(capsys):
    board = boards.load_board("nucleo-f446re")
    sim = boards.simulator_parameters(board)
    rc, report = _json(capsys, ["report", str(MODEL), "--board", "NUCLEO_F446RE",
                                "--optimize-seconds", "0"])
    assert rc == 0
    setup = report["setup"]
    assert (setup["board"], setup["target"], setup["clock_hz"]) == (board.name, board.core, sim.clock_hz)
    assert (setup["flash_wait_states"], setup["line_fill_cycles"]) == (sim.flash_wait_states,
                                                                       sim.line_fill_cycles)
    assert f"with {sim.flash_wait_states} flash wait states (a line fill costs " \
        f"{sim.line_fill_cycles} core cycles)" in report["cycles_note"]
    assert (setup["ram_budget"], setup["flash_budget"]) == (sim.arena_bytes, sim.flash_bytes)
    assert report["fit"]["verdict"] == "fits"
    # The same cycles as `profile --board`, and as the board's flash interface gives them.
    _, profile = _json(capsys, ["profile", str(MODEL), "--board", "nucleo-f446re"])
    assert report["profile"]["total_cycles"] == profile["total_cycles"]
    direct, run = emulated_profile(MODEL.read_bytes(), board.core, sim.clock_hz,
                                   memory_system=MemorySystem(**sim.memory_system))
    run.close()
    assert direct["total_cycles"] == profile["total_cycles"]
    # Options override the board's figures, and the page says where budgets come from.
    rc, report = _json(capsys, ["report", str(MODEL), "--board", "nucleo-f446re", "--ram", "4K",
                                "--clock", "84MHz", "--optimize-seconds", "0"])
    assert rc == 1 and report["setup"]["clock_hz"] == 84_000_000
    assert "--ram given instead" in report["setup"]["budget_source"]


def test_board_errors_are_usage_errors(capsys):
    assert main(["report", str(MODEL), "--board", "no-such-board"]) == 2
    assert "unknown board 'no-such-board'" in capsys.readouterr().err
    assert main(["report", str(MODEL), "--board", "nucleo-f446re", "--target", "cortex-m7"]) == 2
    assert "not allowed with argument --board" in capsys.readouterr().err
    assert main(["report", str(MODEL), "--board", "nucleo-f446re", "--clock", "2GHz"]) == 2
    assert "outside" in capsys.readouterr().err


def test_optimize_suggestion_is_what_optimize_finds(capsys):
    model = PROJECT_MODELS / "pooling_int8.tflite"
    rc, report = _json(capsys, ["report", str(model), "--optimize-seconds", "1", "--no-cycles"])
    assert rc == 0
    saved = report["optimize"]["saved_bytes"]
    assert saved > 0 and any(f"would save {saved:,} B" in s for s in report["suggestions"])
    assert report["cycles_note"] == "cycles not measured (--no-cycles)"
    assert all(o["cycles"] is None for o in report["operators"])


def test_report_markdown_and_csv(capsys):
    rc = main(["report", str(MODEL), "--optimize-seconds", "0", "--format", "csv"])
    rows = capsys.readouterr().out.splitlines()
    assert rc == 0 and rows[0].startswith("index,op,shapes,dtype,macs") and len(rows) == 1 + 9
    rc = main(["report", str(MODEL), "--optimize-seconds", "0", "--format", "markdown"])
    out = capsys.readouterr().out
    assert "| # | op | inputs -> outputs |" in out


def test_compare_original_and_optimized_line_up_by_tensor_names(tmp_path, capsys):
    src = PROJECT_MODELS / "pooling_int8.tflite"
    out = tmp_path / "opt.tflite"
    assert main(["optimize", str(src), "-o", str(out), "--no-check", "--time-limit", "1",
                 "--target", "cortex-m4", "--kernels", "cmsis-nn"]) == 0
    capsys.readouterr()
    page = tmp_path / "cmp.html"
    rc, cmp = _json(capsys, ["compare", str(src), str(out), "--html", str(page)])
    assert rc == 0
    summary = {row["metric"]: row for row in cmp["summary"]}
    head = summary["arena head bytes"]
    assert head["delta"] == cmp["b"]["plan"]["head_bytes"] - cmp["a"]["plan"]["head_bytes"] < 0
    ops = cmp["operators"]
    assert ops is not None and len(ops) == len(cmp["a"]["operators"])
    assert [o["b_index"] for o in ops] != [o["index"] for o in ops]     # reordered, still matched
    assert all(o["macs_a"] == o["macs_b"] for o in ops)
    html = page.read_text()
    assert html.count('<figure class="chart"') == 2 and "Per operator" in html


def test_compare_one_model_on_two_boards(capsys):
    rc = main(["compare", str(MODEL), str(MODEL), "--board", "nucleo-f446re",
               "--board-b", "nucleo-g0b1re", "--format", "markdown"])
    out = capsys.readouterr().out
    assert rc == 0
    assert "A: " in out and "board nucleo-f446re" in out and "board nucleo-g0b1re" in out
    assert "| cycles |" in out and "| verdict |" in out


def test_compare_says_when_operators_do_not_match(capsys):
    rc = main(["compare", str(MODEL), str(PROJECT_MODELS / "pooling_int8.tflite"), "--no-cycles"])
    out = capsys.readouterr().out
    assert rc == 0 and "no per-operator comparison" in out


def test_alignment_reports_are_warnings_and_node_data(tmp_path, capsys):
    model = str(PROJECT_MODELS / "mobilenet_tiny_int8.tflite")
    _, profile = _json(capsys, ["profile", model, "--strict-alignment"])
    assert profile["alignment"]
    rc, report = _json(capsys, ["report", model, "--strict-alignment", "--optimize-seconds", "0",
                                "--model-explorer", str(tmp_path)])
    assert [w for w in report["warnings"] if w.startswith("alignment: ")] == \
        [f"alignment: {a}" for a in profile["alignment"]]
    unaligned = json.loads((tmp_path / "mobilenet_tiny_int8.unaligned.json").read_text())
    per_op = {int(k): v["value"] for k, v in unaligned["main"]["results"].items()}
    expected = {o["index"]: sum(int(a.split(" x")[-1].split()[0]) for a in o["alignment"])
                for o in profile["ops"]}
    assert per_op == expected and sum(per_op.values()) > 0


def _twin(path, dtype: str, prefix: str) -> str:
    """x -> RELU -> TANH -> LOGISTIC in `dtype`, every tensor named with `prefix`: an int8
    model and its int16 twin from another conversion (same operators, other names)."""
    from micro_rt.builder import ModelBuilder
    b = ModelBuilder()
    scale = 1 / 128 if dtype == "INT8" else 1 / 32768
    t = [b.add_tensor(f"{prefix}/t{k}", (1, 16), dtype, scale=scale, zero_point=0)
         for k in range(3)]
    # LOGISTIC's output: TFLM's fixed quantization, [0, 1) over the type's range
    t.append(b.add_tensor(f"{prefix}/t3", (1, 16), dtype, scale=2 * scale if dtype == "INT8"
                          else scale, zero_point=-128 if dtype == "INT8" else 0))
    for k, op in enumerate(("RELU", "TANH", "LOGISTIC")):
        b.add_operator(op, [t[k]], [t[k + 1]])
    b.inputs, b.outputs = [t[0]], [t[3]]
    path.write_bytes(b.build())
    return str(path)


def test_compare_int8_and_int16_twin_matches_operators_by_position(tmp_path, capsys):
    a = _twin(tmp_path / "m_int8.tflite", "INT8", "model_int8")
    b = _twin(tmp_path / "m_int16.tflite", "INT16", "quantized16")
    rc, cmp = _json(capsys, ["compare", a, b, "--no-cycles"])
    assert rc == 0 and cmp["operators_matched_by"] == "position"
    ops = cmp["operators"]
    assert [(o["index"], o["b_index"], o["op"]) for o in ops] == \
        [(0, 0, "RELU"), (1, 1, "TANH"), (2, 2, "LOGISTIC")]
    assert all(o["live_b"] == 2 * o["live_a"] for o in ops)       # int16: twice the bytes
    rc = main(["compare", a, b, "--no-cycles"])
    out = capsys.readouterr().out
    assert rc == 0 and ("Per operator (matched by position and operator: the output tensor "
                        "names differ)") in out
    # the same names: matched by name, as before
    rc, same = _json(capsys, ["compare", a, a, "--no-cycles"])
    assert same["operators_matched_by"] == "names" and len(same["operators"]) == 3
