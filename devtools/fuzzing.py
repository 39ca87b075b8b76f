"""Fuzzing micro_rt with mutants of real and builder-made models (issue 5): making mutants,
running every stage on one, classifying what happened, and comparing outputs.

    seed, mutators, data = make_mutant(seeds, campaign_seed, k)     # 1-3 stacked mutations
    result = run_stages(data)                                       # in this process

A mutant goes through every stage a user can reach: `load` (the reader), `info`, `plan`
for every target (the CLI's own commands), `host` (an invoke on the host kernels, seeded
random inputs) and `mcu` (the same inputs on a virtual Cortex-M4 with CMSIS-NN kernels).
Each stage ends `ok`, `project-error` (a MicroRtError), `wrapped` (a KernelError the
interpreter made from a Python error inside a kernel: "failed in prepare: ZeroDivisionError:
...", a check the kernel should have made) or `foreign` (any other exception). When host and
MCU both run, their outputs must agree. `run_oracle` runs tflite-micro on the same inputs
(it may crash the process: benchmarks/fuzz_campaign.py runs it last, in a forked child,
where crashes and hangs are told apart from ours). The mutators are in fuzz_mutators.
"""
from __future__ import annotations

import contextlib
import io
import random
import re
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

import numpy as np

from micro_rt.errors import KernelError, MicroRtError
from devtools.fuzz_mutators import BYTE_MUTATORS, MUTATORS, STRUCT_MUTATORS

__all__ = ["BYTE_MUTATORS", "MUTATORS", "STRUCT_MUTATORS", "STAGES", "CLASSES", "MutantResult",
           "StageOutcome", "apply_mutations", "builder_seeds", "check_mutant", "classify",
           "make_mutant", "mutate", "outputs_agree", "run_oracle", "run_stages", "seed_models"]

STAGES = ("load", "info", "plan", "host", "mcu")
# Outcome classes, worst last; a forked campaign adds "hang" and "crash" (by signal).
CLASSES = ("ok", "project-error", "wrapped", "foreign", "hang", "crash")
MCU_TARGET = "cortex-m4"
MCU_INVOKE_BUDGET = 400_000_000     # instructions: a mutant's whole invoke on the MCU (~1-2 s)
STRUCT_SHARE = 0.65                 # of the mutations drawn: schema-level, the rest byte-level

_WRAPPED = re.compile(r"failed in [a-z ]+: ([A-Za-z_][\w.]*): ")


# ---- making mutants ------------------------------------------------------------------------
def _decode(data: bytes):
    from micro_rt.builder import ModelBuilder
    from micro_rt.model import read_model
    return ModelBuilder.from_model(read_model(data))


def _encode(builder) -> Optional[bytes]:
    try:
        return builder.build()
    except Exception:      # the builder refused the edit (not the code under test)
        return None


def apply_mutations(data: bytes, names: list[str], rng: random.Random) -> tuple[list[str], bytes]:
    """Apply the named mutators: schema-level ones together on the decoded model (one
    re-encode), then byte-level ones on the bytes. A schema mutator that does not apply, or
    an edit the builder cannot encode, falls back to a random byte-level mutator."""
    applied: list[str] = []
    structural = [n for n in names if n in STRUCT_MUTATORS]
    fallbacks = len(names) - len(structural)
    if structural:
        try:
            builder = _decode(data)
        except MicroRtError:
            builder = None
        done = [n for n in structural if builder is not None and STRUCT_MUTATORS[n](builder, rng)]
        encoded = _encode(builder) if done else None
        if encoded is not None:
            data, applied = encoded, done
            fallbacks += len(structural) - len(done)
        else:
            fallbacks += len(structural)
    byte_names = [n for n in names if n in BYTE_MUTATORS]
    byte_names += [rng.choice(sorted(BYTE_MUTATORS)) for _ in range(fallbacks - len(byte_names))]
    for name in byte_names:
        if data:
            data = BYTE_MUTATORS[name](data, rng)
            applied.append(name)
    return applied, data


def mutate(data: bytes, rng: random.Random, name: Optional[str] = None) -> tuple[str, bytes]:
    """Apply one mutator (`name`, or a random one); returns (what was applied, bytes)."""
    applied, out = apply_mutations(data, [name or rng.choice(sorted(MUTATORS))], rng)
    return "+".join(applied), out


def _draw(rng: random.Random) -> str:
    pool = STRUCT_MUTATORS if rng.random() < STRUCT_SHARE else BYTE_MUTATORS
    return rng.choice(sorted(pool))


def make_mutant(seeds: dict[str, bytes], campaign_seed: int, k: int) -> tuple[str, str, bytes]:
    """Mutant number `k` of a campaign: (seed name, mutators applied, bytes), reproducible;
    1 to 3 mutations stacked."""
    rng = random.Random(campaign_seed * 1_000_003 + k)
    seed = rng.choice(sorted(seeds))
    names = [_draw(rng) for _ in range(rng.choice((1, 1, 2, 3)))]
    applied, data = apply_mutations(seeds[seed], names, rng)
    return seed, "+".join(applied), data


# ---- seeds ----------------------------------------------------------------------------------
def builder_seeds() -> dict[str, bytes]:
    """Small models whose ops read parameters from constant tensors (the prepare paths
    that index with model data), plus a float and an int8 chain."""
    from micro_rt.builder import ModelBuilder
    seeds = {}

    b = ModelBuilder()
    x = b.add_tensor("x", [1, 4, 4, 2], "FLOAT32")
    shape = b.add_tensor("shape", [2], "INT32", data=np.array([4, 8]))
    r = b.add_tensor("r", [4, 8], "FLOAT32")
    perm = b.add_tensor("perm", [2], "INT32", data=np.array([1, 0]))
    t = b.add_tensor("t", [8, 4], "FLOAT32")
    pads = b.add_tensor("pads", [2, 2], "INT32", data=np.array([[1, 0], [0, 2]]))
    p = b.add_tensor("p", [9, 6], "FLOAT32")
    begin = b.add_tensor("begin", [2], "INT32", data=np.array([1, 0]))
    end = b.add_tensor("end", [2], "INT32", data=np.array([8, 6]))
    strides = b.add_tensor("strides", [2], "INT32", data=np.array([2, 3]))
    s = b.add_tensor("s", [4, 2], "FLOAT32")
    axis = b.add_tensor("axis", [1], "INT32", data=np.array([1]))
    m = b.add_tensor("m", [4, 1], "FLOAT32")
    b.add_operator("RESHAPE", [x, shape], [r], options={"new_shape": [4, 8]})
    b.add_operator("TRANSPOSE", [r, perm], [t])
    b.add_operator("PAD", [t, pads], [p])
    b.add_operator("STRIDED_SLICE", [p, begin, end, strides], [s])
    b.add_operator("MEAN", [s, axis], [m], options={"keep_dims": True})
    b.inputs, b.outputs = [x], [m]
    seeds["builder_shape_ops_f32"] = b.build()

    b = ModelBuilder()
    x = b.add_tensor("x", [1, 4], "INT8", scale=0.5, zero_point=-1)
    w = b.add_tensor("w", [3, 4], "INT8", data=np.arange(12).reshape(3, 4), scale=[0.1, 0.2, 0.3],
                     zero_point=0, quantized_dimension=0)
    bias = b.add_tensor("b", [3], "INT32", data=np.array([1, 2, 3]), scale=[0.05, 0.1, 0.15])
    y = b.add_tensor("y", [1, 3], "INT8", scale=0.25, zero_point=2)
    z = b.add_tensor("z", [1, 3], "INT8", scale=0.25, zero_point=2)
    b.add_operator("FULLY_CONNECTED", [x, w, bias], [y], version=4,
                   options={"fused_activation_function": "RELU", "keep_num_dims": True})
    b.add_operator("RELU", [y], [z])
    b.inputs, b.outputs = [x], [z]
    seeds["builder_fc_int8"] = b.build()
    return seeds


def seed_models(root, shared=None, max_bytes: int = 1 << 20) -> dict[str, bytes]:
    """The seeds: models/*.tflite, the builder-made ones and, when given and present, the
    shared TFLM models up to `max_bytes`."""
    seeds = {f"models/{p.name}": p.read_bytes() for p in sorted(Path(root, "models").glob("*.tflite"))}
    if shared is not None and Path(shared).is_dir():
        for p in sorted(Path(shared).glob("*.tflite")):
            if p.stat().st_size <= max_bytes:
                seeds[f"shared/{p.name}"] = p.read_bytes()
    seeds.update(builder_seeds())
    return seeds


# ---- classifying -----------------------------------------------------------------------------
def classify(error: Optional[BaseException]) -> tuple[str, Optional[str]]:
    """(class, what) for a stage that raised `error` (None: ok). A KernelError wrapping a
    Python error names it: "KernelError<ZeroDivisionError>"."""
    if error is None:
        return "ok", None
    if isinstance(error, MicroRtError):
        wrapped = _WRAPPED.search(str(error)) if isinstance(error, KernelError) else None
        if wrapped:
            return "wrapped", f"KernelError<{wrapped.group(1)}>"
        return "project-error", type(error).__name__
    return "foreign", type(error).__name__


def _raised_at(error: Optional[BaseException], outcome: str) -> Optional[str]:
    """Where the Python error behind a foreign or wrapped outcome was raised."""
    import traceback
    if outcome == "wrapped":
        error = error.__cause__
    if outcome not in ("wrapped", "foreign") or error is None:
        return None
    frames = traceback.extract_tb(error.__traceback__)
    return f"{Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else None


def worst(classes) -> str:
    return max(classes, key=CLASSES.index, default="ok")


@dataclass
class StageOutcome:
    stage: str
    outcome: str                         # one of CLASSES
    error: Optional[str] = None          # class name (and wrapped Python error)
    message: Optional[str] = None
    seconds: float = 0.0
    where: Optional[str] = None          # file:line the Python error was raised at


@dataclass
class MutantResult:
    stages: list[StageOutcome] = field(default_factory=list)
    inputs: Optional[list[np.ndarray]] = None
    host_outputs: Optional[list[np.ndarray]] = None
    mcu_outputs: Optional[list[np.ndarray]] = None
    arena_bytes: int = 0
    host_vs_mcu: Optional[str] = None    # None (not both ran), "agree" or a description

    @property
    def outcome(self) -> str:
        return worst(s.outcome for s in self.stages)


# ---- the stages -------------------------------------------------------------------------------
def _cli(argv: list[str]) -> None:
    """One CLI command as `micro-rt` runs it, exceptions propagating, output discarded."""
    from micro_rt.cli import build_parser
    args = build_parser().parse_args(argv)
    with contextlib.redirect_stdout(io.StringIO()):
        args.func(args)


def _plan_every_target(path: str) -> None:
    from micro_rt.targets import TARGETS
    first: Optional[BaseException] = None
    for name, target in TARGETS.items():
        try:
            _cli(["plan", path, "--target", name, "--kernels",
                  "reference" if target.is_host else "cmsis-nn", "--json"])
        except Exception as e:
            # keep the worst error over the targets, naming the target
            if first is None or CLASSES.index(classify(e)[0]) > CLASSES.index(classify(first)[0]):
                first = e
    if first is not None:
        raise first


def _run(data: bytes, inputs: Optional[list[np.ndarray]], **kwargs):
    """One invoke on seeded random inputs (or `inputs`); returns (inputs, outputs, arena)."""
    from micro_rt.interpreter import Interpreter
    from micro_rt.inputs import random_inputs
    with Interpreter.from_bytes(data, **kwargs) as it:
        if inputs is None:
            inputs = random_inputs(it, 0)
        for i, x in enumerate(inputs):
            it.set_input(x, i)
        it.invoke()
        return inputs, [it.get_output(i) for i in range(it.num_outputs)], it.arena_required_bytes()


def outputs_agree(ours: list[np.ndarray], theirs: list[np.ndarray]) -> Optional[str]:
    """None when every output agrees (integers bit-exact, floats within 1e-5 relative, NaN
    where NaN), else what differs."""
    if len(ours) != len(theirs):
        return f"{len(ours)} outputs against {len(theirs)}"
    for k, (a, b) in enumerate(zip(ours, theirs)):
        b = np.asarray(b)
        if a.shape != b.shape or a.dtype != b.dtype:
            return f"output {k}: {a.dtype}{list(a.shape)} against {b.dtype}{list(b.shape)}"
        if np.issubdtype(a.dtype, np.floating):
            same = np.isclose(a, b, rtol=1e-5, atol=1e-6, equal_nan=True)
        else:
            same = a == b
        if not np.all(same):
            bad = np.flatnonzero(~same.ravel())
            return (f"output {k}: {bad.size} of {a.size} elements differ (first at {int(bad[0])}: "
                    f"{a.ravel()[bad[0]]!r} against {b.ravel()[bad[0]]!r})")
    return None


def run_stages(data: bytes, report: Optional[Callable[[str, object], None]] = None,
               invoke_budget: int = MCU_INVOKE_BUDGET) -> MutantResult:
    """Every stage on `data`; `report(kind, payload)` is told each stage's start and outcome
    (a forked campaign uses it to know where a crash or hang happened)."""
    from micro_rt.model import read_model
    result = MutantResult()
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp, "mutant.tflite"))
        Path(path).write_bytes(data)

        def host():
            result.inputs, result.host_outputs, result.arena_bytes = _run(data, None)

        def mcu():
            _, result.mcu_outputs, _ = _run(data, result.inputs, target=MCU_TARGET, kernels="cmsis-nn",
                                            emulate=True,
                                            mcu_options={"invoke_budget": invoke_budget})

        stages = {"load": lambda: read_model(data), "info": lambda: _cli(["info", path, "--json"]),
                  "plan": lambda: _plan_every_target(path), "host": host, "mcu": mcu}
        for name in STAGES:
            if report is not None:
                report("start", name)
            start = time.perf_counter()
            try:
                with np.errstate(all="ignore"):
                    stages[name]()
                error = None
            except Exception as e:         # classified, never raised: the campaign counts them
                error = e
            outcome, what = classify(error)
            stage = StageOutcome(name, outcome, what, None if error is None else str(error)[:300],
                                 time.perf_counter() - start, _raised_at(error, outcome))
            result.stages.append(stage)
            if report is not None:
                report("done", stage)
    if result.host_outputs is not None and result.mcu_outputs is not None:
        result.host_vs_mcu = outputs_agree(result.host_outputs, result.mcu_outputs) or "agree"
    return result


def run_oracle(data: bytes, result: MutantResult) -> tuple[str, Optional[str]]:
    """tflite-micro on the host stage's inputs: ("agree" | "disagree" | "refused", detail).
    May crash the process (a segfault inside tflite-micro): run it where that is survivable."""
    from micro_rt.oracle import run
    arena = min(max(4 * result.arena_bytes, 1 << 20), 1 << 30)
    try:
        with np.errstate(all="ignore"):
            theirs = run(data, result.inputs, len(result.host_outputs), arena_size=arena)
    except Exception as e:
        return "refused", f"{type(e).__name__}: {str(e)[:200]}"
    diff = outputs_agree(result.host_outputs, theirs)
    return ("agree", None) if diff is None else ("disagree", diff)


# ---- the load-and-invoke property (kept for the quick in-suite checks) -----------------------
def check_mutant(data: bytes) -> str:
    """Load `data` and, when it loads, invoke once on zeros on the host. Returns "loaded",
    "rejected: <what>" or "invoke-error: <what>" (`classify`'s names: a wrapped Python error
    reads "KernelError<ZeroDivisionError>"); anything that is not a MicroRtError propagates."""
    from micro_rt.interpreter import Interpreter
    try:
        it = Interpreter.from_bytes(data)
    except MicroRtError as e:
        return f"rejected: {classify(e)[1]}"
    try:
        for i in range(it.num_inputs):
            details = it.get_input_details(i)
            if details["dtype"] is not None:
                it.set_input(np.zeros(tuple(int(d) for d in details["shape"]), details["dtype"]), i)
        it.invoke()
        for i in range(it.num_outputs):
            it.get_output(i)
    except MicroRtError as e:
        return f"invoke-error: {classify(e)[1]}"
    return "loaded"
