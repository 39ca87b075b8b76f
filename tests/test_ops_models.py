"""The converter-made models of issue 12 in models/ops/ (models/make_models_ops.py), each:

* host: micro_rt's kernels bit-exact with the tflite-micro oracle on 20 seeded input sets and
  three edge sets (every input at its type's minimum, maximum and zero point). The oracle's
  arena is 64 MiB, freshly mapped zero pages: SPACE_TO_BATCH_ND pads with a persistent byte
  nothing fills (0 in a fresh arena, anything in a reused heap block);
* arena: head, tail and total equal to the oracle's print_allocations, and micro_rt's
  minimum TFLM's true minimum (it allocates there and fails 16 bytes below);
* MCU: on the M0+ and the M4, every operator runs a C kernel (the profile is complete) and
  the outputs equal the host's, byte for byte, on seeded and edge inputs (a float32 NaN made
  from non-NaN values counts equal whatever its bits: its sign is the machine's default NaN).

An input set TFLM refuses when invoked (FLOOR_DIV by zero) must be refused by micro_rt too, on
the host and on the MCU; most sets must run.

Inputs that index into other tensors (GATHER positions, lookup ids, shape vectors) are drawn
from the range make_models_ops.py draws them from (MODELS: input index -> (lo, hi)): outside
it TFLM refuses the data or reads past a tensor. Each operator family appends its models.
"""
from __future__ import annotations

import numpy as np
import pytest

from conftest import PROJECT_MODELS, missing
from kernel_cases import space_to_batch_data_positions
from oracle_minimum import minimum_mismatches

Ranges = dict[int, tuple[int, int]]

MODELS: dict[str, Ranges] = {
    # data movement
    **{f"space_depth_{v}.tflite": {} for v in ("f32", "int8")},
    **{f"mirror_pad_{v}.tflite": {} for v in ("f32", "int8")},
    **{f"slicing_{v}.tflite": {} for v in ("f32", "int8", "int16x8", "int32", "int64", "bool")},
    **{f"broadcast_{v}.tflite": {} for v in ("f32", "int8", "int16x8", "bool")},
    **{f"broadcast_{v}.tflite": {1: (1, 1), 2: (1, 4)} for v in ("int32", "int64")},
    **{f"gather_{v}.tflite": {1: (0, 3), 2: (0, 4), 3: (0, 1), 4: (0, 7)} for v in ("f32", "int8")},
    **{f"embedding_hybrid{v}_dynamic_int8.tflite": {0: (0, 63)} for v in ("", "_per_row")},
    "fill_zeros_int8.tflite": {},
    # binary ops and comparisons (logical_bool with the unary and reduce families, below)
    **{f"binary_{v}.tflite": {} for v in ("f32", "int8", "int16x8", "int32")},
    **{f"compare_{v}.tflite": {} for v in ("f32", "int8", "int32", "int64", "bool")},
    # unary math (ZEROS_LIKE in fill_zeros; the second input of unary_int16x8 feeds RSQRT, and
    # int16 values below its zero point 0 are negative reals, which TFLM refuses; unary_f32 /
    # unary_int8 below, with the reduce family's LOG_SOFTMAX and L2_NORMALIZATION)
    **{f"fill_zeros_{v}.tflite": {} for v in ("f32", "int32", "int64")},
    "unary_int16x8.tflite": {1: (0, 32767)},
    # reduce family, ARG_MAX / ARG_MIN, CUMSUM
    **{f"reduce_{v}.tflite": {} for v in ("f32", "int8", "int16x8")},
    **{f"arg_min_max_{v}.tflite": {} for v in ("f32", "int8")},
    "cumsum_f32.tflite": {},
    # LOG_SOFTMAX and L2_NORMALIZATION beside the unary math family (input 1 feeds LOG / SQRT /
    # RSQRT: positive reals; int8's zero point is -128, so every value is one)
    "unary_int8.tflite": {},
    "unary_f32.tflite": {1: (1, 1000)},
    "logical_bool.tflite": {},                # LOGICAL_NOT (unary family) and REDUCE_ALL
    # transpose conv, resize, batch matmul
    **{f"transpose_conv_{v}.tflite": {} for v in ("f32", "int8", "int16x8")},
    **{f"resize_{v}.tflite": {} for v in ("f32", "int8", "int16x8")},
    **{f"batch_matmul_{v}.tflite": {} for v in ("f32", "int8", "int16x8")},
    # control flow and resource variables (also models/control_flow, tests/test_control_flow.py)
    **{f"call_once_var_{v}.tflite": {} for v in ("f32", "int8")},
}

SEEDS = range(20)
# float32 outputs of a model with a libm operator (cortexm.ops.TRANSCENDENTAL_F32_OPS: newlib's
# expf / logf / sinf ... on the MCU, glibc's on the host) agree within this many ulp of the value
# or of 1.0 (vmcu_cases.assert_close_ulp_or_abs; the kernels' own tests hold tighter bounds)
LIBM_ULP = 4
FRESH_ARENA = 64 << 20          # above glibc's largest mmap threshold: always fresh zero pages
MCU_SEEDS = range(2)
CORES = ["cortex-m0plus", "cortex-m4"]


def _path(name: str):
    path = PROJECT_MODELS / "ops" / name
    if not path.exists():
        missing(f"{path} not built (models/make_models_ops.py)")
    return path


def _seeded(it, ranges: Ranges, seed: int) -> list[np.ndarray]:
    """random_inputs, with the index inputs drawn from their ranges."""
    from micro_rt.inputs import random_inputs
    inputs = random_inputs(it, seed)
    rng = np.random.default_rng(1000 + seed)
    for i, (lo, hi) in ranges.items():
        inputs[i] = rng.integers(lo, hi + 1, size=inputs[i].shape).astype(inputs[i].dtype)
    return inputs


def _edges(it, ranges: Ranges) -> list[list[np.ndarray]]:
    """Every input at its minimum, at its maximum, at its zero point (index inputs: the ends
    of their range)."""
    sets = []
    for which in ("min", "max", "zero"):
        inputs = []
        for i in range(it.num_inputs):
            d = it.get_input_details(i)
            dt, shape = np.dtype(d["dtype"]), tuple(int(v) for v in d["shape"])
            zps = d["quantization_parameters"]["zero_points"]
            if i in ranges:
                lo, hi = ranges[i]
                value = {"min": lo, "max": hi, "zero": lo}[which]
            elif dt == np.bool_:
                value = which == "max"
            else:
                info = np.finfo(dt) if np.issubdtype(dt, np.floating) else np.iinfo(dt)
                value = {"min": info.min, "max": info.max, "zero": int(zps[0]) if len(zps) else 0}[which]
            inputs.append(np.full(shape, value, dtype=dt))
        sets.append(inputs)
    return sets


def _input_sets(it, ranges: Ranges, seeds) -> list[list[np.ndarray]]:
    return [_seeded(it, ranges, s) for s in seeds] + _edges(it, ranges)


def _invoke_or_refuse(invoke, refusal) -> bool:
    """invoke(); False when it raised `refusal` (the interpreter refused the inputs)."""
    try:
        invoke()
    except refusal:
        return False
    return True


@pytest.mark.parametrize("name", sorted(MODELS))
def test_host_bit_exact_with_oracle(name, oracle):
    from micro_rt import Interpreter
    from micro_rt.errors import KernelError, OracleError
    data = _path(name).read_bytes()
    ours = Interpreter.from_bytes(data)
    theirs = oracle.interpreter(data, FRESH_ARENA)
    ran = 0
    for n, inputs in enumerate(_input_sets(ours, MODELS[name], SEEDS)):
        reached = space_to_batch_data_positions(ours, inputs)
        for i, x in enumerate(inputs):
            ours.set_input(x, i)
        ran_ours = _invoke_or_refuse(ours.invoke, KernelError)
        ran_theirs = _invoke_or_refuse(lambda: oracle.invoke(theirs, inputs), OracleError)
        assert ran_ours == ran_theirs, f"{name} input set {n}: micro_rt ran {ran_ours}, tflite-micro {ran_theirs}"
        if not ran_ours:
            continue
        ran += 1
        for k in range(ours.num_outputs):
            a, b = ours.get_output(k), np.array(theirs.get_output(k))
            if reached[k] is not None and b.shape == a.shape:
                a, b = a[reached[k]], b[reached[k]]
            assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes(), \
                f"{name} input set {n} output {k}: differs from tflite-micro in {int(np.sum(a != b))} elements"
    assert ran >= len(SEEDS), f"{name}: only {ran} input sets ran"


@pytest.mark.parametrize("name", sorted(MODELS))
def test_arena_equals_oracle(name, oracle):
    from micro_rt import Interpreter
    from micro_rt.arena import align_up
    data = _path(name).read_bytes()
    plan = Interpreter.from_bytes(data, target="host64", kernels="reference", plan_only=True).plan
    theirs = oracle.allocations(data, align_up(max(plan.required_bytes * 2, 64 * 1024)))
    assert (plan.head_bytes, plan.tail_bytes, plan.total_bytes) == \
        (theirs["head"], theirs["tail"], theirs["total"]), f"{name}: ours vs oracle"


def _minimum_mismatches(names) -> list[str]:
    from micro_rt import Interpreter
    cases = []
    for name in names:
        data = _path(name).read_bytes()
        it = Interpreter.from_bytes(data, target="host64", plan_only=True)
        assert not it.unresolved, it.unresolved
        cases.append((name, data, it.arena_required_bytes()))
    return minimum_mismatches(cases)


def test_minimum_is_tflite_micros(oracle):
    """Including the embedding models: EMBEDDING_LOOKUP allocates its op data in Prepare after
    its temporary tensors, over the unread top of the table's quantization (its
    registration's persistent_after_temps)."""
    assert _minimum_mismatches(sorted(MODELS)) == []


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("core", CORES)
@pytest.mark.parametrize("name", sorted(MODELS))
def test_mcu_equals_host_with_complete_profile(name, core):
    from micro_rt import Interpreter
    from micro_rt.errors import KernelError
    from micro_rt.profile import profile_report
    from micro_rt.cortexm.ops import TRANSCENDENTAL_F32_OPS
    from vmcu_cases import assert_close_ulp_or_abs, assert_same_any_nan
    data = _path(name).read_bytes()
    host = Interpreter.from_bytes(data, target=core)
    libm = any(op.op_name in TRANSCENDENTAL_F32_OPS for op in host.model.main.operators)
    emu = Interpreter.from_bytes(data, target=core, kernels="cmsis-nn", emulate=True)
    try:
        for n, inputs in enumerate(_input_sets(host, MODELS[name], MCU_SEEDS)):
            for i, x in enumerate(inputs):
                host.set_input(x, i)
                emu.set_input(x, i)
            ran = _invoke_or_refuse(host.invoke, KernelError)
            assert _invoke_or_refuse(emu.invoke, KernelError) == ran, f"{name} on {core}, input set {n}"
            if not ran:
                continue
            report = profile_report(emu, emu.last_run, 100_000_000, 0.0)
            assert report["complete"], f"{name} on {core}: not counted {report['ops_not_counted']}"
            assert report["total_cycles"] > 0
            for k in range(host.num_outputs):
                h, m, what = host.get_output(k), emu.get_output(k), f"{name} on {core}, input set {n}, output {k}"
                if libm and h.dtype == np.float32:
                    assert_close_ulp_or_abs([h], [m], what, LIBM_ULP)
                else:
                    assert_same_any_nan([h], [m], what)
    finally:
        emu.close()


@pytest.mark.parametrize("name", [n for n in sorted(MODELS) if n.startswith(("gather_", "embedding_"))])
def test_random_inputs_index_inside_the_tables(name):
    """`run`, `fit`, `profile` and `export` feed seeded random inputs: an input that indexes a
    table (GATHER / GATHER_ND positions, EMBEDDING_LOOKUP ids) is drawn inside it, so the
    invoke runs instead of being refused as TFLM would refuse it."""
    from micro_rt import Interpreter
    from micro_rt.inputs import random_inputs
    it = Interpreter.from_bytes(_path(name).read_bytes(), target="cortex-m4")
    for seed in range(8):
        for distribution in ("uniform", "normal"):
            inputs = random_inputs(it, seed, distribution)
            for position, (lo, hi) in MODELS[name].items():
                assert lo <= inputs[position].min() and inputs[position].max() <= hi, (seed, distribution, position)
            for i, x in enumerate(inputs):
                it.set_input(x, i)
            it.invoke()
