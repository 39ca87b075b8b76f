"""`fit --board`, `profile --board` and `micro-rt boards MODEL`: a board's core, clock, flash
interface and memory give the target, the cycles and the budgets; every row of `boards` is what
`fit --board` and `profile --board` say for that board."""
from __future__ import annotations

import json

import pytest

from cli_runner import chain_with, relu_model, run_cli, run_json
from conftest import PROJECT_MODELS
from micro_rt.cortexm import boards
from micro_rt.cortexm.memory_system import MemorySystem
from micro_rt.profile import emulated_profile
from micro_rt.reports.boards import measure_boards

MODEL = PROJECT_MODELS / "mobilenet_tiny_int8.tflite"


@pytest.fixture(autouse=True)
def _no_user_boards(monkeypatch):
    monkeypatch.delenv(boards.ENV_VAR, raising=False)


def _json(capsys, *argv) -> tuple[int, dict]:
    return run_json(capsys, *argv)


def _tiny_board(directory, name: str = "tiny-m0", sram: int = 4096) -> None:
    """A user board: the shipped G0B1RE with a 4 KiB SRAM, as a user would write one."""
    data = json.loads((boards.SHIPPED_DIR / "nucleo-g0b1re.json").read_text())
    data.update(name=name, title=name.upper(), aliases=[])
    region = data["memory"]["arena_regions"][0]
    for r in data["memory"]["regions"]:
        if r["name"] == region:
            r["size"] = sram
    data["memory"]["arena_regions"] = [region]
    (directory / f"{name}.json").write_text(json.dumps(data))


def test_fit_board_takes_core_and_budgets_from_the_board(capsys):
    board = boards.load_board("nucleo-l4r5zi")
    sim = boards.simulator_parameters(board)
    code, fit = _json(capsys, "fit", str(MODEL), "--board", "NUCLEO-L4R5ZI", "--kernels", "cmsis-nn")
    assert code == 0 and fit["verdict"] == "fits"
    assert (fit["board"], fit["target"]) == ("nucleo-l4r5zi", board.core)
    assert (fit["ram"]["budget"], fit["flash"]["budget"]) == (sim.arena_bytes, sim.flash_bytes)
    assert fit["ram"]["margin"] == sim.arena_bytes - fit["ram"]["used"]
    assert "SRAM1, SRAM2, SRAM3" in fit["budget_source"]
    # The same figures as the bare target with the same budgets.
    _, bare = _json(capsys, "fit", str(MODEL), "--target", board.core, "--kernels", "cmsis-nn",
                    "--ram", str(sim.arena_bytes), "--flash", str(sim.flash_bytes))
    assert bare["ram"]["placement"] is None
    assert ({**bare["ram"], "placement": None}, bare["flash"]) == ({**fit["ram"], "placement": None},
                                                                   fit["flash"])
    # Everything fits where ST's linker puts .bss: one region, all parts in it.
    (use,) = fit["ram"]["placement"]["regions"]
    assert use["regions"] == ["SRAM1", "SRAM2", "SRAM3"] and use["used"] == fit["ram"]["used"]
    # A budget given overrides the board's, and is said to.
    code, fit = _json(capsys, "fit", str(MODEL), "--board", "nucleo-l4r5zi", "--ram", "1K",
                      "--kernels", "cmsis-nn")
    assert code == 1 and fit["ram"]["budget"] == 1024 and "--ram given instead" in fit["budget_source"]
    code, out, _ = run_cli(capsys, "fit", str(MODEL), "--board", "nucleo-l4r5zi", "--quiet",
                           "--kernels", "cmsis-nn")
    assert out.startswith(f"FITS: {MODEL} on board nucleo-l4r5zi (cortex-m4)")


def test_fit_needs_a_ram_budget_or_a_board(capsys):
    code, _, err = run_cli(capsys, "fit", str(MODEL))
    assert code == 2 and "--ram SIZE, or --board NAME" in err


def test_board_and_target_are_one_or_the_other(capsys):
    for command in ("fit", "profile"):
        code, _, err = run_cli(capsys, command, str(MODEL), "--board", "nucleo-l4r5zi",
                               "--target", "cortex-m7")
        assert code == 2 and "not allowed with argument --board" in err
    code, _, err = run_cli(capsys, "profile", str(MODEL), "--board", "no-such-board")
    assert code == 2 and "unknown board 'no-such-board'" in err


def test_profile_board_runs_at_its_clock_through_its_flash_interface(capsys):
    board = boards.load_board("nucleo-h743zi2")
    sim = boards.simulator_parameters(board)
    code, prof = _json(capsys, "profile", str(MODEL), "--board", "nucleo-h743zi2")
    assert code == 0 and prof["board"] == "nucleo-h743zi2"
    assert (prof["target"], prof["clock_hz"]) == (board.core, sim.clock_hz)
    direct, run = emulated_profile(MODEL.read_bytes(), board.core, sim.clock_hz,
                                   flash_wait_states=sim.line_fill_cycles,
                                   memory_system=MemorySystem(**sim.memory_system))
    run.close()
    assert prof["total_cycles"] == direct["total_cycles"]
    # The clock is the board's unless given; the cycles do not depend on it here (0 wait
    # states would change them), the milliseconds do.
    _, slower = _json(capsys, "profile", str(MODEL), "--board", "nucleo-h743zi2", "--clock", "240MHz")
    assert slower["clock_hz"] == 240_000_000
    # The board's flash interface is not the core's default one: a cache-less board with
    # wait states costs more than the same core with an instruction cache.
    _, pico = _json(capsys, "profile", str(MODEL), "--board", "nucleo-g0b1re")
    _, bare = _json(capsys, "profile", str(MODEL), "--target", "cortex-m0plus", "--clock", "64MHz")
    assert pico["total_cycles"] > bare["total_cycles"]


def test_boards_rows_are_what_fit_and_profile_say(capsys, tmp_path):
    _tiny_board(tmp_path)
    code, table = _json(capsys, "boards", str(MODEL), "--board-dir", str(tmp_path), "--workers", "2")
    rows = {r["board"]: r for r in table["boards"]}
    assert set(rows) == {b.name for b in boards.list_boards([tmp_path])}
    assert code == 0 and table["fits_on"]
    tiny = rows["tiny-m0"]
    assert tiny["verdict"] == "does not fit" and tiny["ram_margin"] < 0 and tiny["fits"] is False
    assert table["boards"][-1]["board"] == "tiny-m0"          # not fitting: last
    fitting = [r for r in table["boards"] if r["verdict"] == "fits"]
    assert [r["latency_ms"] for r in fitting] == sorted(r["latency_ms"] for r in fitting)
    for name in ("nucleo-f446re", "raspberry-pi-pico"):
        _, fit = _json(capsys, "fit", str(MODEL), "--board", name, "--kernels", "cmsis-nn")
        _, prof = _json(capsys, "profile", str(MODEL), "--board", name)
        row = rows[name]
        assert (row["ram_used"], row["flash_used"]) == (fit["ram"]["used"], fit["flash"]["used"])
        assert (row["ram_margin"], row["verdict"]) == (fit["ram"]["margin"], fit["verdict"])
        assert row["cycles"] == prof["total_cycles"] and row["latency_ms"] == prof["total_ms"]
    code, text, _ = run_cli(capsys, "boards", str(MODEL), "--board-dir", str(tmp_path),
                            "--workers", "1", "--quiet")
    assert code == 0 and "tiny-m0" in text and "does not fit" in text


def test_boards_cannot_tell_when_an_operator_has_no_kernel(capsys, tmp_path):
    path = tmp_path / "custom.tflite"
    path.write_bytes(chain_with("MY_CUSTOM_OP", custom=True))
    rows = measure_boards(str(path), path.read_bytes(), ["nucleo-l4r5zi", "nucleo-g0b1re"],
                          workers=1)
    assert {r.verdict for r in rows} == {"cannot tell"}
    assert all(r.latency_ms is None and "MY_CUSTOM_OP" in r.note for r in rows)
    code, _, _ = run_cli(capsys, "boards", str(path), "--quiet", "--workers", "1")
    assert code == 3


def test_boards_formats(capsys):
    code, csv, _ = run_cli(capsys, "boards", str(MODEL), "--format", "csv", "--quiet")
    lines = csv.strip().splitlines()
    assert code == 0 and lines[0].startswith("board,core,clock_hz,verdict,ram_used")
    assert len(lines) == 1 + len(boards.list_boards())


@pytest.mark.parametrize("model, extra, says", [
    # TFLM's prepare refuses ARG_MAX's int64 output: an error in what was given, as in plan/run
    (PROJECT_MODELS / "ops" / "refuse_arg_max_int64_f32.tflite", [], "Only int32_t are supported"),
    # the offline planner on a model without an offline plan
    (MODEL, ["--planner", "offline"], "OfflineMemoryAllocation"),
])
def test_boards_refuses_a_model_prepare_refuses_once(capsys, model, extra, says):
    code, out, err = run_cli(capsys, "boards", str(model), "--workers", "1", *extra)
    plan_code, _, plan_err = run_cli(capsys, "plan", str(model), "--kernels", "cmsis-nn", *extra)
    assert code == plan_code == 2 and out == ""
    assert err == plan_err and err.count("\n") == 1 and says in err


def test_flash_wait_states_are_the_datasheets_wait_states(capsys):
    """--flash-wait-states N is N wait states, the board's flash interface turns them into the
    cost of a line fill: the L4R5's own 5 at 120 MHz give exactly the board's default cycles."""
    board = boards.load_board("nucleo-l4r5zi")
    assert board.flash.wait_states_at(120_000_000) == 5
    code, default = _json(capsys, "profile", str(MODEL), "--board", "nucleo-l4r5zi")
    code5, given = _json(capsys, "profile", str(MODEL), "--board", "nucleo-l4r5zi",
                         "--flash-wait-states", "5")
    assert code == code5 == 0
    assert given["total_cycles"] == default["total_cycles"]
    assert given["flash_wait_states"] == default["flash_wait_states"] == 5
    assert given["line_fill_cycles"] == default["line_fill_cycles"] == 4 * 5   # 32 B from 8 B reads
    # More than the table needs is what firmware may set: allowed, and it costs more.
    code, more = _json(capsys, "profile", str(MODEL), "--board", "nucleo-l4r5zi",
                       "--flash-wait-states", "7")
    assert code == 0 and more["line_fill_cycles"] == 4 * 7
    assert more["total_cycles"] > default["total_cycles"]
    code, out, _ = run_cli(capsys, "profile", str(MODEL), "--board", "nucleo-l4r5zi",
                           "--flash-wait-states", "7", "--quiet")
    assert "7 wait states (given; the table needs 5 at this clock)" in out.splitlines()[0]
    assert "costs 28 core cycles" in out.splitlines()[0]
    # At a lower clock the table needs fewer, and its figure is again the default.
    _, slow = _json(capsys, "profile", str(MODEL), "--board", "nucleo-l4r5zi", "--clock", "80MHz")
    _, slow3 = _json(capsys, "profile", str(MODEL), "--board", "nucleo-l4r5zi", "--clock", "80MHz",
                     "--flash-wait-states", "3")
    assert slow["flash_wait_states"] == 3 and slow3["total_cycles"] == slow["total_cycles"]


def test_fewer_wait_states_than_the_flash_needs_are_refused(capsys):
    for command in ("profile", "report"):
        code, out, err = run_cli(capsys, command, str(MODEL), "--board", "nucleo-l4r5zi",
                                 "--flash-wait-states", "4", "--quiet")
        assert code == 2 and not out
        assert ("board nucleo-l4r5zi: 4 flash wait states is fewer than the 5 its flash needs at "
                "120 MHz") in err and "nucleo-l4r5zi.json" in err and len(err.splitlines()) == 1
    code, _, err = run_cli(capsys, "profile", str(MODEL), "--board", "nucleo-h743zi2",
                           "--clock", "480MHz", "--flash-wait-states", "3")
    assert code == 2 and "fewer than the 4 its flash needs at 480 MHz" in err


def test_bare_target_wait_states_cost_one_core_cycle_each_per_line(capsys):
    """Without a board a line of the core's default flash interface is read in one access, so
    a line fill costs N core cycles, and the header says so."""
    _, zero = _json(capsys, "profile", str(MODEL), "--target", "cortex-m4")
    _, five = _json(capsys, "profile", str(MODEL), "--target", "cortex-m4", "--flash-wait-states", "5")
    assert (zero["flash_wait_states"], zero["line_fill_cycles"]) == (0, 0)
    assert (five["flash_wait_states"], five["line_fill_cycles"]) == (5, 5)
    direct, run = emulated_profile(MODEL.read_bytes(), "cortex-m4", 100_000_000, flash_wait_states=5)
    run.close()
    assert five["total_cycles"] == direct["total_cycles"] > zero["total_cycles"]
    code, out, _ = run_cli(capsys, "profile", str(MODEL), "--flash-wait-states", "5", "--quiet")
    assert out.splitlines()[0] == ("flash: 5 wait states on cortex-m4's default flash interface "
                                   "(16-byte lines read in one access), so a line fill costs 5 core "
                                   "cycles")


def test_profile_board_says_whether_the_model_fits_and_exits_1_when_not(capsys, tmp_path):
    """A board answer includes whether the model fits there, as fit judges it: an arena of
    200 KB on the 144 KiB NUCLEO-G0B1RE does not, and profile exits 1."""
    model = relu_model(tmp_path / "relu.tflite", 100_000)
    _, fit = _json(capsys, "fit", str(model), "--board", "nucleo-g0b1re", "--kernels", "cmsis-nn")
    code, prof = _json(capsys, "profile", str(model), "--board", "nucleo-g0b1re")
    assert fit["verdict"] == "does not fit" and code == 1
    assert prof["complete"] and prof["total_cycles"] > 0
    assert (prof["fit"]["verdict"], prof["fit"]["ram"], prof["fit"]["flash"]) == \
        ("does not fit", fit["ram"], fit["flash"])
    over = fit["ram"]["used"] - fit["ram"]["budget"]
    assert prof["fit"]["summary"].startswith("does not fit board nucleo-g0b1re: RAM 196 KiB of 144 KiB "
                                             f"(over by {over / 1024:.3g} KiB)")
    code, out, _ = run_cli(capsys, "profile", str(model), "--board", "nucleo-g0b1re", "--quiet")
    assert code == 1 and out.splitlines()[-1] == prof["fit"]["summary"]
    code, csv, _ = run_cli(capsys, "profile", str(model), "--board", "nucleo-g0b1re", "--quiet",
                           "--format", "markdown")
    assert code == 1 and prof["fit"]["summary"] in csv
    # report --board judges the same and exits the same
    code, report = _json(capsys, "report", str(model), "--board", "nucleo-g0b1re",
                         "--optimize-seconds", "0")
    assert code == 1 and report["fit"]["verdict"] == "does not fit"
    assert report["fit"]["ram"]["used"] == fit["ram"]["used"]
    # a model that fits: exit 0 and the verdict says so
    code, prof = _json(capsys, "profile", str(MODEL), "--board", "nucleo-g0b1re")
    assert code == 0 and prof["fit"]["verdict"] == "fits"
    assert prof["fit"]["summary"].startswith("fits board nucleo-g0b1re: RAM ")
    # without a board there is no budget and no verdict
    code, prof = _json(capsys, "profile", str(model), "--target", "cortex-m0plus")
    assert code == 0 and "fit" not in prof
