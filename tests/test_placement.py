"""micro_rt.placement: each part of RAM in a region of the board, the way a user links it; the
verdict per region, parts sharing a region adding up; an arena spans regions only where they are
contiguous in address."""
from __future__ import annotations

import pytest

from micro_rt.cortexm import boards
from micro_rt.errors import InputError
from micro_rt.placement import Part, Role, place, ram_layout

KIB = 1024


@pytest.fixture(autouse=True)
def _no_user_boards(monkeypatch):
    monkeypatch.delenv(boards.ENV_VAR, raising=False)


def _parts(arena: int, stack: int = 600, static: int = 1000, plan: int = 200) -> list[Part]:
    return [Part("arena", arena, Role.ARENA), Part("stack", stack, Role.STACK),
            Part("static data", static, Role.DATA), Part("plan structs", plan, Role.DATA)]


def _place(board: str, parts: list[Part], arena_region=None):
    return place(parts, ram_layout(boards.load_board(board), arena_region))


def _regions(placement) -> dict[str, tuple[int, list[str]]]:
    """Region -> (bytes used, the parts inside it)."""
    return {r.span.name: (r.used, [p.name for p in r.parts]) for r in placement.regions}


def test_a_small_arena_stays_with_the_static_data():
    p = _place("nucleo-h743zi2", _parts(100 * KIB))
    assert p.fits and p.where("arena").name == "DTCM"
    assert _regions(p) == {"DTCM": (100 * KIB + 1800, ["arena", "stack", "static data", "plan structs"])}
    assert p.budget == 128 * KIB and p.margin == 28 * KIB - 1800


def test_an_arena_dtcm_cannot_hold_goes_to_the_largest_region():
    """The issue's case: 183 KB does not fit the H743's 128 KiB DTCM, but a user puts it in
    the 512 KiB AXI SRAM; static data and stack stay in DTCM, where ST's linker puts them."""
    p = _place("nucleo-h743zi2", _parts(183_104))
    assert p.fits and not p.problem
    assert p.where("arena").name == "AXI_SRAM" and p.where("stack").name == "DTCM"
    assert _regions(p) == {"DTCM": (1800, ["stack", "static data", "plan structs"]),
                           "AXI_SRAM": (183_104, ["arena"])}
    assert p.budget == (128 + 512) * KIB and p.margin == 128 * KIB - 1800    # the tightest region's
    line = next(line for line in p.lines() if line.startswith("arena"))
    assert line.startswith("arena 183,104 B in AXI_SRAM (512 KiB at 0x24000000) -> fits")
    assert "D-cache" in line                       # the board file's timing of the region
    # The same on the RT1060 (OCRAM) and the H7A3 (its three AXI SRAMs, one 1 MiB block).
    assert _place("mimxrt1060-evk", _parts(183_104)).where("arena").name == "OCRAM"
    assert _place("nucleo-h7a3zi-q", _parts(900 * KIB)).where("arena").name == \
        "AXI_SRAM1+AXI_SRAM2+AXI_SRAM3"


def test_the_arena_region_given_is_used_and_judged():
    p = _place("nucleo-h743zi2", _parts(183_104), "DTCM")
    assert not p.fits and p.where("arena").name == "DTCM"
    assert p.problem.startswith("arena + stack + static data + plan structs (184,904 B) does not fit "
                                "in DTCM (128 KiB at 0x20000000)")
    assert p.margin == 128 * KIB - 184_904
    # Names match case-insensitively and print as the board spells them.
    assert _place("nucleo-h743zi2", _parts(183_104), "d2_sram").where("arena").name == "D2_SRAM"


def test_contiguous_regions_hold_an_arena_bigger_than_each():
    """The L4R5's SRAM1-3 are one block (ST's linker script has one RAM region over them): an
    arena bigger than SRAM1 fits; the H743's AXI SRAM and D2 SRAM together are bigger than the
    arena but not contiguous, so it does not fit."""
    assert boards.load_board("nucleo-l4r5zi").memory.region("SRAM1").size == 192 * KIB
    p = _place("nucleo-l4r5zi", _parts(300 * KIB))
    assert p.fits and p.where("arena").name == "SRAM1+SRAM2+SRAM3"
    big = _place("nucleo-h743zi2", _parts(600 * KIB))
    assert not big.fits and big.where("arena").name == "AXI_SRAM"
    assert big.problem.startswith("arena 614,400 B does not fit in AXI_SRAM (512 KiB at 0x24000000): "
                                  f"{600 * KIB - 512 * KIB:,} B over")
    assert "nowhere" in big.how


def test_parts_sharing_a_block_are_laid_side_by_side_exactly():
    """The arena in SRAM2, in the middle of SRAM1-3, leaves the static data two pieces (SRAM1
    and what SRAM2 leaves, or SRAM3 and what SRAM2 leaves): 630 KiB fit the 640 KiB block by sum,
    but the static data does not fit either piece."""
    fits = _place("nucleo-l4r5zi", _parts(60 * KIB, static=380 * KIB), "SRAM2")
    assert fits.fits and fits.where("static data").name == "SRAM1+SRAM2+SRAM3"
    split = _place("nucleo-l4r5zi", _parts(60 * KIB, stack=0, static=570 * KIB, plan=0), "SRAM2")
    assert not split.fits and "cannot lie side by side in SRAM1+SRAM2+SRAM3" in split.problem
    assert all(r.fits for r in split.regions)       # each region's sum fits: only the layout fails
    over = _place("nucleo-l4r5zi", _parts(65 * KIB), "SRAM2")
    assert not over.fits and over.problem.startswith("arena 66,560 B does not fit in SRAM2")


def test_the_stack_goes_where_the_start_up_puts_it():
    """pico-sdk's linker script puts core 0's stack at the top of SCRATCH_Y (SRAM5, 4 KiB)."""
    p = _place("raspberry-pi-pico", _parts(200 * KIB))
    assert p.fits and p.where("stack").name == "SRAM5" and p.where("arena").name == "SRAM"
    assert _regions(p)["SRAM5"] == (600, ["stack"])
    deep = _place("raspberry-pi-pico", _parts(10 * KIB, stack=5 * KIB))
    assert not deep.fits and deep.problem.startswith("stack 5,120 B does not fit in SRAM5 (4 KiB")


def test_an_unknown_or_flash_region_is_refused_naming_the_board_s_regions():
    board = boards.load_board("nucleo-h743zi2")
    with pytest.raises(InputError, match=r"--arena-region SRAM9: board nucleo-h743zi2 has no region "
                                         r"of that name; its RAM regions are ITCM, DTCM, AXI_SRAM, "
                                         r"D2_SRAM, D3_SRAM$"):
        ram_layout(board, "SRAM9")
    with pytest.raises(InputError, match=r"--arena-region flash: FLASH is a flash region of board "
                                         r"nucleo-h743zi2, not RAM; its RAM regions are ITCM"):
        ram_layout(board, "flash")
