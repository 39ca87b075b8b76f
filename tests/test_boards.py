"""Board catalog: shipped files validate, names resolve, user files are found, bad files are
refused with the file and field named."""
from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest

from micro_rt.cortexm import boards
from micro_rt.cortexm.cycles import MemorySystem
from micro_rt.errors import InputError

SHIPPED = sorted(boards.SHIPPED_DIR.glob("*.json"))
REQUIRED = ["nucleo-l4r5zi", "nucleo-f446re", "nucleo-h743zi2", "nucleo-h7a3zi-q", "disco-f746ng",
            "nucleo-u575zi-q", "nucleo-g0b1re", "ek-ra6m4", "nrf52840-dk", "nrf5340-dk",
            "raspberry-pi-pico", "mimxrt1060-evk"]
MEASUREMENTS = boards.SHIPPED_DIR / "measurements" / "published_latency.json"


@pytest.fixture(autouse=True)
def _no_user_boards(monkeypatch):
    monkeypatch.delenv(boards.ENV_VAR, raising=False)


def _shipped_data(name: str) -> dict:
    return json.loads((boards.SHIPPED_DIR / f"{name}.json").read_text())


def _write(directory: Path, data: dict, name: str | None = None) -> Path:
    path = directory / f"{name or data['name']}.json"
    path.write_text(json.dumps(data))
    return path


# ---- shipped catalog ------------------------------------------------------------------------
@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_shipped_board_file_validates(path):
    board = boards.load_board_file(path)
    assert board.name == path.stem
    assert board.clock.default_hz <= board.clock.max_hz
    assert board.flash.wait_states_at(board.clock.max_hz) >= 0
    for section, citation in board.citations():
        assert citation.source.strip(), section
    # every section carries at least one citation (peripherals: tests/test_board_peripherals.py)
    boot = {"boot"} if board.boot else set()
    assert {s for s, _ in board.citations()} == {"clock", "flash", "accelerator", "memory",
                                                  "peripherals"} | boot


def test_catalog_has_the_requested_boards():
    names = [b.name for b in boards.list_boards()]
    assert names == sorted(names)
    assert set(REQUIRED) <= set(names)


def test_unverified_figures_say_where_they_come_from():
    for board in boards.list_boards():
        for section, c in board.citations():
            if c.status == "unverified":
                assert "not found in stored documents" in c.source, (board.name, section)


@pytest.mark.parametrize("name", REQUIRED)
def test_simulator_parameters_build_a_memory_system(name):
    board = boards.load_board(name)
    params = boards.simulator_parameters(board)
    assert params.target == board.core and params.clock_hz == board.clock.default_hz
    ms = MemorySystem(**params.memory_system)
    assert ms.wait_states == params.line_fill_cycles >= params.flash_wait_states >= 0
    assert ms.line_bytes == board.accelerator.line_bytes
    assert params.arena_bytes <= board.memory.sram_bytes
    assert params.flash_bytes == board.memory.region(board.memory.code_region).size


def test_ram_regions_are_listed_with_their_documented_timing():
    """Every SRAM and TCM region a user can place data in, in address order; where the vendor's
    linker puts .bss, and the stack where the start-up puts it elsewhere."""
    h743 = boards.load_board("nucleo-h743zi2").memory
    assert [(r.name, r.base, r.size) for r in h743.data_regions] == [
        ("ITCM", 0, 64 << 10), ("DTCM", 0x20000000, 128 << 10), ("AXI_SRAM", 0x24000000, 512 << 10),
        ("D2_SRAM", 0x30000000, 288 << 10), ("D3_SRAM", 0x38000000, 64 << 10)]
    assert h743.arena_regions == h743.stack_regions == ("DTCM",)
    assert "TCM port" in h743.region("DTCM").timing and "D-cache" in h743.region("AXI_SRAM").timing
    h7a3 = boards.load_board("nucleo-h7a3zi-q").memory
    axi = [r for r in h7a3.data_regions if r.name.startswith("AXI_SRAM")]
    assert sum(r.size for r in axi) == 1 << 20 and all(a.end == b.base for a, b in zip(axi, axi[1:]))
    rt = boards.load_board("mimxrt1060-evk").memory
    assert {r.name for r in rt.data_regions} == {"ITCM", "DTCM", "OCRAM"} and rt.arena_regions == ("DTCM",)
    pico = boards.load_board("raspberry-pi-pico").memory
    assert pico.arena_regions == ("SRAM",) and pico.stack_regions == ("SRAM5",)
    f446 = boards.load_board("nucleo-f446re").memory
    assert f446.stack_regions == f446.arena_regions == ("SRAM1", "SRAM2")


def test_line_fill_counts_bus_divider_and_reads_per_line():
    h743 = boards.simulator_parameters(boards.load_board("nucleo-h743zi2"))
    assert h743.flash_wait_states == 4            # 240 MHz AXI clock, VOS0
    assert h743.line_fill_cycles == (4 + 1) * 2 - 1
    l4 = boards.simulator_parameters(boards.load_board("nucleo-l4r5zi"))
    assert l4.line_fill_cycles == 4 * 5           # 32-byte ART line from 64-bit reads
    # the ART reads data one 64-bit flash word at a time: its 8 lines of 4 x 64 bits hold 32
    # words, and a data miss costs one read
    assert l4.memory_system["dcache_lines"] == 32 and l4.memory_system["data_unit_bytes"] == 8
    assert l4.memory_system["data_miss_cycles"] == 5
    h7 = h743.memory_system                       # Cortex-M7 L1: line fills, 2 / 4 ways
    assert (h7["data_unit_bytes"], h7["data_miss_cycles"], h7["icache_ways"], h7["dcache_ways"]) \
        == (32, h743.line_fill_cycles, 2, 4)


def test_wait_states_follow_the_clock():
    board = boards.load_board("nucleo-l4r5zi")
    assert [board.flash.wait_states_at(mhz * 1_000_000) for mhz in (16, 20, 21, 80, 120)] \
        == [0, 0, 1, 3, 5]
    assert boards.simulator_parameters(board, 80_000_000).flash_wait_states == 3
    with pytest.raises(InputError, match="outside"):
        boards.simulator_parameters(board, 121_000_000)


# ---- names ----------------------------------------------------------------------------------
@pytest.mark.parametrize("given,expected", [
    ("NUCLEO-L4R5ZI", "nucleo-l4r5zi"), ("nucleo_l4r5zi", "nucleo-l4r5zi"),
    ("Nucleo-H743ZI2", "nucleo-h743zi2"), ("nucleo-l4r5zi-p", "nucleo-l4r5zi"), ("32F746G-DISCOVERY", "disco-f746ng"),
    ("DISCO-F746NG", "disco-f746ng"), ("arduino-nano-33-ble", "nrf52840-dk"),
    ("Arduino_Nano_33_BLE", "nrf52840-dk"), ("nRF52840-DK", "nrf52840-dk"),
    ("nRF5340-DK", "nrf5340-dk"), ("Raspberry Pi Pico", "raspberry-pi-pico"),
    ("MIMXRT1060-EVK", "mimxrt1060-evk"), ("EK-RA6M4", "ek-ra6m4")])
def test_names_match_case_insensitively_and_aliases_resolve(given, expected):
    assert boards.load_board(given).name == expected


def test_unknown_board_lists_the_known_ones():
    with pytest.raises(InputError, match=r"unknown board 'nucleo-zz'.*nucleo-l4r5zi"):
        boards.load_board("NUCLEO-ZZ")


# ---- user directories -----------------------------------------------------------------------
def test_user_board_in_env_directory_is_found(tmp_path, monkeypatch):
    data = _shipped_data("nucleo-f446re")
    data.update(name="my-f446", title="My F446", aliases=["mine"])
    _write(tmp_path, data)
    monkeypatch.setenv(boards.ENV_VAR, str(tmp_path))
    assert boards.load_board("MY-F446").path == tmp_path / "my-f446.json"
    assert boards.load_board("mine").name == "my-f446"
    assert "my-f446" in [b.name for b in boards.list_boards()]
    assert "nucleo-l4r5zi" in [b.name for b in boards.list_boards()]


def test_user_dirs_come_before_env_and_shipped(tmp_path, monkeypatch):
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir(), second.mkdir()
    data = _shipped_data("nucleo-f446re")
    data["clock"]["default_hz"] = 84_000_000
    _write(first, data)
    data["clock"]["default_hz"] = 100_000_000
    _write(second, data)
    monkeypatch.setenv(boards.ENV_VAR, str(second))
    assert boards.load_board("nucleo-f446re").clock.default_hz == 100_000_000
    assert boards.load_board("nucleo-f446re", user_dirs=[first]).clock.default_hz == 84_000_000
    listed = {b.name: b for b in boards.list_boards(user_dirs=[first])}
    assert listed["nucleo-f446re"].path.parent == first


def test_readme_example_is_a_valid_user_board(tmp_path):
    readme = (boards.SHIPPED_DIR / "README.md").read_text()
    example = json.loads(re.search(r"```json\n(.*?)```", readme, re.S).group(1))
    _write(tmp_path, example)
    board = boards.load_board("My-Board", user_dirs=[tmp_path])
    assert boards.simulator_parameters(board).flash_wait_states == 3


def test_missing_board_directory_is_an_error(tmp_path, monkeypatch):
    monkeypatch.setenv(boards.ENV_VAR, str(tmp_path / "nowhere"))
    with pytest.raises(InputError, match="nowhere.*does not exist"):
        boards.list_boards()


# ---- malformed files ------------------------------------------------------------------------
def _break(change):
    data = _shipped_data("nucleo-f446re")
    data.update(name="bad-board")
    change(data)
    return data


MALFORMED = {
    "missing field": (lambda d: d.pop("mcu"), r"field 'mcu' is missing"),
    "unknown field": (lambda d: d.update(cores="cortex-m4"), r"field 'cores' is not a known field"),
    "bad core": (lambda d: d.update(core="cortex-m3"), r"field 'core' must be one of"),
    "host core": (lambda d: d.update(core="host64"), r"field 'core' must be one of"),
    "bad fpu": (lambda d: d.update(fpu="half"), r"field 'fpu' must be one of"),
    "string clock": (lambda d: d["clock"].update(max_hz="180MHz"),
                     r"field 'clock.max_hz' must be an integer"),
    "default above max": (lambda d: d["clock"].update(default_hz=200_000_000),
                          r"field 'clock.default_hz' .* exceeds max_hz"),
    "no citation": (lambda d: d["flash"].update(cite=[]), r"field 'flash.cite' needs at least one"),
    "bad citation status": (lambda d: d["memory"]["cite"][0].update(status="trust me"),
                            r"field 'memory.cite\[0\].status' must be one of"),
    "table short of max clock": (lambda d: d["flash"].update(wait_states=[[30_000_000, 0]]),
                                 r"field 'flash.wait_states' ends at 30000000 Hz"),
    "table not rising": (lambda d: d["flash"].update(wait_states=[[60_000_000, 1], [30_000_000, 2],
                                                                  [180_000_000, 5]]),
                         r"field 'flash.wait_states\[1\]' must have a higher max_hz"),
    "table entry shape": (lambda d: d["flash"].update(wait_states=[[180_000_000]]),
                          r"field 'flash.wait_states\[0\]' must be \[max_hz, count\]"),
    "line not power of two": (lambda d: d["accelerator"].update(line_bytes=24),
                              r"field 'accelerator.line_bytes' must be a power of two"),
    "cache not whole lines": (lambda d: d["accelerator"].update(icache_bytes=1000),
                              r"field 'accelerator.icache_bytes' \(1000\) must be a multiple"),
    "overlapping regions": (lambda d: d["memory"]["regions"][2].update(base="0x20010000"),
                            r"field 'memory.regions\[2\].base' region SRAM2 overlaps region SRAM1"),
    "bad address": (lambda d: d["memory"]["regions"][0].update(base="flash"),
                    r"field 'memory.regions\[0\].base' must be an address"),
    "duplicate region": (lambda d: d["memory"]["regions"][2].update(name="SRAM1"),
                         r"field 'memory.regions\[2\].name' 'SRAM1' is used twice"),
    "arena in flash": (lambda d: d["memory"].update(arena_regions=["FLASH"]),
                       r"field 'memory.arena_regions\[0\]' must name an SRAM or TCM region"),
    "arena not contiguous": (lambda d: d["memory"].update(arena_regions=["SRAM2", "SRAM1"]),
                             r"field 'memory.arena_regions\[1\]' region SRAM1 does not start"),
    "stack in flash": (lambda d: d["memory"].update(stack_region="FLASH"),
                       r"field 'memory.stack_region' must name an SRAM or TCM region"),
    "timing not text": (lambda d: d["memory"]["regions"][1].update(timing=3),
                        r"field 'memory.regions\[1\].timing' must be a str"),
    "code in sram": (lambda d: d["memory"].update(code_region="SRAM1"),
                     r"field 'memory.code_region' must name a flash region"),
    "wrong schema": (lambda d: d.update(schema=2), r"field 'schema' must be 1"),
    # impossible memory
    "zero-size region": (lambda d: d["memory"]["regions"][1].update(size=0),
                         r"field 'memory.regions\[1\].size' must be >= 1, not 0"),
    "region past 4 GiB": (lambda d: d["memory"]["regions"][1].update(base="0xFFFF0000"),
                          r"field 'memory.regions\[1\].size' runs past the 32-bit address space"),
    "region on the PPB": (lambda d: d["memory"]["regions"][2].update(base="0xE0000000"),
                          r"field 'memory.regions\[2\].base' region SRAM2 \(0xe0000000-0xe0003fff\) "
                          r"overlaps the core's Private Peripheral Bus"),
    "code in execute-never memory": (lambda d: d["memory"]["regions"][0].update(base="0x40000000"),
                                     r"field 'memory.code_region' region FLASH \(0x40000000-0x4007ffff\) "
                                     r"is not where a Cortex-M core fetches instructions"),
    # clocks above the part's maximum
    "table entry above max clock": (
        lambda d: d["flash"].update(wait_states=[[90_000_000, 2], [180_000_000, 5], [216_000_000, 7]]),
        r"field 'flash.wait_states\[2\]' \(216000000 Hz\) is past the part's highest clock: the "
        r"entry before it covers up to 180000000 Hz, which reaches 180000000 Hz"),
    "sram table entry above max clock": (
        lambda d: d["memory"].update(sram_wait_states=[[180_000_000, 0], [200_000_000, 1]]),
        r"field 'memory.sram_wait_states\[1\]' \(200000000 Hz\) is past the part's highest clock"),
    # wait states the part cannot have
    "negative wait states": (lambda d: d["flash"].update(wait_states=[[180_000_000, -1]]),
                             r"field 'flash.wait_states\[0\]' must be \[max_hz, count\] with "
                             r"max_hz > 0 and count >= 0, not \[180000000, -1\]"),
    "fractional wait states": (lambda d: d["flash"].update(wait_states=[[180_000_000, 2.5]]),
                               r"field 'flash.wait_states\[0\]' must be \[max_hz, count\]"),
    "wait states falling": (lambda d: d["flash"].update(wait_states=[[90_000_000, 3], [180_000_000, 2]]),
                            r"field 'flash.wait_states\[1\]' must have a higher max_hz than the "
                            r"entry before it and no fewer wait states"),
    "wait states past the bound": (lambda d: d["flash"].update(wait_states=[[180_000_000, 5000]]),
                                   r"field 'flash.wait_states\[0\]' has 5000 wait states, more "
                                   r"than the 1023 micro_rt accepts"),
    "upper-case name": (lambda d: d.update(name="Bad-Board"), r"field 'name' must be lower case"),
    # a boot header some boot ROMs need before the vector table
    "boot without needs": (lambda d: d.update(boot={"kind": "rp2040-boot-stage-2", "cite": [{"status": "unverified",
                                                              "source": "x"}]}),
                           r"field 'boot.needs' is missing"),
    "boot without kind": (lambda d: d.update(boot={"needs": "a header", "cite": [{"status": "unverified",
                                                                                 "source": "x"}]}),
                          r"field 'boot.kind' is missing"),
    "boot needs empty": (lambda d: d.update(boot={"kind": "rp2040-boot-stage-2", "needs": " ", "cite": [{"status": "unverified",
                                                                          "source": "x"}]}),
                         r"field 'boot.needs' must not be empty"),
    "boot uncited": (lambda d: d.update(boot={"kind": "rp2040-boot-stage-2", "needs": "a header", "cite": []}),
                     r"field 'boot.cite' needs at least one"),
    "boot unknown field": (lambda d: d.update(boot={"kind": "rp2040-boot-stage-2", "needs": "a header", "at": 256, "cite": [
        {"status": "unverified", "source": "x"}]}), r"field 'boot.at' is not a known field"),
    "flexspi for another kind": (lambda d: d.update(boot={"kind": "rp2040-boot-stage-2", "needs": "a header",
                                                          "flexspi_nor": {}, "cite": [{"status": "unverified", "source": "x"}]}),
                                 r"field 'boot.flexspi_nor' is only for boot.kind imxrt-flexspi-nor"),
    "boot stage 2 without xip": (lambda d: d.update(boot={"kind": "rp2040-boot-stage-2", "needs": "a header",
                                                          "cite": [{"status": "unverified", "source": "x"}]}),
                                 r"field 'boot.xip' is missing \(boot.kind rp2040-boot-stage-2 needs it\)"),
    "xip odd divider": (lambda d: d.update(boot={"kind": "rp2040-boot-stage-2", "needs": "a header", "xip": {
        "clock_divider": 3, "frames": "quad", "wait_cycles": 4, "continuous": True},
        "cite": [{"status": "unverified", "source": "x"}]}),
        r"field 'boot.xip.clock_divider' must be an even number, 2 to 65534 \(the SSI's BAUDR\), not 3"),
    "xip unknown frames": (lambda d: d.update(boot={"kind": "rp2040-boot-stage-2", "needs": "a header", "xip": {
        "clock_divider": 2, "frames": "octal", "wait_cycles": 4, "continuous": True},
        "cite": [{"status": "unverified", "source": "x"}]}), r"field 'boot.xip.frames' must be one of"),
    "xip for another kind": (lambda d: d.update(boot={"kind": "imxrt-flexspi-nor", "needs": "a header", "xip": {},
                                                      "cite": [{"status": "unverified", "source": "x"}]}),
                             r"field 'boot.xip' is only for boot.kind rp2040-boot-stage-2"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_user_board_names_file_and_field(tmp_path, case):
    change, message = MALFORMED[case]
    path = _write(tmp_path, _break(change), "bad-board")
    with pytest.raises(InputError, match=re.escape(str(path)) + ".*" + message):
        boards.load_board("bad-board", user_dirs=[tmp_path])


def test_invalid_json_reports_line_and_column(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('{\n  "schema": 1,\n  "name": "broken"\n  "core": "cortex-m4"\n}\n')
    with pytest.raises(InputError, match=rf"{re.escape(str(path))}: not valid JSON at line 4"):
        boards.list_boards(user_dirs=[tmp_path])


def test_file_name_must_match_board_name(tmp_path):
    path = _write(tmp_path, _break(lambda d: None), "other-name")
    with pytest.raises(InputError, match=re.escape(str(path)) + r".*must match the file name"):
        boards.list_boards(user_dirs=[tmp_path])


def test_two_files_claiming_one_name_in_a_directory(tmp_path):
    one = _break(lambda d: d.update(aliases=["twin"]))
    two = copy.deepcopy(one)
    two.update(name="other-board")
    _write(tmp_path, one), _write(tmp_path, two)
    with pytest.raises(InputError, match=r"both claim the name 'twin'"):
        boards.load_board("nucleo-f446re", user_dirs=[tmp_path])


def test_a_malformed_file_is_not_skipped(tmp_path):
    (tmp_path / "empty.json").write_text("[]")
    with pytest.raises(InputError, match=r"empty.json: the file must hold a JSON object, not list"):
        boards.load_board("nucleo-l4r5zi", user_dirs=[tmp_path])


# ---- published measurements -----------------------------------------------------------------
def test_published_measurements_refer_to_catalog_boards():
    data = json.loads(MEASUREMENTS.read_text())
    assert data["schema"] == 1 and data["entries"]
    assert any(e["tflm_with_cmsis_nn"] for e in data["entries"])
    for e in data["entries"]:
        board = boards.load_board(e["board"])
        assert 0 < e["clock_hz"] <= board.clock.max_hz
        assert e["latency_ms"] == pytest.approx(1000 / e["median_throughput_per_s"], abs=1e-3)
        assert e["cycles_per_inference"] == pytest.approx(
            e["clock_hz"] / e["median_throughput_per_s"], abs=1)
        assert re.fullmatch(r"[0-9a-f]{40}", e["source"]["commit"])
        assert e["source"]["repository"].startswith("mlcommons/tiny_results_v")


# ---- wait states -----------------------------------------------------------------------------
def test_one_line_fill_formula_for_boards_and_bare_targets():
    assert boards.line_fill_cycles(5, 32, 8) == 4 * 5
    assert boards.line_fill_cycles(4, 32, 32, bus_divider=2) == (4 + 1) * 2 - 1
    assert boards.line_fill_cycles(0, 32, 8) == 0
    assert boards.core_flash("cortex-m4", 3).line_fill_cycles == 3
    assert boards.core_flash("cortex-m4", 3).memory_system["line_bytes"] == 16
    board = boards.load_board("nucleo-h743zi2")
    assert boards.board_flash(board, 480_000_000).line_fill_cycles == (4 + 1) * 2 - 1
    assert boards.board_flash(board, 480_000_000, 6).line_fill_cycles == (6 + 1) * 2 - 1
    assert boards.simulator_parameters(board, wait_states=6).required_wait_states == 4


def test_wait_states_below_the_table_or_past_the_bound_are_refused():
    board = boards.load_board("nucleo-l4r5zi")
    with pytest.raises(InputError, match=r"board nucleo-l4r5zi: 2 flash wait states is fewer than "
                                         r"the 3 its flash needs at 80 MHz \(flash.wait_states in "):
        boards.simulator_parameters(board, 80_000_000, 2)
    assert boards.simulator_parameters(board, 80_000_000, 15).line_fill_cycles == 4 * 15
    with pytest.raises(InputError, match=r"1024 flash wait states is outside 0-1023"):
        boards.board_flash(board, 120_000_000, boards.MAX_FLASH_WAIT_STATES + 1)
    with pytest.raises(InputError, match=r"clock 121 MHz is outside 0-120 MHz \(clock.max_hz in .*"
                                         r"nucleo-l4r5zi.json\)"):
        boards.simulator_parameters(board, 121_000_000)
