"""Real TFLM applications on the virtual MCU: the data `--runtime tflm` prices with, and how far
its answers are from those applications (issue 22).

    python benchmarks/measure_tflm.py record MANIFEST.json     # writes tflm_runtime.json
    python benchmarks/measure_tflm.py compare MANIFEST.json [--write]

The applications are ordinary TFLM + CMSIS-NN builds made OUTSIDE the project (the project holds
neither their sources, nor binaries, nor a script that builds them). The manifest names them:

    {"sources": {"tflite-micro": COMMIT, "cmsis-nn": COMMIT, ...}, "compiler": "...",
     "flags": {CORE: "..."}, "date": "YYYY-MM-DD",
     "apps": [{"core": CORE, "model": PATH.tflite, "model_source": "tflite-micro" | "mlperf-tiny",
               "elf": PATH.elf, "profiler": bool,
               "tflm_code_flash": bytes of TFLM code + constants in that image (its link map)}],
     "code": {CORE: {"objects": {OBJ: {"flash": n, "ram": n}},
                     "kernels": {OP: [OBJ, ...]}, "framework": {"flash": n, "ram": n}}}}

record: each application runs under `micro-rt emulate` (cortexm/system/tflm_app.py: one row per
operator, the library calls inside it timed, MicroInterpreter::Invoke's stack painted), at
0 wait states on the core's generic map. Per core, from the applications without a profiler:
the interpreter's cycles per operator (mean over every node), Invoke's own (its total less the
operators and the loop), each operator's Eval glue (its cycles less its outermost CMSIS-NN
calls; mean over its nodes), and TFLM's stack above its kernels (Invoke's stack less micro_rt's
deepest kernel on the same model, the largest over the models). Code sizes come from the
manifest (link maps). The arena each application's allocator reported is kept per model.

record also prices each application's model with the costs just measured and keeps, per core,
how far `profile --runtime tflm` came from its Invoke cycles (every --runtime tflm answer
quotes it). compare: for each application, `profile --runtime tflm` (micro_rt's kernels + the
recorded costs) against the application's own Invoke cycles, micro_rt's arena plan against TFLM's
arena_used_bytes, and `fit --runtime tflm`'s TFLM code against the image's. --write puts the
tables into RESULTS.md (section tflm-runtime).
"""
from __future__ import annotations

import results_md

THREADS = results_md.pin_blas_threads()      # before numpy loads

import argparse  # noqa: E402
import hashlib  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
INVOKE = "tflite::MicroInterpreter::Invoke()"
CLOCK_HZ = 100_000_000


def emulate(app: dict) -> dict:
    from micro_rt.cortexm.system.run import EmulateRequest, run_firmware
    report = run_firmware(EmulateRequest(Path(app["elf"]), target=app["core"], clock_hz=CLOCK_HZ))
    if not report.ending.ok or report.exit_code != 0 or report.tflm is None:
        raise SystemExit(f"{app['elf']}: {report.ending.value}: {report.message} (exit {report.exit_code}); "
                         "not a TFLM application that ran to its end")
    d = report.to_dict()
    if len(d["tflm"]["invokes"]) != 1:
        raise SystemExit(f"{app['elf']}: {len(d['tflm']['invokes'])} calls of {INVOKE}, one expected")
    d["invoke"] = d["tflm"]["invokes"][0]
    return d


class MicroRtProfiles:
    """micro_rt's own profile of each (model, core), emulated once: `record` reads its stack,
    the comparison prices it (TflmPricing.profile does not change the report it is given)."""

    def __init__(self):
        self._reports: dict[tuple[Path, str], dict] = {}

    def get(self, model: Path, core: str) -> dict:
        if (model, core) not in self._reports:
            from micro_rt.profile import emulated_profile
            report, it = emulated_profile(model.read_bytes(), core, CLOCK_HZ, kernels="cmsis-nn")
            it.close()
            self._reports[(model, core)] = report
        return self._reports[(model, core)]


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def record(manifest: dict, profiles: MicroRtProfiles) -> dict:
    by_core: dict[str, dict] = {}
    models = []
    tags: dict[tuple[str, str], list[str]] = {}     # (core, model) -> operator names its profiler gave
    # the applications with a profiler first: their tags name the nodes of the plain ones
    for app in sorted(manifest["apps"], key=lambda a: not a["profiler"]):
        run = emulate(app)
        t = run["tflm"]
        ops = t["operators"]
        model = Path(app["model"])
        if app["profiler"]:
            tags[(app["core"], model.name)] = [o["op"] for o in ops]
        else:
            named = tags.get((app["core"], model.name))
            if named is not None and len(named) == len(ops):
                for o, op in zip(ops, named):
                    o["op"] = op
        c = by_core.setdefault(app["core"], {"interp": [], "invoke": [], "glue": {}, "stack": []})
        models.append({"model": model.name, "model_source": app["model_source"], "sha256": sha256(model),
                       "core": app["core"],
                       "profiler": app["profiler"], "arena_used_bytes": t["arena_used_bytes"],
                       "invoke_cycles": run["invoke"]["cycles"],
                       "invoke_instructions": run["invoke"]["instructions"],
                       "tflm_code_flash": app.get("tflm_code_flash"),
                       "operators": [{"op": o["op"], "cycles": o["cycles"], "glue_cycles": o["glue_cycles"],
                                      "dispatched_to": o["dispatched_to"]} for o in ops]})
        print(f"{app['core']:<14} {model.name:<34} {'profiler' if app['profiler'] else 'plain':<9} "
              f"invoke {run['invoke']['cycles']:>12,}  arena {t['arena_used_bytes']:>9,}", file=sys.stderr)
        if app["profiler"]:
            continue
        c["interp"] += [(o["interpreter_cycles_before"], o["interpreter_instructions_before"]) for o in ops]
        between = sum(o["interpreter_cycles_before"] for o in ops)
        c["invoke"].append((run["invoke"]["cycles"] - sum(o["cycles"] for o in ops) - between,
                            run["invoke"]["instructions"] - sum(o["instructions"] + o["interpreter_instructions_before"]
                                                                for o in ops)))
        for o in ops:
            c["glue"].setdefault(o["op"], []).append((o["glue_cycles"], o["glue_instructions"], model.name,
                                                      bool(o["dispatched_to"])))
        deepest = max(op["stack_bytes"] for op in profiles.get(model, app["core"])["ops"])
        c["stack"].append(t["invoke_stack_bytes"] - deepest)
    cores = {}
    for core, c in by_core.items():
        code = manifest["code"][core]
        kernels = {}
        for op, samples in sorted(c["glue"].items()):
            if op not in code["kernels"]:
                raise SystemExit(f"{core}: operator {op} ran but the manifest's code has no kernel objects for it")
            library = all(s[3] for s in samples)
            # without a library call TFLM's kernel is its own code, whole: micro_rt's kernel
            # stands for it and nothing is added (the operator's own cycles are kept, for reading)
            kernels[op] = {"glue_cycles_per_node": round(statistics.mean(s[0] for s in samples)) if library else 0,
                           "glue_instructions_per_node": round(statistics.mean(s[1] for s in samples)) if library else 0,
                           "calls_library": library,
                           "tflm_cycles_per_node": None if library else round(statistics.mean(s[0] for s in samples)),
                           "nodes": len(samples), "from_models": sorted({s[2] for s in samples}),
                           "objects": code["kernels"][op]}
        for op in sorted(set(code["kernels"]) - set(kernels)):
            print(f"note: {core}: {op} has code sizes but no node ran, so no glue: not recorded", file=sys.stderr)
        cores[core] = {
            "interpreter": {"per_operator_cycles": round(statistics.mean(x for x, _ in c["interp"])),
                            "per_operator_instructions": round(statistics.mean(y for _, y in c["interp"])),
                            "invoke_cycles": round(statistics.mean(x for x, _ in c["invoke"])),
                            "invoke_instructions": round(statistics.mean(y for _, y in c["invoke"])),
                            "frames_stack_bytes": max(c["stack"]),
                            "operators_measured": len(c["interp"])},
            "kernels": kernels, "objects": code["objects"], "framework": code["framework"]}
    return {"about": "What real TFLM + CMSIS-NN builds add to micro_rt's kernels, measured by "
                     "benchmarks/measure_tflm.py record on applications built outside the project",
            "sources": manifest["sources"], "compiler": manifest["compiler"], "flags": manifest["flags"],
            "date": manifest["date"],
            "measured_with": "micro-rt emulate --target CORE (virtual MCU, 0 wait states)",
            "cores": cores, "models": models}


def comparisons(data, paths: dict[str, Path], profiles: MicroRtProfiles) -> list[dict]:
    """For each recorded application without a profiler: its own Invoke cycles, arena and TFLM
    code against `profile --runtime tflm`, micro_rt's arena plan and `fit --runtime tflm`'s
    code, priced from `data` (a TflmData)."""
    from micro_rt.interpreter import Interpreter
    from micro_rt.runtimes import TflmPricing
    out = []
    for entry in data.models:
        if entry["profiler"]:
            continue
        model = paths[entry["model"]]
        pricing = TflmPricing(entry["core"], data=data)
        priced = pricing.profile(profiles.get(model, entry["core"]))
        with Interpreter.from_bytes(model.read_bytes(), target=entry["core"], kernels="cmsis-nn",
                                    plan_only=True) as it:
            arena = it.plan.total_bytes
            ops = {op.op_name for sg in it.model.subgraphs for op in sg.operators}
        flash, _, missing = pricing.costs.kernel_bytes(ops)
        out.append({"core": entry["core"], "model": entry["model"], "real_cycles": entry["invoke_cycles"],
                    "priced_cycles": priced["total_cycles"], "complete": priced["complete"],
                    "error": priced["total_cycles"] / entry["invoke_cycles"] - 1,
                    "real_arena": entry["arena_used_bytes"], "arena": arena,
                    "real_code": entry["tflm_code_flash"], "code": pricing.costs.framework_flash + flash,
                    "code_missing": missing})
    return out


def validation(rows: list[dict]) -> dict[str, dict]:
    """Per core: how far `profile --runtime tflm` was from the applications' own cycles."""
    by_core: dict[str, list[float]] = {}
    for r in rows:
        by_core.setdefault(r["core"], []).append(r["error"])
    return {core: {"applications": len(e), "min_error": round(min(e), 4), "max_error": round(max(e), 4),
                   "mean_abs_error": round(statistics.mean(abs(x) for x in e), 4)}
            for core, e in by_core.items()}


def model_paths(manifest: dict) -> dict[str, Path]:
    return {Path(a["model"]).name: Path(a["model"]) for a in manifest["apps"]}


def compare(manifest: dict) -> str:
    from micro_rt.runtimes import load_tflm_data
    rows = comparisons(load_tflm_data(), model_paths(manifest), MicroRtProfiles())
    table = [f"| {r['core']} | {r['model']} | {r['real_cycles']:,} | {r['priced_cycles']:,} | {r['error']:+.1%} | "
             f"{r['real_arena']:,} | {r['arena']:,} | {'-' if r['real_code'] is None else format(r['real_code'], ',')} | "
             f"{r['code']:,}{' (no data: ' + ', '.join(r['code_missing']) + ')' if r['code_missing'] else ''} |"
             for r in rows]
    per_core = [f"| {core} | {v['applications']} | {v['min_error']:+.1%} to {v['max_error']:+.1%} | "
                f"{v['mean_abs_error']:.1%} | {sum(r['arena'] == r['real_arena'] for r in rows if r['core'] == core)} "
                f"of {v['applications']} |" for core, v in sorted(validation(rows).items())]
    sources = ", ".join(f"{k} {v[:8]}" for k, v in manifest["sources"].items())
    return "\n".join([
        "## --runtime tflm against real TFLM applications (issue 22)", "",
        results_md.section_header(THREADS),
        f"Real TFLM + CMSIS-NN applications ({sources}; {manifest['compiler']}), built outside the "
        "project, one per model, without a profiler, run by `micro-rt emulate` at 0 wait states. "
        "micro_rt: `profile --runtime tflm` (its CMSIS-NN-style kernels + the recorded interpreter "
        "and glue costs) and its arena plan; TFLM code: `fit --runtime tflm`'s framework + kernel "
        "objects against the image's TFLM code and constants (its link map). The recorded costs "
        "come from these same applications (`record`): the cycle error is what micro_rt's kernels "
        "leave, not a held-out check.", "",
        "| core | model | real TFLM invoke cycles | --runtime tflm cycles | error | TFLM arena_used_bytes | "
        "micro_rt arena | TFLM code in the image | fit --runtime tflm code |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|", *table, "",
        "| core | applications | error range | mean abs error | arena equal |", "|---|---:|---|---:|---:|", *per_core])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", choices=["record", "compare"])
    parser.add_argument("manifest", type=Path)
    parser.add_argument("--write", action="store_true", help="record: write the data file; compare: RESULTS.md")
    args = parser.parse_args()
    manifest = json.loads(args.manifest.read_text())
    if args.what == "record":
        profiles = MicroRtProfiles()
        out = record(manifest, profiles)
        import tempfile
        from micro_rt.runtimes import load_tflm_data
        with tempfile.TemporaryDirectory() as tmp:        # price with the costs just measured
            draft = Path(tmp) / "tflm_runtime.json"
            draft.write_text(json.dumps(out))
            for core, v in validation(comparisons(load_tflm_data(draft), model_paths(manifest), profiles)).items():
                out["cores"][core]["validation"] = v
        text = json.dumps(out, indent=1) + "\n"
        from micro_rt.runtimes import data_file
        if args.write:
            data_file().write_text(text)
            print(f"wrote {data_file()}")
        else:
            print(text)
        return
    body = compare(manifest)
    if args.write:
        results_md.write_section("tflm-runtime", body)
    else:
        print(body)


if __name__ == "__main__":
    main()
