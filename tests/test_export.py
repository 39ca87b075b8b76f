"""`micro-rt export`: the project builds with arm-none-eabi-gcc, and its semihosting build runs
on the virtual MCU from its reset vector under `micro-rt emulate` (start-up included) to its
exit, printing the outputs the host computes; emulate times its mrt_invoke call (as it times
`--time` functions), whose instructions are the ones `profile --board` counts, exactly.

Cycles: the exported image keeps only the model's kernels, but places each of them, and each
constant, at the address micro_rt's firmware and profile's machine have it at modulo the
board's flash line (micro_rt/export_image.py), so with no flash wait states the cycle model
prices its blocks as profile's (within CYCLE_BOUND_0WS), and with the board's wait states its
fetches and flash data reads meet the lines profile counted: within CYCLE_BOUND_BOARD (the two
control-flow models, of 15 to 80 thousand cycles, are the furthest: their QUANTIZE and
DEQUANTIZE call libgcc's double-precision routines, whose code board.ld leaves where the linker
puts it). What profile counts is mrt_invoke alone, entered from the start-up; in the image main
calls it, so the cache state it meets at entry and the first and last blocks' edges differ.
tests/test_export_boot.py runs the board build on every catalog board and checks what the
program's own cycle counter printed."""
from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest
from elftools.elf.elffile import ELFFile

from cli_runner import relu_model
from conftest import require_tool
from micro_rt.cli import main
from micro_rt.cortexm.boards import load_board
from micro_rt.cortexm.image import reference_graph
from micro_rt.cortexm.system.call_watch import TimedCall
from micro_rt.cortexm.system.machine import EmulateRequest
from micro_rt.cortexm.system.peripherals import MmioPolicy
from micro_rt.cortexm.system.report import Ending, FirmwareReport
from micro_rt.cortexm.system.run import run_firmware
from micro_rt.fit_measure import RUNTIME_ROOTS
from micro_rt.inputs import random_inputs
from micro_rt.interpreter import Interpreter
from micro_rt.run_setup import board_setup

MODELS = Path(__file__).resolve().parents[1] / "models"
FIRMWARE = Path(__file__).resolve().parents[1] / "cortexm" / "firmware"
CYCLE_BOUND_0WS = 0.002
CYCLE_BOUND_BOARD = 0.02
# export counts its image as board.ld places it; main.c and startup.c (measured 960-1130 B with
# gcc 12.2 besides the names, counted as 1.25 KiB + the names) and the alignment are bounds, and
# the firmware's libgcc objects can be larger than the ones the image links (see below), so it
# may count this much more than the link places, never less (measured up to 920 B)
IMAGE_BOUND_SLACK = 1024
# the program's own cycle counter around mrt_invoke counts the call, the return and its reads
# as well: DWT_CYCCNT reads (measured 30 cycles on the M4 and M33), SysTick's on the M0+
COUNTER_OVERHEAD = 64
EXPORT_OWN = {"main", "Reset_Handler", "Default_Handler", "mrt_putc", "mrt_puts", "mrt_put_u32",
              "mrt_put_hex", "mrt_copy_in", "mrt_cycles_start", "mrt_cycles_now", "SysTick_Handler",
              "mrt_flash_setup", "mrt_l1_caches_on"}
FIRMWARE_OWN = {"mrt_start", "mrt_fault_handler"}      # profile's image's entry point and fault handler


def _json(capsys, *argv) -> tuple[int, dict]:
    code = main([*argv, "--json"])
    out = capsys.readouterr().out
    return code, json.loads(out) if out.strip() else {}


def _profile(capsys, model: Path, board: str, *extra) -> dict:
    code, report = _json(capsys, "profile", str(model), "--board", board, *extra)
    assert code == 0
    return report


def _emulated(elf: Path, **where) -> tuple[FirmwareReport, TimedCall, list[str]]:
    """The exported image run from reset to its exit by `emulate` (EmulateRequest's `where`:
    a board, or a core with its wait states), its one mrt_invoke call, and its console lines."""
    report = run_firmware(EmulateRequest(elf, **where))
    assert report.ending is Ending.EXIT and report.exit_code == 0, report.message
    calls = report.timed_calls["mrt_invoke"]
    assert len(calls) == 1 and not report.timed_unfinished
    return report, calls[0], report.console.splitlines()


def _printed_outputs(lines: list[str]) -> list[str]:
    return [re.fullmatch(r"output (\d+) ([0-9a-f]*)", line).group(2) for line in lines[3:]]


def _host_outputs(model: Path, core: str) -> list[str]:
    it = Interpreter.from_bytes(model.read_bytes(), target=core, kernels="reference")
    for i, x in enumerate(random_inputs(it, 0)):
        it.set_input(x, i)
    it.invoke()
    return [np.ascontiguousarray(it.get_output(i)).tobytes().hex() for i in range(it.num_outputs)]


def _placed(path: Path, board: str) -> dict[str, int]:
    """Bytes a linked image takes of the board's flash (to the end of the last thing loaded
    there, .data's initial values) and RAM (to the top of the stack), from the ELF."""
    memory = load_board(board).memory
    flash_base = memory.region(memory.code_region).base
    ram_base = memory.region(memory.arena_regions[0]).base
    with open(path, "rb") as fh:
        elf = ELFFile(fh)
        loads = [seg for seg in elf.iter_segments() if seg["p_type"] == "PT_LOAD" and seg["p_filesz"]]
        top = next(s["st_value"] for s in elf.get_section_by_name(".symtab").iter_symbols()
                   if s.name == "__stack_top")
        return {"flash": max(seg["p_paddr"] + seg["p_filesz"] for seg in loads) - flash_base,
                "ram": top - ram_base}


def _functions(path: Path) -> tuple[set[str], dict[str, int]]:
    """(function symbols, section sizes) of a linked ELF."""
    with open(path, "rb") as fh:
        elf = ELFFile(fh)
        return ({s.name for s in elf.get_section_by_name(".symtab").iter_symbols()
                 if s["st_info"]["type"] == "STT_FUNC" and s["st_size"]},
                {s.name: s["sh_size"] for s in elf.iter_sections()})


@pytest.mark.parametrize("model,board,core", [
    ("mobilenet_tiny_int8.tflite", "nucleo-l4r5zi", "cortex-m4"),
    ("mobilenet_tiny_int8.tflite", "nucleo-u575zi-q", "cortex-m33"),
    ("mobilenet_tiny_f32.tflite", "nucleo-l4r5zi", "cortex-m4"),        # libm's expf, VFP
    ("anomaly_fc_int8.tflite", "nucleo-g0b1re", "cortex-m0plus"),        # SysTick, no FPU
    ("control_flow/while_flags_int8.tflite", "nucleo-l4r5zi", "cortex-m4"),   # jumps in the plan
    ("control_flow/stream_state_int8.tflite", "nucleo-l4r5zi", "cortex-m4"),  # CALL_ONCE, variables
])
def test_export_builds_runs_and_matches_profile(capsys, tmp_path, model, board, core):
    require_tool("arm-none-eabi-gcc")
    require_tool("make")
    path, out = MODELS / model, tmp_path / "project"
    code, exported = _json(capsys, "export", str(path), "--board", board, "-o", str(out))
    assert code == 0 and exported["core"] == core
    for goal in ("all", "semihosting"):        # the board build compiles too (DWT / SysTick, CPACR)
        subprocess.run(["make", "-s", "-C", str(out), goal], check=True, capture_output=True)
    elf = out / "model-semihosting.elf"
    run, invoke, lines = _emulated(elf, board=load_board(board))
    assert lines[0] == f"model {path.name} on {board}" and lines[1] == "status 0"
    printed_cycles = int(re.fullmatch(r"cycles (\d+)", lines[2]).group(1))
    assert 0 <= printed_cycles - invoke.cycles <= COUNTER_OVERHEAD, (printed_cycles, invoke)
    printed = _printed_outputs(lines)
    emulated = Interpreter.from_bytes(path.read_bytes(), target=core, kernels="cmsis-nn", emulate=True)
    for i, x in enumerate(random_inputs(emulated, 0)):
        emulated.set_input(x, i)
    emulated.invoke()
    assert printed == [np.ascontiguousarray(emulated.get_output(i)).tobytes().hex()
                       for i in range(emulated.num_outputs)]
    emulated.close()
    if "int8" in model:                      # float32 softmax: newlib's expf, not the host's
        assert printed == _host_outputs(path, core)

    profiled = _profile(capsys, path, board)
    assert invoke.instructions == profiled["total_instructions"] == exported["profile_instructions"]
    assert abs(invoke.cycles - profiled["total_cycles"]) <= CYCLE_BOUND_BOARD * profiled["total_cycles"]
    # the core's default flash at 0 wait states, no board: its flash registers are not there
    _, flat, _ = _emulated(elf, target=core, flash_wait_states=0, mmio=MmioPolicy.IGNORE)
    code, profiled = _json(capsys, "profile", str(path), "--target", core, "--flash-wait-states", "0")
    assert code == 0
    assert flat.instructions == profiled["total_instructions"]
    assert abs(flat.cycles - profiled["total_cycles"]) <= CYCLE_BOUND_0WS * profiled["total_cycles"]

    # the image keeps the kernels fit counts: the same functions, besides each one's start-up
    code, fit = _json(capsys, "fit", str(path), "--board", board, "--kernels", "cmsis-nn")
    graph = reference_graph(FIRMWARE / f"{core}.elf")
    counted = graph.closure([n for n in RUNTIME_ROOTS if n in graph.by_name]
                            + fit["image_functions"]).names("code")
    linked, sections = _functions(out / "model.elf")
    assert FIRMWARE_OWN <= counted - linked and linked - counted <= EXPORT_OWN
    # libgcc has a multiply-only object and a multiply-and-divide one: the firmware, which
    # divides elsewhere, links the second; an image that only multiplies gets the first
    assert {n for n in counted - linked - FIRMWARE_OWN} <= {"__aeabi_ddiv", "__divdf3"}
    # the constants and the call table: the same bytes, one section; each constant at profile's
    # address modulo the flash line (export_image.constant_offsets), less than a line after the
    # one before (an entry takes at most 4 constants: weights, bias, multipliers, shifts)
    flash = fit["flash"]
    parts = {part["part"]: part["bytes"] for part in exported["image"]["flash"]["parts"]}
    assert sections[".mrt_constants"] == parts["constants"] + parts["call table"]
    assert parts["call table"] == flash["plan_table_bytes"]
    padding = parts["constants"] - flash["model_bytes"] - flash["op_constants_bytes"]
    line = load_board(board).accelerator.line_bytes
    assert 0 <= padding < line * 4 * exported["plan_entries"]
    # the argument structs: RAM with their initial values in flash (.data)
    assert fit["ram"]["plan_state_bytes"] <= sections[".data"] <= fit["ram"]["plan_state_bytes"] + 32 \
        + fit["flash"]["data_init_bytes"]
    assert flash["plan_bytes"] == flash["plan_table_bytes"] + fit["ram"]["plan_state_bytes"]
    assert fit["ram"]["kernel_stack_bytes"] == invoke.stack_bytes

    # what export counted before writing the project is what the link placed, never less
    placed = _placed(out / "model.elf", board)
    for region in ("flash", "ram"):
        counted = exported["image"][region]["used"]
        assert placed[region] <= counted <= placed[region] + IMAGE_BOUND_SLACK, (region, placed, counted)


def test_export_takes_the_kernels_flavour(capsys, tmp_path):
    """Without --kernels export writes the CMSIS-NN-style kernels (the flavour TFLM is built
    with for the board's Cortex-M core); with --kernels reference the reference flavour's plain
    C loops, and that project runs as `profile --board B --kernels reference` counts."""
    require_tool("arm-none-eabi-gcc")
    require_tool("make")
    path, board, core = MODELS / "mobilenet_tiny_int8.tflite", "nucleo-l4r5zi", "cortex-m4"
    code, default = _json(capsys, "export", str(path), "--board", board, "-o", str(tmp_path / "cmsis"))
    assert code == 0 and default["kernels"] == "cmsis-nn"
    out = tmp_path / "reference"
    code, exported = _json(capsys, "export", str(path), "--board", board, "-o", str(out),
                           "--kernels", "reference")
    assert code == 0 and exported["kernels"] == "reference"
    assert exported["arena_for"] == "arena for TFLM with reference kernels on cortex-m4"
    reference_sources = {s for s in exported["kernel_sources"] if s.startswith("mrt_ref_")}
    assert reference_sources and not reference_sources & set(default["kernel_sources"])
    assert "kernels reference" in (out / "README.txt").read_text()
    subprocess.run(["make", "-s", "-C", str(out), "semihosting"], check=True, capture_output=True)
    _, invoke, lines = _emulated(out / "model-semihosting.elf", board=load_board(board))
    assert lines[1] == "status 0"
    assert _printed_outputs(lines) == _host_outputs(path, core)
    profiled = _profile(capsys, path, board, "--kernels", "reference")
    assert invoke.instructions == profiled["total_instructions"] == exported["profile_instructions"]
    assert exported["profile_instructions"] != default["profile_instructions"]


def test_export_refuses_what_it_cannot_do(capsys, tmp_path):
    model = str(MODELS / "mobilenet_tiny_int8.tflite")
    code = main(["export", model, "--board", "no-such-board", "-o", str(tmp_path / "a")])
    assert code == 2 and "unknown board 'no-such-board'" in capsys.readouterr().err
    assert not (tmp_path / "a").exists()
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "keep.txt").write_text("mine")
    code = main(["export", model, "--board", "nucleo-l4r5zi", "-o", str(tmp_path / "b")])
    assert code == 2 and "not an empty directory" in capsys.readouterr().err
    assert [p.name for p in (tmp_path / "b").iterdir()] == ["keep.txt"]
    code = main(["export", str(MODELS / "custom_atan.tflite"), "--board", "nucleo-l4r5zi",
                 "-o", str(tmp_path / "c")])
    err = capsys.readouterr().err
    assert code == 2 and "cannot be exported: no C kernel for op 0" in err, err
    assert not (tmp_path / "c").exists()


def test_export_refuses_a_plan_with_a_host_entry(capsys, tmp_path):
    """An operator the emulator ran on its host kernel (its resource handle is known only at run
    time) has no kernel call a device could make: export says so and writes nothing."""
    from test_vmcu_host_entries import runtime_handle_model
    model = tmp_path / "runtime_handle.tflite"
    model.write_bytes(runtime_handle_model())
    code = main(["export", str(model), "--board", "nucleo-l4r5zi", "-o", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and "runtime_handle.tflite cannot be exported: op " in err, err
    assert "known only at run time" in err and "the emulator ran it on the host" in err, err
    assert not (tmp_path / "out").exists()


def test_export_refuses_an_image_that_does_not_fit(capsys, tmp_path):
    """No project for an image that would not link: exit 1, one line naming what is over and
    by how much, nothing written."""
    model = relu_model(tmp_path / "relu.tflite", 100_000)
    code = main(["export", str(model), "--board", "nucleo-g0b1re", "-o", str(tmp_path / "a")])
    err = capsys.readouterr().err
    assert code == 1 and not (tmp_path / "a").exists() and len(err.splitlines()) == 1
    assert "the image does not fit board nucleo-g0b1re: RAM (SRAM) " in err
    assert re.search(r"of 147,456 B, over by [\d,]+ B .*largest: console [\d,]+ B, arena 200,000 B", err)
    code, refused = _json(capsys, "export", str(model), "--board", "nucleo-g0b1re", "-o",
                          str(tmp_path / "a"))
    ram = refused["image"]["ram"]
    assert code == 1 and refused["exported"] is False and ram["used"] > ram["capacity"] == 147_456
    assert {"part": "arena", "bytes": 200_000} in ram["parts"]


def test_export_counts_the_seeded_input_fit_does_not(capsys, tmp_path, monkeypatch):
    """fit counts the model's flash, the export also the seeded test input main.c feeds it: on
    a board with 24 KiB of flash a 25,000-byte input makes the image too large although fit
    says the model fits."""
    data = json.loads((Path(__file__).resolve().parents[1] / "cortexm" / "board_data"
                       / "nucleo-g0b1re.json").read_text())
    data.update(name="small-flash", title="SMALL-FLASH", aliases=[])
    for region in data["memory"]["regions"]:
        if region["name"] == data["memory"]["code_region"]:
            region["size"] = 24 * 1024
    boards_dir = tmp_path / "boards"
    boards_dir.mkdir()
    (boards_dir / "small-flash.json").write_text(json.dumps(data))
    monkeypatch.setenv("MICRO_RT_BOARDS", str(boards_dir))          # fit has no --board-dir
    model = relu_model(tmp_path / "relu.tflite", 25_000)
    code, fit = _json(capsys, "fit", str(model), "--board", "small-flash", "--kernels", "cmsis-nn")
    assert fit["flash"]["fits"] is True and fit["flash"]["used"] < 24 * 1024
    code = main(["export", str(model), "--board", "small-flash", "--board-dir", str(boards_dir),
                 "-o", str(tmp_path / "p")])
    err = capsys.readouterr().err
    assert code == 1 and not (tmp_path / "p").exists()
    assert "FLASH (FLASH) " in err and "of 24,576 B, over by" in err and "seeded test inputs 25,000 B" in err
    assert "RAM" not in err.split(": ", 2)[2]           # only flash is over


@pytest.mark.parametrize("board,set_calls,left_calls", [
    ("nucleo-l4r5zi", ["__HAL_FLASH_INSTRUCTION_CACHE_ENABLE()"],
     ["HAL_RCC_ClockConfig(&clk, FLASH_LATENCY_5)"]),
    ("nucleo-h743zi2", ["SCB_EnableICache()", "CCR.IC and CCR.DC"],
     ["HAL_RCC_ClockConfig(&clk, FLASH_LATENCY_4)"]),
    ("ek-ra6m4", ["R_BSP_FlashCacheEnable()", "FLWT's latency field"], ["bsp_clock_init()"]),
    ("nrf5340-dk", ["nrf_cache_enable(NRF_CACHE)", "the board file names no latency register"],
     ["nrfx_clock_divider_set(NRF_CLOCK_DOMAIN_HFCLK, NRF_CLOCK_HFCLK_DIV_1)"]),
    ("mimxrt1060-evk", ["FLEXSPI_AHBCR prefetch on"],
     ["BOARD_BootClockRUN()", "FlexSPI configuration block"]),
    ("raspberry-pi-pico", ["XIP_CTRL cache on"], ["set_sys_clock_khz(125000, true)", "boot stage 2"]),
])
def test_export_says_what_it_sets_and_leaves_to_the_user(capsys, tmp_path, board, set_calls,
                                                          left_calls):
    """The start-up sets the flash latency, prefetch and caches profile assumed, not the clock:
    the export says what profile assumed of each, and README.txt names what the start-up writes
    and the vendor's call for each."""
    setup = board_setup(board)
    out = tmp_path / "p"
    code, exported = _json(capsys, "export", str(MODELS / "anomaly_fc_int8.tflite"), "--board", board,
                           "-o", str(out))
    assert code == 0
    kind = load_board(board).accelerator.kind
    assert exported["assumed"] == (f"core clock {setup.clock_hz / 1e6:g} MHz, flash latency "
                                   f"{setup.flash_wait_states} wait states, the {kind} on")
    readme = (out / "README.txt").read_text()
    set_by = readme[readme.index("\nSet by startup.c ("):readme.index("\nLeft to you (")]
    left = readme[readme.index("\nLeft to you ("):readme.index("The image as board.ld places it")]
    assert f"flash latency: profile assumed {setup.flash_wait_states} wait states" in set_by
    assert f"core clock: profile assumed {setup.clock_hz / 1e6:g} MHz" in left
    assert "- flash latency:" not in left and "- flash accelerator:" not in left
    for call in set_calls:
        assert call in set_by, call
    for call in left_calls:
        assert call in left, call
    assert exported["set_by_startup"] == [line[4:] for line in set_by.splitlines()[2:] if line]
