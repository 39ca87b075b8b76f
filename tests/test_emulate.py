"""`micro-rt emulate`: firmware images the tests build (tests/firmware_src) run from their reset
vector on the virtual MCU, with what each program checks: semihosting printf and exit codes,
DWT cycle counts, SysTick interrupts, the heap, a HardFault and its handler, an unaligned access,
code in RAM with relocated vectors, an M7 enabling its caches, a program that never ends, an
unmodelled peripheral, a board's console UART and flash registers, --input / --output."""
from __future__ import annotations

import json
import re

import numpy as np
import pytest

from cli_runner import run_cli
from conftest import requires_arm_gcc
from firmware_programs import build
from micro_rt.cortexm.system.machine import EmulateRequest, FirmwareMachine
from micro_rt.cortexm.system.run import FirmwareRun, run_firmware

pytestmark = requires_arm_gcc


@pytest.fixture(scope="module")
def out(tmp_path_factory):
    return tmp_path_factory.mktemp("firmware")


def emulate(capsys, elf, *options):
    code, text, err = run_cli(capsys, "emulate", str(elf), "--json", *options)
    return code, (json.loads(text) if text else None), err


@pytest.mark.parametrize("core, built_for", [("cortex-m0plus", "v6S-M"), ("cortex-m33", "v8-M.main")])
def test_without_board_or_target_the_core_is_the_one_the_elf_was_built_for(capsys, tmp_path, core, built_for):
    code, r, _ = emulate(capsys, build("hello", tmp_path, core))
    assert code == 5 and r["core"] == core
    assert r["core_source"] == f"the ELF's build attributes say {built_for}"


def test_an_armv7e_m_image_runs_on_the_m4_and_says_the_m7_runs_it_too(capsys, out):
    code, r, _ = emulate(capsys, build("hello", out, "cortex-m7"))
    assert code == 5 and r["core"] == "cortex-m4"
    assert "v7E-M, which the cortex-m7 also runs: --target picks one" in r["core_source"]
    code, r, _ = emulate(capsys, build("hello", out, "cortex-m7"), "--target", "cortex-m7")
    assert r["core"] == "cortex-m7" and r["core_source"] == "given"
    assert not any("does not run" in n for n in r["notes"])


def test_a_core_that_does_not_run_the_images_architecture_is_named(capsys, tmp_path):
    code, r, _ = emulate(capsys, build("hello", tmp_path, "cortex-m33"), "--target", "cortex-m0plus")
    assert "the ELF was built for v8-M.main, which the cortex-m0plus does not run" in " ".join(r["notes"])


def test_printf_over_semihosting_and_exit_code(capsys, out):
    code, r, _ = emulate(capsys, build("hello", out))
    assert code == 5 and r["ending"] == "exit" and r["exit_code"] == 5
    assert r["console"] == "hello from the virtual MCU 42\n"
    assert r["console_sources"] == ["semihosting"]
    assert r["semihosting_calls"]["OPEN"] >= 1 and r["semihosting_calls"]["EXIT_EXTENDED"] == 1
    assert r["reset_handler"] == "_start" and r["vector_table"] == "0x08000000"
    names = {f["function"] for f in r["functions"]}
    assert {"main", "printf", "_vfprintf_r"} <= names


def test_cortex_m0plus_runs_the_same_program(capsys, out):
    code, r, _ = emulate(capsys, build("hello", out, "cortex-m0plus"), "--target", "cortex-m0plus")
    assert code == 5 and r["console"] == "hello from the virtual MCU 42\n" and r["core"] == "cortex-m0plus"


def test_dwt_deltas_are_the_profile_cycles(capsys, out):
    code, r, _ = emulate(capsys, build("dwt_loop", out))
    assert code == 0
    deltas = [int(m) for m in re.findall(r"delta \d (\d+)", r["console"])]
    total = int(re.search(r"total (\d+)", r["console"]).group(1))
    assert len(deltas) == 8 and sum(deltas) == total
    steps = {b - a for a, b in zip(deltas, deltas[1:])}
    assert len(steps) == 1 and steps.pop() > 0        # 10 more iterations cost the same each time
    work = next(f for f in r["functions"] if f["function"] == "work")
    assert work["calls"] == 8
    # each delta is work's call plus the call and the CYCCNT read around it: a few cycles
    assert 0 <= total - work["inclusive_cycles"] <= 8 * 12
    assert r["cyccnt_reads"] == 16
    assert r["system_registers_not_modelled"] == {}       # DEMCR, DWT_CTRL, LAR: all modelled


def test_time_gives_each_call_exactly(capsys, out):
    """--time work: one row a call; a leaf's instructions add up to its profile row's exactly,
    and each call's cycles are what the program's own CYCCNT reads around it gave, less the
    call and the reads (a few cycles)."""
    code, r, _ = emulate(capsys, build("dwt_loop", out), "--time", "work")
    assert code == 0 and r["timed_unfinished"] == []
    calls = r["timed_calls"]["work"]
    work = next(f for f in r["functions"] if f["function"] == "work")
    assert len(calls) == 8 and sum(c["instructions"] for c in calls) == work["instructions"]
    steps = {b["instructions"] - a["instructions"] for a, b in zip(calls, calls[1:])}
    assert len(steps) == 1 and steps.pop() > 0          # 10 more iterations a call
    deltas = [int(m) for m in re.findall(r"delta \d (\d+)", r["console"])]
    assert all(0 <= d - c["cycles"] <= 12 for d, c in zip(deltas, calls)), (deltas, calls)
    assert all(c["stack_bytes"] is not None and 0 <= c["stack_bytes"] <= 16 for c in calls)
    code, text, err = run_cli(capsys, "emulate", str(build("dwt_loop", out)), "--time", "work")
    assert code == 0 and "timed work: 8 calls: " in text


def test_time_refuses_what_is_not_a_function(capsys, out):
    elf = build("dwt_loop", out)
    code, text, err = run_cli(capsys, "emulate", str(elf), "--time", "no_such_function")
    assert code == 2 and text == "" and "no symbol 'no_such_function' for --time" in err
    code, text, err = run_cli(capsys, "emulate", str(elf), "--time", "sink")
    assert code == 2 and "symbol 'sink' for --time is a data object, not a function" in err


def test_the_cycle_count_is_cumulative(out):
    """The clock CYCCNT reads is the cycle model over every edge so far: pricing the run's edges
    afresh at the end gives the same total, however often the program read it."""
    for program in ("dwt_loop", "systick"):          # systick: exception entries in the count
        m = FirmwareMachine(EmulateRequest(build(program, out)))
        report = FirmwareRun(m).run()
        edges = m.hooks.edges()
        _, bd, _ = m.model.count(edges, None, m.hooks.stats().flash)
        assert report.cycles == bd.total + m.exceptions.entry_cycles + m.exceptions.return_cycles
        assert m.clock.now() == report.cycles           # the clock DWT_CYCCNT reads is the run's count
        assert (program == "systick") == (m.exceptions.entry_cycles > 0)


def test_systick_interrupts_at_the_modelled_time(capsys, out):
    code, r, _ = emulate(capsys, build("systick", out))
    assert code == 0 and "ticks 21" in r["console"]
    at = [int(m) for m in re.findall(r"tick \d at (\d+)", r["console"])]
    # each is taken at most NEAR (8) cycles early or a block of main's loop late
    assert all(abs((b - a) - 1000) <= 16 for a, b in zip(at, at[1:])), at
    assert r["exceptions_taken"] == {"SysTick": 21}
    assert r["cycle_breakdown"]["exception_entry"] == 21 * 12
    # the return latency is documented for the M4 alone (10 cycles, Arm knowledge article 103489845)
    returns = r["cycle_breakdown"]["exception_return"]
    assert returns == (21 * 10 if r["core"] == "cortex-m4" else 0), returns


def test_malloc_and_free_are_counted(capsys, out):
    code, r, _ = emulate(capsys, build("heap", out))
    h = r["heap"]
    assert code == 0 and r["console"] == "heap done\n"
    assert h["calls"]["malloc"] == 11 and h["calls"]["free"] == 11 and h["calls"]["realloc"] == 1
    assert h["peak_in_use"] == 10 * 100 + 300 and h["sbrk_bytes"] > 0
    assert h["callers"]["malloc"]["main"] == 10 and h["callers"]["realloc"] == {"main": 1}
    assert r["stack_high_water_bytes"] > 0


def test_hardfault_runs_the_programs_handler_and_is_named(capsys, out):
    code, r, _ = emulate(capsys, build("hardfault", out))
    assert code == 7
    assert "CFSR=00008200 HFSR=40000000 BFAR=30000000" in r["console"]
    assert "after UFSR clear 00008200, after BFSR clear 00000000" in r["console"]
    (f,) = r["faults"]
    assert f["exception"] == "HardFault" and f["symbol"] == "bad_load" and f["address"] == "0x30000000"
    assert f["cfsr"] == ["PRECISERR", "BFARVALID"] and f["hfsr"] == ["FORCED"]
    assert f["handled_by"] == "HardFault_Handler"


def test_unaligned_ldrd_is_named(capsys, out):
    code, r, _ = emulate(capsys, build("unaligned", out))
    assert code == 0
    (u,) = r["unaligned"]
    assert u["kind"] == "LDRD" and u["symbol"] == "load_pair" and u["faults_on_silicon"]
    assert int(u["address"], 16) % 4 == 2


def test_code_in_ram_and_vectors_moved_by_vtor(capsys, out):
    code, r, _ = emulate(capsys, build("ramcode", out))
    assert code == 0 and "sum 4950 svc 5c" in r["console"]
    vtor = int(re.search(r"vtor ([0-9a-f]+)", r["console"]).group(1), 16)
    assert 0x2000_0000 <= vtor < 0x2002_0000
    ram = {f["function"]: int(f["address"], 16) for f in r["functions"] if f["address"]}
    assert ram["ram_sum"] >= 0x2000_0000 and ram["ram_svc_handler"] >= 0x2000_0000
    assert r["exceptions_taken"] == {"SVCall": 1}


def test_cortex_m7_enabling_its_caches(capsys, out):
    elf = build("caches_m7", out, "cortex-m7")
    code, r, _ = emulate(capsys, elf, "--target", "cortex-m7", "--flash-wait-states", "5")
    assert code == 0, r["console"]                    # the loop is faster with the caches on
    assert "sets 128 ways 4" in r["console"]          # CCSIDR: 16 KiB 4-way, 32-byte lines
    fi = r["flash_interface"]
    assert "L1 I-cache off, D-cache off" in fi["at_reset"] and "L1 I-cache on, D-cache on" in fi["at_end"]
    assert len(fi["changes"]) == 2


def test_a_program_that_never_ends_stops_at_max_cycles(capsys, out):
    code, r, _ = emulate(capsys, build("forever", out), "--max-cycles", "100000")
    assert code == 3 and r["ending"] == "max-cycles" and "100,000" in r["message"]
    assert 100_000 - 8 <= r["cycles"] <= 100_000 + 8


def test_an_unmodelled_peripheral_stops_the_run_named(capsys, out):
    elf = build("peripheral", out)
    code, r, _ = emulate(capsys, elf)
    assert code == 3 and r["ending"] == "unmodelled-peripheral"
    assert "0x48000414" in r["message"] and "<main" in r["message"]
    code, r, _ = emulate(capsys, elf, "--ignore-mmio")
    assert code == 0 and r["ignored_mmio"] == {"0x48000414": 1}
    assert r["console"] == "after the peripheral write\n"


def test_board_console_uart_and_flash_registers(capsys, out):
    code, r, _ = emulate(capsys, build("uart_l4r5", out), "--board", "nucleo-l4r5zi")
    assert code == 0 and r["console"] == "uart ok\n" and r["console_sources"] == ["UART"]
    fi = r["flash_interface"]
    assert fi["at_reset"].startswith("0 wait states, prefetch off")
    assert fi["at_end"].startswith("5 wait states, prefetch on") and len(fi["changes"]) == 1
    assert r["cycle_breakdown"]["fetch_stalls"] > 0
    assert {x["region"] for x in r["regions"]} == {"FLASH", "SRAM1", "SRAM2", "SRAM3"}


def test_input_into_data_and_bss_and_output(capsys, out, tmp_path):
    np.save(tmp_path / "w.npy", np.arange(8, dtype=np.int16))
    np.save(tmp_path / "s.npy", np.full(8, 3, dtype=np.int16))
    code, r, _ = emulate(capsys, build("io", out), "--input", f"weights={tmp_path / 'w.npy'}",
                         "--input", f"samples={tmp_path / 's.npy'}",
                         "--output", f"result={tmp_path / 'r.npy'}")
    assert code == 0
    assert np.frombuffer(bytes(r["outputs"]["result"]), "<i4").tolist() == [84, 24]
    assert np.load(tmp_path / "r.npy").view("<i4").tolist() == [84, 24]


def test_text_csv_markdown_and_html_views(capsys, out, tmp_path):
    elf = build("hello", out)
    code, text, _ = run_cli(capsys, "emulate", str(elf))
    assert code == 5 and "exit: the program exited with code 5" in text and "hello from the virtual MCU" in text
    code, csv, _ = run_cli(capsys, "emulate", str(elf), "--format", "csv")
    assert csv.splitlines()[0] == "function,calls,instructions,exclusive_cycles,inclusive_cycles,memory_stall_cycles"
    code, md, _ = run_cli(capsys, "emulate", str(elf), "--format", "markdown", "--html", str(tmp_path / "r.html"))
    assert "| function |" in md
    page = (tmp_path / "r.html").read_text()
    assert "Firmware run: hello-cortex-m4.elf" in page and "_vfprintf_r" in page


def test_api_report_record(out):
    r = run_firmware(EmulateRequest(build("hello", out)))
    assert r.exit_status == 5 and r.ending.ok and r.seconds == r.cycles / 100e6


@pytest.mark.parametrize("board", ["nucleo-l4r5zi", "ek-ra6m4", "nrf5340-dk"])
def test_the_profile_adds_up_to_the_cycles(capsys, out, board):
    """Every cycle of the run is in one function's self cycles or in the exception entries, on
    boards with flash wait states, a flash cache and (the RA6M4 at 200 MHz) SRAM wait states."""
    elf = build("systick", out, "cortex-m33" if board != "nucleo-l4r5zi" else "cortex-m4",
                flash_at_zero=board != "nucleo-l4r5zi")
    code, r, _ = emulate(capsys, elf, "--board", board)
    assert code == 0
    assert sum(f["exclusive_cycles"] for f in r["functions"]) + sum(r["cycles_outside_functions"].values()) \
        == r["cycles"]
    assert sum(f["instructions"] for f in r["functions"]) == r["instructions"]


def test_nvic_priorities_pendsv_itm_and_the_fp_context(capsys, out):
    """IRQ1 (priority 0x40) pended inside IRQ0's handler (0x80) preempts it right after the
    write; IRQ2 (0xC0) waits for IRQ0's return; PendSV (lowest) runs when pended from Thread
    mode; IRQ2's own FPU use leaves the interrupted FP work's registers as they were."""
    elf = build("system", out, "cortex-m4", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16")
    code, r, _ = emulate(capsys, elf)
    assert code == 0 and r["console"] == "order 01a2P\nfp ok\n" and r["console_sources"] == ["ITM"]
    assert r["exceptions_taken"] == {"PendSV": 1, "IRQ0": 1, "IRQ1": 1, "IRQ2": 1}
    assert sum(f["exclusive_cycles"] for f in r["functions"]) + sum(r["cycles_outside_functions"].values()) \
        == r["cycles"]


FP_FLAGS = {"cortex-m4": ("-mfloat-abi=hard", "-mfpu=fpv4-sp-d16"), "cortex-m7": ("-mfloat-abi=hard", "-mfpu=fpv5-d16"),
            "cortex-m33": ("-mfloat-abi=hard", "-mfpu=fpv5-sp-d16")}


@pytest.mark.parametrize("core", sorted(FP_FLAGS))
@pytest.mark.parametrize("eager", [False, True], ids=["lazy", "eager"])
def test_lazy_fp_stacking_saves_at_the_handlers_first_fp_instruction(capsys, tmp_path, core, eager):
    """Interrupted FP work keeps S0-S15 and FPSCR across a handler without FP work and one with
    it; with FPCCR.LSPEN (reset) the space is reserved, LSPACT set and FPCAR pointed at it, and
    the words are written only when the second handler reaches its first FP instruction (the
    program checks FPCCR, FPCAR and the frame itself). With LSPEN cleared (EAGER) they are
    written at every entry. On the Cortex-M4 each write and each read back costs 17 cycles
    (Arm knowledge article 103489845): lazily one save and one restore, eagerly two of each."""
    elf = build("lazy_fp", tmp_path, core, *FP_FLAGS[core], *(["-DEAGER"] if eager else []))
    code, r, _ = emulate(capsys, elf, "--target", core)
    assert code == 0 and r["console"] == "kept 1 saved 1 flags 1 result 9\n", r["console"]
    assert r["exceptions_taken"] == {"IRQ0": 1, "IRQ1": 1}
    fp_cycles = r["cycles_outside_functions"].get("FP context stacking", 0)
    assert fp_cycles == (0 if core != "cortex-m4" else 68 if eager else 34)
    assert r["cycle_breakdown"]["fp_context_stacking"] == fp_cycles
    assert sum(f["exclusive_cycles"] for f in r["functions"]) + sum(r["cycles_outside_functions"].values()) \
        == r["cycles"]
    note = next(n for n in r["notes"] if "had an FP context" in n)
    assert ("written at entry (FPCCR.LSPEN clear)" in note) == eager
    assert ("2 reserved its space lazily (FPCCR.LSPEN), and 1 lazy save(s)" in note) == (not eager)
    assert ("priced at 17 cycles" in note) == (core == "cortex-m4")
    assert ("not priced: no document gives the" in note) == (core != "cortex-m4")


def test_a_system_reset_request_ends_the_run(capsys, out, tmp_path):
    elf = build("system", tmp_path, "cortex-m4", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16", "-DRESET_AT_END")
    code, r, _ = emulate(capsys, elf)
    assert code == 3 and r["ending"] == "reset-request" and "SYSRESETREQ" in r["message"]
    assert r["console"] == "order 01a2P\nfp ok\n"
