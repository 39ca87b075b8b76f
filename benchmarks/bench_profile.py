"""Virtual-MCU profile benchmark (issue 4): emulation speed and kernel efficiency.

    python benchmarks/bench_profile.py [--models person_detect mobilenet_v2_quantized_1x3x224x224]
                                       [--cores cortex-m0plus cortex-m4] [--per-op] [--json out.json]
                                       [--markdown] [--write]
    python benchmarks/bench_profile.py --baseline-soft-float [--write]

For each model and core: build `Interpreter.from_file(path, target=core, kernels="cmsis-nn", emulate=True)`
(default machine config: exact instruction counting), feed a seeded random input, invoke.
Small models are invoked twice and the second invoke is timed (Unicorn's translation cache
is warm); models above --big-macs MACs are invoked once (that single invoke is timed).

Reports
  - emulated instructions per wall-clock second (sum of OpRecord.instructions / invoke time);
  - per operator type (CONV_2D 1x1 / general, DEPTHWISE_CONV_2D, FULLY_CONNECTED, ...):
    MACs, instructions, cycles, MACs per instruction, MACs per cycle;
  - with --per-op, every operator (shape, instructions, cycles, MACs/cycle).
--write puts the tables into RESULTS.md (section vmcu-speed).

--baseline-soft-float builds the firmware from cortexm/src once more without the FPU
(-mfloat-abi=soft on every core) and compares whole-model cycles of the float models with the
shipped FPU firmware on M4 / M7 / M33 (RESULTS.md section vmcu-fpu with --write).
"""
from __future__ import annotations

import results_md

THREADS = results_md.pin_blas_threads()      # before numpy loads

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections import OrderedDict  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("MICRO_RT_SHARED_MODELS", ROOT.parent / "shared" / "models")) / "tflm"
FPU_CORES = ["cortex-m4", "cortex-m7", "cortex-m33"]
SHARED_FLOAT_MODELS = ["hello_world_float", "test_conv_model"]


def op_kind(it, node) -> str:
    """Operator type, CONV_2D split into 1x1 and general, DEPTHWISE into 3x3 and other."""
    name = node.op_name
    if name in ("CONV_2D", "DEPTHWISE_CONV_2D"):
        flt = it.tensors[node.inputs[1]]
        inp = it.tensors[node.inputs[0]]
        fh, fw = int(flt.shape[1]), int(flt.shape[2])
        if name == "CONV_2D":
            return "CONV_2D 1x1" if (fh, fw) == (1, 1) else "CONV_2D general"
        tag = "3x3" if (fh, fw) == (3, 3) else f"{fh}x{fw}"
        if int(inp.shape[3]) != int(it.tensors[node.outputs[0]].shape[3]):
            tag += " ch_mult>1"
        return f"DEPTHWISE_CONV_2D {tag}"
    return name


def op_shape(it, node) -> str:
    inp = it.tensors[node.inputs[0]]
    out = it.tensors[node.outputs[0]]
    s = f"{list(inp.shape)}->{list(out.shape)}"
    if node.op_name in ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED"):
        s += f" w{list(it.tensors[node.inputs[1]].shape)}"
        st = node.options.get("stride_w")
        if st:
            s += f" s{st}"
    return s


def run_model(path: Path, core: str, big_macs: int, seed: int = 0) -> dict:
    from micro_rt import Interpreter
    it = Interpreter.from_file(str(path), target=core, kernels="cmsis-nn", emulate=True)
    rng = np.random.default_rng(seed)
    d = it.get_input_details(0)
    dt = np.dtype(d["dtype"])
    if dt.kind == "f":
        x = rng.uniform(-1, 1, size=d["shape"]).astype(dt)
    else:
        info = np.iinfo(dt)
        x = rng.integers(info.min, info.max + 1, size=d["shape"]).astype(dt)
    it.set_input(x)
    t0 = time.perf_counter()
    it.invoke()
    first = time.perf_counter() - t0
    macs = sum(r.macs for r in it.last_run)
    invokes = 1
    timed = first
    if macs <= big_macs:
        it.set_input(x)
        t0 = time.perf_counter()
        it.invoke()
        timed = time.perf_counter() - t0
        invokes = 2
    recs = it.last_run
    instr = sum(r.instructions for r in recs)
    cycles = sum(r.cycles for r in recs)
    by_kind: "OrderedDict[str, dict]" = OrderedDict()
    per_op = []
    for node, r in zip(it.nodes, recs):
        k = op_kind(it, node)
        e = by_kind.setdefault(k, dict(n=0, macs=0, instructions=0, cycles=0))
        e["n"] += 1
        e["macs"] += r.macs
        e["instructions"] += r.instructions
        e["cycles"] += r.cycles
        per_op.append(dict(index=node.index, kind=k, shape=op_shape(it, node), on_mcu=r.on_mcu,
                           instructions=r.instructions, cycles=r.cycles, macs=r.macs))
    return dict(model=path.stem, core=core, invokes=invokes, first_s=first, timed_s=timed,
                instructions=instr, cycles=cycles, macs=macs,
                mips=instr / timed / 1e6 if timed else 0.0,
                on_host=[f"{p['index']} {p['kind']}" for p in per_op if not p["on_mcu"]],
                by_kind=by_kind, per_op=per_op)


def _r(a, b, nd=3):
    return f"{a / b:.{nd}f}" if b else "-"


def markdown(results: list) -> str:
    lines = [results_md.section_header(THREADS)]
    lines.append("Default machine config (native block hook, exact instruction counts, alignment "
                 "check on, per-core cycle model).")
    lines.append("")
    lines.append("Emulation speed (timed invoke: the second one for models up to --big-macs "
                 "MACs, whose translation cache is warm; the only one above):")
    lines.append("")
    lines.append("| model | core | invokes | timed invoke s | emulated instructions | M instr/s | cycles | MACs |")
    lines.append("|---|---|---|---|---|---|---|---|")
    for r in results:
        lines.append(f"| {r['model']} | {r['core']} | {r['invokes']} | {r['timed_s']:.2f} | "
                     f"{r['instructions']:,} | {r['mips']:.0f} | {r['cycles']:,} | {r['macs']:,} |")
    lines.append("")
    lines.append("Per operator type:")
    lines.append("")
    lines.append("| model | core | op type | ops | MACs | instructions | cycles | MACs/instr | MACs/cycle |")
    lines.append("|---|---|---|---|---|---|---|---|---|")
    for r in results:
        for k, e in r["by_kind"].items():
            lines.append(f"| {r['model']} | {r['core']} | {k} | {e['n']} | {e['macs']:,} | "
                         f"{e['instructions']:,} | {e['cycles']:,} | {_r(e['macs'], e['instructions'])} | "
                         f"{_r(e['macs'], e['cycles'])} |")
    return "\n".join(lines) + "\n"


def _use_firmware_dir(d: Path) -> None:
    """Make every VirtualMCU created in this process load <d>/<core>.elf."""
    from micro_rt.cortexm import machine
    orig = machine.VirtualMCU.__init__

    def init(self, core, elf_path=None, **kw):
        if elf_path is None:
            from micro_rt.targets import get_target
            elf_path = d / f"{get_target(core).name}.elf"
        orig(self, core, elf_path, **kw)
    machine.VirtualMCU.__init__ = init


def float_models() -> list[str]:
    project = [str(p) for p in sorted((ROOT / "models").glob("*_f32.tflite"))]
    return project + [m for m in SHARED_FLOAT_MODELS if (SHARED / f"{m}.tflite").exists()]


def fpu_comparison(models: list[str], cores: list[str], big_macs: int) -> str:
    """Whole-model cycles with a soft-float build of cortexm/src against the shipped FPU firmware."""
    with tempfile.TemporaryDirectory() as tmp:
        soft = Path(tmp) / "soft"
        flags = [f"FPFLAGS_{c}=-mfloat-abi=soft" for c in FPU_CORES]
        subprocess.run(["make", "-s", "-C", str(ROOT / "cortexm" / "src"), f"OUT={soft}", *flags],
                       check=True)
        out = Path(tmp) / "soft.json"
        subprocess.run([sys.executable, __file__, "--models", *models, "--cores", *cores,
                        "--big-macs", str(big_macs), "--firmware-dir", str(soft), "--json", str(out)],
                       check=True, stdout=subprocess.DEVNULL)
        baseline = {(r["model"], r["core"]): r["cycles"] for r in json.loads(out.read_text())}
    lines = [results_md.section_header(THREADS),
             "Whole-model cycles at the default configuration (100 MHz, 0 wait states): the shipped "
             "firmware (FPU: -mfloat-abi=softfp with FPv4-SP on M4, FPv5-D on M7, FPv5-SP on M33) "
             "against the same cortexm/src built with -mfloat-abi=soft.", "",
             "| model | core | cycles, soft-float build | cycles, FPU build | speed-up |",
             "|---|---|---:|---:|---:|"]
    for m in models:
        for core in cores:
            r = run_model(_model_path(m), core, big_macs)
            before = baseline[(r["model"], core)]
            lines.append(f"| {r['model']} | {core} | {before:,} | {r['cycles']:,} | "
                         f"{before / r['cycles']:.2f}x |")
            print(lines[-1], flush=True)
    return "\n".join(lines) + "\n"


def _model_path(m: str) -> Path:
    return Path(m) if m.endswith(".tflite") else SHARED / f"{m}.tflite"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", nargs="+", help="default: person_detect and mobilenet_v2 "
                    "(with --baseline-soft-float: the float models)")
    ap.add_argument("--cores", nargs="+", help="default: cortex-m0plus and cortex-m4 "
                    "(with --baseline-soft-float: the FPU cores)")
    ap.add_argument("--big-macs", type=int, default=50_000_000,
                    help="models with more MACs are invoked once (default 50M)")
    ap.add_argument("--per-op", action="store_true", help="print every operator")
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--firmware-dir", help="use <dir>/<core>.elf instead of the shipped firmware "
                    "(e.g. an older build, for before/after comparisons)")
    ap.add_argument("--markdown", action="store_true", help="print the RESULTS.md tables")
    ap.add_argument("--write", action="store_true", help="write the tables into RESULTS.md")
    ap.add_argument("--baseline-soft-float", action="store_true",
                    help="compare the float models' cycles with a soft-float build of the firmware")
    a = ap.parse_args(argv)
    if a.baseline_soft_float:
        table = fpu_comparison(a.models or float_models(), a.cores or FPU_CORES, a.big_macs)
        print(table)
        if a.write:
            results_md.write_section("vmcu-fpu", table)
        return 0
    a.models = a.models or ["person_detect", "mobilenet_v2_quantized_1x3x224x224"]
    a.cores = a.cores or ["cortex-m0plus", "cortex-m4"]
    if a.firmware_dir:
        _use_firmware_dir(Path(a.firmware_dir))
    results = []
    for m in a.models:
        path = _model_path(m)
        for core in a.cores:
            r = run_model(path, core, a.big_macs)
            results.append(r)
            print(f"{r['model']} {core}: {r['instructions']:,} instr, {r['cycles']:,} cycles, "
                  f"{r['macs']:,} MACs, timed {r['timed_s']:.2f} s (first {r['first_s']:.2f} s) -> "
                  f"{r['mips']:.1f} M instr/s", flush=True)
            if r["on_host"]:
                print(f"  on host: {r['on_host']}")
            for k, e in r["by_kind"].items():
                print(f"  {k:32s} n={e['n']:3d} MACs={e['macs']:>12,} instr={e['instructions']:>13,} "
                      f"cyc={e['cycles']:>13,} MAC/instr={_r(e['macs'], e['instructions'])} "
                      f"MAC/cyc={_r(e['macs'], e['cycles'])}")
            if a.per_op:
                for p in r["per_op"]:
                    print(f"    {p['index']:3d} {p['kind']:28s} {p['shape']:52s} instr={p['instructions']:>11,} "
                          f"cyc={p['cycles']:>11,} MACs={p['macs']:>10,} MAC/cyc={_r(p['macs'], p['cycles'])}")
    if a.json:
        Path(a.json).write_text(json.dumps(results, indent=1))
    if a.markdown or a.write:
        print()
        print(markdown(results))
    if a.write:
        results_md.write_section("vmcu-speed", markdown(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
