"""`micro-rt emulate` on images that cannot run: each is a FirmwareError naming the file and
what is wrong (exit 2), or a fault the report names, never a hang or a Python exception."""
from __future__ import annotations

import json
import struct

import pytest

from cli_runner import run_cli
from conftest import requires_arm_gcc
from firmware_programs import build, build_source
from micro_rt.cortexm.system.machine import EmulateRequest
from micro_rt.cortexm.system.run import run_firmware
from micro_rt.errors import FirmwareError

pytestmark = requires_arm_gcc


@pytest.fixture(scope="module")
def hello(tmp_path_factory):
    return build("hello", tmp_path_factory.mktemp("firmware")).read_bytes()


def _program_header(raw: bytes, i: int) -> int:
    """File offset of the i-th PT_LOAD program header."""
    phoff, = struct.unpack_from("<I", raw, 28)
    phentsize, phnum = struct.unpack_from("<HH", raw, 42)
    loads = [phoff + k * phentsize for k in range(phnum)
             if struct.unpack_from("<I", raw, phoff + k * phentsize)[0] == 1]
    return loads[i]


def _first_load_offset(raw: bytes) -> int:
    """File offset of the first PT_LOAD's bytes: the vector table."""
    return struct.unpack_from("<I", raw, _program_header(raw, 0) + 4)[0]


def _patched(raw: bytes, offset: int, fmt: str, *values) -> bytes:
    out = bytearray(raw)
    struct.pack_into(fmt, out, offset, *values)
    return bytes(out)


CASES = {
    "not an ELF": (lambda raw: b"hello, world\n" * 10, "not an ELF file"),
    "64-bit": (lambda raw: raw[:4] + b"\x02" + raw[5:], "64-bit"),
    "big-endian": (lambda raw: raw[:5] + b"\x02" + raw[6:], "big-endian"),
    "x86-64 machine": (lambda raw: _patched(raw, 18, "<H", 62), "e_machine 62 is not ARM"),
    "truncated": (lambda raw: raw[:len(raw) // 3], "truncated"),
    "too short": (lambda raw: raw[:20], "too short"),
    "no program headers": (lambda raw: _patched(raw, 44, "<H", 0), "no program headers"),
    "initial SP outside RAM": (lambda raw: _patched(raw, _first_load_offset(raw), "<I", 0x1000_0000),
                               "initial stack pointer 0x10000000"),
    "reset vector without Thumb bit": (lambda raw: _patched(raw, _first_load_offset(raw) + 4, "<I", 0x0800_0100),
                                       "has no Thumb bit"),
    "reset vector outside every region": (lambda raw: _patched(raw, _first_load_offset(raw) + 4, "<I", 0x0900_0001),
                                          "points outside every region"),
    "overlapping segments": (lambda raw: _patched(raw, _program_header(raw, 1) + 8, "<II", 0x0800_0000, 0x0800_0000),
                             "overlap"),
    "segment past 4 GiB": (lambda raw: _patched(raw, _program_header(raw, 1) + 8, "<I", 0xFFFF_FF00),
                           "32-bit address space"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_images_are_named_errors(case, hello, tmp_path, capsys):
    make, expected = CASES[case]
    path = tmp_path / "bad.elf"
    path.write_bytes(make(hello))
    code, out, err = run_cli(capsys, "emulate", str(path))
    assert code == 2 and out == "", err
    assert err.startswith("micro-rt: error: bad.elf") and expected in err, err
    with pytest.raises(FirmwareError):
        run_firmware(EmulateRequest(path))


def test_segment_outside_the_boards_map(hello, tmp_path, capsys):
    # the test programs link at 0x08000000: the RP2040's flash is at 0x10000000
    path = tmp_path / "hello.elf"
    path.write_bytes(hello)
    code, _, err = run_cli(capsys, "emulate", str(path), "--board", "raspberry-pi-pico")
    assert code == 2 and "segment 0 runs at 0x08000000" in err and "XIP_FLASH" in err


def _attributes_offset(raw: bytes) -> int:
    """File offset of the .ARM.attributes section's bytes."""
    shoff, = struct.unpack_from("<I", raw, 32)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", raw, 46)
    strtab_off, = struct.unpack_from("<I", raw, shoff + shstrndx * shentsize + 16)
    for k in range(shnum):
        name_at, = struct.unpack_from("<I", raw, shoff + k * shentsize)
        if raw[strtab_off + name_at:].startswith(b".ARM.attributes\0"):
            return struct.unpack_from("<I", raw, shoff + k * shentsize + 16)[0]
    raise AssertionError("no .ARM.attributes")


@pytest.mark.parametrize("damage", [0, 3, 0xFFFF_FFFF], ids=["length 0", "length 3", "length past the end"])
def test_malformed_build_attributes_leave_the_core_assumed(hello, tmp_path, capsys, damage):
    """The subsection length pyelftools would loop on for ever (0), or one that cannot be, reads
    as no build attributes: the run goes on, on the Cortex-M4, and says it assumed it."""
    elf = tmp_path / "attrs.elf"
    elf.write_bytes(_patched(hello, _attributes_offset(hello) + 1, "<I", damage))
    code, text, _ = run_cli(capsys, "emulate", str(elf), "--json")
    r = json.loads(text)
    assert code == 5 and r["core"] == "cortex-m4"
    assert r["core_source"] == "assumed: the ELF's build attributes name no architecture"


def test_missing_file_and_directory(tmp_path, capsys):
    code, _, err = run_cli(capsys, "emulate", str(tmp_path / "none.elf"))
    assert code == 2 and "none.elf" in err
    code, _, err = run_cli(capsys, "emulate", str(tmp_path))
    assert code == 2 and "a directory" in err


def test_executing_where_no_region_is_a_reported_fault(tmp_path, capsys):
    """A jump to 0x30000000 (no memory there): the fault is taken by the default handler, which
    spins; the report names the fetch fault and the run ends at --max-cycles."""
    src = tmp_path / "jump.c"
    src.write_text("int main(void) { ((void (*)(void))0x30000001u)(); return 0; }\n")
    elf = build_source(src, tmp_path)
    code, out, _ = run_cli(capsys, "emulate", str(elf), "--max-cycles", "200000", "--json")
    r = json.loads(out)
    assert code == 3 and r["ending"] == "max-cycles"
    (f,) = r["faults"]
    assert f["cause"] == "instruction fetch from unmapped memory" and f["pc"] == "0x30000000"
    assert f["handled_by"] == "default_handler"


def test_input_errors_name_the_symbol(hello, tmp_path, capsys):
    path = tmp_path / "hello.elf"
    path.write_bytes(hello)
    blob = tmp_path / "x.bin"
    blob.write_bytes(b"\0" * 4)
    code, _, err = run_cli(capsys, "emulate", str(path), "--input", f"no_such_symbol={blob}")
    assert code == 2 and "no symbol 'no_such_symbol'" in err
    code, _, err = run_cli(capsys, "emulate", str(path), "--input", f"main={blob}")
    assert code == 2 and "'main' for --input is a function" in err
    code, _, err = run_cli(capsys, "emulate", str(path), "--input", "nosep")
    assert code == 2 and "SYMBOL=FILE" in err
    code, _, err = run_cli(capsys, "emulate", str(path), "--board", "nucleo-l4r5zi", "--target", "cortex-m4")
    assert code == 2


def test_firmware_mutants_end_in_a_report_or_a_micro_rt_error(hello):
    """The fuzzer's firmware stage on a seeded sample: every mutant ends with a report or a
    MicroRtError, quickly (max 200,000 cycles each)."""
    import time
    from devtools.elf_fuzzing import MUTATORS, check_firmware, make_firmware_mutant
    outcomes, seen = {}, set()
    for k in range(120):
        names, data = make_firmware_mutant(hello, 1, k)
        seen.update(names.split("+"))
        start = time.monotonic()
        outcome = check_firmware(data)
        assert time.monotonic() - start < 20, f"mutant {k} ({names}) took too long"
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
    assert seen == set(MUTATORS)
    assert outcomes.get("report", 0) > 0 and sum(v for o, v in outcomes.items() if o.startswith("error")) > 0


def test_board_clock_and_wait_states_are_checked(hello, tmp_path, capsys):
    path = tmp_path / "hello.elf"
    path.write_bytes(hello)
    code, _, err = run_cli(capsys, "emulate", str(path), "--board", "nucleo-l4r5zi", "--clock", "200MHz")
    assert code == 2 and "clock 200 MHz is outside 0-120 MHz" in err and "nucleo-l4r5zi.json" in err
    code, _, err = run_cli(capsys, "emulate", str(path), "--board", "nucleo-l4r5zi", "--flash-wait-states", "2")
    assert code == 2 and "fewer than the 5" in err
