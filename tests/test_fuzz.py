"""Hostile input (issue 5): malformed models, wrong inputs, tiny arenas, faulting kernels.

The property: whatever the bytes, micro_rt raises only MicroRtError subclasses of its own
making (never a Python error wrapped by the interpreter: "failed in prepare: ZeroDivisionError"),
quickly, with a message naming the thing at fault; and where a mutant runs both on the host
and on the virtual MCU, the outputs agree. A hypothesis-driven fuzz (mutants of real and
builder-made models) checks it in the normal suite on a small seeded subset; `make fuzz` runs
the long campaign (benchmarks/fuzz_campaign.py). The targeted tests pin each validation and
its message.
"""
from __future__ import annotations

import random
import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from conftest import PROJECT_MODELS
from micro_rt import (AllocationError, InputError, Interpreter, KernelError, MicroRtError,
                      ModelError, model as model_module)
from micro_rt.builder import ModelBuilder
from micro_rt.cli import main
from devtools import fuzzing

SEEDS = dict(fuzzing.builder_seeds())
for _name in ("mobilenet_tiny_int8", "shape_ops_f32", "pooling_int8", "elementwise_int8",
              "fully_connected_pt_int8", "depthwise_variants_f32", "quant_dequant_int8_floatio"):
    _path = PROJECT_MODELS / f"{_name}.tflite"
    if _path.exists():
        SEEDS[_name] = _path.read_bytes()
TIME_BOUND = 5.0          # seconds per mutant (the campaign's hang bound is 10 s)


def _check(data: bytes) -> str:
    start = time.perf_counter()
    with np.errstate(all="ignore"):
        outcome = fuzzing.check_mutant(data)     # raises anything that is not a MicroRtError
    assert time.perf_counter() - start < TIME_BOUND, outcome
    assert "KernelError<" not in outcome, f"a Python error wrapped by the interpreter: {outcome}"
    return outcome


@settings(max_examples=600, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(seed=st.sampled_from(sorted(SEEDS)), mutator=st.sampled_from(sorted(fuzzing.MUTATORS)),
       salt=st.integers(0, 2**32 - 1), twice=st.booleans())
def test_mutants_raise_only_micro_rt_errors(seed, mutator, salt, twice):
    rng = random.Random(salt)
    _, data = fuzzing.mutate(SEEDS[seed], rng, mutator)
    if twice:
        _, data = fuzzing.mutate(data, rng, rng.choice(sorted(fuzzing.BYTE_MUTATORS)))
    _check(data)


@settings(max_examples=150, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(seed=st.sampled_from(sorted(SEEDS)), data=st.data())
def test_truncations_and_raw_overwrites(seed, data):
    raw = SEEDS[seed]
    cut = data.draw(st.integers(0, len(raw)))
    pos = data.draw(st.integers(0, max(len(raw) - 1, 0)))
    patch = data.draw(st.binary(min_size=1, max_size=8))
    mutant = bytearray(raw[:cut])
    mutant[pos:pos + len(patch)] = patch
    _check(bytes(mutant))


# Every stage (load, info, plan on every target, host invoke, MCU invoke) on a seeded subset
# of the campaign's mutants: small, so the suite stays fast; `make fuzz` runs thousands.
DIFFERENTIAL_SEEDS = {name: data for name, data in SEEDS.items()
                      if name in ("builder_fc_int8", "builder_shape_ops_f32", "mobilenet_tiny_int8",
                                  "elementwise_int8", "fully_connected_pt_int8", "pooling_int8")}


def test_every_stage_and_host_against_mcu():
    """48 mutants through every stage: no wrapped Python error, no foreign exception, host and
    MCU outputs equal wherever both run (and enough of them run on both to mean something)."""
    failures, both_ran = [], 0
    for k in range(48):
        seed, mutators, data = fuzzing.make_mutant(DIFFERENTIAL_SEEDS, 2026, k)
        start = time.perf_counter()
        result = fuzzing.run_stages(data)
        elapsed = time.perf_counter() - start
        failures += [(k, seed, mutators, s.stage, s.outcome, s.error, s.where, s.message)
                     for s in result.stages if s.outcome in ("wrapped", "foreign")]
        if result.host_vs_mcu not in (None, "agree"):
            failures.append((k, seed, mutators, "host vs mcu", result.host_vs_mcu))
        if elapsed > 2 * TIME_BOUND:
            failures.append((k, seed, mutators, f"took {elapsed:.1f} s"))
        both_ran += result.host_vs_mcu is not None
    assert not failures, "\n".join(map(str, failures))
    assert both_ran >= 5


def test_stacked_mutations_and_schema_mutators():
    rng = random.Random(1)
    data = SEEDS["mobilenet_tiny_int8"]
    for name in sorted(fuzzing.STRUCT_MUTATORS):
        applied, mutant = fuzzing.apply_mutations(data, [name], rng)
        assert applied == [name] and mutant != data, name     # each applies to a real model
    counts = {len(fuzzing.make_mutant(SEEDS, 0, k)[1].split("+")) for k in range(60)}
    assert counts == {1, 2, 3}


def test_classify_names_wrapped_python_errors():
    wrapped = KernelError("op 3 CONV_2D failed in prepare: ZeroDivisionError: division by zero")
    assert fuzzing.classify(wrapped) == ("wrapped", "KernelError<ZeroDivisionError>")
    assert fuzzing.classify(KernelError("op 3 CONV_2D: stride_w is 0, must be positive")) == \
        ("project-error", "KernelError")
    assert fuzzing.classify(ValueError("x")) == ("foreign", "ValueError")
    assert fuzzing.classify(None) == ("ok", None)


def test_every_seed_still_loads_and_runs():
    for name, data in SEEDS.items():
        assert _check(data) == "loaded", name


def test_garbage_and_wrong_types():
    for data in (b"", b"TFL3", b"\x00" * 64, b"\xff" * 4096, bytes(range(256)) * 8):
        with pytest.raises(ModelError):
            Interpreter.from_bytes(data)
    with pytest.raises(ModelError, match="must be bytes"):
        Interpreter.from_bytes("not bytes")
    with pytest.raises(InputError, match="str or Path"):
        Interpreter.from_file(None)


# ---- the model's structure ------------------------------------------------------------
def _chain(n_ops: int = 2) -> ModelBuilder:
    b = ModelBuilder()
    tensors = [b.add_tensor(f"t{i}", [1, 8], "FLOAT32") for i in range(n_ops + 1)]
    for i in range(n_ops):
        b.add_operator("RELU", [tensors[i]], [tensors[i + 1]])
    b.inputs, b.outputs = [tensors[0]], [tensors[-1]]
    return b


def test_operator_cycle_is_named():
    b = _chain(3)
    b.operators[0].inputs = [3]                      # reads the last operator's output
    with pytest.raises(ModelError, match=r"operator 0 \(RELU\) input 0 reads tensor 3 \('t3'\) "
                                         r"before any operator produces it \(operator 2"):
        Interpreter.from_bytes(b.build())


def test_two_producers_and_writes_to_inputs_or_constants():
    b = _chain(2)
    b.operators[1].outputs = [1]
    with pytest.raises(ModelError, match=r"tensor 1 \('t1'\) is written by operators 0 and 1"):
        Interpreter.from_bytes(b.build())
    b = _chain(2)
    b.operators[1].outputs = [0]
    with pytest.raises(ModelError, match="writes tensor 0 .* which is a subgraph input"):
        Interpreter.from_bytes(b.build())
    b = _chain(1)
    c = b.add_tensor("c", [1, 8], "FLOAT32", data=np.zeros((1, 8), np.float32))
    b.inputs = [c]
    with pytest.raises(ModelError, match=r"input 0 is tensor 2 \('c'\), which is a constant"):
        Interpreter.from_bytes(b.build())


def test_out_of_range_indices_are_named():
    b = _chain(1)
    b.operators[0].inputs = [7]
    with pytest.raises(ModelError, match="operator 0 input 0 refers to tensor 7, subgraph has 2"):
        Interpreter.from_bytes(b.build())
    b = _chain(1)
    b.outputs = [9]
    with pytest.raises(ModelError, match="subgraph 0 output 0 refers to tensor 9"):
        Interpreter.from_bytes(b.build())
    b = _chain(1)
    b.operators[0].opcode_index = 5
    with pytest.raises(ModelError, match="opcode_index refers to operator_code 5"):
        Interpreter.from_bytes(b.build())


def test_buffer_must_match_tensor_size():
    b = _chain(1)
    b.add_tensor("w", [4, 4], "FLOAT32", data=b"\x00" * 12)
    with pytest.raises(ModelError, match=r"'w'\): buffer holds 12 bytes, shape \[4, 4\] of "
                                         "FLOAT32 needs 64"):
        Interpreter.from_bytes(b.build())


def test_quantization_is_checked():
    for kwargs, message in (
            (dict(scale=[0.1, 0.2, 0.3], quantized_dimension=1), "3 per-channel scales for dimension 1"),
            (dict(scale=float("nan")), "scale 0 is nan"),
            (dict(scale=0.5, zero_point=300), "zero point 0 is 300, outside -128..127 for INT8"),
            (dict(scale=0.5, quantized_dimension=9), "quantized_dimension 9 is out of range")):
        b = _chain(1)
        b.add_tensor("q", [2, 4], "INT8", **kwargs)
        with pytest.raises(ModelError, match=r"tensor 2 \('q'\) quantization: " + message):
            Interpreter.from_bytes(b.build())


def test_option_table_of_the_wrong_type():
    b = ModelBuilder()
    x = b.add_tensor("x", [1, 8], "FLOAT32")
    y = b.add_tensor("y", [1, 8], "FLOAT32")
    b.add_operator("SOFTMAX", [x], [y], options={"beta": 1.0})
    b.operators[0].options_table, b.operators[0].options = "Conv2DOptions", {}
    b.inputs, b.outputs = [x], [y]
    with pytest.raises(ModelError, match=r"operator 0 \(SOFTMAX\) carries Conv2DOptions, expected "
                                         "SoftmaxOptions"):
        Interpreter.from_bytes(b.build())


def test_custom_op_named_like_a_builtin_is_not_prepared_as_one():
    # A custom op called "CONV_2D" (unresolved, planned with plan_only) used to get the CMSIS-NN
    # convolution's scratch request, which unpacked its 2-D "filter" as a 4-D one.
    b = ModelBuilder()
    x = b.add_tensor("x", [1, 6, 6, 4], "INT8", scale=0.5)
    w = b.add_tensor("w", [2], "INT32", data=np.array([1, 2]))
    y = b.add_tensor("y", [1, 6, 6, 4], "INT8", scale=0.5)
    b.add_operator("CONV_2D", [x, w], [y])
    b.operators[0].opcode_index = b.opcode("CONV_2D", custom=True)
    b.operators[0].options_table = None
    b.inputs, b.outputs = [x], [y]
    it = Interpreter.from_bytes(b.build(), target="cortex-m4", kernels="cmsis-nn", plan_only=True)
    assert it.unresolved and not [buf for buf in it.plan.buffers if buf.kind == "scratch"]


def test_size_limits(monkeypatch):
    data = _chain(4).build()
    monkeypatch.setattr(model_module, "MAX_TENSORS", 3)
    with pytest.raises(ModelError, match="tensors: 5 entries, over micro_rt's limit of 3"):
        Interpreter.from_bytes(data)
    monkeypatch.setattr(model_module, "MAX_TENSORS", 1 << 16)
    monkeypatch.setattr(model_module, "MAX_OPERATORS", 2)
    with pytest.raises(ModelError, match="operators: 4 entries, over micro_rt's limit of 2"):
        Interpreter.from_bytes(data)
    monkeypatch.setattr(model_module, "MAX_MODEL_BYTES", 100)
    with pytest.raises(ModelError, match="over micro_rt's 100-byte limit"):
        Interpreter.from_bytes(data)


def _add_with_external_constant(value: float) -> bytes:
    """ADD(x, c) on float32[1, 4], c's 16 bytes stored after the flatbuffer (the large-model
    buffer form: Buffer.offset / Buffer.size instead of Buffer.data)."""
    b = ModelBuilder()
    x = b.add_tensor("x", [1, 4], "FLOAT32")
    b.buffers.append(b"")
    c = b.add_tensor("c", [1, 4], "FLOAT32")
    b.tensors[c].buffer = len(b.buffers) - 1
    y = b.add_tensor("y", [1, 4], "FLOAT32")
    b.add_operator("ADD", [x, c], [y])
    b.inputs, b.outputs = [x], [y]
    b.buffer_locations[len(b.buffers) - 1] = (2, 16)                     # placeholder offset
    offset = -(-len(b.build()) // 16) * 16
    b.buffer_locations[len(b.buffers) - 1] = (offset, 16)
    head = b.build()
    return head + bytes(offset - len(head)) + np.full(4, value, np.float32).tobytes()


def test_buffer_stored_outside_the_flatbuffer_is_refused(oracle):
    """tflite-micro reads a buffer's data only from inside the flatbuffer (Buffer.data): a
    tensor whose buffer uses the large-model form has no data there, so TFLM treats it as an
    activation nothing writes (fuzzing: forged buffer locations made micro_rt read bias bytes
    TFLM never sees). Refused at load, naming the buffer."""
    data = _add_with_external_constant(1000.0)
    x = np.arange(4, dtype=np.float32).reshape(1, 4)
    theirs = oracle.run(data, [x], 1, arena_size=1 << 16)[0]
    assert not np.any(theirs == x + 1000.0)                  # TFLM did not read the 1000s
    with pytest.raises(ModelError, match=r"buffer 1 keeps its 16 bytes outside the flatbuffer "
                                         r"\(offset \d+, size 16\).*tflite-micro reads buffer data only "
                                         r"from inside the flatbuffer"):
        Interpreter.from_bytes(data)


def test_variable_tensor_with_data_starts_from_zero_like_tflm(oracle):
    """A variable tensor that also has buffer data: TFLM allocates it like any variable (in
    the persistent tail) and resets it to zero (int8: its zero point), never reading the data
    (fuzzing: constants flagged is_variable ran with their data on micro_rt, zeros on TFLM)."""
    b = ModelBuilder()
    x = b.add_tensor("x", [1, 4], "FLOAT32")
    c = b.add_tensor("c", [1, 4], "FLOAT32", data=np.full((1, 4), 1000.0, np.float32), is_variable=True)
    y = b.add_tensor("y", [1, 4], "FLOAT32")
    b.add_operator("ADD", [x, c], [y])
    b.inputs, b.outputs = [x], [y]
    data = b.build()
    x_value = np.arange(4, dtype=np.float32).reshape(1, 4)
    theirs = oracle.run(data, [x_value], 1, arena_size=1 << 16)[0]
    it = Interpreter.from_bytes(data)
    it.set_input(x_value, 0)
    it.invoke()
    np.testing.assert_array_equal(it.get_output(0), theirs)
    np.testing.assert_array_equal(theirs, x_value)
    plan = Interpreter.from_bytes(data, target="host64").plan
    mine = oracle.allocations(data, 1 << 16)
    assert (plan.head_bytes, plan.tail_bytes) == (mine["head"], mine["tail"])


def test_reading_a_tensor_nothing_defines_is_refused_at_invoke():
    """A tensor an operator reads that is neither a subgraph input, a constant, a variable nor
    any operator's output: TFLM plans it and reads whatever its arena holds there (fuzzing:
    models whose input list was emptied ran on both sides and disagreed). Memory is planned as
    TFLM plans it; invoke refuses, naming the operator and the tensor."""
    b = _chain(2)
    b.inputs = []
    it = Interpreter.from_bytes(b.build())
    assert it.plan.required_bytes > 0
    with pytest.raises(ModelError, match=r"operator 0 \(RELU\) input 0 reads tensor 0 \('t0'\), which "
                                         r"is neither a subgraph input, a constant, a variable nor "
                                         r"written by any operator"):
        it.invoke()
    b = _chain(1)                             # a subgraph output nothing writes
    extra = b.add_tensor("extra", [1, 8], "FLOAT32")
    b.outputs = [b.outputs[0], extra]
    with pytest.raises(ModelError, match=r"subgraph output 1 is tensor 2 \('extra'\), which is neither"):
        Interpreter.from_bytes(b.build()).invoke()


# ---- memory bounds ----------------------------------------------------------------------
def test_forged_dimension_is_refused_before_allocating():
    b = _chain(1)
    b.tensors[1].shape = (1, 2**31 - 1)
    with pytest.raises(ModelError, match=r"tensor 1 \('t1'\): shape \[1, 2147483647\] needs "
                                         "8589934588 bytes"):
        Interpreter.from_bytes(b.build())


def test_arena_over_one_gib_is_refused():
    b = ModelBuilder()                       # two 600 MB tensors live together: 1.2 GB of head
    x = b.add_tensor("x", [600, 1 << 20], "INT8", scale=1.0)
    y = b.add_tensor("y", [600, 1 << 20], "INT8", scale=1.0)
    b.add_operator("RELU", [x], [y])
    b.inputs, b.outputs = [x], [y]
    start = time.perf_counter()
    with pytest.raises(AllocationError, match=r"planned activations need \d+ bytes, over micro_rt's "
                                              r"1073741824-byte \(1 GiB\) arena limit"):
        Interpreter.from_bytes(b.build())
    assert time.perf_counter() - start < TIME_BOUND     # refused before any allocation, not after
    b = _chain(1)                            # two 600 MB variables: 1.2 GB of tail
    b.add_tensor("state1", [150, 1 << 20], "FLOAT32", is_variable=True)
    b.add_tensor("state2", [150, 1 << 20], "FLOAT32", is_variable=True)
    with pytest.raises(AllocationError, match=r"variable tensors .*over micro_rt's 1073741824-"
                                              r"byte \(1 GiB\) limit"):
        Interpreter.from_bytes(b.build())


def test_forged_offline_offset_is_refused():
    b = _chain(1)
    b.add_metadata("OfflineMemoryAllocation", np.array([1, 1, 2, 2**30 + 16, -1], "<i4").tobytes())
    with pytest.raises(AllocationError, match="1 GiB"):
        Interpreter.from_bytes(b.build())


def test_tiny_and_invalid_arenas():
    data = _chain(2).build()
    with pytest.raises(AllocationError, match=r"arena too small: .* Give at least \d+ bytes"):
        Interpreter.from_bytes(data, arena_size=64)
    for bad in (-16, "1K", 1.5):
        with pytest.raises(InputError, match="arena_size must be"):
            Interpreter.from_bytes(data, arena_size=bad)
    with pytest.raises(InputError, match="unknown planner 'best'"):
        Interpreter.from_bytes(data, planner="best")
    with pytest.raises(InputError, match="unknown kernels"):
        Interpreter.from_bytes(data, kernels="fast")
    with pytest.raises(MicroRtError, match="unknown target"):
        Interpreter.from_bytes(data, target="cortex-m99")


def test_wrong_inputs():
    it = Interpreter.from_bytes(_chain(1).build())
    with pytest.raises(InputError, match="cannot convert"):
        it.set_input([[1.0, 2.0], [3.0]], 0)
    with pytest.raises(InputError, match="input index must be an integer, got str 'x'"):
        it.set_input(np.zeros((1, 8), np.float32), "x")
    with pytest.raises(InputError, match="tensor index must be an integer, got NoneType"):
        it.get_tensor(None)


# ---- kernels reading parameters from constant tensors -----------------------------------
def _shape_ops_builder() -> ModelBuilder:
    from micro_rt.model import read_model
    return ModelBuilder.from_model(read_model(fuzzing.builder_seeds()["builder_shape_ops_f32"]))


@pytest.mark.parametrize("tensor, values, message", [
    ("perm", [5, 0], r"op 1 TRANSPOSE: perm \[5, 0\] is not a permutation of 2 axes"),
    ("perm", [-2**31, 0], r"op 1 TRANSPOSE: perm .* is not a permutation"),
    ("pads", [[-1000, 0], [0, 2]], r"op 2 PAD: output .* dim 0 is 9, paddings give -992"),
    ("pads", [[2**31 - 1, 0], [0, 2]], r"op 2 PAD: output .* dim 0 is 9"),
    ("strides", [0, 3], "op 3 STRIDED_SLICE: stride value has to be non-zero"),
    ("begin", [2**31 - 1, -2**31], r"op 3 STRIDED_SLICE: output .* does not match computed shape"),
    ("axis", [7], "op 4 MEAN: axis 7 out of range for a 2-D input"),
    ("axis", [-2**31], "op 4 MEAN: axis -2147483648 out of range"),
])
def test_forged_parameter_tensors_give_kernel_errors(tensor, values, message):
    b = _shape_ops_builder()
    spec = next(t for t in b.tensors if t.name == tensor)
    b.buffers[spec.buffer] = np.asarray(values, "<i4").tobytes()
    with pytest.raises(KernelError, match=message) as info:
        Interpreter.from_bytes(b.build())
    assert info.value.__cause__ is None, "caught by the kernel's own check, not by the wrapper"


def test_forged_reshape_shape_tensor_is_harmless():
    # RESHAPE takes its shape from the output tensor; a forged shape input is never indexed.
    b = _shape_ops_builder()
    spec = next(t for t in b.tensors if t.name == "shape")
    b.buffers[spec.buffer] = np.asarray([-2**31, 2**31 - 1], "<i4").tobytes()
    assert _check(b.build()) == "loaded"


def test_forged_window_parameters():
    from micro_rt.model import read_model
    data = (PROJECT_MODELS / "mobilenet_tiny_int8.tflite").read_bytes()
    for options, message in (({"stride_w": 0}, "stride_w is 0, must be positive"),
                             ({"stride_h": -3}, "stride_h is -3, must be positive"),
                             ({"dilation_w_factor": 2**30}, ".*stride or dilation is corrupt"),
                             ({"stride_h": 3}, ".*does not match the computed shape")):
        b = ModelBuilder.from_model(read_model(data))
        conv = next(op for op in b.operators if op.options_table == "Conv2DOptions")
        conv.options = dict(conv.options, **options)
        with pytest.raises(KernelError, match=r"op \d+ CONV_2D: " + message):
            Interpreter.from_bytes(b.build())


def test_absent_required_input_is_explained():
    b = _chain(1)
    b.operators[0].inputs = [-1]
    with pytest.raises(KernelError, match=r"op 0 RELU: input 0 is absent \(inputs \[-1\], -1 = absent\); "
                                          r"this operator needs it"):
        Interpreter.from_bytes(b.build())
    fc = ModelBuilder()                      # FULLY_CONNECTED without its weights
    x = fc.add_tensor("x", [1, 4], "FLOAT32")
    y = fc.add_tensor("y", [1, 3], "FLOAT32")
    fc.add_operator("FULLY_CONNECTED", [x, -1, -1], [y])
    fc.inputs, fc.outputs = [x], [y]
    with pytest.raises(KernelError, match=r"op 0 FULLY_CONNECTED: input 1 is absent"):
        Interpreter.from_bytes(fc.build())


# ---- the command line -------------------------------------------------------------------
def _invoke_failure_model() -> bytes:
    """MEAN whose axis is a model input: any axis out of range fails inside invoke."""
    b = ModelBuilder()
    x = b.add_tensor("x", [2, 3], "FLOAT32")
    axis = b.add_tensor("axis", [1], "INT32")
    y = b.add_tensor("y", [2], "FLOAT32")
    b.add_operator("MEAN", [x, axis], [y], options={"keep_dims": False})
    b.inputs, b.outputs = [x, axis], [y]
    return b.build()


@pytest.mark.parametrize("dtype", ["FLOAT32", "INT8"])
def test_runtime_axis_that_does_not_give_the_output_shape(dtype):
    """MEAN whose axis is a model input: axis 0 of a [2, 3] input leaves 3 values for an output
    of 2. TFLM's reference kernel writes its results by the input's layout, past the output
    tensor (undefined); micro_rt names the mismatch (it used to be a wrapped ValueError)."""
    b = ModelBuilder()
    q = {"scale": 0.5, "zero_point": 1} if dtype == "INT8" else {}
    x = b.add_tensor("x", [2, 3], dtype, **q)
    axis = b.add_tensor("axis", [1], "INT32")
    y = b.add_tensor("y", [2], dtype, **q)
    b.add_operator("MEAN", [x, axis], [y], options={"keep_dims": False})
    b.inputs, b.outputs = [x, axis], [y]
    it = Interpreter.from_bytes(b.build())
    it.set_input(np.ones((2, 3), it.get_input_details(0)["dtype"]), 0)
    it.set_input(np.array([1], np.int32), 1)
    it.invoke()                                          # axis 1: 2 values, as the output holds
    it.set_input(np.array([0], np.int32), 1)
    with pytest.raises(KernelError, match=r"op 0 MEAN: axis \[0\] reduces input 'x' .* to 3 values, "
                                          r"output 'y' .* holds 2") as info:
        it.invoke()
    assert info.value.__cause__ is None


@pytest.mark.parametrize("argv", [["info"], ["plan"], ["fit", "--ram", "64K"], ["run"]])
def test_cli_broken_model_is_one_line_and_debug_shows_traceback(capsys, tmp_path, argv):
    bad = tmp_path / "bad.tflite"
    data = bytearray(_chain(2).build())
    data[4:8] = b"TFL3"
    data[8:] = b"\xff" * (len(data) - 8)
    bad.write_bytes(bytes(data))
    code = main([argv[0], str(bad)] + argv[1:])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and err.startswith("micro-rt: error:"), err
    code = main(["--debug", argv[0], str(bad)] + argv[1:])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" in err and "ModelError" in err


def test_cli_kernel_error_inside_invoke(capsys, tmp_path):
    path = tmp_path / "mean.tflite"
    path.write_bytes(_invoke_failure_model())
    code = main(["run", str(path), "--seed", "1"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "op 0 MEAN: axis" in err and "out of range" in err
    code = main(["--debug", "run", str(path), "--seed", "1"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" in err and "KernelError" in err


def test_cli_unreadable_input_file(capsys, tmp_path):
    path = tmp_path / "m.tflite"
    path.write_bytes(_chain(1).build())
    empty = tmp_path / "x.npy"
    empty.write_bytes(b"")
    code = main(["run", str(path), "--input", str(empty)])
    err = capsys.readouterr().err
    assert code == 2 and "cannot read input 0" in err and err.count("\n") == 1


# ---- the campaign harness ---------------------------------------------------------------
_RACE_PROBE = r'''
import multiprocessing as mp, sys
sys.path.insert(0, sys.argv[1])
import fuzz_campaign as fc

class ExitsWhileChecked:
    """A child that sends its last messages and exits while the parent looks at it."""
    def __init__(self, writer):
        self.writer, self.calls, self.exitcode, self.sentinel = writer, 0, 0, None
    def is_alive(self):
        self.calls += 1
        if self.calls == 1:
            for message in (("ours", "agree"), ("end", None)):
                self.writer.send(message)
            return True
        return False
    def join(self, timeout=None):
        pass

reader, writer = mp.Pipe(duplex=False)
run = fc.Running(0, "seed", "mutator", ExitsWhileChecked(writer), reader, deadline=1e18, stage="mcu")
while not fc._collect(run, [reader]):
    pass
print(run.ours_done, run.ended)
'''


def test_campaign_reads_what_a_child_sent_before_it_exited():
    """A child that finished its stages and exited between the parent's two liveness checks
    was counted a crash "in stage mcu (exit code 0)": the parent stopped reading before the
    child's last messages (seen once in 10,000 mutants). The parent now checks liveness once,
    then reads: an exited child's messages are all in the pipe by then."""
    import subprocess
    import sys
    from conftest import ROOT
    out = subprocess.run([sys.executable, "-c", _RACE_PROBE, str(ROOT / "benchmarks")], capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["True", "True"]
