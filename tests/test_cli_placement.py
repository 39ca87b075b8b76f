"""`fit`, `boards`, `report` and `profile` with a board place each part of RAM in one of its
regions (micro_rt.placement): an int16 image model whose arena is bigger than the H743's 128 KiB
DTCM fits with its arena in the 512 KiB AXI SRAM, as a user links it (issue 20)."""
from __future__ import annotations

import json
import re

import pytest

from cli_runner import int16_conv_pool, run_cli
from micro_rt.cortexm import boards
from micro_rt.reports.boards import measure_boards

KIB = 1024


@pytest.fixture(autouse=True)
def _no_user_boards(monkeypatch):
    monkeypatch.delenv(boards.ENV_VAR, raising=False)


@pytest.fixture(scope="module")
def int16_model(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("models") / "int16_conv_pool.tflite"
    path.write_bytes(int16_conv_pool())
    return str(path)


def _fit(capsys, *argv) -> tuple[int, dict]:
    code, out, _ = run_cli(capsys, "fit", *argv, "--kernels", "cmsis-nn", "--json", "--quiet")
    return code, json.loads(out)


def _part(fit: dict, name: str) -> dict:
    return next(p for p in fit["ram"]["placement"]["parts"] if p["part"] == name)


def test_h743_int16_model_fits_with_its_arena_in_axi_sram(capsys, int16_model):
    code, fit = _fit(capsys, int16_model, "--board", "nucleo-h743zi2")
    arena = _part(fit, "arena")
    assert 128 * KIB < arena["bytes"] < 512 * KIB          # DTCM alone could not hold it
    assert code == 0 and fit["verdict"] == "fits"
    assert arena["region"]["name"] == "AXI_SRAM" and arena["region"]["base"] == 0x24000000
    assert {_part(fit, n)["region"]["name"] for n in ("stack", "static data", "plan structs")} == {"DTCM"}
    uses = {r["name"]: r for r in fit["ram"]["placement"]["regions"]}
    assert uses["AXI_SRAM"]["used"] == arena["bytes"]
    assert uses["DTCM"]["used"] == fit["ram"]["used"] - arena["bytes"]
    assert fit["ram"]["budget"] == (128 + 512) * KIB
    assert fit["ram"]["margin"] == min(u["margin"] for u in uses.values())
    code, out, _ = run_cli(capsys, "fit", int16_model, "--board", "nucleo-h743zi2", "--kernels",
                           "cmsis-nn", "--quiet")
    assert code == 0 and out.startswith("FITS")
    assert re.search(rf"\n  arena {arena['bytes']:,} B in AXI_SRAM \(512 KiB at 0x24000000\) -> fits, "
                     r"margin \+[\d,]+ B: the AXI bus matrix", out)
    assert "prices every SRAM region alike" in out     # what the cycle model assumes, said


def test_the_arena_region_given_decides(capsys, int16_model):
    code, fit = _fit(capsys, int16_model, "--board", "nucleo-h743zi2", "--arena-region", "DTCM")
    assert code == 1 and fit["verdict"] == "does not fit" and fit["ram"]["fits"] is False
    assert _part(fit, "arena")["region"]["name"] == "DTCM"
    assert "does not fit in DTCM (128 KiB at 0x20000000)" in fit["ram"]["placement"]["problem"]
    code, out, _ = run_cli(capsys, "fit", int16_model, "--board", "nucleo-h743zi2", "--arena-region",
                           "DTCM", "--kernels", "cmsis-nn", "--quiet")
    assert code == 1 and out.startswith("DOES NOT FIT") and "does NOT fit: arena + stack" in out
    code, fit = _fit(capsys, int16_model, "--board", "nucleo-h743zi2", "--arena-region", "d2_sram")
    assert code == 0 and _part(fit, "arena")["region"]["name"] == "D2_SRAM"
    assert "the arena in D2_SRAM (--arena-region)" in fit["budget_source"]


@pytest.mark.parametrize("argv,message", [
    (["--board", "nucleo-h743zi2", "--arena-region", "SRAM9"],
     "--arena-region SRAM9: board nucleo-h743zi2 has no region of that name; its RAM regions are "
     "ITCM, DTCM, AXI_SRAM, D2_SRAM, D3_SRAM"),
    (["--board", "nucleo-h743zi2", "--arena-region", "FLASH"], "FLASH is a flash region"),
    (["--ram", "256K", "--arena-region", "DTCM"], "give --board, and no --ram"),
    (["--board", "nucleo-h743zi2", "--ram", "256K", "--arena-region", "DTCM"], "give --board, and no --ram")])
def test_a_bad_arena_region_is_one_line(capsys, int16_model, argv, message):
    for command in ("fit", "profile", "report"):
        if command == "profile" and "--ram" in argv:
            continue
        code, out, err = run_cli(capsys, command, int16_model, *argv)
        assert code == 2 and out == "" and message in err and err.count("\n") == 1, command


def test_contiguous_sram_holds_an_arena_bigger_than_sram1(capsys, tmp_path):
    """The L4R5's SRAM1-3 are one 640 KiB block at 0x20000000: a 112x112 image's arena, bigger
    than SRAM1's 192 KiB, fits where ST's linker puts .bss."""
    path = tmp_path / "int16_112.tflite"
    path.write_bytes(int16_conv_pool(112))
    code, fit = _fit(capsys, str(path), "--board", "nucleo-l4r5zi")
    assert _part(fit, "arena")["bytes"] > boards.load_board("nucleo-l4r5zi").memory.region("SRAM1").size
    assert code == 0 and _part(fit, "arena")["region"]["regions"] == ["SRAM1", "SRAM2", "SRAM3"]
    # A bare budget is still one budget.
    code, bare = _fit(capsys, str(path), "--target", "cortex-m4", "--ram", "640K")
    assert code == 0 and bare["ram"]["placement"] is None and bare["ram"]["budget"] == 640 * KIB


def test_boards_rows_say_where_the_arena_went(capsys, int16_model):
    data = open(int16_model, "rb").read()
    names = ["nucleo-h743zi2", "nucleo-g0b1re", "nucleo-l4r5zi"]
    rows = {r.board: r for r in measure_boards(int16_model, data, names, workers=1)}
    assert (rows["nucleo-h743zi2"].verdict, rows["nucleo-h743zi2"].arena_in) == ("fits", "AXI_SRAM")
    assert (rows["nucleo-l4r5zi"].verdict, rows["nucleo-l4r5zi"].arena_in) == ("fits", "SRAM1+SRAM2+SRAM3")
    g0 = rows["nucleo-g0b1re"]                          # 144 KiB of SRAM in all
    assert g0.verdict == "does not fit" and g0.ram_margin < 0 and "does not fit in SRAM" in g0.placement
    _, fit = _fit(capsys, int16_model, "--board", "nucleo-h743zi2")
    assert rows["nucleo-h743zi2"].ram_margin == fit["ram"]["margin"]
    assert rows["nucleo-h743zi2"].ram_budget == fit["ram"]["budget"]
    forced = {r.board: r for r in measure_boards(int16_model, data, names[:2], workers=1,
                                                 arena_region="DTCM")}
    assert forced["nucleo-h743zi2"].verdict == "does not fit"
    assert "no RAM region DTCM" in forced["nucleo-g0b1re"].note
    code, _, err = run_cli(capsys, "boards", int16_model, "--arena-region", "SRAM9", "--quiet")
    assert code == 2 and "no board has a RAM region of that name" in err


def test_report_and_profile_say_where_the_arena_went(capsys, int16_model):
    code, out, _ = run_cli(capsys, "report", int16_model, "--board", "nucleo-h743zi2",
                           "--optimize-seconds", "0", "--quiet")
    assert code == 0 and out.count("in AXI_SRAM (512 KiB at 0x24000000)") == 1
    code, out, _ = run_cli(capsys, "profile", int16_model, "--board", "nucleo-h743zi2",
                           "--arena-region", "AXI_SRAM", "--json", "--quiet")
    notes = json.loads(out)["board_notes"]
    assert code == 0 and any(n.startswith("arena in AXI_SRAM (512 KiB at 0x24000000) (--arena-region)")
                             and "every SRAM region alike" in n for n in notes)
