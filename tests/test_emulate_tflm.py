"""`micro-rt emulate` on a TFLM application: one row per operator with the kernel TFLM
dispatched to, the interpreter's cycles between operators, the profiler's ticks and the arena
the application asked for. The program (tests/firmware_src/tflm_shaped) is micro_rt's own C with
a TFLM build's symbols and calls; real TFLM applications were checked the same way outside the
project (cortexm/board_data/measurements/tflm_runtime.json says which)."""
from __future__ import annotations

import json
import re

import pytest

from firmware_programs import SOURCES, build_source
from micro_rt.cli import main

PROGRAM = SOURCES / "tflm_shaped"
PARTS = ("interpreter.c", "conv.c", "fully_connected.c", "library.c")
EVAL = "tflite::(anonymous namespace)::Eval(TfLiteContext*, TfLiteNode*)"


@pytest.fixture(scope="module")
def out(tmp_path_factory):
    return tmp_path_factory.mktemp("tflm_shaped")


def _build(out, core: str, *flags: str):
    sub = out / (core + "".join(flags).replace("-", "_"))
    sub.mkdir(exist_ok=True)
    return build_source(PROGRAM / "main.c", sub, core, f"-I{PROGRAM}", *flags,
                        *(str(PROGRAM / p) for p in PARTS))


def _emulate(capsys, elf, *options) -> tuple[int, dict]:
    code = main(["emulate", str(elf), "--json", *options])
    return code, json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("core", ["cortex-m4", "cortex-m33", "cortex-m7"])
def test_operators_as_tflm_invoked_them_with_the_profilers_ticks(capsys, out, core):
    code, r = _emulate(capsys, _build(out, core), "--target", core)
    assert code == 0, r["message"]
    t = r["tflm"]
    ops = t["operators"]
    assert [o["op"] for o in ops] == ["CONV_2D", "FULLY_CONNECTED", "CONV_2D"]
    assert all(o["op_source"] == "profiler tag" and o["subgraph_depth"] == 0 for o in ops)
    assert [o["kernel"] for o in ops] == [f"{EVAL} [conv.c]", f"{EVAL} [fully_connected.c]", f"{EVAL} [conv.c]"]
    assert [o["dispatched_to"] for o in ops] == [["arm_convolve_wrapper_s8"], ["arm_fully_connected_s8"],
                                                 ["arm_convolve_wrapper_s8"]]
    # the ticks the application printed are the report's: its DWT_CYCCNT reads around each one
    printed = [int(n) for n in re.findall(r"took (\d+) ticks", r["console"])]
    assert printed == [o["profiler_ticks"] for o in ops]
    for o in ops:
        # the profiler's window holds the operator's and a few of its own instructions more
        assert 0 < o["cycles"] <= o["profiler_ticks"] < o["cycles"] + 80
        assert o["interpreter_cycles_before"] > 0
    assert ops[2]["cycles"] > ops[0]["cycles"]          # node 2 works on a longer buffer
    assert t["arena_used_bytes"] == 772 and t["operators_unfinished"] == 0
    # MicroInterpreter::Invoke's stack: its frames, the interpreter's, and the deepest kernel's
    # (fully_connected.c's 400-byte scratch array)
    assert 400 < t["invoke_stack_bytes"] < 400 + 200
    # the per-function profile keeps the two same-named kernels apart, by file
    functions = {f["function"]: f for f in r["functions"]}
    conv, fc = functions[f"{EVAL} [conv.c]"], functions[f"{EVAL} [fully_connected.c]"]
    assert conv["calls"] == 2 and fc["calls"] == 1
    # an operator's window is its kernel's inclusive cycles and the blocks of the call and return
    assert 0 <= ops[0]["cycles"] + ops[2]["cycles"] - conv["inclusive_cycles"] < 2 * 40
    assert 0 <= ops[1]["cycles"] - fc["inclusive_cycles"] < 40


def test_without_a_profiler_operators_are_named_from_their_kernel_files(capsys, out):
    code, r = _emulate(capsys, _build(out, "cortex-m4", "-DNO_PROFILER"))
    assert code == 0
    ops = r["tflm"]["operators"]
    assert [(o["op"], o["op_source"], o["profiler_ticks"]) for o in ops] == [
        ("CONV_2D", "kernel file", None), ("FULLY_CONNECTED", "kernel file", None), ("CONV_2D", "kernel file", None)]
    from micro_rt.cortexm.system.tflm_app import op_of_function
    assert [op_of_function(n) for n in ("tflite::EvalAdd(TfLiteContext*, TfLiteNode*)", "EvalQuantizeReference",
                                        "tflite::SoftmaxEval", "AverageEval", "EvalFullyConnectedInt8")] == [
        "ADD", "QUANTIZE", "SOFTMAX", "AVERAGE_POOL_2D", "FULLY_CONNECTED"]
    with_profiler = _emulate(capsys, _build(out, "cortex-m4"))[1]["tflm"]
    # the same kernels cost the same; the interpreter is cheaper without its profiler calls
    assert [o["cycles"] for o in ops] == [o["cycles"] for o in with_profiler["operators"]]
    assert r["tflm"]["interpreter_cycles_between_operators"] < with_profiler["interpreter_cycles_between_operators"]


def test_text_view_lists_the_operators(capsys, out):
    assert main(["emulate", str(_build(out, "cortex-m4"))]) == 0
    text = capsys.readouterr().out
    assert "TFLM operators" in text and "Eval [fully_connected.c]" in text
    assert "arena_used_bytes() returned 772 B" in text


def test_a_program_that_is_not_tflm_has_no_operator_rows(capsys, out):
    from firmware_programs import build
    code, r = _emulate(capsys, build("hello", out))
    assert r["ending"] == "exit" and r["tflm"] is None


def test_demangler_reads_tflm_names():
    from micro_rt.cortexm.demangle import Demangler
    d = Demangler()
    assert d.available
    assert d("_ZN6tflite16MicroInterpreter6InvokeEv") == "tflite::MicroInterpreter::Invoke()"
    assert d("_ZN6tflite12_GLOBAL__N_14EvalEP13TfLiteContextP10TfLiteNode [conv.cc]") == f"{EVAL} [conv.cc]"
    assert d("main") == "main" and d("_Zbogus") == "_Zbogus"
