"""`--runtime tflm`: micro_rt's measured kernels priced as a TFLM deployment from the costs real
TFLM builds were measured to add (cortexm/board_data/measurements/tflm_runtime.json). The
arithmetic is checked on micro_rt's own answers, the data file for consistency, and the data's
recorded TFLM applications against what micro_rt says of the same models."""
from __future__ import annotations

import hashlib
import json

import pytest

from conftest import PROJECT_MODELS, shared_model
from micro_rt.cli import main
from micro_rt.errors import InputError
from micro_rt.runtimes import RuntimeDataError, TflmPricing, load_tflm_data

MODEL = PROJECT_MODELS / "mobilenet_tiny_int8.tflite"
DATA = load_tflm_data()
CMSIS_NN = DATA.flavour("cmsis-nn")


def _json(capsys, *argv) -> tuple[int, dict]:
    code = main([*argv, "--json"])
    return code, json.loads(capsys.readouterr().out)


# ---- the data file
def test_the_data_names_its_sources_and_covers_every_core_and_flavour():
    from micro_rt.flavours import KERNEL_FLAVOURS
    assert set(DATA.flavours) == set(KERNEL_FLAVOURS)
    assert "cmsis-nn" in CMSIS_NN.sources and "cmsis-nn" not in DATA.flavour("reference").sources
    for flavour, builds in DATA.flavours.items():
        assert "tflite-micro" in builds.sources, flavour
        assert all(len(commit) == 40 for commit in builds.sources.values()), flavour
        assert builds.date and builds.compiler.startswith("arm-none-eabi-gcc"), flavour
        assert set(builds.cores) == {"cortex-m0plus", "cortex-m4", "cortex-m7", "cortex-m33"}, flavour
        for core, c in builds.cores.items():
            assert c.per_operator_cycles > 0 and c.invoke_cycles >= 0 and c.frames_stack_bytes > 0, core
            assert c.framework_flash > 10_000 and c.framework_ram >= 0, core
            assert {"CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "SOFTMAX"} <= set(c.kernels), core
            assert c.validation is not None, (flavour, core)
            for k in c.kernels.values():
                assert k.nodes > 0 and k.glue_cycles >= 0 and k.objects, (core, k.op)
                # a reference kernel calls no library: it has no glue, micro_rt's kernel stands for it
                assert k.calls_library or k.glue_cycles == 0, (flavour, core, k.op)
            if flavour == "reference":
                assert not any(k.calls_library for k in c.kernels.values()), core
                assert not any("arm_" in o for k in c.kernels.values() for o in k.objects), core
    assert {m["flavour"] for m in DATA.models} == set(DATA.flavours)


def test_a_kernel_naming_an_unknown_object_is_refused(tmp_path):
    from micro_rt.runtimes import data_file
    raw = json.loads(data_file().read_text())
    cores = raw["flavours"]["cmsis-nn"]["cores"]
    core = next(iter(cores))
    op = next(iter(cores[core]["kernels"]))
    cores[core]["kernels"][op]["objects"].append("no_such.o")
    bad = tmp_path / "tflm_runtime.json"
    bad.write_text(json.dumps(raw))
    with pytest.raises(RuntimeDataError, match=f"flavours.cmsis-nn.cores.{core}.kernels.{op}.*no_such.o"):
        load_tflm_data(bad)
    bad.write_text("{")
    with pytest.raises(RuntimeDataError, match="cannot read"):
        load_tflm_data(bad)
    cores[core]["kernels"][op]["objects"].remove("no_such.o")
    raw["flavours"]["helium"] = raw["flavours"]["cmsis-nn"]
    bad.write_text(json.dumps(raw))
    with pytest.raises(RuntimeDataError, match="flavours.helium: not a kernel flavour"):
        load_tflm_data(bad)
    del raw["flavours"]["helium"]
    raw["models"][0]["flavour"] = "nothing"
    bad.write_text(json.dumps(raw))
    with pytest.raises(RuntimeDataError, match="names flavour 'nothing'"):
        load_tflm_data(bad)
    raw["models"][0]["flavour"] = "cmsis-nn"
    del cores[core]["interpreter"]
    bad.write_text(json.dumps(raw))
    with pytest.raises(RuntimeDataError, match="malformed"):
        load_tflm_data(bad)


# ---- profile
def test_profile_priced_for_tflm_adds_the_measured_costs(capsys):
    code, mine = _json(capsys, "profile", str(MODEL), "--target", "cortex-m4")
    assert code == 0 and mine["runtime_priced"] == "micro_rt"
    code, tflm = _json(capsys, "profile", str(MODEL), "--target", "cortex-m4", "--runtime", "tflm")
    costs = CMSIS_NN.core("cortex-m4")
    assert tflm["runtime_priced"] == "tflm" and "priced for TFLM" in tflm["runtime_note"]
    counted = []
    for a, b in zip(mine["ops"], tflm["ops"]):
        kernel = costs.kernel(a["op"])
        if kernel is None:
            assert b["cycles"] == a["cycles"]
            continue
        counted.append(b)
        assert b["kernel_cycles"] == a["cycles"] and b["cycles"] == a["cycles"] + kernel.glue_cycles
    runs = sum(o.get("runs", 1) for o in tflm["ops"] if o["on_mcu"])
    assert tflm["runtime"]["cycles"] == costs.invoke_cycles + costs.per_operator_cycles * runs
    assert tflm["total_cycles"] == sum(o["cycles"] for o in tflm["ops"]) + tflm["runtime"]["cycles"]
    missing = {o["op"] for o in mine["ops"]} - set(costs.kernels)
    assert tflm["complete"] == (not missing) and code == (0 if not missing else 3)
    assert {o["op"] for o in tflm["ops_not_counted"]} == missing


def test_profile_text_names_the_runtime(capsys):
    main(["profile", str(MODEL), "--target", "cortex-m4", "--runtime", "tflm"])
    text = capsys.readouterr().out
    assert "TFLM interpreter" in text and "priced for TFLM" in text


def test_reference_kernels_are_priced_from_tflms_reference_builds(capsys):
    """TFLM's reference kernels call no library: micro_rt's reference kernel stands for each, and
    TFLM's interpreter is added as measured on the reference builds."""
    code, mine = _json(capsys, "profile", str(MODEL), "--target", "cortex-m4", "--kernels", "reference")
    code, tflm = _json(capsys, "profile", str(MODEL), "--target", "cortex-m4", "--kernels", "reference",
                       "--runtime", "tflm")
    costs = DATA.flavour("reference").core("cortex-m4")
    assert "reference kernels" in tflm["runtime_note"] and "no OPTIMIZED_KERNEL_DIR" in tflm["runtime_note"]
    for a, b in zip(mine["ops"], tflm["ops"]):
        assert b["cycles"] == a["cycles"], a["op"]
    runs = sum(o.get("runs", 1) for o in tflm["ops"] if o["on_mcu"])
    assert tflm["runtime"]["cycles"] == costs.invoke_cycles + costs.per_operator_cycles * runs
    code, fit = _json(capsys, "fit", str(MODEL), "--target", "cortex-m4", "--ram", "512K", "--flash", "2M",
                      "--kernels", "reference", "--runtime", "tflm")
    flash = {p["part"]: p["bytes"] for p in fit["flash"]["parts"]}
    assert flash["TFLM framework"] == costs.framework_flash and "reference flavour" in json.dumps(fit)


def test_a_flavour_without_tflm_builds_is_refused():
    from micro_rt.runtimes import TflmData
    only_cmsis = TflmData(DATA.measured_with, {"cmsis-nn": CMSIS_NN}, [])
    with pytest.raises(InputError, match="--kernels reference: no TFLM build of that flavour"):
        TflmPricing("cortex-m4", "reference", only_cmsis)


def test_an_unmeasured_core_is_named():
    with pytest.raises(RuntimeDataError, match="no TFLM cmsis-nn build was measured on host64"):
        TflmPricing("host64", data=DATA)


# ---- fit
def test_fit_priced_for_tflm_counts_tflms_image(capsys):
    code, fit = _json(capsys, "fit", str(MODEL), "--target", "cortex-m4", "--ram", "512K", "--flash", "2M",
                      "--runtime", "tflm")
    assert fit["runtime_priced"] == "tflm"
    flash = {p["part"]: p["bytes"] for p in fit["flash"]["parts"]}
    ram = {p["part"]: p["bytes"] for p in fit["ram"]["parts"]}
    costs = CMSIS_NN.core("cortex-m4")
    ops = {"CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "SOFTMAX", "RESHAPE", "AVERAGE_POOL_2D",
           "MEAN", "ADD"} & set(costs.kernels)
    assert flash["model"] == MODEL.stat().st_size and flash["TFLM framework"] == costs.framework_flash
    assert set(ram) == {"arena", "stack", "static data"}
    kernel_flash, kernel_ram, missing = costs.kernel_bytes(set(fit.get("model_ops", [])) or ops)
    assert flash["TFLM kernels"] > 0
    assert ram["static data"] >= costs.framework_ram
    assert code == (3 if fit["not_accounted"] else 0)


def test_kernel_objects_shared_by_two_operators_count_once():
    costs = CMSIS_NN.core("cortex-m4")
    a, b = "CONV_2D", "DEPTHWISE_CONV_2D"
    both = costs.kernel_bytes({a, b})[0]
    shared = set(costs.kernels[a].objects) & set(costs.kernels[b].objects)
    assert both == costs.kernel_bytes({a})[0] + costs.kernel_bytes({b})[0] - sum(costs.objects[o][0] for o in shared)
    assert costs.kernel_bytes({"NO_SUCH_OP"})[2] == ["NO_SUCH_OP"]


# ---- the recorded TFLM applications
def _shared_entries():
    """The recorded applications whose model is one of TFLM's own (../shared/models holds them;
    the MLPerf Tiny ones are checked where the benchmark has them)."""
    return [m for m in DATA.models if not m["profiler"] and m["model_source"] == "tflite-micro"]


@pytest.mark.parametrize("entry", _shared_entries(), ids=lambda m: f"{m['flavour']}-{m['core']}-{m['model']}")
def test_the_32_bit_arena_equals_what_real_tflm_reported(entry):
    """micro_rt's plan of TFLM's arena (that flavour's kernels, that core) equals the arena_used_bytes
    TFLM's allocator returned in the recorded application."""
    from micro_rt.interpreter import Interpreter
    path = shared_model(entry["model"])
    if hashlib.sha256(path.read_bytes()).hexdigest() != entry["sha256"]:
        pytest.fail(f"{path} is not the model the TFLM application was built with")
    with Interpreter.from_bytes(path.read_bytes(), target=entry["core"], kernels=entry["flavour"],
                                plan_only=True) as it:
        assert it.plan.total_bytes == entry["arena_used_bytes"]


# ---- boards and report say which runtime they priced
def test_boards_priced_for_tflm(capsys):
    code, payload = _json(capsys, "boards", str(MODEL), "--runtime", "tflm", "--workers", "2")
    assert payload["runtime_priced"] == "tflm"
    rows = {r["board"]: r for r in payload["boards"]}
    code_mine, mine = _json(capsys, "boards", str(MODEL), "--workers", "2")
    assert mine["runtime_priced"] == "micro_rt"
    for name, row in rows.items():
        other = next(r for r in mine["boards"] if r["board"] == name)
        if row["cycles"] is not None and other["cycles"] is not None:
            # TFLM's interpreter and glue in place of micro_rt's runtime (priced at 0 wait states:
            # on a board with slow flash that can come to fewer cycles than micro_rt's runtime)
            assert row["cycles"] != other["cycles"], name
    # the answer says how far this pricing came from the real builds, per core
    for core, checked in payload["runtime_checked"].items():
        assert checked == CMSIS_NN.core(core).validation, core
    assert mine["runtime_checked"] is None
    main(["boards", str(MODEL), "--runtime", "tflm", "--workers", "2"])
    text = capsys.readouterr().out.splitlines()
    assert "runtime TFLM" in text[0] and text[1].startswith("TFLM pricing against the real TFLM builds")
    m4 = CMSIS_NN.core("cortex-m4").validation
    assert f"cortex-m4 {m4['min_error']:+.0%} to {m4['max_error']:+.0%}" in text[1]


def test_report_priced_for_tflm(capsys, tmp_path):
    code, payload = _json(capsys, "report", str(MODEL), "--target", "cortex-m4", "--runtime", "tflm",
                          "-o", str(tmp_path / "r.html"))
    text = json.dumps(payload)
    assert '"runtime_priced": "tflm"' in text and "priced for TFLM" in text
