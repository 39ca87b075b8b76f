"""What the kernel tests (tests/test_kernels_*.py) share.

* `single_op`: a one-operator model built with `micro_rt.builder.ModelBuilder` from tensor
  specs (`q8`, `q16`, `f32`, `i32`; a list of scales makes a per-channel tensor), from
  devtools/op_models/single_op.py;
* `assert_single_op_matches_oracle`: run it through `micro_rt.Interpreter` and the
  tflite-micro oracle on the same seeded inputs, outputs equal bit for bit;
* `assert_ops_match_oracle`: a real model with every tensor preserved on both sides, each
  operator's output tensor compared (the pattern of `micro_rt.oracle.first_differing_op`);
* `layer_op_cases`: the numbered option combinations of the layer operators' single-op tests;
* `kernel_persistent`: the persistent bytes the kernels asked for, read from the arena.
"""
from __future__ import annotations

from collections import Counter
from typing import Optional, Sequence

import math

import numpy as np
import pytest

from devtools.op_models.single_op import single_op as single_op  # shared with the benchmarks
from micro_rt import Interpreter
from micro_rt.builder import ModelBuilder
from micro_rt.errors import KernelError, UnsupportedOpError
from micro_rt.model import read_model
from micro_rt.oracle import invoke_both

# The oracle is the tflite-micro pip package, a reference-kernel build: micro_rt is compared with
# it on the same kernels (the Interpreter's default on the default cortex-m4 target is cmsis-nn).
ORACLE_KERNELS = "reference"

# --------------------------------------------------------------------------- tensor specs

def q8(shape, scale, zp, **kw) -> dict:
    return dict(shape=shape, type="INT8", scale=scale, zp=zp, **kw)


def q16(shape, scale, zp=0, **kw) -> dict:
    return dict(shape=shape, type="INT16", scale=scale, zp=zp, **kw)


def f32(shape, **kw) -> dict:
    return dict(shape=shape, type="FLOAT32", **kw)


def i32(shape, **kw) -> dict:
    return dict(shape=shape, type="INT32", **kw)


def random_scale(rng, lo: float = 1e-3, hi: float = 0.5) -> float:
    """A float32-exact quantization scale, log-uniform in [lo, hi]."""
    return float(np.float32(math.exp(rng.uniform(math.log(lo), math.log(hi)))))


def op_submodel(data: bytes, k: int) -> bytes:
    """Operator `k` of a model alone, its non-constant inputs made graph inputs (for models
    micro_rt cannot run whole: the oracle's tensors are fed to the one operator)."""
    model = read_model(data)
    b = ModelBuilder.from_model(model)
    op = b.operators[k]
    b.operators = [op]
    tensors = model.main.tensors
    b.inputs = [i for i in op.inputs if i >= 0 and not tensors[i].is_constant
                and not tensors[i].is_variable]
    b.outputs = list(op.outputs)
    return b.build()


# --------------------------------------------------------------------------- layer-op cases

def layer_op_cases(kinds: set) -> list[tuple[int, str, dict]]:
    """The single-op cases of CONV_2D ("conv"), DEPTHWISE_CONV_2D ("dw"), FULLY_CONNECTED ("fc"),
    the pools ("pool"), SOFTMAX ("softmax") and MEAN ("mean") whose kind is in `kinds`: (number,
    kind, builder keywords). The number, a case's place in the one list of all of them, seeds
    its model and inputs, so a case tests the same model whichever file runs it."""
    cases = []
    for dt in ("int8", "float32"):
        for pad in ("SAME", "VALID"):
            for stride, dil in (((1, 1), (1, 1)), ((2, 2), (1, 1)), ((2, 1), (1, 1)), ((1, 1), (2, 2)),
                                ((1, 2), (2, 1))):
                cases.append(("conv", dict(dtype=dt, padding=pad, stride=stride, dil=dil)))
                cases.append(("dw", dict(dtype=dt, padding=pad, stride=stride, dil=dil, depthwise=True)))
        for act in ("RELU", "RELU6", "RELU_N1_TO_1"):
            cases.append(("conv", dict(dtype=dt, act=act)))
            cases.append(("dw", dict(dtype=dt, act=act, depthwise=True)))
            cases.append(("fc", dict(dtype=dt, act=act)))
        cases.append(("conv", dict(dtype=dt, bias=False, k=(1, 1))))
        cases.append(("conv", dict(dtype=dt, k=(5, 2), in_shape=(2, 8, 7, 5))))
        cases.append(("conv", dict(dtype=dt, k=(3, 3), in_shape=(1, 6, 6, 4), oc=6)))
        cases.append(("dw", dict(dtype=dt, depthwise=True, mult=3, in_shape=(1, 7, 8, 2))))
        cases.append(("dw", dict(dtype=dt, depthwise=True, mult=2, stride=(2, 2), padding="VALID")))
        cases.append(("fc", dict(dtype=dt, bias=False)))
        cases.append(("fc", dict(dtype=dt, in_shape=(2, 3, 8), keep_num_dims=True)))
        cases.append(("fc", dict(dtype=dt, in_shape=(1, 1, 1, 64))))
        for kind in ("AVERAGE_POOL_2D", "MAX_POOL_2D"):
            for pad in ("SAME", "VALID"):
                cases.append(("pool", dict(kind=kind, dtype=dt, padding=pad)))
                cases.append(("pool", dict(kind=kind, dtype=dt, padding=pad, k=(2, 3), stride=(1, 2),
                                           act="RELU6")))
        cases.append(("softmax", dict(dtype=dt)))
        cases.append(("softmax", dict(dtype=dt, shape=(1, 1, 3, 30), beta=0.5)))
        cases.append(("mean", dict(dtype=dt)))
        cases.append(("mean", dict(dtype=dt, keep_dims=False)))
        cases.append(("mean", dict(dtype=dt, axis=(2, 1))))
        cases.append(("mean", dict(dtype=dt, axis=(-3, -2))))
        cases.append(("mean", dict(dtype=dt, axis=(3,), keep_dims=False)))
        cases.append(("mean", dict(dtype=dt, in_shape=(2, 3, 4), axis=(0, 2), keep_dims=True)))
    cases.append(("conv", dict(per_channel=False)))
    cases.append(("dw", dict(depthwise=True, mult=4, in_shape=(1, 9, 8, 1), k=(4, 3), stride=(2, 2))))
    cases.append(("dw", dict(depthwise=True, mult=2, in_shape=(1, 9, 8, 1), k=(3, 3), padding="VALID",
                             per_channel=False)))
    cases.append(("dw", dict(per_channel=False, depthwise=True)))
    cases.append(("fc", dict(per_channel=True)))
    cases.append(("fc", dict(per_channel=True, bias=False, in_shape=(3, 17), oc=9)))
    cases.append(("softmax", dict(out_dtype="int16")))
    cases.append(("softmax", dict(in_scale=1.0, shape=(3, 10))))
    cases.append(("softmax", dict(in_scale=0.004, shape=(3, 10), beta=2.0)))
    cases.append(("mean", dict(same_quant=True, keep_dims=False)))
    cases.append(("mean", dict(same_quant=True, in_shape=(1, 3, 3, 8), axis=(1,))))
    cases.append(("mean", dict(in_shape=(1, 7, 7, 16))))
    return [(number, kind, kw) for number, (kind, kw) in enumerate(cases) if kind in kinds]


def layer_op_params(kinds: set) -> list:
    """pytest params of `layer_op_cases(kinds)`, each named after its kind and keywords."""
    return [pytest.param(case, id=f"{case[1]}-{'-'.join(f'{a}={v}' for a, v in case[2].items())}")
            for case in layer_op_cases(kinds)]


def assert_layer_op_case_matches_oracle(oracle, case: tuple[int, str, dict], builders: dict) -> None:
    """The case's model (made by `builders[kind]` from a generator seeded with its number)
    bit-exact with the oracle on three seeded inputs."""
    number, kind, kw = case
    model = builders[kind](np.random.default_rng(1000 + number), **kw)
    assert_single_op_matches_oracle(oracle, model, trials=3, seed=number)


def named_case_params(cases: list) -> list:
    """pytest params of (name, model) cases, each named after its name."""
    return [pytest.param(name, data, id=name) for name, data in cases]


def assert_named_case_matches_oracle(oracle, name: str, data: bytes) -> None:
    """The model bit-exact with the oracle on four inputs seeded by the name's length; a
    model TFLM rejects must be rejected by micro_rt's prepare too."""
    assert_single_op_matches_oracle(oracle, data, trials=4, seed=len(name), may_reject=True)


# --------------------------------------------------------------------------- inputs

def random_input(dtype, shape, rng, first: bool = False) -> np.ndarray:
    """Seeded input; the first trial covers every int8 value (and small int32s)."""
    dtype = np.dtype(dtype)
    if dtype == np.int8:
        if first:
            return np.resize(np.arange(-128, 128), int(np.prod(shape))).reshape(shape).astype(np.int8)
        return rng.integers(-128, 128, size=shape).astype(np.int8)
    if dtype in (np.int16, np.uint8, np.uint32):
        info = np.iinfo(dtype)
        return rng.integers(int(info.min), int(info.max) + 1, size=shape, dtype=np.int64).astype(dtype)
    if dtype == np.int64:
        return rng.integers(-(1 << 40), 1 << 40, size=shape, dtype=np.int64)
    if dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if dtype == np.int32:
        if first:
            return rng.integers(-1000, 1000, size=shape).astype(np.int32)
        return rng.integers(-(1 << 31), 1 << 31, size=shape, dtype=np.int64).astype(np.int32)
    return (rng.standard_normal(size=shape) * 4).astype(np.float32)


def model_inputs(sg, rng, first: bool = False) -> list[np.ndarray]:
    """One seeded input per graph input of subgraph `sg` (`read_model(data).main`)."""
    return [random_input(sg.tensors[i].dtype, sg.tensors[i].shape, rng, first) for i in sg.inputs]


def edge_values(t) -> list:
    """The values at the edges of a graph input's type: its zero point (a quantized tensor's
    real 0), minimum and maximum; floats add -0, the smallest normal and subnormal, the
    infinities and NaN."""
    dtype = np.dtype(t.dtype)
    if dtype == np.bool_:
        return [False, True]
    if dtype.kind == "f":
        info = np.finfo(dtype)
        return [0.0, -0.0, 1.0, -2.5, float(info.max), float(info.min), float(info.tiny), 1e-45,
                float("inf"), float("-inf"), float("nan")]
    info = np.iinfo(dtype)
    zero_points = t.quantization.zero_points if t.quantization is not None else ()
    return list(dict.fromkeys([int(zero_points[0]) if len(zero_points) else 0, int(info.min), int(info.max)]))


def edge_input_sets(sg) -> list[list[np.ndarray]]:
    """Input sets of edge values (`edge_values`): every input filled alike with its k-th edge
    value (its last once it has no more); every input constant, in every combination of its
    edge values with the first edge value of the others; and one set in which each input cycles
    through its edge values (shifted per input, so the values meet in many pairs)."""
    tensors = [sg.tensors[i] for i in sg.inputs]
    values = [edge_values(t) for t in tensors]
    sets = [[np.full(t.shape, v[min(k, len(v) - 1)], t.dtype) for t, v in zip(tensors, values)]
            for k in range(max((len(v) for v in values), default=0))]
    for k, t in enumerate(tensors):
        for v in values[k]:
            sets.append([np.full(u.shape, v if j == k else values[j][0], u.dtype) for j, u in enumerate(tensors)])
    sets.append([np.resize(np.roll(np.asarray(values[j], u.dtype), j), int(np.prod(u.shape))).reshape(u.shape)
                 for j, u in enumerate(tensors)])
    return sets


def assert_matches_oracle_on(oracle, data: bytes, input_sets: Sequence[Sequence[np.ndarray]],
                             what: str = "", any_nan: bool = False) -> int:
    """Both interpreters on each input set: equal output bits, or both refusing when invoked
    (TFLM's refusal an OracleError, micro_rt's a KernelError). Returns the sets both ran.
    `any_nan`: a float32 NaN may differ in sign and payload (where NaNs meet in a sum, which one
    survives depends on the operand order the C compiler chose, which IEEE leaves open)."""
    from micro_rt.errors import OracleError
    ours = Interpreter.from_bytes(data, kernels=ORACLE_KERNELS)
    theirs = oracle.interpreter(data, max(1 << 16, 2 * ours.arena_required_bytes()))
    ran = 0
    for k, inputs in enumerate(input_sets):
        try:
            oracle.invoke(theirs, inputs)
            their_error = None
        except OracleError as e:
            their_error = e
        try:
            for i, x in enumerate(inputs):
                ours.set_input(x, i)
            ours.invoke()
            our_error = None
        except KernelError as e:
            our_error = e
        assert (our_error is None) == (their_error is None), \
            f"{what} input set {k}: TFLM {their_error or 'ran'}, micro_rt {our_error or 'ran'}"
        if our_error is None:
            ran += 1
            for j in range(ours.num_outputs):
                got, want = ours.get_output(j), np.asarray(theirs.get_output(j))
                if any_nan and got.dtype == np.float32 and want.size == got.size:
                    want = want.reshape(got.shape)
                    nan = np.isnan(want)
                    assert np.array_equal(nan, np.isnan(got)), f"{what} input set {k} output {j}: NaN positions"
                    got, want = got[~nan], want[~nan]
                assert_bits_equal(got, want, f"{what} input set {k} output {j}")
    return ran


def assert_seeds_and_edges_match_oracle(oracle, data: bytes, seeds: int = 20, seed: Optional[int] = None,
                                        what: str = "", any_nan: bool = False) -> int:
    """`seeds` seeded random input sets (the first covers every int8 value; generator seed
    `seed`, else the model's length) and the edge-value sets (`edge_input_sets`), bit-exact
    with the oracle or refused by both when invoked; at least `seeds` sets must run. Returns
    how many ran."""
    sg = read_model(data).main
    rng = np.random.default_rng(len(data) if seed is None else seed)
    sets = [model_inputs(sg, rng, first=k == 0) for k in range(seeds)] + edge_input_sets(sg)
    ran = assert_matches_oracle_on(oracle, data, sets, what, any_nan)
    assert ran >= seeds, f"{what}: only {ran} input sets ran"
    return ran


def assert_arena_matches_oracle(oracle, models: dict, minimum: bool = True) -> None:
    """For {name: model bytes}: head, tail and total (host64, reference kernels) as TFLM prints
    them, and with `minimum` TFLM's true minimum (it allocates in micro_rt's reported size and
    fails 16 bytes below)."""
    from micro_rt.arena import align_up
    from oracle_minimum import minimum_mismatches
    for name, data in models.items():
        it = Interpreter.from_bytes(data, target="host64", kernels="reference", plan_only=True)
        assert not it.unresolved, it.unresolved
        plan = it.plan
        theirs = oracle.allocations(data, align_up(max(plan.required_bytes * 2, 64 * 1024)))
        assert (plan.head_bytes, plan.tail_bytes, plan.total_bytes) == \
            (theirs["head"], theirs["tail"], theirs["total"]), f"{name}: ours vs oracle"
    if not minimum:
        return
    assert minimum_mismatches([(name, data, Interpreter.from_bytes(data, target="host64").arena_required_bytes())
                               for name, data in models.items()]) == []


# --------------------------------------------------------------------------- comparison

def assert_bits_equal(got: np.ndarray, want: np.ndarray, what: str) -> None:
    want = np.asarray(want)
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} vs oracle {want.dtype}"
    want = want.reshape(got.shape) if want.size == got.size else want
    assert got.shape == want.shape, f"{what}: shape {got.shape} vs oracle {want.shape}"
    if not np.array_equal(got.reshape(-1).view(np.uint8), want.reshape(-1).view(np.uint8)):
        bad = np.nonzero(got.ravel() != want.ravel())[0]
        raise AssertionError(f"{what}: {len(bad)} of {got.size} elements differ, e.g. at {bad[:5]}: "
                             f"oracle {want.ravel()[bad[:5]]}, micro_rt {got.ravel()[bad[:5]]}")


def oracle_load_and_run(oracle, data: bytes):
    """The oracle's interpreter after one invoke on zeros and a reset (variable tensors such
    as SVDF / LSTM state back to their start); TFLM's refusal raises RuntimeError."""
    theirs = oracle.interpreter(data, 1 << 20)
    sg = read_model(data).main
    for k, i in enumerate(sg.inputs):
        theirs.set_input(np.zeros(sg.tensors[i].shape, sg.tensors[i].dtype), k)
    theirs.invoke()
    theirs.reset()
    return theirs


def _oracle_accepts(oracle, data: bytes):
    """The oracle's interpreter, or None when TFLM rejects the model (at load or first invoke)."""
    try:
        return oracle_load_and_run(oracle, data)
    except RuntimeError:
        return None


def assert_single_op_matches_oracle(oracle, data: bytes, trials: int = 3, seed: int = 0,
                                    may_reject: bool = False) -> None:
    """Bit-exact outputs on `trials` seeded inputs. With `may_reject`, a model TFLM rejects
    must be rejected by our prepare too (a KernelError when the interpreter is built)."""
    theirs = _oracle_accepts(oracle, data)
    if theirs is None:
        assert may_reject, "the oracle rejected a model the test expects to run"
        with pytest.raises(KernelError):
            Interpreter.from_bytes(data, kernels=ORACLE_KERNELS)
        return
    ours = Interpreter.from_bytes(data, kernels=ORACLE_KERNELS)
    rng = np.random.default_rng(seed)
    for trial in range(trials):
        invoke_both(ours, theirs, model_inputs(ours.model.main, rng, first=trial == 0))
        for k in range(ours.num_outputs):
            assert_bits_equal(ours.get_output(k), theirs.get_output(k), f"trial {trial} output {k}")


def _without_offline_plan(data: bytes) -> bytes:
    """The model without OfflineMemoryAllocation metadata: an offline plan overlaps tensors,
    which cannot all be preserved (TFLM then fails to allocate); kernels do not care."""
    model = read_model(data)
    if model.metadata_bytes("OfflineMemoryAllocation") is None:
        return data
    b = ModelBuilder.from_model(model)
    b.metadata = [(name, buf) for name, buf in b.metadata if name != "OfflineMemoryAllocation"]
    return b.build()


def assert_ops_match_oracle(oracle, data: bytes, seeds: Sequence[int]) -> Counter:
    """Every operator's output tensor equal to the oracle's, both interpreters preserving all
    tensors; returns how many ops of each kind were compared (summed over seeds).

    A model with operators micro_rt has no kernel for is run whole by the oracle only; each
    operator micro_rt does support is then run alone (`op_submodel`) on the oracle's inputs.
    """
    data = _without_offline_plan(data)
    sg = read_model(data).main
    single: dict = {}
    try:
        ours = Interpreter.from_bytes(data, kernels=ORACLE_KERNELS, preserve_all_tensors=True)
        arena = max(ours.arena_required_bytes() * 2, 1 << 16)
    except UnsupportedOpError:
        ours, arena = None, max(len(data) * 10, 1 << 20)
        for op in sg.operators:
            try:
                single[op.index] = Interpreter.from_bytes(op_submodel(data, op.index), kernels=ORACLE_KERNELS)
            except UnsupportedOpError:
                pass
        assert single, "micro_rt supports none of the model's operators"
    theirs = oracle.interpreter(data, arena, preserve_all_tensors=True)
    checked: Counter = Counter()
    for seed in seeds:
        inputs = model_inputs(sg, np.random.default_rng(seed))
        for k, x in enumerate(inputs):
            theirs.set_input(x, k)
            if ours is not None:
                ours.set_input(x, k)
        theirs.invoke()
        if ours is not None:
            ours.invoke()
        for op in sg.operators:
            it = ours if ours is not None else single.get(op.index)
            if it is None:
                continue
            if it is not ours:
                for k, t in enumerate(it.model.main.inputs):
                    it.set_input(np.array(theirs.GetTensor(t, 0)["tensor_data"]).reshape(
                        it.tensors[t].shape), k)
                it.invoke()
            for t in op.outputs:
                assert_bits_equal(it.get_tensor(t), theirs.GetTensor(t, 0)["tensor_data"],
                                  f"seed {seed} op {op.index} {op.op_name} output tensor {t} "
                                  f"('{sg.tensors[t].name}')")
            checked[op.op_name] += 1
    return checked


# --------------------------------------------------------------------------- arena accounting

def kernel_persistent(it: Interpreter) -> tuple[int, int]:
    """(allocations, bytes requested) the kernels made through allocate_persistent: the arena's
    "Persistent buffer data" less the interpreter's two input/output pointer arrays."""
    use = it._allocator.arena.categories["Persistent buffer data"]
    sg = it.model.main
    return use.count - 2, use.requested - it.target.pointer_size * (len(sg.inputs) + len(sg.outputs))


def scratch_sizes(it: Interpreter) -> list[int]:
    return [request.nbytes for request in it._allocator.scratch_requests]


# --------------------------------------------------------------------------- edge inputs

def softmax_s16_wrap_edge_row(scale: float) -> np.ndarray:
    """An int16 SOFTMAX row (input scale `scale`, beta 1) whose sum of exps is 2^18 - 1: eight
    elements at the maximum and one whose exp makes up the rest. Its recentred mantissa is 32768,
    where CMSIS-NN's int16 cast wraps and TFLM's reference saturates."""
    from micro_rt.kernels.fixedpoint import multiply_by_quantized_multiplier
    from micro_rt.kernels.softmax import int16_softmax_luts, int16_softmax_multiplier
    exp_lut = int16_softmax_luts()[0].astype(np.int64)
    mult, shift = int16_softmax_multiplier(scale, 1.0)
    diffs = np.arange(-32767, 1, dtype=np.int64)
    v = np.clip(multiply_by_quantized_multiplier(diffs, mult, shift) + 32767, -32768, 32767)
    index, offset = 256 + (v >> 7), v & 0x7F
    exps = exp_lut[index] + (((exp_lut[index + 1] - exp_lut[index]) * offset + 64) >> 7)
    rest = (1 << 18) - 1 - 8 * int(exps[-1])
    diff = int(diffs[np.flatnonzero(exps == rest)[0]])
    return np.array([32767] * 8 + [32767 + diff], np.int16)


# --------------------------------------------------------------------------- undefined padding

def space_to_batch_data_positions(ours: Interpreter, inputs: Sequence[np.ndarray]) -> list:
    """Per graph output: None, or for an output SPACE_TO_BATCH_ND writes, the positions its data
    reaches. TFLM pads with a persistent value it never initialises (0 in fresh pages, anything
    in memory a long run reused), so the padding is not compared with the oracle. Found as the
    non-zeros of the output when every data input (float32, int8, int16) is all ones and the
    other inputs (block shapes, paddings) are as given; runs `ours` once."""
    sg = ours.model.main
    padded = {o for op in sg.operators if op.op_name == "SPACE_TO_BATCH_ND" for o in op.outputs}
    if not padded:
        return [None] * ours.num_outputs
    for i, x in enumerate(inputs):
        data = np.asarray(x).dtype in (np.float32, np.int8, np.int16)
        ours.set_input(np.ones_like(x) if data else x, i)
    ours.invoke()
    return [ours.get_output(k) != 0 if t in padded else None for k, t in enumerate(sg.outputs)]
