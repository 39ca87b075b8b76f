"""Real TFLM applications on the virtual MCU: the data `--runtime tflm` prices with, and how far
its answers are from those applications (issue 22).

    python benchmarks/measure_tflm.py record MANIFEST.json [--write]   # one flavour's builds
    python benchmarks/measure_tflm.py compare MANIFEST.json [MANIFEST.json ...] [--write]

The applications are ordinary TFLM builds made OUTSIDE the project (the project holds neither
their sources, nor binaries, nor a script that builds them), one manifest per kernel flavour
(TFLM with OPTIMIZED_KERNEL_DIR=cmsis_nn: "cmsis-nn"; without: "reference"):

    {"flavour": "cmsis-nn" | "reference",
     "sources": {"tflite-micro": COMMIT, "cmsis-nn": COMMIT, ...}, "compiler": "...",
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
micro_rt's side runs with the manifest's flavour. --write replaces that flavour's part of
tflm_runtime.json and keeps the other flavours'.

record also prices each application's model with the costs just measured and keeps, per core,
how far `profile --runtime tflm` came from its Invoke cycles (every --runtime tflm answer
quotes it). compare: for each application, `profile --runtime tflm` (micro_rt's kernels + the
recorded costs) against the application's own Invoke cycles, micro_rt's arena plan against TFLM's
arena_used_bytes, and `fit --runtime tflm`'s TFLM code against the image's; and per operator,
node by node, TFLM's cycles over micro_rt's kernel's. --write puts the tables into RESULTS.md
(section tflm-runtime).
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
# TFLM's reference kernels run the MLPerf CNNs in 0.3-3 G cycles (the ResNet on the M0+ is the
# longest); the limit only guards against an application that never ends
MAX_CYCLES = 40_000_000_000
MEASURED_WITH = "micro-rt emulate --target CORE (virtual MCU, 0 wait states)"


def emulate(app: dict) -> dict:
    from micro_rt.cortexm.system.run import EmulateRequest, run_firmware
    report = run_firmware(EmulateRequest(Path(app["elf"]), target=app["core"], clock_hz=CLOCK_HZ,
                                         max_cycles=MAX_CYCLES))
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

    def get(self, model: Path, core: str, flavour: str) -> dict:
        key = (model, core, flavour)
        if key not in self._reports:
            from micro_rt.profile import emulated_profile
            report, it = emulated_profile(model.read_bytes(), core, CLOCK_HZ, kernels=flavour)
            it.close()
            self._reports[key] = report
        return self._reports[key]


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def manifest_flavour(manifest: dict) -> str:
    from micro_rt.runtimes import TFLM_BUILDS
    flavour = manifest.get("flavour", "cmsis-nn")
    if flavour not in TFLM_BUILDS or any(a.get("flavour", flavour) != flavour for a in manifest["apps"]):
        raise SystemExit(f"manifest flavour {flavour!r}: one of {', '.join(TFLM_BUILDS)}, the same for every app")
    return flavour


def record(manifest: dict, profiles: MicroRtProfiles) -> tuple[dict, list[dict]]:
    """One flavour's part of tflm_runtime.json, and its applications' entries."""
    flavour = manifest_flavour(manifest)
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
                       "core": app["core"], "flavour": flavour,
                       "profiler": app["profiler"], "arena_used_bytes": t["arena_used_bytes"],
                       "invoke_cycles": run["invoke"]["cycles"],
                       "invoke_instructions": run["invoke"]["instructions"],
                       "tflm_code_flash": app.get("tflm_code_flash"),
                       "operators": [{"op": o["op"], "cycles": o["cycles"], "glue_cycles": o["glue_cycles"],
                                      "dispatched_to": o["dispatched_to"]} for o in ops]})
        print(f"{flavour:<9} {app['core']:<14} {model.name:<34} {'profiler' if app['profiler'] else 'plain':<9} "
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
        deepest = max(op["stack_bytes"] for op in profiles.get(model, app["core"], flavour)["ops"])
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
    return ({"sources": manifest["sources"], "compiler": manifest["compiler"], "flags": manifest["flags"],
             "date": manifest["date"], "cores": cores}, models)


def recorded(flavour: str, part: dict, models: list[dict], existing: dict | None) -> dict:
    """tflm_runtime.json with `flavour`'s part and applications replaced, the others kept."""
    out = {"about": "What real TFLM builds add to micro_rt's kernels, per kernel flavour, measured by "
                    "benchmarks/measure_tflm.py record on applications built outside the project",
           "measured_with": MEASURED_WITH,
           "flavours": dict((existing or {}).get("flavours", {})),
           "models": [m for m in (existing or {}).get("models", []) if m["flavour"] != flavour] + models}
    out["flavours"][flavour] = part
    out["flavours"] = dict(sorted(out["flavours"].items()))
    return out


def comparisons(data, paths: dict[str, Path], profiles: MicroRtProfiles,
                flavours: tuple[str, ...] | None = None) -> list[dict]:
    """For each recorded application without a profiler (of `flavours`, or all): its own Invoke
    cycles, arena and TFLM code against `profile --runtime tflm`, micro_rt's arena plan and
    `fit --runtime tflm`'s code, priced from `data` (a TflmData) with the application's flavour."""
    from micro_rt.interpreter import Interpreter
    from micro_rt.runtimes import TflmPricing
    out = []
    for entry in data.models:
        flavour = entry["flavour"]
        if entry["profiler"] or (flavours is not None and flavour not in flavours):
            continue
        model = paths[entry["model"]]
        pricing = TflmPricing(entry["core"], flavour, data)
        mine = profiles.get(model, entry["core"], flavour)
        priced = pricing.profile(mine)
        pairs = list(zip(mine["ops"], entry["operators"]))
        # node by node, when both ran the same operators in the same order
        kernel_ratios = ([(theirs["op"], theirs["cycles"] / ours["cycles"]) for ours, theirs in pairs
                          if ours["cycles"]]
                         if len(mine["ops"]) == len(entry["operators"])
                         and all(ours["op"] == theirs["op"] for ours, theirs in pairs) else None)
        with Interpreter.from_bytes(model.read_bytes(), target=entry["core"], kernels=flavour,
                                    plan_only=True) as it:
            arena = it.plan.total_bytes
            ops = {op.op_name for sg in it.model.subgraphs for op in sg.operators}
        flash, _, missing = pricing.costs.kernel_bytes(ops)
        out.append({"flavour": flavour, "core": entry["core"], "model": entry["model"], "real_cycles": entry["invoke_cycles"],
                    "priced_cycles": priced["total_cycles"], "complete": priced["complete"],
                    "error": priced["total_cycles"] / entry["invoke_cycles"] - 1,
                    "real_arena": entry["arena_used_bytes"], "arena": arena,
                    "real_code": entry["tflm_code_flash"], "code": pricing.costs.framework_flash + flash,
                    "code_missing": missing, "kernel_ratios": kernel_ratios})
    return out


def kernel_ratio_table(rows: list[dict]) -> list[str]:
    """Per (flavour, core, operator): TFLM's cycles for a node (its kernel, glue included) over
    micro_rt's kernel's cycles for the same node: median and range over the nodes."""
    by: dict[tuple[str, str, str], list[float]] = {}
    for r in rows:
        for op, ratio in r["kernel_ratios"] or ():
            by.setdefault((r["flavour"], r["core"], op), []).append(ratio)
    return [f"| {flavour} | {core} | {op} | {len(v)} | {statistics.median(v):.2f} | {min(v):.2f} to {max(v):.2f} |"
            for (flavour, core, op), v in sorted(by.items())]


def validation(rows: list[dict]) -> dict[tuple[str, str], dict]:
    """Per (flavour, core): how far `profile --runtime tflm` was from the applications' own cycles."""
    by_core: dict[tuple[str, str], list[float]] = {}
    for r in rows:
        by_core.setdefault((r["flavour"], r["core"]), []).append(r["error"])
    return {key: {"applications": len(e), "min_error": round(min(e), 4), "max_error": round(max(e), 4),
                  "mean_abs_error": round(statistics.mean(abs(x) for x in e), 4)}
            for key, e in by_core.items()}


def model_paths(manifests: list[dict]) -> dict[str, Path]:
    return {Path(a["model"]).name: Path(a["model"]) for m in manifests for a in m["apps"]}


def compare(manifests: list[dict]) -> str:
    from micro_rt.runtimes import load_tflm_data
    data = load_tflm_data()
    rows = comparisons(data, model_paths(manifests), MicroRtProfiles())
    table = [f"| {r['flavour']} | {r['core']} | {r['model']} | {r['real_cycles']:,} | {r['priced_cycles']:,} | {r['error']:+.1%} | "
             f"{r['real_arena']:,} | {r['arena']:,} | {'-' if r['real_code'] is None else format(r['real_code'], ',')} | "
             f"{r['code']:,}{' (no data: ' + ', '.join(r['code_missing']) + ')' if r['code_missing'] else ''} |"
             for r in rows]
    per_core = [f"| {flavour} | {core} | {v['applications']} | {v['min_error']:+.1%} to {v['max_error']:+.1%} | "
                f"{v['mean_abs_error']:.1%} | "
                f"{sum(r['arena'] == r['real_arena'] for r in rows if (r['flavour'], r['core']) == (flavour, core))} "
                f"of {v['applications']} |" for (flavour, core), v in sorted(validation(rows).items())]
    builds = "; ".join(f"{flavour}: " + ", ".join(f"{k} {v[:8]}" for k, v in b.sources.items()) + f", {b.compiler}"
                       for flavour, b in sorted(data.flavours.items()))
    return "\n".join([
        "## --runtime tflm against real TFLM applications (issue 22)", "",
        results_md.section_header(THREADS),
        f"Real TFLM applications, per kernel flavour ({builds}), built outside the "
        "project, one per model, without a profiler, run by `micro-rt emulate` at 0 wait states. "
        "micro_rt: `profile --runtime tflm --kernels FLAVOUR` (its kernels of that flavour + the recorded "
        "interpreter and glue costs) and its arena plan; TFLM code: `fit --runtime tflm`'s framework + kernel "
        "objects against the image's TFLM code and constants (its link map). The recorded costs "
        "come from these same applications (`record`): the cycle error is what micro_rt's kernels "
        "leave, not a held-out check.", "",
        "| flavour | core | model | real TFLM invoke cycles | --runtime tflm cycles | error | TFLM arena_used_bytes | "
        "micro_rt arena | TFLM code in the image | fit --runtime tflm code |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|", *table, "",
        "| flavour | core | applications | error range | mean abs error | arena equal |",
        "|---|---|---:|---|---:|---:|", *per_core, "",
        "Per operator, node by node (applications whose operators pair with micro_rt's one to one): "
        "TFLM's cycles for the node (its kernel, Eval glue included) / micro_rt's kernel's cycles for it.", "",
        "| flavour | core | operator | nodes | median ratio | range |", "|---|---|---|---:|---:|---|",
        *kernel_ratio_table(rows)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", choices=["record", "compare"])
    parser.add_argument("manifests", type=Path, nargs="+", help="record: one manifest; compare: one per flavour")
    parser.add_argument("--write", action="store_true", help="record: write the data file; compare: RESULTS.md")
    args = parser.parse_args()
    manifests = [json.loads(m.read_text()) for m in args.manifests]
    if args.what == "record":
        if len(manifests) != 1:
            raise SystemExit("record takes one manifest (one flavour's builds)")
        manifest = manifests[0]
        flavour = manifest_flavour(manifest)
        profiles = MicroRtProfiles()
        part, models = record(manifest, profiles)
        import tempfile
        from micro_rt.runtimes import data_file, load_tflm_data
        existing = json.loads(data_file().read_text()) if data_file().exists() else None
        out = recorded(flavour, part, models, existing)
        with tempfile.TemporaryDirectory() as tmp:        # price with the costs just measured
            draft = Path(tmp) / "tflm_runtime.json"
            draft.write_text(json.dumps(out))
            rows = comparisons(load_tflm_data(draft), model_paths(manifests), profiles, (flavour,))
            for (_, core), v in validation(rows).items():
                part["cores"][core]["validation"] = v
        text = json.dumps(out, indent=1) + "\n"
        if args.write:
            data_file().write_text(text)
            print(f"wrote {data_file()}")
        else:
            print(text)
        return
    body = compare(manifests)
    if args.write:
        results_md.write_section("tflm-runtime", body)
    else:
        print(body)


if __name__ == "__main__":
    main()
