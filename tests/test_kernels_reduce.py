"""The reduce family against the tflite-micro oracle. MEAN bit-exact on single-op models
(ModelBuilder) over axes, keep_dims and quantizations, and the scratch buffers the kernel asks
for. SUM, REDUCE_MAX, REDUCE_MIN, REDUCE_ALL, int16 MEAN, ARG_MAX, ARG_MIN and CUMSUM bit-exact
against the tflite-micro oracle (single-op models made with ModelBuilder: 20 seeded inputs and
the edge values, axes, keep_dims, quantizations), their arena (head, tail, the true minimum)
against TFLM's, and the refusals TFLM makes.
"""
from __future__ import annotations

import numpy as np
import pytest

from kernel_cases import (assert_arena_matches_oracle, assert_layer_op_case_matches_oracle,
                          assert_seeds_and_edges_match_oracle, f32, i32, kernel_persistent, layer_op_params,
                          named_case_params, q16, q8, scratch_sizes, single_op)
from micro_rt import Interpreter
from micro_rt.errors import KernelError
from micro_rt.kernels.reduce import OpDataReduce, reduce_plan, reference_mean_or_sum_int


def mean_model(rng, dtype="int8", in_shape=(1, 5, 6, 4), axis=(1, 2), keep_dims=True,
               same_quant=False):
    ax = [a + len(in_shape) if a < 0 else a for a in axis]
    out_shape = tuple(1 if i in ax else d for i, d in enumerate(in_shape)) if keep_dims else \
        tuple(d for i, d in enumerate(in_shape) if i not in ax)
    if dtype == "float32":
        x, y = f32(in_shape), f32(out_shape)
    else:
        qi = (float(rng.uniform(0.01, 0.1)), int(rng.integers(-20, 20)))
        qo = qi if same_quant else (float(rng.uniform(0.01, 0.1)), int(rng.integers(-20, 20)))
        x, y = q8(in_shape, *qi), q8(out_shape, *qo)
    return single_op("MEAN", [x, i32((len(axis),), data=np.array(axis))], y, {"keep_dims": keep_dims})


@pytest.mark.parametrize("case", layer_op_params({"mean"}))
def test_single_op_matches_tflm(case, oracle):
    assert_layer_op_case_matches_oracle(oracle, case, {"mean": mean_model})


@pytest.mark.parametrize("target", ["host64", "cortex-m4"])
def test_persistent_and_scratch_requests(target):
    """MEAN asks for three scratch buffers (int8, 4-d input reduced over two axes) in TFLM's
    order (PrepareMeanOrSumHelper: the int32 sums, the input iterator, the resolved axes) and
    no persistent bytes beyond its OpData."""
    it = Interpreter.from_bytes(mean_model(np.random.default_rng(0)), target=target)
    assert kernel_persistent(it) == (1, it.target.sizeof("OpDataReduce"))
    assert scratch_sizes(it) == [16, 16, 8]


BOOL = "BOOL"


def _out_shape(shape, axes, keep_dims):
    axes = {a % len(shape) for a in axes}
    if keep_dims:
        return tuple(1 if d in axes else s for d, s in enumerate(shape))
    return tuple(s for d, s in enumerate(shape) if d not in axes)


def reduce_model(op: str, dtype: str, shape=(2, 5, 6, 3), axes=(1, 2), keep_dims=True, rng=None,
                 same_quant=None) -> bytes:
    """A one-operator reduce model; quantized types get random scales and zero points (the
    same for input and output where TFLM requires it: REDUCE_MAX / MIN)."""
    rng = rng or np.random.default_rng(len(shape) + len(axes))
    out_shape = _out_shape(shape, axes, keep_dims)
    same = op in ("REDUCE_MAX", "REDUCE_MIN") if same_quant is None else same_quant
    if dtype == "float32":
        x, y = f32(shape), f32(out_shape)
    elif dtype == "bool":
        x, y = dict(shape=shape, type=BOOL), dict(shape=out_shape, type=BOOL)
    else:
        make, zp_range = (q8, 40) if dtype == "int8" else (q16, 0)
        qi = (float(np.float32(rng.uniform(0.01, 0.1))), int(rng.integers(-zp_range, zp_range + 1)))
        count = int(np.prod([shape[a] for a in {a % len(shape) for a in axes}]))
        grow = 1.0 if op == "MEAN" else float(np.sqrt(count))
        qo = qi if same else (float(np.float32(qi[0] * grow * rng.uniform(0.5, 2))),
                              int(rng.integers(-zp_range, zp_range + 1)))
        x, y = make(shape, *qi), make(out_shape, *qo)
    axis = i32((len(axes),), data=np.array(axes)) if len(axes) != 1 or rng.integers(2) else \
        i32((), data=np.array(axes[0]))
    return single_op(op, [x, axis], y, {"keep_dims": keep_dims})


REDUCE_VARIANTS = [
    dict(), dict(keep_dims=False), dict(axes=(2, 1)), dict(axes=(-1,), keep_dims=False), dict(axes=(0, 3)),
    dict(axes=(1, 1, -3)), dict(shape=(7, 9), axes=(0,), keep_dims=False), dict(shape=(3, 4, 5), axes=(0, 1, 2)),
    dict(shape=(1, 1, 40, 4), axes=(2,)), dict(shape=(2, 3, 2, 2, 3), axes=(1, 3), keep_dims=False),
]
REDUCE_TYPES = {"SUM": ("float32", "int8", "int16"), "REDUCE_MAX": ("float32", "int8"),
                "REDUCE_MIN": ("float32", "int8"), "REDUCE_ALL": ("bool",), "MEAN": ("int16",)}


def _reduce_cases():
    cases = []
    for op, types in REDUCE_TYPES.items():
        for dtype in types:
            for k, variant in enumerate(REDUCE_VARIANTS):
                name = f"{op}-{dtype}-" + "-".join(f"{a}={v}" for a, v in variant.items())
                cases.append((name, reduce_model(op, dtype, rng=np.random.default_rng(k), **variant)))
    return cases


REDUCE_CASES = _reduce_cases()


@pytest.mark.parametrize("name,data", named_case_params(REDUCE_CASES))
def test_reduce_matches_tflm(name, data, oracle):
    assert_seeds_and_edges_match_oracle(oracle, data, what=name)


def test_sum_wraps_its_int32_sum_as_tflm():
    """int16 SUM over 70000 elements of 32767 leaves int32: TFLM's sum wraps; the fast path
    (exact int64 sums) agrees with the plain wrapping formula."""
    data = OpDataReduce(op="SUM", kind="int16", multiplier=1 << 30, shift=-14, input_zp=0, output_zp=0)
    x = np.full((2, 70000), 32767, np.int16)
    plan = reduce_plan(x.shape, [1])
    from micro_rt.kernels.reduce import _mean_or_sum_int
    assert np.array_equal(_mean_or_sum_int(data, x, plan), reference_mean_or_sum_int(data, x, plan))
    assert int(_mean_or_sum_int(data, x, plan)[0]) < 0          # 32767 * 70000 wrapped negative


def arg_model(op: str, dtype: str, shape=(3, 5, 4), axis=1, out_type="INT32") -> bytes:
    x = f32(shape) if dtype == "float32" else q8(shape, 0.05, -3)
    a = axis % len(shape)
    out_shape = tuple(s for d, s in enumerate(shape) if d != a)
    return single_op(op, [x, i32((1,), data=np.array([axis]))], dict(shape=out_shape, type=out_type),
                     {"output_type": out_type})


ARG_CASES = [(f"{op}-{dt}-{shape}-axis{axis}", arg_model(op, dt, shape, axis))
             for op in ("ARG_MAX", "ARG_MIN") for dt in ("float32", "int8")
             for shape, axis in (((3, 5, 4), 1), ((3, 5, 4), -1), ((3, 5, 4), 0), ((10,), 0), ((2, 1, 3, 7), 3))]


@pytest.mark.parametrize("name,data", named_case_params(ARG_CASES))
def test_arg_min_max_matches_tflm(name, data, oracle):
    assert_seeds_and_edges_match_oracle(oracle, data, what=name)


def test_arg_max_nan_and_ties_as_tflm(oracle):
    """NaN never wins and a NaN first element keeps index 0; ties keep the first index."""
    from kernel_cases import oracle_load_and_run
    from micro_rt.oracle import invoke_both
    x = np.array([[np.nan, 1, 2, 3, 3], [1, np.nan, 5, 5, 2], [-np.inf, np.nan, -np.inf, np.nan, -np.inf],
                  [0.0, -0.0, 0.0, -1, -1]], np.float32)
    for op in ("ARG_MAX", "ARG_MIN"):
        data = arg_model(op, "float32", (4, 5), 1)
        ours, theirs = Interpreter.from_bytes(data), oracle_load_and_run(oracle, data)
        invoke_both(ours, theirs, [x])
        assert np.array_equal(ours.get_output(0), theirs.get_output(0)), op


def cumsum_model(dtype: str, shape=(2, 6, 5), axis=1, exclusive=False, reverse=False, in_q=(0.05, 3),
                 out_q=(0.2, -4)) -> bytes:
    x, y = (f32(shape), f32(shape)) if dtype == "float32" else (q8(shape, *in_q), q8(shape, *out_q))
    return single_op("CUMSUM", [x, i32((), data=np.array(axis))], y, {"exclusive": exclusive, "reverse": reverse})


CUMSUM_CASES = [(f"CUMSUM-{dt}-axis{axis}-ex{int(ex)}-rev{int(rev)}", cumsum_model(dt, axis=axis, exclusive=ex,
                                                                                  reverse=rev))
                for dt in ("float32", "int8") for axis in (0, 1, -1) for ex in (False, True) for rev in (False, True)]
CUMSUM_CASES += [("CUMSUM-int8-long-wraps", cumsum_model("int8", (1, 40, 2), 1, in_q=(0.1, -100), out_q=(0.5, 0))),
                 ("CUMSUM-int8-1d", cumsum_model("int8", (17,), 0, True, False, (0.02, 0), (0.03, 5))),
                 ("CUMSUM-float32-1d", cumsum_model("float32", (33,), 0, False, True))]


@pytest.mark.parametrize("name,data", named_case_params(CUMSUM_CASES))
def test_cumsum_matches_tflm(name, data, oracle):
    assert_seeds_and_edges_match_oracle(oracle, data, what=name)


# --------------------------------------------------------------------------- arena

ARENA_CASES = REDUCE_CASES[::7] + ARG_CASES[::3] + CUMSUM_CASES[::5]


def test_arena_is_tflms(oracle):
    """Head, tail and total as TFLM prints them, and its true minimum."""
    assert_arena_matches_oracle(oracle, dict(ARENA_CASES))


@pytest.mark.parametrize("target", ["host64", "cortex-m4"])
def test_requests_in_tflms_order(target):
    """SUM int8 asks for the int32 sums, then the iterator and the axes; REDUCE_MAX only the
    two index buffers; CUMSUM int8 its OpData from prepare (float32 nothing); ARG_MAX nothing."""
    sum8 = Interpreter.from_bytes(reduce_model("SUM", "int8", (2, 5, 6, 3), (1, 2), True), target=target)
    assert scratch_sizes(sum8) == [4 * 6, 4 * 4, 4 * 2]
    assert kernel_persistent(sum8) == (1, sum8.target.sizeof("OpDataReduce"))
    rmax = Interpreter.from_bytes(reduce_model("REDUCE_MAX", "float32", (7, 9), (0,), False), target=target)
    assert scratch_sizes(rmax) == [8, 4]
    c8, cf = (Interpreter.from_bytes(cumsum_model(dt), target=target) for dt in ("int8", "float32"))
    assert kernel_persistent(c8) == (1, c8.target.sizeof("OpDataCumsum")) and kernel_persistent(cf) == (0, 0)
    arg = Interpreter.from_bytes(ARG_CASES[0][1], target=target)
    assert kernel_persistent(arg) == (0, 0) and scratch_sizes(arg) == []


# --------------------------------------------------------------------------- refusals

@pytest.mark.parametrize("make,words", [
    (lambda: reduce_model("REDUCE_MAX", "int8", same_quant=False), "the input's scale and zero point"),
    (lambda: reduce_model("REDUCE_MAX", "int16"), "Only float32 and int8 types are supported."),
    (lambda: reduce_model("SUM", "bool"), "Only float32, int8, and int16 types are supported."),
    (lambda: reduce_model("REDUCE_ALL", "float32"), "(FLOAT32 != BOOL)"),
    (lambda: reduce_model("SUM", "float32", axes=(4,)), "axis 4 out of range"),
    (lambda: arg_model("ARG_MAX", "float32", out_type="INT64"), "Only int32_t are supported currently, got INT64."),
    (lambda: arg_model("ARG_MIN", "float32", axis=3), "axis 3 out of range"),
    (lambda: cumsum_model("float32", axis=3), "CUMSUM Invalid axis: 3"),
])
def test_refusals_name_the_problem(make, words):
    with pytest.raises(KernelError) as e:
        Interpreter.from_bytes(make())
    assert words in str(e.value)


def test_converter_int64_arg_max_refused_as_tflm(oracle):
    """tf.argmax's default int64 output (models/ops/refuse_arg_max_int64_f32.tflite): TFLM refuses
    it at invoke, micro_rt when it loads the model, with TFLM's reason."""
    from conftest import PROJECT_MODELS
    from kernel_cases import oracle_load_and_run
    data = (PROJECT_MODELS / "ops" / "refuse_arg_max_int64_f32.tflite").read_bytes()
    with pytest.raises(KernelError, match=r"op 0 ARG_MAX: .*Only int32_t are supported currently, got INT64\."):
        Interpreter.from_bytes(data)
    with pytest.raises(RuntimeError):
        oracle_load_and_run(oracle, data)
