"""SVDF against the tflite-micro oracle: bit-exact outputs and activation state over a
sequence of invokes (the state is a variable tensor that carries over), reset() on both
sides, int8 input with int16 or int8 time weights / state, float32 with every fused
activation, rank > 1, batch > 1; arena head/tail equal to TFLM's; the keyword_scrambled
models end to end (every tensor, including each SVDF's state) when ../shared/models exists.
"""
from __future__ import annotations

import numpy as np
import pytest

from conftest import shared_model
from devtools.op_models.svdf import svdf_model
from kernel_cases import assert_bits_equal, scratch_sizes
from micro_rt import Interpreter
from micro_rt.arena import align_up
from micro_rt.builder import ModelBuilder
from micro_rt.errors import KernelError
from micro_rt.inputs import random_inputs
from micro_rt.model import read_model

F32 = np.float32


def _inputs(it, rng, n):
    d = it.get_input_details(0)
    shape, dtype = tuple(d["shape"]), np.dtype(d["dtype"])
    for k in range(n):
        if dtype == np.int8:
            yield rng.integers(-128, 128, shape).astype(np.int8)
        else:
            yield (rng.standard_normal(shape) * (1 + k % 3)).astype(F32)


def run_sequence(oracle, data: bytes, invokes=12, seed=0, reset_at=(7,), inputs=None) -> int:
    """`invokes` invokes in a row on both sides (resetting both at `reset_at`); output and
    every variable tensor bit-equal after each. Returns the number of invokes compared."""
    ours, theirs = oracle.paired(data, preserve_all_tensors=True)
    variables = [t.index for t in ours.tensors if t.is_variable]
    rng = np.random.default_rng(seed)
    for k, x in enumerate(inputs if inputs is not None else _inputs(ours, rng, invokes)):
        if k in reset_at:
            ours.reset()
            theirs.reset()
        oracle.invoke_both(ours, theirs, [x])
        assert_bits_equal(ours.get_output(0), np.array(theirs.get_output(0)), f"invoke {k} output")
        for t in variables:
            assert_bits_equal(ours.get_tensor(t), np.array(theirs.GetTensor(t, 0)["tensor_data"]),
                              f"invoke {k} state tensor {t}")
    return invokes


# (batch, input_size, num_filters, rank, memory, activation)
INT_SHAPES = [(1, 96, 64, 1, 8, "RELU"), (2, 10, 12, 3, 4, "NONE"), (3, 7, 8, 2, 5, "RELU6"),
              (1, 5, 4, 4, 1, "NONE"), (4, 16, 6, 1, 10, "RELU_N1_TO_1"), (2, 33, 20, 5, 3, "RELU")]


@pytest.mark.parametrize("kind", ["int16", "int8"])
@pytest.mark.parametrize("shape", INT_SHAPES, ids=lambda s: "x".join(map(str, s[:5])) + "-" + s[5])
def test_integer_svdf_matches_oracle(oracle, kind, shape):
    batch, input_size, filters, rank, memory, act = shape
    for seed in range(3):
        data = svdf_model(batch, input_size, filters, rank, memory, kind, act, seed=seed)
        run_sequence(oracle, data, invokes=memory + 6, seed=seed, reset_at=(memory + 2,))


@pytest.mark.parametrize("state_zp", [-128, -37, 0, 55, 127])
def test_int8_state_zero_points(oracle, state_zp):
    """The state zero point: the fill at allocation and reset, the saturate-then-offset store
    (wrapping in the int8 state), the subtraction in the time dot products."""
    data = svdf_model(2, 12, 8, 2, 4, "int8", seed=200 + state_zp, state_zp=state_zp)
    run_sequence(oracle, data, invokes=10, seed=state_zp & 0xFF, reset_at=(5,))


def test_int16_state_nonzero_zero_point(oracle):
    data = svdf_model(2, 12, 8, 2, 4, "int16", seed=3, state_zp=300)
    run_sequence(oracle, data, invokes=8)


def test_int32_wraparound_of_time_sums(oracle):
    """Full-scale int16 time weights against a saturated state: the int32 time sums and unit
    sums overflow and wrap in TFLM's C; ours wrap the same. (int8 sums cannot overflow.)"""
    kind = "int16"
    data = svdf_model(2, 16, 8, 2, 6, kind, seed=21)
    b = ModelBuilder.from_model(read_model(data))
    op = b.operators[0]
    wt, st = b.tensors[op.inputs[2]], b.tensors[op.inputs[4]]
    hi = 32767
    sign = np.where(np.random.default_rng(0).random((8, 6)) < 0.9, 1, -1)
    b.buffers[wt.buffer] = (sign * hi).astype(np.int16).tobytes()
    st.scales = [float(np.float32(st.scales[0]) / np.float32(64))]     # saturate the state
    st.zero_points = [0]
    bias = b.tensors[op.inputs[3]]
    bias.scales = [float(np.float32(np.float32(st.scales[0]) * np.float32(wt.scales[0])))]
    data = b.build()
    it = Interpreter.from_bytes(data)
    assert it.nodes[0].user_data.wrap_time
    x = np.full((2, 16), 127, np.int8)
    it.set_input(x, 0)
    for _ in range(6):                  # fill the whole memory
        it.invoke()
    mem = it.get_tensor(op.inputs[4]).reshape(2, 8, 6).astype(np.int64)
    assert np.abs((mem * (sign * hi)).sum(axis=2)).max() >= 2 ** 31       # really overflows
    rng = np.random.default_rng(3)
    inputs = [x] * 7 + [rng.integers(-128, 128, (2, 16)).astype(np.int8) for _ in range(3)] + [-x - 1] * 7
    run_sequence(oracle, data, inputs=inputs, reset_at=(12,))


@pytest.mark.parametrize("activation", ["NONE", "RELU", "RELU6", "RELU_N1_TO_1", "TANH", "SIGN_BIT"])
@pytest.mark.parametrize("shape", [(1, 16, 8, 1, 4), (3, 9, 12, 3, 5), (2, 40, 10, 2, 7)],
                         ids=lambda s: "x".join(map(str, s)))
def test_float_svdf_matches_oracle(oracle, shape, activation):
    batch, input_size, filters, rank, memory = shape
    data = svdf_model(batch, input_size, filters, rank, memory, "float", activation, seed=sum(shape))
    run_sequence(oracle, data, invokes=memory + 5, seed=1, reset_at=(memory + 1,))


def test_many_seeded_inputs(oracle):
    """One long stream (60 invokes) through an int16 and an int8 model."""
    for kind in ("int16", "int8"):
        data = svdf_model(2, 24, 16, 2, 6, kind, seed=77)
        run_sequence(oracle, data, invokes=60, seed=5, reset_at=(20, 41))


@pytest.mark.parametrize("kind", ["int16", "int8", "float"])
def test_allocations_equal_oracle(oracle, kind):
    """OpDataSvdf and the scratch buffers (2 on the integer path, 1 for float) as TFLM."""
    data = svdf_model(3, 10, 12, 3, 4, kind, seed=4)
    it = Interpreter.from_bytes(data, target="host64", kernels="reference")
    assert scratch_sizes(it) == ([3 * 12 * 4] + ([3 * 4 * 4] if kind != "float" else []))
    plan = it.plan
    theirs = oracle.allocations(data, align_up(max(plan.required_bytes * 2, 64 * 1024)))
    assert (plan.head_bytes, plan.tail_bytes, plan.total_bytes) == \
        (theirs["head"], theirs["tail"], theirs["total"])


def test_bias_is_optional_on_our_side():
    """TFLM dereferences the missing bias (so the oracle cannot run this); micro_rt treats it
    as zeros: the same outputs as an all-zero bias."""
    with_zero, without = [], []
    for bias in (True, False):
        data = svdf_model(2, 6, 6, 2, 3, "float", seed=9, bias=bias)
        if bias:       # zero the bias buffer
            b = ModelBuilder.from_model(read_model(data))
            bias_t = b.tensors[b.operators[0].inputs[3]]
            b.buffers[bias_t.buffer] = bytes(len(b.buffers[bias_t.buffer]))
            data = b.build()
        it = Interpreter.from_bytes(data)
        rng = np.random.default_rng(0)
        for x in _inputs(it, rng, 5):
            it.set_input(x, 0)
            it.invoke()
            (with_zero if bias else without).append(it.get_output(0).copy())
    for a, b in zip(with_zero, without):
        np.testing.assert_array_equal(a, b)


def _oracle_rejects(oracle, data: bytes) -> bool:
    try:
        theirs = oracle.interpreter(data, 1 << 20)
        theirs.set_input(np.zeros(read_model(data).main.tensors[0].shape, np.int8), 0)
        theirs.invoke()
    except RuntimeError:
        return True
    return False


@pytest.mark.parametrize("case", ["rank-does-not-divide", "state-not-variable"])
def test_models_tflm_rejects_are_rejected(oracle, case):
    if case == "rank-does-not-divide":
        data = svdf_model(1, 8, 6, 4, 3, "int16", seed=1)
    else:
        data = svdf_model(1, 8, 6, 2, 3, "int16", seed=1, state_variable=False)
    assert _oracle_rejects(oracle, data)
    with pytest.raises(KernelError):
        Interpreter.from_bytes(data)


def test_mismatched_state_and_time_weight_types_rejected():
    """TFLM would read an int8 state as int16 (its Eval picks the type from weights_time):
    micro_rt refuses the combination in prepare."""
    data = svdf_model(1, 8, 6, 2, 3, "int8", seed=1, wt_type="INT16")
    with pytest.raises(KernelError, match="same type"):
        Interpreter.from_bytes(data)


@pytest.mark.parametrize("name", ["keyword_scrambled.tflite", "keyword_scrambled_8bit.tflite"])
def test_keyword_scrambled_end_to_end(oracle, name):
    """20 seeded invokes in a row (the SVDF states carry over), a reset on both sides
    halfway: the output and every non-constant tensor (the seven SVDF states included)
    equal the oracle's after each invoke."""
    path = shared_model(name)
    data = path.read_bytes()
    ours = Interpreter.from_bytes(data, preserve_all_tensors=True)
    theirs = oracle.interpreter(data, max(ours.arena_required_bytes() * 2, 1 << 16),
                                preserve_all_tensors=True)
    sg = read_model(data).main
    assert sum(op.op_name == "SVDF" for op in sg.operators) == 7
    for seed in range(20):
        if seed == 10:
            ours.reset()
            theirs.reset()
        for i, x in enumerate(random_inputs(ours, seed)):
            ours.set_input(x, i)
            theirs.set_input(x, i)
        ours.invoke()
        theirs.invoke()
        for t in ours.tensors:
            if t.is_constant:
                continue
            assert_bits_equal(ours.get_tensor(t.index),
                              np.array(theirs.GetTensor(t.index, 0)["tensor_data"]),
                              f"{name} seed {seed} tensor {t.index} ('{t.name}')")
