"""UNIDIRECTIONAL_SEQUENCE_LSTM (kernels/lstm.py) against the tflite-micro oracle: the shared LSTM
models over sequences of invokes that carry state (every tensor, states included, bit-exact,
float32 too; the DTLN golden data is checked in test_oracle_models), and single-op models made
with ModelBuilder for what those models do not cover (time-major, several batches, no cell
clip, other cell-state scales, large pre-activations)."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import SHARED_MODELS, shared_model, shared_models
from devtools.op_models.lstm import lstm_model
from micro_rt import Interpreter
from micro_rt.builder import ModelBuilder
from micro_rt.inputs import random_inputs

LSTM_MODELS = ["trained_lstm.tflite", "trained_lstm_int8.tflite", "micro_speech_lstm.tflite",
               "dtln_noise_suppression.tflite"]


def _run_both(data: bytes, oracle, seeds, reset_at=()):
    """Invoke micro_rt and the oracle on the same seeded inputs in sequence (state carried);
    return the first mismatch as a string, checking every op output and the LSTM states."""
    ours, theirs = oracle.paired(data, preserve_all_tensors=True)
    for seed in seeds:
        if seed in reset_at:
            ours.reset()
            theirs.reset()
        oracle.invoke_both(ours, theirs, random_inputs(ours, seed))
        for node in ours.nodes:
            watched = list(node.outputs)
            if node.op_name == "UNIDIRECTIONAL_SEQUENCE_LSTM":
                watched += [node.inputs[18], node.inputs[19]]
            for t in watched:
                a = ours.get_tensor(t)
                b = np.array(theirs.GetTensor(t, 0)["tensor_data"]).reshape(a.shape)
                if not np.array_equal(a, b):
                    return (f"seed {seed}: op {node.index} {node.op_name} tensor {t} differs in "
                            f"{np.count_nonzero(a != b)} of {a.size}")
    return None


@pytest.mark.parametrize("name", shared_models(LSTM_MODELS))
def test_shared_lstm_models_bit_exact_with_state(name, oracle):
    data = (SHARED_MODELS / name).read_bytes()
    # Eight invokes carrying state, a reset on both sides, then four more.
    assert _run_both(data, oracle, range(12), reset_at=(8,)) is None


def test_state_persists_and_reset_restores_zero_point():
    it = Interpreter.from_file(shared_model("micro_speech_lstm.tflite"), preserve_all_tensors=True)
    node = it.nodes[0]
    lstm_out = node.outputs[0]
    h = it.tensors[node.inputs[18]]
    assert (it.get_tensor(h.index) == h.zero_points[0]).all()      # TFLM fills int8 state with zp
    x = np.random.default_rng(1).integers(-128, 128, size=(1, 49, 257)).astype(np.int8)
    it.set_input(x, 0)
    it.invoke()
    first = it.get_tensor(lstm_out).copy()
    it.invoke()                                     # same input, carried state
    second = it.get_tensor(lstm_out).copy()
    it.reset()
    assert (it.get_tensor(h.index) == h.zero_points[0]).all()
    assert (it.get_tensor(node.inputs[19]) == 0).all()
    it.invoke()
    np.testing.assert_array_equal(it.get_tensor(lstm_out), first)
    assert not np.array_equal(first, second)


# --------------------------------------------------------------------------- single-op models
# (lstm_model: devtools/op_models/lstm.py)

CASES = [
    # kind, batch, steps, n_input, n_state, options
    ("float32", 1, 5, 6, 4, {}),
    ("float32", 3, 4, 5, 7, {}),
    ("float32", 2, 3, 4, 5, {"time_major": True}),
    ("float32", 2, 6, 3, 4, {"cell_clip": 0.0}),
    ("float32", 1, 8, 4, 3, {"cell_clip": 0.5}),
    ("float32", 2, 5, 4, 6, {"weight_std": 5.0}),          # sigmoid's cut-offs, tanh saturation
    ("int8", 1, 5, 6, 4, {}),
    ("int8", 3, 4, 5, 7, {}),
    ("int8", 2, 3, 9, 5, {"time_major": True}),
    ("int8", 2, 6, 3, 4, {"cell_clip": 0.0, "cell_scale_power": -12}),
    ("int8", 1, 8, 4, 6, {"cell_clip": 0.3, "cell_scale_power": -15}),
    ("int8", 2, 4, 6, 6, {"cell_scale_power": -8}),
]


@pytest.mark.parametrize("kind,batch,steps,n_input,n_state,options", CASES,
                         ids=[f"{c[0]}-b{c[1]}-t{c[2]}-{'-'.join(f'{k}={v}' for k, v in c[5].items()) or 'default'}"
                              for c in CASES])
def test_single_op_lstm_bit_exact(kind, batch, steps, n_input, n_state, options, oracle):
    data = lstm_model(kind, batch, steps, n_input, n_state, seed=batch * 31 + steps, **options)
    assert _run_both(data, oracle, range(6), reset_at=(4,)) is None


def test_allocations_match_oracle(oracle):
    for kind, batch, steps, n_input, n_state, options in CASES[:3] + CASES[6:9]:
        data = lstm_model(kind, batch, steps, n_input, n_state, **options)
        plan = Interpreter.from_bytes(data, target="host64").plan
        theirs = oracle.allocations(data, 1 << 16)
        assert (theirs["head"], theirs["tail"]) == (plan.head_bytes, plan.tail_bytes), (kind, options)


def test_unsupported_variants_are_refused():
    from micro_rt.errors import KernelError
    with pytest.raises(KernelError, match="peephole"):
        Interpreter.from_bytes(lstm_model("float32", 1, 2, 3, 4, peephole=True))


def test_generic_step_matches_folded_step():
    """The integer LSTM's generic step body (any requantization; taken when one could leave
    int32) gives what the folded one, checked against the oracle above, gives."""
    for seed in range(6):
        data = lstm_model("int8", 2, 5, 7, 6, seed=seed, cell_clip=[10.0, 0.0][seed % 2])
        outputs = []
        for folded in (True, False):
            it = Interpreter.from_bytes(data)
            bufs = it.nodes[0].user_data.bufs
            assert bufs["fast"]
            bufs["fast"] = folded
            rng = np.random.default_rng(seed)
            for _ in range(3):
                it.set_input(rng.integers(-128, 128, (2, 5, 7)).astype(np.int8), 0)
                it.invoke()
                outputs.append(it.get_output(0).copy())
        assert all(np.array_equal(a, b) for a, b in zip(outputs[:3], outputs[3:])), seed


@pytest.mark.parametrize("tensor, scale, what", [
    ("w5", 1e38, r"recurrent weights 'w5'.*left shift 1\d\d"),      # a gate FC multiplier of ~2^130
    ("h", 2.0 ** -70, r"into output state 'h'.*left shift \d\d"),    # the output gate x cell mul
])
def test_requantization_shift_past_the_integer_width_is_refused(tensor, scale, what):
    """A forged scale giving a gate multiplier of 2^31 or more: TFLM's MultiplyByQuantizedMultiplier
    would shift left past 32 bits, undefined in C++ (fuzzing found host and oracle apart on
    micro_speech_lstm with one weight scale set to 1e38). Refused like FULLY_CONNECTED's."""
    from micro_rt.errors import KernelError
    from micro_rt.model import read_model
    b = ModelBuilder.from_model(read_model(lstm_model("int8", 1, 3, 4, 5)))
    spec = next(t for t in b.tensors if t.name == tensor)
    spec.scales = [scale]
    with pytest.raises(KernelError, match=r"op 0 UNIDIRECTIONAL_SEQUENCE_LSTM: .*" + what +
                                          r".*undefined in C\+\+") as info:
        Interpreter.from_bytes(b.build())
    assert info.value.__cause__ is None


@pytest.mark.parametrize("power", [3, 66, -44, -100])
def test_cell_state_scale_whose_tanh_rescale_overflows_is_refused(power):
    """TFLM's tanh of the cell state rescales it by 3 << (12 + power) (or, for a negative
    shift, by 3 >> -(12 + power) with a rounding 1 << (shift - 1)): from power 3 an int16 input
    times that overflows int32, below power -43 the shifts pass 31 bits; both undefined in C++
    (fuzzing: a cell state scale of 1e20 overflowed the host's int64 too)."""
    from micro_rt.errors import KernelError
    with pytest.raises(KernelError, match=rf"op 0 UNIDIRECTIONAL_SEQUENCE_LSTM: cell state 'c' .* scale "
                                          rf"2\^{power}: .*undefined in C\+\+") as info:
        Interpreter.from_bytes(lstm_model("int8", 1, 3, 4, 5, cell_scale_power=power))
    assert info.value.__cause__ is None


@pytest.mark.parametrize("power", [2, -43])
def test_cell_state_scale_at_the_tanh_rescale_limits_runs(power, oracle):
    data = lstm_model("int8", 1, 3, 4, 5, cell_scale_power=power)
    assert _run_both(data, oracle, range(3)) is None


# 16x8->16: int16 input and hidden state, int8 weights, int64 biases (EvalLstm<int16_t, int8_t,
# int16_t, int64_t>); zero points the converter leaves at 0, and not.
INT16_CASES = [
    ("int16", 1, 5, 6, 4, {}),
    ("int16", 3, 4, 5, 7, {"time_major": True}),
    ("int16", 2, 6, 3, 4, {"cell_clip": 0.0, "cell_scale_power": -12}),
    ("int16", 2, 4, 9, 6, {"input_zp": 5, "hidden_zp": -7}),
    ("int16", 1, 8, 4, 6, {"cell_clip": 0.3, "cell_scale_power": -15}),
]


@pytest.mark.parametrize("kind,batch,steps,n_input,n_state,options", INT16_CASES,
                         ids=[f"b{c[1]}-t{c[2]}-{'-'.join(f'{k}={v}' for k, v in c[5].items()) or 'default'}"
                              for c in INT16_CASES])
def test_single_op_lstm_16x8_bit_exact(kind, batch, steps, n_input, n_state, options, oracle):
    for seed in range(4):
        data = lstm_model(kind, batch, steps, n_input, n_state, seed=seed * 7 + batch, **options)
        assert _run_both(data, oracle, range(5), reset_at=(3,)) is None


def test_lstm_16x8_edge_inputs(oracle):
    """All -32768, all 32767, alternating, zeros: gates and cell saturate; every tensor equal."""
    data = lstm_model("int16", 2, 4, 6, 5, seed=3, input_zp=0, hidden_zp=0)
    ours, theirs = oracle.paired(data, preserve_all_tensors=True)
    node = ours.nodes[0]
    shape = tuple(ours.get_input_details(0)["shape"])
    alternating = np.resize(np.array([-32768, 32767], np.int16), int(np.prod(shape))).reshape(shape)
    for x in (np.full(shape, -32768, np.int16), np.full(shape, 32767, np.int16), alternating,
              np.zeros(shape, np.int16)):
        oracle.invoke_both(ours, theirs, [x])
        for t in (node.outputs[0], node.inputs[18], node.inputs[19]):
            a = ours.get_tensor(t)
            assert np.array_equal(a, np.array(theirs.GetTensor(t, 0)["tensor_data"]).reshape(a.shape)), t


def test_allocations_16x8_match_oracle(oracle):
    for kind, batch, steps, n_input, n_state, options in INT16_CASES[:2]:
        data = lstm_model(kind, batch, steps, n_input, n_state, **options)
        plan = Interpreter.from_bytes(data, target="host64").plan
        theirs = oracle.allocations(data, 1 << 16)
        assert (theirs["head"], theirs["tail"]) == (plan.head_bytes, plan.tail_bytes), options


@pytest.mark.parametrize("kind", ["int8", "int16", "float32"])
def test_cmsis_nn_flavour_allocations(kind):
    """--kernels cmsis-nn allocates what TFLM's CMSIS-NN LSTM glue does: its own OpData
    ({OpDataLSTM; cmsis_nn_lstm_params}), eight persistent effective-bias arrays of state-size
    int32 (8x8) / int64 (16x8), and three gate scratch buffers instead of four; the float LSTM
    only the larger OpData."""
    from micro_rt.arena import align_up
    batch, n_state = 2, 6
    data = lstm_model(kind, batch, 3, 5, n_state)
    for target in ("cortex-m4", "host64"):
        ref = Interpreter.from_bytes(data, target=target, kernels="reference", plan_only=True)
        cmsis = Interpreter.from_bytes(data, target=target, kernels="cmsis-nn", emulate=False, plan_only=True)
        t = ref.target
        integer = kind != "float32"
        sums = 8 * align_up(n_state * (4 if kind == "int8" else 8), 16) if integer else 0
        struct = align_up(t.sizeof("OpDataLSTMCmsis"), 16) - align_up(t.sizeof("OpDataLSTM"), 16)
        assert len(cmsis.nodes[0].user_data.buffer_indices) == (3 if integer else 4)
        handles = t.sizeof("ScratchBufferHandle") if integer else 0
        pr, pc = ref.plan.tail_breakdown, cmsis.plan.tail_breakdown
        assert pc["Persistent buffer data"] - pr["Persistent buffer data"] == struct + sums, target
        assert pr["scratch buffer handles"] - pc["scratch buffer handles"] == handles, target
        assert (ref.plan.head_bytes > cmsis.plan.head_bytes) == integer, target    # one gate buffer less



@pytest.mark.parametrize("dropped, words", [(2, "weights input 2 is missing"), (13, "gate bias input 13 is missing")])
def test_an_lstm_without_a_weight_or_bias_the_first_comparison_reads_is_named(monkeypatch, dropped, words):
    """Input 2 (the weights' type reference) or 13 (the biases') omitted: the missing input is
    named, not dereferenced while the input before it is compared with it."""
    from micro_rt.errors import KernelError
    add = ModelBuilder.add_operator

    def without(self, op, inputs, outputs, **options):
        inputs = list(inputs)
        inputs[dropped] = -1
        return add(self, op, inputs, outputs, **options)

    monkeypatch.setattr(ModelBuilder, "add_operator", without)
    data = lstm_model("int8", 1, 2, 3, 4)
    with pytest.raises(KernelError, match=words) as info:
        Interpreter.from_bytes(data)
    assert "failed in prepare" not in str(info.value)
