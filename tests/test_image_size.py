"""`fit` counts the whole image: each part against what a real `ld --gc-sections` link keeps.

The firmware's sources are compiled with its own flags (cortexm/src/Makefile) and linked by
firmware.ld without the lines that keep every kernel (the emulator's export table), with the
functions one emulated inference ran as the only roots besides the vector table: the functions,
their sizes, .data and .bss of that link must be what micro_rt.cortexm.image found in the full
firmware ELF, and `fit`'s verdict must flip at the exact byte."""
from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from elftools.elf.elffile import ELFFile

from conftest import require_tool
from micro_rt.cli import main
from micro_rt.cortexm.firmware_build import LINKER_SCRIPT, SOURCE_DIR, firmware_build
from micro_rt.cortexm.image import reference_graph
from micro_rt.fit_measure import RUNTIME_ROOTS, kernel_measurement
from micro_rt.inputs import random_inputs
from micro_rt.interpreter import Interpreter

MODELS = Path(__file__).resolve().parents[1] / "models"
KEEP_ALL = ("KEEP(*(.mrt_exports))", "KEEP(*(.text.arm_* .text.mrt_*))", "KEEP(*(.mrt_late.*))",
            "KEEP(*(.mrt_runtime.*))")     # the host trap (mrt_host_op) is the emulator's alone


def _objects(tmp: Path, core: str) -> list[str]:
    build = firmware_build()
    objects = []
    for source in build.sources:
        obj = tmp / f"{Path(source).stem}.o"
        subprocess.run([build.cc, *build.compile_flags(core), "-c", "-o", str(obj), source],
                       cwd=SOURCE_DIR, check=True)
        objects.append(str(obj))
    return objects


def _gc_link(tmp: Path, core: str, objects: list[str], roots: list[str]) -> Path:
    """The firmware linked keeping only what `roots` (and the vector table) reach."""
    script = LINKER_SCRIPT.read_text()
    for line in KEEP_ALL:
        assert line in script, f"firmware.ld no longer has {line}: update this test"
        script = script.replace(line, line[5:-1])       # the same input sections, not kept
    # and every kernel the layout pins one by one (KEEP(*(.text.<name>)))
    script = re.sub(r"KEEP\((\*\(\.text\.[A-Za-z0-9_.]+\))\)", r"\1", script)
    (tmp / "gc.ld").write_text(script)
    build = firmware_build()
    out = tmp / "gc.elf"
    subprocess.run([build.cc, *build.compile_flags(core), *build.ldflags, "-T", str(tmp / "gc.ld"),
                    *(f"-Wl,-u,{name}" for name in roots), "-o", str(out), *objects, *build.libs],
                   check=True)
    return out


def _linked(path: Path) -> tuple[set[str], dict[str, int]]:
    """(function symbols, section sizes) of a linked ELF."""
    with open(path, "rb") as fh:
        elf = ELFFile(fh)
        functions = {s.name for s in elf.get_section_by_name(".symtab").iter_symbols()
                     if s["st_info"]["type"] == "STT_FUNC" and s["st_size"]}
        sizes = {s.name: s["sh_size"] for s in elf.iter_sections()}
    return functions, sizes


@pytest.mark.parametrize("model,core,padding_bound", [
    ("mobilenet_tiny_int8.tflite", "cortex-m4", 0),
    ("mobilenet_tiny_f32.tflite", "cortex-m0plus", 32),     # soft float and libm
    ("activations_f32.tflite", "cortex-m7", 32),
])
def test_image_parts_are_what_a_gc_sections_link_keeps(tmp_path, model, core, padding_bound):
    require_tool("arm-none-eabi-gcc")
    with Interpreter.from_bytes((MODELS / model).read_bytes(), target=core, kernels="cmsis-nn",
                                emulate=True) as it:
        for i, x in enumerate(random_inputs(it, 0)):
            it.set_input(x, i)
        it.invoke()
        measured = kernel_measurement(it)
        ran = sorted(it.executor.functions_used)
        ran_bytes = sum(it.executor.functions_used.values())
        elf = it.executor.mcu.elf.path
    graph = reference_graph(elf)
    roots = [n for n in RUNTIME_ROOTS if n in graph.by_name] + ran
    image = graph.closure(roots)
    linked, sizes = _linked(_gc_link(tmp_path, core, _objects(tmp_path, core), roots))
    assert image.names("code") == linked
    assert measured.functions == sorted(p.name for p in image.pieces if p.kind == "code")
    assert measured.code_bytes == image.code_bytes and measured.rodata_bytes == image.rodata_bytes
    text = measured.code_bytes + measured.rodata_bytes
    assert abs(sizes[".text"] - (text + measured.padding_bytes)) <= padding_bound
    assert text <= sizes[".text"] <= text + 3 * len(image.pieces) + 16   # the rest is padding
    assert sizes.get(".data", 0) == measured.data_init_bytes
    assert sizes.get(".data", 0) + sizes.get(".bss", 0) == measured.static_bytes
    # what the old count summed (the functions the inference ran) is part of it, not all of it
    assert set(ran) <= image.names("code") and measured.code_bytes >= ran_bytes


def test_closure_follows_calls_literal_pools_and_shared_sections():
    """Every kernel the firmware exports, alone, on every core: the closure is what a real link
    keeps (checked by the test above for three images); here its structure: libgcc's
    soft-float objects share one section, and a kernel's callees come along."""
    graph = reference_graph(Path(__file__).resolve().parents[1] / "cortexm" / "firmware" / "cortex-m4.elf")
    dadd = graph.pieces[graph.by_name["__aeabi_dadd"]]
    assert {"__aeabi_dsub", "__adddf3", "__floatsidf"} <= set(dadd.symbols)
    conv = graph.closure(["arm_convolve_wrapper_s8"]).names("code")
    assert {"arm_convolve_s8", "arm_convolve_1x1_s8_fast", "mrt_gemm_s8"} <= conv
    assert "arm_depthwise_conv_s8" not in conv
    with pytest.raises(Exception, match="not in the firmware image"):
        graph.closure(["no_such_kernel"])


def _fit(capsys, *args) -> tuple[int, dict]:
    code = main(["fit", str(MODELS / "mobilenet_tiny_int8.tflite"), "--kernels", "cmsis-nn",
                 "--json", *args])
    return code, json.loads(capsys.readouterr().out)


def test_verdict_flips_at_the_exact_byte(capsys):
    code, verdict = _fit(capsys, "--ram", "1M", "--flash", "1M")
    ram, flash = verdict["ram"]["used"], verdict["flash"]["used"]
    assert code == 0 and ram == sum(p["bytes"] for p in verdict["ram"]["parts"])
    assert [p["part"] for p in verdict["flash"]["parts"]] == [
        "model weights", "op constants", "plan", "code", "read-only data", ".data initial values",
        "alignment padding"]
    for args, expected in (((str(ram), "1M"), 0), ((str(ram - 1), "1M"), 1),
                           (("1M", str(flash)), 0), (("1M", str(flash - 1)), 1)):
        code, verdict = _fit(capsys, "--ram", args[0], "--flash", args[1])
        assert code == expected, args
        margins = (verdict["ram"]["margin"], verdict["flash"]["margin"])
        assert min(margins) == (0 if expected == 0 else -1)
