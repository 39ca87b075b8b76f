"""Which runtime an answer prices: micro_rt's own device runtime, or TFLM's (`--runtime tflm`).

micro_rt measures its own firmware: its C kernels called from its plan by its device runtime.
Most users deploy TFLM: the same kind of kernels (CMSIS-NN), called by TFLM's interpreter through
each kernel's Eval, in an image that holds TFLM's framework and the model's flatbuffer. A TFLM
answer is micro_rt's measured kernels plus what real TFLM builds were measured to add
(cortexm/board_data/measurements/tflm_runtime.json: built outside the project from the commits it
names, run on the virtual MCU by `micro-rt emulate`):

- cycles: per operator, its kernel's Eval glue (the part of TFLM's invoke outside the CMSIS-NN
  call, per node, by operator); per invoke, the interpreter's loop (per operator) and its entry;
- flash: the .tflite file (TFLM reads the flatbuffer in place), the framework's code and
  constants, and the objects of the kernels the model uses (each shared object once);
- RAM: TFLM's arena (micro_rt's plan of it), the framework's and kernels' .data/.bss, and the
  stack: micro_rt's deepest kernel plus TFLM's frames above its kernels, as measured.

Each kernel flavour has its own builds: TFLM with CMSIS-NN (OPTIMIZED_KERNEL_DIR=cmsis_nn) for
`--kernels cmsis-nn`, TFLM's reference kernels for `--kernels reference`. A reference kernel
calls no library, so it has no glue of its own: micro_rt's reference kernel stands for all of it.

An operator the data does not cover is named, and the answer is incomplete; a core or a flavour
no TFLM build was measured for is refused.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from enum import Enum
from functools import cached_property
from pathlib import Path
from typing import Optional

from .errors import InputError, MicroRtError

DATA_NAME = "tflm_runtime.json"         # in the board catalog's measurements/
# How TFLM was built for each kernel flavour micro_rt prices (TFLM's Makefile option)
TFLM_BUILDS = {"cmsis-nn": "OPTIMIZED_KERNEL_DIR=cmsis_nn", "reference": "no OPTIMIZED_KERNEL_DIR"}


def data_file() -> Path:
    from .cortexm.boards import SHIPPED_DIR
    return SHIPPED_DIR / "measurements" / DATA_NAME


class Runtime(Enum):
    MICRO_RT = "micro_rt"
    TFLM = "tflm"

    @property
    def label(self) -> str:
        return "micro_rt's device runtime" if self is Runtime.MICRO_RT else "TFLM's interpreter"


class RuntimeDataError(MicroRtError):
    """The measured TFLM data is missing, unreadable or inconsistent."""


@dataclass(frozen=True)
class KernelCost:
    """TFLM's costs for one operator's kernel (one flavour) on one core."""
    op: str
    glue_cycles: int              # per node: TFLM's Eval outside the library call
    glue_instructions: int
    nodes: int                    # nodes measured
    objects: tuple[str, ...]      # the linked objects the kernel needs (its own, CMSIS-NN's)
    calls_library: bool = True    # False: TFLM's kernel is its own code (no CMSIS-NN call), so
                                  # micro_rt's kernel stands for all of it and no glue is added


@dataclass(frozen=True)
class CoreCosts:
    """What real TFLM builds of one flavour add on one core."""
    core: str
    per_operator_cycles: int      # the interpreter's loop, per operator invoked
    per_operator_instructions: int
    invoke_cycles: int            # MicroInterpreter::Invoke's entry and exit, once per invoke
    invoke_instructions: int
    frames_stack_bytes: int       # TFLM's stack above its kernels' (Invoke down to a kernel's Eval)
    framework_flash: int
    framework_ram: int
    kernels: dict[str, KernelCost]
    objects: dict[str, tuple[int, int]]     # object -> (flash, RAM) bytes as linked
    validation: Optional[dict] = None       # profile --runtime tflm against the applications measured

    def kernel(self, op: str) -> Optional[KernelCost]:
        return self.kernels.get(op)

    def kernel_bytes(self, ops: set[str]) -> tuple[int, int, list[str]]:
        """(flash, RAM) of the objects the kernels of `ops` need, each object once; and the
        operators the data has no kernel for."""
        missing = sorted(op for op in ops if op not in self.kernels)
        objs = {o for op in ops if op in self.kernels for o in self.kernels[op].objects}
        return (sum(self.objects[o][0] for o in objs), sum(self.objects[o][1] for o in objs), missing)


@dataclass(frozen=True)
class FlavourBuilds:
    """The TFLM builds of one kernel flavour: their provenance and one CoreCosts per core."""
    flavour: str
    sources: dict
    compiler: str
    date: str
    cores: dict[str, CoreCosts]

    @property
    def provenance(self) -> str:
        commits = ", ".join(f"{k} {v[:8]}" for k, v in self.sources.items())
        return (f"real TFLM builds ({TFLM_BUILDS.get(self.flavour, self.flavour)}; {commits}; "
                f"{self.compiler}), measured {self.date}")

    def core(self, core: str) -> CoreCosts:
        costs = self.cores.get(core)
        if costs is None:
            raise RuntimeDataError(f"--runtime tflm: no TFLM {self.flavour} build was measured on {core} "
                                   f"({DATA_NAME} has {', '.join(sorted(self.cores))})")
        return costs


@dataclass(frozen=True)
class TflmData:
    """The measurement file: one FlavourBuilds per kernel flavour measured, and the applications."""
    measured_with: str
    flavours: dict[str, FlavourBuilds]
    models: list[dict] = field(default_factory=list)   # each names its "flavour"

    def flavour(self, flavour: str) -> FlavourBuilds:
        builds = self.flavours.get(flavour)
        if builds is None:
            raise InputError(f"--runtime tflm with --kernels {flavour}: no TFLM build of that flavour was "
                             f"measured ({DATA_NAME} has {', '.join(sorted(self.flavours))})")
        return builds


def _core_costs(path: Path, where: str, core: str, c: dict) -> CoreCosts:
    objects = {name: (int(o["flash"]), int(o["ram"])) for name, o in c["objects"].items()}
    kernels = {}
    for op, k in c["kernels"].items():
        missing = [o for o in k["objects"] if o not in objects]
        if missing:
            raise RuntimeDataError(f"{path.name}: {where}.kernels.{op} needs objects "
                                   f"{missing} that {where}.objects does not list")
        kernels[op] = KernelCost(op, int(k["glue_cycles_per_node"]), int(k["glue_instructions_per_node"]),
                                 int(k["nodes"]), tuple(k["objects"]), bool(k.get("calls_library", True)))
    it = c["interpreter"]
    return CoreCosts(core, int(it["per_operator_cycles"]), int(it["per_operator_instructions"]),
                     int(it["invoke_cycles"]), int(it["invoke_instructions"]), int(it["frames_stack_bytes"]),
                     int(c["framework"]["flash"]), int(c["framework"]["ram"]), kernels, objects,
                     c.get("validation"))


def load_tflm_data(path: Optional[Path] = None) -> TflmData:
    path = path or data_file()
    try:
        raw = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise RuntimeDataError(f"cannot read the TFLM measurements {path}: {e}") from None
    try:
        flavours = {}
        for flavour, f in raw["flavours"].items():
            if flavour not in TFLM_BUILDS:
                raise RuntimeDataError(f"{path.name}: flavours.{flavour}: not a kernel flavour micro_rt "
                                       f"prices ({', '.join(TFLM_BUILDS)})")
            cores = {core: _core_costs(path, f"flavours.{flavour}.cores.{core}", core, c)
                     for core, c in f["cores"].items()}
            flavours[flavour] = FlavourBuilds(flavour, dict(f["sources"]), f["compiler"], f["date"], cores)
        models = list(raw.get("models", []))
        for m in models:
            if m["flavour"] not in flavours:
                raise RuntimeDataError(f"{path.name}: the application of {m['model']} on {m['core']} names "
                                       f"flavour {m['flavour']!r}, which flavours does not hold")
        return TflmData(raw["measured_with"], flavours, models)
    except (KeyError, TypeError, ValueError) as e:
        raise RuntimeDataError(f"{path.name}: malformed TFLM measurements ({type(e).__name__}: {e})") from None


def tflm_pricing(runtime: str, target: str, kernels: str) -> Optional["TflmPricing"]:
    """The pricing an answer asked for with --runtime: None for micro_rt's own runtime; TFLM's
    measured costs on `target` (a Cortex-M core) with the flavour `kernels`."""
    if Runtime(runtime) is not Runtime.TFLM:
        return None
    from .targets import get_target
    if get_target(target).is_host:
        raise InputError(f"--runtime tflm prices a Cortex-M deployment; --target {target} is the host")
    return TflmPricing(target, kernels)


class TflmPricing:
    """Turns micro_rt's measured answers into a TFLM deployment's, on one core."""

    def __init__(self, core: str, kernels: str = "cmsis-nn", data: Optional[TflmData] = None):
        self.data = data or load_tflm_data()
        self.builds = self.data.flavour(kernels)
        self.costs = self.builds.core(core)

    @property
    def flavour(self) -> str:
        return self.builds.flavour

    @cached_property
    def note(self) -> str:
        c = self.costs
        v = c.validation
        checked = (f"; on the {v['applications']} applications they were measured on, this pricing came "
                   f"{v['min_error']:+.1%} to {v['max_error']:+.1%} from their own cycles (mean |error| "
                   f"{v['mean_abs_error']:.1%}; micro_rt's {self.flavour} kernels against TFLM's)" if v else
                   "; not compared with the applications")
        glue = (" and each kernel's Eval glue" if any(k.calls_library for k in c.kernels.values()) else "")
        return (f"priced for TFLM ({self.flavour} kernels): micro_rt's kernels + TFLM's interpreter "
                f"({c.per_operator_cycles} cycles per operator, {c.invoke_cycles} per invoke){glue}, "
                f"from {self.builds.provenance} by {self.data.measured_with}{checked}")

    @cached_property
    def fit_note(self) -> str:
        return (f"priced for TFLM: TFLM's code and static data per object of its framework and kernels, "
                f"the stack of micro_rt's kernels + TFLM's frames above them, from {self.builds.provenance}; "
                "start-up code and the C library are the application's and not counted")

    def profile(self, report: dict) -> dict:
        """A `profile_report` of micro_rt's run, re-priced: each operator gains its kernel's glue,
        micro_rt's runtime line becomes TFLM's interpreter. An operator whose glue was not
        measured keeps its kernel's cycles and is listed as not counted (incomplete)."""
        out = dict(report)
        out["runtime_priced"] = Runtime.TFLM.value
        out["runtime_note"] = self.note
        if report["total_cycles"] is None:
            return out
        c = self.costs
        ops, not_counted = [], list(report["ops_not_counted"])
        runs = 0
        for op in report["ops"]:
            op = dict(op)
            if op["on_mcu"]:
                kernel = c.kernel(op["op"])
                n = op.get("runs", 1)
                runs += n
                if kernel is None:
                    not_counted.append({**({"subgraph": op["subgraph"]} if op.get("subgraph") else {}),
                                        "index": op["index"], "op": op["op"],
                                        "reason": f"TFLM's kernel glue for {op['op']} was not measured on "
                                                  f"{c.core} (only its micro_rt kernel is counted)"})
                else:
                    op["kernel_cycles"], op["tflm_glue_cycles"] = op["cycles"], kernel.glue_cycles * n
                    op["cycles"] += kernel.glue_cycles * n
                    op["instructions"] += kernel.glue_instructions * n
                    if op.get("macs_per_cycle") is not None and op["cycles"]:
                        op["macs_per_cycle"] = round(op["macs"] / op["cycles"], 4)
            ops.append(op)
        interpreter = {"instructions": c.invoke_instructions + c.per_operator_instructions * runs,
                       "cycles": c.invoke_cycles + c.per_operator_cycles * runs,
                       "frame_bytes": c.frames_stack_bytes, "name": "TFLM interpreter"}
        own = sorted({op["op"] for op in ops if op["on_mcu"]
                      and (k := c.kernel(op["op"])) is not None and not k.calls_library})
        if own:
            out["runtime_note"] += (f"; {', '.join(own)}: TFLM's kernel is its own code (no library call), "
                                    "priced as micro_rt's kernel")
        out.update(ops=ops, ops_not_counted=not_counted, complete=not not_counted, runtime=interpreter,
                   runtime_not_measured=None)
        out["total_cycles"] = sum(o["cycles"] for o in ops) + interpreter["cycles"]
        out["total_instructions"] = sum(o["instructions"] for o in ops) + interpreter["instructions"]
        out["total_ms"] = out["total_cycles"] / report["clock_hz"] * 1e3
        return out

    # ---- fit: TFLM's image and RAM in place of micro_rt's
    def not_accounted(self, ops: set[str]) -> list[str]:
        """What a TFLM fit of a model with these operators cannot count."""
        _, _, missing = self.costs.kernel_bytes(ops)
        return [f"op {op}: TFLM's kernel code for it was not measured on {self.costs.core} "
                f"({DATA_NAME}), so its code and static data are not counted" for op in missing]

    def ram_parts(self, arena: tuple[str, int, str], measured, ops: set[str]) -> list[tuple[str, int, str]]:
        """arena: micro_rt's plan of TFLM's arena (the part as fit shows it); measured: the
        KernelMeasurement of micro_rt's kernels (their deepest stack), or None."""
        c = self.costs
        _, kernel_ram, _ = c.kernel_bytes(ops)
        parts = [arena]
        if measured is not None:
            parts.append(("stack", measured.kernel_stack_bytes + c.frames_stack_bytes,
                          f"micro_rt's deepest kernel {measured.kernel_stack_bytes} + TFLM's frames above its "
                          f"kernels {c.frames_stack_bytes} (measured on real TFLM)"))
        parts.append(("static data", c.framework_ram + kernel_ram,
                      f"TFLM's .data and .bss: framework {c.framework_ram} + kernels {kernel_ram}"))
        return parts

    def flash_parts(self, model_file_bytes: int, ops: set[str]) -> list[tuple[str, int, str]]:
        c = self.costs
        kernel_flash, _, _ = c.kernel_bytes(ops)
        return [("model", model_file_bytes, "the .tflite file (TFLM reads the flatbuffer in place)"),
                ("TFLM framework", c.framework_flash, "interpreter, allocator, flatbuffer reader: code, "
                                                      "constants and .data initial values"),
                ("TFLM kernels", kernel_flash, f"the objects of {len(ops)} operator kernels ({self.flavour} "
                                               "flavour) and the library functions they call, each once")]
