"""Board files' `peripherals` section: every catalog board has one, the cited figures are what the
documents say, and a bad section is refused with the file and the field named."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from micro_rt.cortexm import boards
from micro_rt.cortexm.boards import FlashControlField as F
from micro_rt.errors import InputError

SHIPPED = sorted(boards.SHIPPED_DIR.glob("*.json"))


@pytest.fixture(autouse=True)
def _no_user_boards(monkeypatch):
    monkeypatch.delenv(boards.ENV_VAR, raising=False)


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_every_catalog_board_has_cited_peripherals(path):
    board = boards.load_board_file(path)
    p = board.peripherals
    assert p.flash_control and p.citations
    assert [s for s, _ in board.citations()].count("peripherals") == len(p.citations)
    if p.console is None:       # only where no data register exists, and a note says why
        assert any("No console in peripherals" in n for n in board.notes), board.name
    else:
        c = p.console
        assert c.is_ready(c.idle_status) and c.data_address < c.end and c.status_address < c.end
    for register in p.flash_control:
        assert register.reset < 1 << (8 * register.size_bytes)
        assert not any(r.base <= register.address < r.end for r in board.memory.regions)


def _fields(register) -> dict:
    return {f.meaning: (f.lsb, f.width) for f in register.fields}


def test_stm32l4r5_lpuart1_and_flash_acr_are_the_documents():
    """stm32l4r5xx.h and ST's SVD: LPUART1 at 0x40008000, ISR at 0x1C (TXE bit 7), TDR at 0x28;
    FLASH_ACR at 0x40022000, reset 0x600, LATENCY 0-3, PRFTEN 8, ICEN 9, DCEN 10."""
    p = boards.load_board("nucleo-l4r5zi").peripherals
    c = p.console
    assert (c.name, c.base, c.size, c.data_address, c.status_address) \
        == ("LPUART1", 0x40008000, 0x400, 0x40008028, 0x4000801C)
    assert (c.ready_mask, c.ready_value, c.idle_status) == (1 << 7, 1 << 7, 0x00E000C0)
    (acr,) = p.flash_control
    assert (acr.name, acr.address, acr.reset) == ("FLASH_ACR", 0x40022000, 0x00000600)
    assert _fields(acr) == {F.LATENCY: (0, 4), F.PREFETCH: (8, 1), F.ICACHE: (9, 1),
                            F.DCACHE: (10, 1)}
    # the reset value has both caches on, prefetch off, zero wait states
    assert [acr.field(m).value_in(acr.reset) for m in (F.LATENCY, F.PREFETCH, F.ICACHE, F.DCACHE)] \
        == [0, 0, 1, 1]


def test_rp2040_pl011_ready_is_txff_clear_and_xip_cache_is_on_at_reset():
    """pico-sdk hardware_regs: UART0 0x40034000, UARTDR 0x0, UARTFR 0x18 (TXFF 0x20, reset 0x90);
    XIP_CTRL 0x14000000, reset 0x3, EN bit 0."""
    p = boards.load_board("raspberry-pi-pico").peripherals
    c = p.console
    assert (c.base, c.data_offset, c.status_offset, c.ready_mask, c.ready_value) \
        == (0x40034000, 0, 0x18, 0x20, 0)
    assert c.idle_status == 0x90 and c.is_ready(0x90) and not c.is_ready(0x90 | 0x20)
    assert p.flash_field(F.CACHE)[0].address == 0x14000000
    (ctrl,) = p.flash_control
    assert ctrl.reset == 0x3 and ctrl.field(F.CACHE).value_in(ctrl.reset) == 1


def test_ra6m4_sci_registers_are_bytes_and_flash_needs_two_registers():
    """R7FA6M4AF.h: SCI0 at 0x40118000, 8-bit TDR at 0x03 and SSR at 0x04 (TDRE bit 7); 16-bit
    FCACHEE at 0x4001C100 (bit 0), 8-bit FLWT at 0x4001C11C (bits 0-2)."""
    p = boards.load_board("ek-ra6m4").peripherals
    c = p.console
    assert (c.base, c.register_bytes, c.data_address, c.status_address, c.ready_mask) \
        == (0x40118000, 1, 0x40118003, 0x40118004, 0x80)
    fcachee, flwt = p.flash_control
    assert (fcachee.address, fcachee.size_bytes, _fields(fcachee)) == (0x4001C100, 2, {F.CACHE: (0, 1)})
    assert (flwt.address, flwt.size_bytes, flwt.reset, _fields(flwt)) \
        == (0x4001C11C, 1, 0, {F.LATENCY: (0, 3)})
    assert p.flash_field(F.LATENCY)[0] is flwt


def test_other_documented_figures():
    h743 = boards.load_board("nucleo-h743zi2").peripherals
    assert (h743.console.name, h743.console.base) == ("USART3", 0x40004800)
    (acr,) = h743.flash_control     # SVD reset 0x37: LATENCY 7, the HAL's FLASH_LATENCY_DEFAULT
    assert (acr.address, acr.reset, acr.field(F.LATENCY).value_in(acr.reset)) == (0x52002000, 0x37, 7)
    f446 = boards.load_board("nucleo-f446re").peripherals
    assert (f446.console.base, f446.console.data_offset, f446.console.status_offset) == (0x40004400, 4, 0)
    u575 = boards.load_board("nucleo-u575zi-q").peripherals
    assert [(r.name, r.address, r.reset) for r in u575.flash_control] \
        == [("FLASH_ACR", 0x40022000, 0), ("ICACHE_CR", 0x40030400, 0x4)]
    rt = boards.load_board("mimxrt1060-evk").peripherals
    assert (rt.console.base, rt.console.ready_mask, rt.flash_control[0].address) \
        == (0x40184000, 1 << 23, 0x402A800C)
    nrf = boards.load_board("nrf52840-dk").peripherals
    assert nrf.console is None and nrf.flash_control[0].address == 0x4001E540


def test_peripheral_citations_join_the_board_but_not_its_answers_doubts():
    from micro_rt.cortexm.validation import board_validation
    board = boards.load_board("ek-ra6m4")
    unverified = [c for s, c in board.citations() if s == "peripherals" and c.status == "unverified"]
    assert unverified and "FCACHEE" in unverified[0].source
    assert not any(u.startswith("peripherals") for u in board_validation(board).unverified)


# ---- malformed sections ----------------------------------------------------------------------
def _with_peripherals(change) -> dict:
    data = json.loads((boards.SHIPPED_DIR / "nucleo-l4r5zi.json").read_text())
    data.update(name="bad-board")
    change(data["peripherals"])
    return data


def _acr(p: dict) -> dict:
    return p["flash_control"][0]


MALFORMED = {
    "console base not aligned": (lambda p: p["console"].update(base="0x40008002"),
                                 r"field 'peripherals.console.base' \(0x40008002\) is not 4-byte aligned"),
    "register not aligned": (lambda p: _acr(p).update(address="0x40022001"),
                             r"field 'peripherals.flash_control\[0\].address' \(0x40022001\) is not "
                             r"4-byte aligned"),
    "field past bit 31": (lambda p: _acr(p)["fields"].update(latency=[30, 4]),
                          r"field 'peripherals.flash_control\[0\].fields.latency' \(bits 30-33\) "
                          r"runs past bit 31"),
    "field past a byte register": (lambda p: _acr(p).update(bytes=1, reset="0x00",
                                                             fields={"latency": [6, 4]}),
                                   r"field 'peripherals.flash_control\[0\].fields.latency' "
                                   r"\(bits 6-9\) runs past bit 7"),
    "overlapping fields": (lambda p: _acr(p)["fields"].update(prefetch=[3, 6]),
                           r"field 'peripherals.flash_control\[0\].fields.prefetch' overlaps field "
                           r"'latency' of the same register"),
    "unknown meaning": (lambda p: _acr(p)["fields"].update(turbo=[16, 1]),
                        r"field 'peripherals.flash_control\[0\].fields.turbo' is not a known meaning "
                        r"\(expected one of latency, prefetch, icache, dcache, cache\)"),
    "bad field shape": (lambda p: _acr(p)["fields"].update(latency=[0]),
                        r"field 'peripherals.flash_control\[0\].fields.latency' must be "
                        r"\[lowest bit, width\]"),
    "register in flash": (lambda p: _acr(p).update(address="0x08000100"),
                          r"field 'peripherals.flash_control\[0\].address' register FLASH_ACR "
                          r"\(0x08000100-0x08000103\) lies in memory region FLASH"),
    "console in sram": (lambda p: p["console"].update(base="0x2003FF00"),
                        r"field 'peripherals.console.base' console LPUART1 \(0x2003ff00-0x200402ff\) "
                        r"lies in memory region SRAM2"),
    "register on the PPB": (lambda p: _acr(p).update(address="0xE000ED88"),
                            r"field 'peripherals.flash_control\[0\].address' register FLASH_ACR "
                            r"\(0xe000ed88-0xe000ed8b\) is on the core's Private Peripheral Bus"),
    "console on the PPB": (lambda p: p["console"].update(base="0xE00FFC00"),
                           r"field 'peripherals.console.base' console LPUART1 \(0xe00ffc00-0xe00fffff\) "
                           r"is on the core's Private Peripheral Bus"),
    "ready value outside mask": (lambda p: p["console"].update(ready_value=64),
                                 r"field 'peripherals.console.ready_value' \(0x40\) must lie within "
                                 r"a non-zero ready_mask \(0x80\)"),
    "idle status not ready": (lambda p: p["console"].update(idle_status="0x40"),
                              r"field 'peripherals.console.idle_status' \(0x40\) must read ready"),
    "offset outside block": (lambda p: p["console"].update(data_offset=1024),
                             r"field 'peripherals.console.data_offset' \(1024\) must be a multiple "
                             r"of register_bytes \(4\) with its register inside"),
    "reset wider than register": (lambda p: _acr(p).update(bytes=1),
                                  r"field 'peripherals.flash_control\[0\].reset' must be an 8-bit "
                                  r"register value, not 1536"),
    "meaning set twice": (lambda p: p["flash_control"].append(
                              {"name": "ICACHE_CR", "address": "0x40030400", "reset": 0,
                               "fields": {"icache": [0, 1]}}),
                          r"field 'peripherals.flash_control\[1\].fields.icache' is set by register "
                          r"FLASH_ACR already"),
    "registers overlap": (lambda p: p["flash_control"].append(
                              {"name": "FLASH_ACR2", "address": "0x40022000", "reset": 0,
                               "fields": {"cache": [0, 1]}}),
                          r"field 'peripherals.flash_control\[1\].address' register FLASH_ACR2 "
                          r"overlaps register FLASH_ACR"),
    "unknown key": (lambda p: p["console"].update(baud=115200),
                    r"field 'peripherals.console.baud' is not a known field"),
    "no citation": (lambda p: p.update(cite=[]), r"field 'peripherals.cite' needs at least one"),
    "empty section": (lambda p: [p.pop("console"), p.pop("flash_control")],
                      r"field 'peripherals' needs a console or flash_control"),
}


def _write(directory: Path, data: dict) -> Path:
    path = directory / "bad-board.json"
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_peripherals_name_file_and_field(tmp_path, case):
    change, message = MALFORMED[case]
    path = _write(tmp_path, _with_peripherals(change))
    with pytest.raises(InputError, match=re.escape(str(path)) + ": " + message):
        boards.load_board("bad-board", user_dirs=[tmp_path])


def test_a_board_without_peripherals_still_loads(tmp_path):
    data = _with_peripherals(lambda p: None)
    del data["peripherals"]
    board = boards.load_board_file(_write(tmp_path, data))
    assert board.peripherals == boards.NO_PERIPHERALS and board.peripherals.flash_field(F.CACHE) is None
