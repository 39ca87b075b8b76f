"""`micro-rt export` projects boot from their reset vector under `micro-rt emulate` (issue 21):
for every catalog board the project's semihosting build (`make semihosting`) runs from reset,
start-up included: it sets the flash latency, prefetch and caches `profile --board` assumed
through the board's flash-control registers (and the Cortex-M7's L1 caches through CCR), runs
one inference, prints the outputs the host computes and the cycles its DWT counter (SysTick on
the M0+) read, and exits through semihosting with main's status. The printed cycles are
`profile --board`'s within CYCLE_BOUND.

The project places each kernel and each constant at the address profile's machine gave it,
modulo the board's flash line (micro_rt/export_image.py), so its code and data fetch the
flash lines profile counted; main.c and startup.c come after them. What still differs is where
code falls beyond the line: on a set-associative cache a function can share a set with other
code in one image and not in the other. On MODEL (measured emulate / profile: 1.0000 to 1.0007
over the ten boards) that is lost in the total; a model of a few thousand cycles differs by a
few per cent on the disco-f746ng, whose 2-way I-cache has 2 KiB ways (anomaly_fc_int8: 0.983).

Two boards cannot boot an image from a vector table at the start of flash: their boot ROM needs a
header there first (the board file's `boot`), which the project carries (micro_rt/export_boot.py)
and `emulate` models the ROM reading (cortexm/system/boot_rom.py): the i.MX RT1060's FlexSPI NOR
configuration block and image vector table; the RP2040's boot stage 2, micro_rt's own
(cortexm/src/export/rp2040_boot2.S), which the ROM copies to RAM and runs, and which sets the
SSI up for the XIP reads the board's flash figures are for before it enters the image."""
from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from cli_runner import run_cli
from conftest import require_tool, requires_arm_gcc
from micro_rt.cortexm.boards import FlashControlField, list_boards, load_board
from micro_rt.cortexm.system.firmware import read_firmware
from micro_rt.cortexm.system.machine import EmulateRequest
from micro_rt.cortexm.system.run import run_firmware
from micro_rt.errors import FirmwareError
from micro_rt.export_bringup import board_header, flash_writes
from micro_rt.run_setup import board_setup
from test_export import IMAGE_BOUND_SLACK, MODELS, _host_outputs, _json, _placed, _profile

pytestmark = requires_arm_gcc

MODEL = MODELS / "mobilenet_tiny_int8.tflite"
CYCLE_BOUND = 0.01
BOARDS = list_boards()
BOOTING = [b.name for b in BOARDS]


def _semihosting_build(capsys, tmp_path: Path, board: str) -> Path:
    """The project's semihosting build; the board build too, whose flash and RAM export counted
    (never less than the link places, at most IMAGE_BOUND_SLACK more)."""
    require_tool("make")
    out = tmp_path / "project"
    code, exported = _json(capsys, "export", str(MODEL), "--board", board, "-o", str(out))
    assert code == 0 and exported["exported"] is True
    subprocess.run(["make", "-s", "-C", str(out), "all", "semihosting"], check=True,
                   capture_output=True)
    placed = _placed(out / "model.elf", board)
    for region in ("flash", "ram"):
        counted = exported["image"][region]["used"]
        assert placed[region] <= counted <= placed[region] + IMAGE_BOUND_SLACK, (region, counted)
    return out / "model-semihosting.elf"


def test_the_catalog_has_boards_with_boot_headers():
    assert len(BOOTING) >= 12
    assert {b.name for b in BOARDS if b.boot is not None} == {"mimxrt1060-evk", "raspberry-pi-pico"}


@pytest.mark.parametrize("board", BOOTING)
def test_the_project_boots_from_reset_and_runs_as_profiled(capsys, tmp_path, board):
    elf = _semihosting_build(capsys, tmp_path, board)
    code, text, err = run_cli(capsys, "emulate", str(elf), "--board", board, "--json")
    report = json.loads(text)
    assert code == 0, (report["message"], err)
    assert report["ending"] == "exit" and report["exit_code"] == 0
    assert report["semihosting_calls"]["EXIT_EXTENDED"] == 1
    assert report["console_sources"] == ["semihosting"]
    lines = report["console"].splitlines()
    assert lines[:2] == [f"model {MODEL.name} on {board}", "status 0"]
    printed_cycles = int(re.fullmatch(r"cycles (\d+)", lines[2]).group(1))
    outputs = [re.fullmatch(r"output (\d+) ([0-9a-f]*)", line).group(2) for line in lines[3:]]
    b = load_board(board)
    assert outputs == _host_outputs(MODEL, b.core)

    profiled = _profile(capsys, MODEL, board)
    total = profiled["total_cycles"]
    assert abs(printed_cycles - total) <= CYCLE_BOUND * total, (printed_cycles, total)

    # the flash interface the start-up left is the one profile priced
    setup = board_setup(board)
    flash = report["flash_interface"]
    assert profiled["flash_wait_states"] == setup.flash_wait_states
    # a prefetch bit is written as profile's model of the accelerator has prefetch; a part
    # without one reads as on (its model decides)
    no_prefetch_bit = b.peripherals.flash_field(FlashControlField.PREFETCH) is None
    prefetch = b.accelerator.prefetch or no_prefetch_bit
    priced = (f"{setup.flash_wait_states} wait states, prefetch {'on' if prefetch else 'off'}, "
              "I-cache on, D-cache on")
    if flash["at_reset"].startswith(priced):
        # the part resets to what the start-up writes (the RP2040's XIP cache): nothing changes
        assert flash["at_end"] == flash["at_reset"] and not flash["changes"], flash
    else:
        assert flash["at_end"].startswith(priced + " (set by the firmware)"), flash
        assert flash["changes"] and flash["at_reset"] != flash["at_end"]
    if b.core == "cortex-m7":
        assert "L1 I-cache off, D-cache off (CCR)" in flash["at_reset"]
        assert flash["at_end"].endswith("L1 I-cache on, D-cache on (CCR)")


def _with_boot_stage(elf: Path, out: Path, change) -> Path:
    """A copy of `elf` whose boot stage 2 (the .mrt_boot section) is change(code) with the CRC
    made again (change returns the 256 bytes as they are to go in: None keeps the old CRC)."""
    from micro_rt.cortexm.boot_headers import encode_boot_stage_2
    raw = bytearray(elf.read_bytes())
    image = read_firmware(elf).image
    at = next(s for s in image.segments if s.paddr == 0x1000_0000)
    offset = raw.find(bytes(at.data[:64]))
    assert offset > 0
    code = bytes(raw[offset:offset + 252])
    new = change(code)
    new = new if len(new) == 256 else encode_boot_stage_2(new)
    raw[offset:offset + 256] = new
    out.write_bytes(bytes(raw))
    return out


def test_the_pico_boot_stage_sets_up_the_reads_the_board_figures_are_for(capsys, tmp_path):
    """The run starts at the ROM's copy of the boot stage (lr 0, the ROM's stack) and the
    image's reset handler is entered through its vector table at 0x10000100; the SSI it leaves
    is the board file's boot.xip."""
    elf = _semihosting_build(capsys, tmp_path, "raspberry-pi-pico")
    code, text, err = run_cli(capsys, "emulate", str(elf), "--board", "raspberry-pi-pico", "--json")
    report = json.loads(text)
    assert code == 0 and report["ending"] == "exit", report["message"]
    assert report["vector_table"] == "0x10000100"
    notes = "\n".join(report["notes"])
    assert "boot stage 2 at 0x10000000 (its CRC-32 checks) copied to 0x20041f00 and entered with lr = 0" in notes
    assert ("left the SSI making quad SPI reads, no command (continuous-read mode bits 0xa0), 4 wait "
            "cycles, SCLK = clk_sys / 2; the board file's flash figures are for these (boot.xip)") in notes
    assert "not model" not in notes


def test_the_pico_boot_rom_refuses_a_boot_stage_whose_crc_fails(capsys, tmp_path):
    elf = _semihosting_build(capsys, tmp_path, "raspberry-pi-pico")
    bad = _with_boot_stage(elf, tmp_path / "bad-crc.elf", lambda code: bytes([code[0] ^ 1]) + code[1:] + bytes(4))
    with pytest.raises(FirmwareError, match=r"the 256 bytes at 0x10000000 are not one: its CRC-32 word is "
                                            r"0x00000000; the 252 bytes before it give 0x[0-9a-f]{8}"):
        run_firmware(EmulateRequest(bad, board=load_board("raspberry-pi-pico")))


# the boot stage's last write, SSIENR = 1 ("movs r1, #1; str r1, [r3, #8]"), and the same
# with 0 (the SSI left disabled)
ENABLE_XIP, LEAVE_DISABLED = bytes.fromhex("0121 9960"), bytes.fromhex("0021 9960")


def test_a_boot_stage_that_leaves_the_flash_unreadable_ends_the_run_on_entering_the_image(capsys, tmp_path):
    elf = _semihosting_build(capsys, tmp_path, "raspberry-pi-pico")

    def leave_disabled(code: bytes) -> bytes:
        at = code.rindex(ENABLE_XIP)
        return code[:at] + LEAVE_DISABLED + code[at + 4:]
    bad = _with_boot_stage(elf, tmp_path / "disabled.elf", leave_disabled)
    code, text, err = run_cli(capsys, "emulate", str(bad), "--board", "raspberry-pi-pico", "--json")
    report = json.loads(text)
    assert code != 0 and report["ending"] == "boot-failed"
    assert re.search(r"the boot stage 2 entered the image at pc 0x1000[0-9a-f]{4} <Reset_Handler>, but "
                     r"XIP reads would not return the flash's contents: the SSI is disabled \(SSIENR 0\)",
                     report["message"]), report["message"]


def test_mutated_boot_stages_end_in_a_report_or_a_micro_rt_error(capsys, tmp_path):
    """Boot stages with random bytes changed and their CRC made again (so the ROM runs them):
    each run ends in a report (a fault, a lock-up, boot-failed, --max-cycles ...) or a
    MicroRtError, never another exception (it would fail the test)."""
    import random

    from micro_rt.errors import MicroRtError
    elf = _semihosting_build(capsys, tmp_path, "raspberry-pi-pico")
    board = load_board("raspberry-pi-pico")
    rng = random.Random(7)
    endings = set()
    for k in range(24):
        def mutate(code: bytes) -> bytes:
            c = bytearray(code)
            for _ in range(rng.randint(1, 3)):
                c[rng.randrange(len(c))] = rng.randrange(256)
            return bytes(c)
        mutant = _with_boot_stage(elf, tmp_path / f"m{k}.elf", mutate)
        try:
            endings.add(run_firmware(EmulateRequest(mutant, board=board, max_cycles=500_000)).ending.value)
        except MicroRtError as e:
            endings.add(type(e).__name__)
    assert len(endings) > 1, endings


def test_the_board_header_writes_each_register_at_its_width():
    """The RA6M4's FLWT is 8 bits and FCACHEE 16: written at their widths, the latency first."""
    board = load_board("ek-ra6m4")
    writes = flash_writes(board, 3)
    assert [(w.register.name, w.register.address, w.mask, w.value, w.register.size_bytes)
            for w in writes] == [("FLWT", 0x4001C11C, 0x7, 0x3, 1),
                                 ("FCACHEE", 0x4001C100, 0x1, 0x1, 2)]
    header = board_header(board, 200_000_000, 3)
    assert ("{0x4001c11cu, 0x00000007u, 0x00000003u, 1u}, \\\n"
            "    {0x4001c100u, 0x00000001u, 0x00000001u, 2u},") in header
    assert "#define MRT_N_FLASH_WRITES 2u" in header and "#define MRT_L1_CACHES 0" in header
    # the U575's ICACHE has no prefetch in profile's model: PRFTEN stays 0 as profile assumed
    u5 = flash_writes(load_board("nucleo-u575zi-q"), 4)
    assert [(w.register.name, w.mask, w.value) for w in u5] == [("FLASH_ACR", 0x10F, 0x4),
                                                                 ("ICACHE_CR", 0x1, 0x1)]
    assert "#define MRT_L1_CACHES 1" in board_header(load_board("nucleo-h743zi2"), 480_000_000, 4)


def test_wait_states_that_do_not_fit_the_latency_field_are_refused(capsys, tmp_path):
    data = json.loads(load_board("nucleo-l4r5zi").path.read_text())
    data.update(name="narrow-latency", title="NARROW", aliases=[])
    data["peripherals"]["flash_control"][0]["fields"]["latency"] = [0, 2]   # 0-3; it needs 5
    boards = tmp_path / "boards"
    boards.mkdir()
    (boards / "narrow-latency.json").write_text(json.dumps(data))
    code, _, err = run_cli(capsys, "export", str(MODELS / "anomaly_fc_int8.tflite"), "--board",
                           "narrow-latency", "--board-dir", str(boards), "-o", str(tmp_path / "p"))
    assert code == 2 and not (tmp_path / "p").exists()
    assert ("board narrow-latency: 5 flash wait states do not fit the 2-bit latency field of "
            "FLASH_ACR (peripherals.flash_control in") in err
