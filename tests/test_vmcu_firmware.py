"""The firmware itself: `make firmware` into a temp dir reproduces the shipped ELFs byte for byte;
the M0+ has no VFP instruction and the FPU builds use no fused multiply-add, every VFP
instruction having a cycle rule; every function firmware.ld pins in place exists.
"""
from __future__ import annotations

import subprocess

import re

import pytest

from conftest import require_tool
from vmcu_cases import CORES_ALL, FIRMWARE, SRC, firmware_elf


# fused multiply-adds round once: they must not appear in the kernels (newlib's expf / expm1f,
# compiled with GCC's default -ffp-contract=fast, use VFMA; those are held within MAX_ULP anyway)
_FUSED = {"vfma", "vfms", "vfnma", "vfnms"}
_LIBM_FUSED_OK = {"expf", "__ieee754_expf", "expm1f", "tanhf", "__ieee754_tanhf",
                  # the unary math family's cosf / sinf / logf (held within their ulp bound too)
                  "cosf", "sinf", "logf", "__ieee754_logf", "__kernel_cosf", "__kernel_sinf",
                  "__ieee754_rem_pio2f", "__kernel_rem_pio2f",
                  # TFLite_Detection_PostProcess's double exp (M7's double-precision FPU)
                  "exp"}


@pytest.mark.parametrize("core", CORES_ALL)
def test_firmware_float_instructions(core):
    """M0+ has no VFP instruction; the M4 / M7 / M33 kernels use the FPU and no fused multiply-add."""
    from micro_rt.cortexm.thumb_decode import decode, is_vfp
    from micro_rt.cortexm.elf import load_elf
    elf = load_elf(firmware_elf(core))
    seg = next(sg for sg in elf.segments if sg.executable)
    names: dict = {}
    unpriced = set()
    for sym in elf.symbols.values():
        if sym.is_func and sym.size and seg.vaddr <= sym.addr < seg.vaddr + len(seg.data):
            code = seg.data[sym.addr - seg.vaddr:sym.addr - seg.vaddr + sym.size]
            insns = decode(code, sym.addr)
            # (a literal-pool word may decode as a VFP instruction in the 0xFFxx / 0xEFxx / 0xF9xx
            # space, e.g. -inf (0xFF800000) in newlib's logf: M-profile has no such encoding)
            neon = lambda i: code[i.addr - sym.addr + 1] in (0xEF, 0xFF, 0xF9)  # noqa: E731
            names[sym.name] = {i.name for i in insns if i.cls in ("fp", "vld", "vst", "vldm", "vstm") and not neon(i)}
            if sym.name.startswith(("mrt_", "arm_")):
                # every VFP instruction of the kernels has a cycle rule (not the ALU default)
                unpriced |= {i.name for i in insns if is_vfp(i.name) and i.cls == "alu" and not neon(i)}
    assert not unpriced, unpriced
    if core == "cortex-m0plus":
        assert not any(names.values())
        return
    assert {"vmul", "vadd"} <= names["mrt_conv_f32"]
    fused = {fn for fn, ns in names.items() if ns & _FUSED}
    assert fused <= _LIBM_FUSED_OK, fused


def test_firmware_reproducible(tmp_path):
    require_tool("arm-none-eabi-gcc")
    require_tool("make")
    r = subprocess.run(["make", "-s", "-C", str(SRC), f"OUT={tmp_path}"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    for core in CORES_ALL:
        shipped = FIRMWARE / f"{core}.elf"
        assert shipped.exists(), f"{shipped} missing: run make firmware"
        assert (tmp_path / f"{core}.elf").read_bytes() == shipped.read_bytes(), f"{core}.elf differs from a rebuild"
    boot2 = FIRMWARE / "rp2040-boot2.bin"
    assert (tmp_path / boot2.name).read_bytes() == boot2.read_bytes(), f"{boot2.name} differs from a rebuild"


def test_makefile_builds_every_source_file():
    """The Makefile's SRCS is exactly the C files of cortexm/src: a file left out would be dead
    code that reads as a kernel, one renamed without its line would not build."""
    make = (SRC / "Makefile").read_text()
    listed = re.search(r"^SRCS\s*:=(.*?)^HDRS", make, re.M | re.S)
    assert listed is not None, "SRCS not found in cortexm/src/Makefile"
    assert sorted(listed.group(1).replace("\\", " ").split()) == sorted(p.name for p in SRC.glob("*.c"))


def test_layout_lines_name_firmware_functions():
    """Every section firmware.ld pins in place is a function or object of some core's firmware: a
    renamed function (or a GCC clone renamed by a new compiler) would silently fall out of the
    pinned order and move code, and with it cycle figures."""
    from micro_rt.cortexm.elf import load_elf
    pinned = re.findall(r"^\s*(?:KEEP\()?\*\(\.(?:text|rodata)\.([A-Za-z0-9_.]+)\)\)?\s*$",
                        (SRC / "firmware.ld").read_text(), re.M)
    assert len(pinned) > 200, "firmware.ld's list of pinned sections not found"
    names = set()
    for core in CORES_ALL:
        names |= set(load_elf(firmware_elf(core)).symbols)
    assert not [p for p in pinned if p not in names], "firmware.ld pins sections no firmware has"


@pytest.mark.parametrize("core", CORES_ALL)
def test_shipped_firmware_facts_are_the_firmware_analysed(core, tmp_path):
    """What every emulated run reads of the firmware (its alignment checks, its reference graph)
    comes from the files make firmware writes beside the ELF, tied to its hash: each must be
    exactly what analysing the ELF gives. A file of another build, or an unreadable one, is
    ignored and the ELF analysed."""
    import shutil

    from micro_rt.cortexm import firmware_facts, image
    from micro_rt.cortexm import static_alignment as sa
    from micro_rt.cortexm.elf import load_elf
    path = FIRMWARE / f"{core}.elf"
    elf = load_elf(path)
    shipped = sa._shipped(elf)
    assert shipped is not None, f"{firmware_facts.facts_path(path, sa.FACTS)} missing or stale: run make firmware"
    analysed = sa._analysed(elf)
    assert shipped.native == tuple(sa.NativeTable.of(t) for t in analysed) and shipped[0]
    # decoded back, the checks are the analysis's (constants and coefficients mod 2^32)
    assert list(shipped) == [{key: [c._replace(const=c.const & 0xFFFFFFFF,
                                               terms=tuple((r, k & 0xFFFFFFFF) for r, k in c.terms))
                                    for c in checks] for key, checks in table.items()} for table in analysed]
    graph = image.reference_graph(path)
    sections, pieces, names, mapping = image._parsed(path)
    shipped_graph = image._shipped_graph(path, elf.sha256)
    assert shipped_graph is not None
    assert shipped_graph.pieces == pieces and shipped_graph.by_name == names
    assert shipped_graph.refs == image._references(sections, pieces, mapping)
    assert graph.refs == image._references(sections, pieces, mapping)
    copy = tmp_path / f"{core}.elf"
    shutil.copy(path, copy)
    for kind in (sa.FACTS, image.REFERENCES):
        stale = firmware_facts.facts_path(path, kind).read_text().replace(elf.sha256, "0" * 64)
        firmware_facts.facts_path(copy, kind).write_text(stale)
    assert sa._shipped(load_elf(copy)) is None            # another build's facts
    assert image._shipped_graph(copy, elf.sha256) is None
    firmware_facts.facts_path(copy, sa.FACTS).write_text("{not json")
    assert sa._shipped(load_elf(copy)) is None


@pytest.mark.parametrize("core", CORES_ALL)
def test_symbols_read_from_the_table_bytes_equal_pyelftools(core):
    """elf.load_elf reads .symtab's bytes itself (pyelftools' symbol objects took a tenth of a
    second per machine): the same symbols as pyelftools gives, by the same rules (a local
    symbol carries the STT_FILE before it; same-named locals of different files are all kept)."""
    from elftools.elf.elffile import ELFFile

    from micro_rt.cortexm.elf import Symbol, keyed_symbols, load_elf
    path = FIRMWARE / f"{core}.elf"
    found, file = [], None
    with open(path, "rb") as fh:
        for sym in ELFFile(fh).get_section_by_name(".symtab").iter_symbols():
            typ = sym["st_info"]["type"]
            if sym.name and typ == "STT_FILE":
                file = sym.name
                continue
            if not sym.name or typ not in ("STT_FUNC", "STT_OBJECT", "STT_NOTYPE") or \
                    sym["st_shndx"] == "SHN_UNDEF" or sym.name.startswith("$"):
                continue
            func, is_global = typ == "STT_FUNC", sym["st_info"]["bind"] != "STB_LOCAL"
            found.append((Symbol(sym.name, sym["st_value"] & ~1 if func else sym["st_value"],
                                 sym["st_size"], func, None if is_global else file), is_global))
    expected = keyed_symbols(found)
    assert load_elf(path).symbols == expected and len(expected) > 200
