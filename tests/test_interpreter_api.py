"""The interpreter's API mirrors tflite_micro.runtime; wrong use gets a precise error."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import PROJECT_MODELS, SHARED_MODELS, shared_model, shared_models
import micro_rt
from micro_rt import AllocationError, InputError, Interpreter, KernelError
from micro_rt.builder import ModelBuilder
from micro_rt.inputs import random_inputs

MODEL = PROJECT_MODELS / "residual_block_int8.tflite"


def _two_relu_model(variable: bool = False) -> bytes:
    b = ModelBuilder()
    x = b.add_tensor("x", [1, 8], "FLOAT32")
    mid = b.add_tensor("mid", [1, 8], "FLOAT32")
    y = b.add_tensor("y", [1, 8], "FLOAT32")
    b.add_operator("RELU", [x], [mid])
    b.add_operator("RELU6", [mid], [y])
    if variable:
        b.add_tensor("state", [1, 8], "FLOAT32", is_variable=True)
    b.inputs, b.outputs = [x], [y]
    return b.build()


def test_details_match_the_oracle_format(oracle):
    ours = Interpreter.from_file(MODEL)
    theirs = oracle.interpreter(MODEL.read_bytes(), 1 << 20)
    for getter in ("get_input_details", "get_output_details"):
        a, b = getattr(ours, getter)(0), getattr(theirs, getter)(0)
        assert a["dtype"] == b["dtype"]
        np.testing.assert_array_equal(a["shape"], b["shape"])
        qa, qb = a["quantization_parameters"], b["quantization_parameters"]
        np.testing.assert_array_equal(qa["scales"], qb["scales"])
        np.testing.assert_array_equal(qa["zero_points"], qb["zero_points"])
        assert qa["quantized_dimension"] == qb["quantized_dimension"]


def test_counts_and_round_trip():
    it = Interpreter.from_bytes(_two_relu_model())
    assert (it.num_inputs, it.num_outputs) == (1, 1)
    x = np.linspace(-2, 9, 8, dtype=np.float32).reshape(1, 8)
    it.set_input(x, 0)
    it.invoke()
    np.testing.assert_array_equal(it.get_output(0), np.clip(x, 0, 6))


def test_set_input_errors_say_what_was_expected():
    it = Interpreter.from_bytes(_two_relu_model())
    with pytest.raises(InputError, match="expects float32, got int8"):
        it.set_input(np.zeros((1, 8), np.int8), 0)
    with pytest.raises(InputError, match=r"expects shape \[1, 8\], got \[8\]"):
        it.set_input(np.zeros(8, np.float32), 0)
    with pytest.raises(InputError, match="input index 3 is out of range: model has 1 inputs"):
        it.set_input(np.zeros((1, 8), np.float32), 3)
    with pytest.raises(InputError, match="output index 1"):
        it.get_output(1)


def test_intermediate_tensors_need_preserve():
    it = Interpreter.from_bytes(_two_relu_model())
    with pytest.raises(InputError, match="preserve_all_tensors"):
        it.get_tensor(1)
    kept = Interpreter.from_bytes(_two_relu_model(), preserve_all_tensors=True)
    x = np.full((1, 8), -3.0, np.float32)
    x[0, :4] = 2.5
    kept.set_input(x, 0)
    kept.invoke()
    np.testing.assert_array_equal(kept.get_tensor(1), np.maximum(x, 0))
    assert kept.plan.head_bytes > it.plan.head_bytes    # nothing shares memory any more


def test_arena_none_means_the_minimum_and_it_is_tight():
    data = MODEL.read_bytes()
    smallest = Interpreter.from_bytes(data).arena_required_bytes()
    Interpreter.from_bytes(data, arena_size=smallest)
    with pytest.raises(AllocationError) as info:
        Interpreter.from_bytes(data, arena_size=smallest - 16)
    message = str(info.value)
    assert f"arena has {smallest - 16}" in message and f"at least {smallest}" in message


def test_tiny_arenas_fail_cleanly_at_every_size():
    data = MODEL.read_bytes()
    smallest = Interpreter.from_bytes(data).arena_required_bytes()
    for size in list(range(0, 2048, 16)) + [smallest // 2, smallest - 16, smallest - 1]:
        with pytest.raises(AllocationError, match="arena too small"):
            Interpreter.from_bytes(data, arena_size=size)


def test_used_bytes_is_head_plus_tail():
    it = Interpreter.from_bytes(shared_model("hello_world_int8.tflite").read_bytes(), target="host64")
    assert it.arena_used_bytes() == 1504
    assert it.arena_required_bytes() == 1936


def test_reset_zeroes_variables():
    it = Interpreter.from_bytes(_two_relu_model(variable=True))
    state = it.tensors[3]
    state.data[...] = 7
    it.reset()
    assert not state.data.any()


def test_targets_change_the_tail_not_the_head():
    data = MODEL.read_bytes()        # the same kernels on both (each target's own differ)
    host = Interpreter.from_bytes(data, target="host64", kernels="reference").plan
    m4 = Interpreter.from_bytes(data, target="cortex-m4", kernels="reference").plan
    assert host.head_bytes == m4.head_bytes
    assert m4.tail_bytes < host.tail_bytes


def test_activations_use_the_planned_offsets():
    it = Interpreter.from_file(MODEL)
    memory = it._memory
    for b in it.plan.buffers:
        if b.kind == "tensor":
            view = it.tensors[b.tensor].data
            assert np.shares_memory(view, memory[b.offset:b.offset + b.size])


# ---- tflite_micro's API (issue 9) ------------------------------------------------------------
def test_constructors_take_tflite_micros_names_and_order():
    import inspect
    runtime = pytest.importorskip("tflite_micro").runtime
    for name in ("from_file", "from_bytes"):
        theirs = list(inspect.signature(getattr(runtime.Interpreter, name)).parameters)
        ours = list(inspect.signature(getattr(Interpreter, name)).parameters)
        assert ours[:len(theirs)] == theirs, name
    data = MODEL.read_bytes()
    preserve = micro_rt.InterpreterConfig.kPreserveAllTensors
    assert Interpreter.from_file(model_path=MODEL, custom_op_registerers=None, arena_size=None,
                                 intrepreter_config=preserve).preserve_all_tensors
    assert Interpreter.from_bytes(model_data=data).arena_size == Interpreter.from_bytes(data).arena_size
    it = Interpreter.from_bytes(data, [], 1 << 20, preserve, 0, target="host64")
    assert it.preserve_all_tensors and it.arena_size == 1 << 20 and it.target.name == "host64"
    # tflite_micro's own enum members are understood too.
    assert Interpreter.from_file(MODEL, intrepreter_config=runtime.InterpreterConfig.kPreserveAllTensors
                                 ).preserve_all_tensors
    assert not Interpreter.from_file(MODEL, intrepreter_config=runtime.InterpreterConfig.kAllocationRecording
                                     ).preserve_all_tensors
    # The constructor takes the model's bytes, as tflite_micro's does.
    assert Interpreter(data, [], None).plan.as_dict() == Interpreter.from_bytes(data).plan.as_dict()


def _shape_of(value):
    """Keys, types and dtypes of a details dict, recursively."""
    if isinstance(value, dict):
        return {k: _shape_of(v) for k, v in value.items()}
    if isinstance(value, np.ndarray):
        return ("ndarray", str(value.dtype), value.ndim)
    return type(value).__name__ if not isinstance(value, type) else ("type", value.__name__)


@pytest.mark.parametrize("model", ["residual_block_int8.tflite", "residual_block_f32.tflite",
                                   "fully_connected_pt_int8.tflite", "quant_dequant_int8_floatio.tflite"])
def test_details_have_the_oracles_keys_and_types(model, oracle):
    data = (PROJECT_MODELS / model).read_bytes()
    ours, theirs = oracle.paired(data)
    for getter, count in (("get_input_details", ours.num_inputs), ("get_output_details", ours.num_outputs)):
        for i in range(count):
            a, b = getattr(ours, getter)(i), getattr(theirs, getter)(i)
            assert _shape_of(a) == _shape_of(b), (getter, i)
            np.testing.assert_array_equal(a["shape"], b["shape"])
            for key in ("scales", "zero_points"):
                np.testing.assert_array_equal(a["quantization_parameters"][key],
                                              b["quantization_parameters"][key])


def test_get_tensor_matches_the_oracle_for_every_tensor(oracle):
    data = (PROJECT_MODELS / "residual_block_int8.tflite").read_bytes()
    ours, theirs = oracle.paired(data, preserve_all_tensors=True)
    for seed in range(3):
        oracle.invoke_both(ours, theirs, random_inputs(ours, seed))
        for index in range(len(ours.tensors)):
            a, b = ours.GetTensor(index, 0), theirs.GetTensor(index, 0)
            assert _shape_of(a) == _shape_of(b) and a["dtype"] is b["dtype"], index
            np.testing.assert_array_equal(a["shape"], b["shape"])
            np.testing.assert_array_equal(a["tensor_data"], b["tensor_data"])


def test_get_tensor_errors_are_the_oracles_kinds():
    it = Interpreter.from_bytes(_two_relu_model())
    with pytest.raises(RuntimeError, match="preserve_all_tensors"):
        it.GetTensor(1, 0)
    with pytest.raises(IndexError, match="tensor index 9 is out of range"):
        it.GetTensor(9, 0)
    with pytest.raises(IndexError, match="subgraph index 1 is out of range: model has 1 subgraphs"):
        it.GetTensor(0, 1)


@pytest.mark.parametrize("path", shared_models(["hello_world_int8.tflite", "keyword_scrambled_8bit.tflite",
                                                  "person_detect.tflite", "micro_speech_lstm.tflite"])
                         + ["residual_block_int8.tflite", "conv_variants_f32.tflite",
                            "shape_ops_int8.tflite"])
def test_print_allocations_is_the_oracles_printout(path, oracle, capfd):
    """Line for line and byte for byte (TFLM ends its lines with CR LF), target host64."""
    data = (SHARED_MODELS / path if (SHARED_MODELS / path).exists() else PROJECT_MODELS / path).read_bytes()
    ours = Interpreter.from_bytes(data, target="host64")
    theirs = oracle.interpreter(data, ours.arena_required_bytes() * 2)
    capfd.readouterr()
    theirs.print_allocations()
    expected = capfd.readouterr().err
    ours.print_allocations()
    assert capfd.readouterr().err == expected
    assert expected.count("[RecordingMicroAllocator]") >= 7


def _atan_registerer(resolver):
    from micro_rt import Registration

    def invoke(ctx, node):
        ctx.output(node, 0).data[...] = np.arctan(ctx.input(node, 0).data)
    resolver.add_custom("ATAN", Registration(invoke=invoke))


def test_custom_op_registerers_are_callables_or_module_paths():
    data = (PROJECT_MODELS / "custom_atan.tflite").read_bytes()
    with pytest.raises(micro_rt.UnsupportedOpError):
        Interpreter.from_bytes(data)
    for registerer in (_atan_registerer, "test_interpreter_api:_atan_registerer"):
        it = Interpreter.from_bytes(data, [registerer])
        x = np.linspace(-3, 3, int(np.prod(it.get_input_details(0)["shape"])), dtype=np.float32)
        it.set_input(x.reshape(it.get_input_details(0)["shape"]), 0)
        it.invoke()
        assert np.isfinite(it.get_output(0)).all()
    # A resolver passed in is copied, not changed.
    resolver = micro_rt.builtin_op_resolver()
    Interpreter.from_bytes(data, [_atan_registerer], op_resolver=resolver)
    assert not resolver.supports("ATAN", is_custom=True)
    with pytest.raises(InputError, match="C registerer"):
        Interpreter.from_bytes(data, ["SignalOpsRegisterer"])
    with pytest.raises(InputError, match="cannot be found"):
        Interpreter.from_bytes(data, ["no_such_module_here:register"])
    with pytest.raises(micro_rt.UnsupportedOpError, match="registerer .*failed: ZeroDivisionError"):
        Interpreter.from_bytes(data, [lambda resolver: 1 / 0])


def test_errors_are_also_the_builtin_exceptions_tflite_micro_raises():
    data = MODEL.read_bytes()
    with pytest.raises(RuntimeError, match="arena too small"):
        Interpreter.from_bytes(data, arena_size=1024)
    with pytest.raises(ValueError):
        Interpreter.from_file("/nonexistent/model.tflite")
    it = Interpreter.from_bytes(data)
    shape = tuple(it.get_input_details(0)["shape"])
    with pytest.raises(ValueError, match="expects int8"):
        it.set_input(np.zeros(shape, np.float32), 0)
    with pytest.raises(ValueError, match="expects shape"):
        it.set_input(np.zeros(shape[1:], np.int8), 0)
    with pytest.raises(IndexError):
        it.set_input(np.zeros(shape, np.int8), 1)
    with pytest.raises(IndexError):
        it.get_output(1)
    with pytest.raises(TypeError):
        it.set_input(np.zeros(shape, np.int8), 0.0)
    for cls in (micro_rt.AllocationError, micro_rt.UnsupportedOpError, micro_rt.KernelError,
                micro_rt.EmulationError):
        assert issubclass(cls, RuntimeError) and issubclass(cls, micro_rt.MicroRtError)
    assert issubclass(micro_rt.ModelError, ValueError) and issubclass(InputError, ValueError)


# ---- argument types (issue 10) ---------------------------------------------------------------
class _ArrayFails:
    def __array__(self, *args, **kwargs):
        raise RuntimeError("sensor offline")


@pytest.mark.parametrize("kwargs, message", [
    ({"target": None}, "target must be a string"),
    ({"target": "cortex-m99"}, "unknown target 'cortex-m99'"),
    ({"planner": ["greedy"]}, "planner must be a string"),
    ({"kernels": 3}, "kernels must be a string"),
    ({"op_resolver": object()}, "op_resolver must be a micro_rt.MutableOpResolver"),
    ({"mcu_options": {"bogus": 1}}, "mcu_options only apply"),
    ({"mcu_options": {"bogus": 1}, "kernels": "cmsis-nn", "emulate": True}, "unknown option 'bogus'"),
    ({"mcu_options": {"budget": "lots"}, "kernels": "cmsis-nn", "emulate": True}, r"mcu_options\['budget'\] must be an integer"),
    ({"mcu_options": {"strict_alignment": 1}, "kernels": "cmsis-nn", "emulate": True}, "must be True or False"),
    ({"mcu_options": [("budget", 1)], "kernels": "cmsis-nn", "emulate": True}, "mcu_options must be a dict"),
    ({"arena_size": 1.5}, "arena_size must be an integer"),
    ({"arena_size": "1K"}, "arena_size must be an integer"),
    ({"arena_size": -16}, "arena_size must be a non-negative"),
    ({"preserve_all_tensors": "yes"}, "preserve_all_tensors must be True or False"),
    ({"plan_only": 1}, "plan_only must be True or False"),
    ({"emulate": "no"}, "emulate must be True or False"),
    ({"intrepreter_config": 1}, "intrepreter_config must be"),
    ({"custom_op_registerers": "ATAN"}, "custom_op_registerers must be a list"),
    ({"custom_op_registerers": [3]}, "items must be callables"),
    ({"alt_decompression_memory_size": 4096}, "DECODE"),
    ({"blas_threads": 0}, "blas_threads must be at least 1"),
    ({"blas_threads": 1.0}, "blas_threads must be a positive integer"),
])
def test_constructor_arguments_are_checked(kwargs, message):
    with pytest.raises(InputError, match=message):
        Interpreter.from_bytes(_two_relu_model(), **kwargs)


def test_numpy_integers_are_integers():
    data = MODEL.read_bytes()
    smallest = Interpreter.from_bytes(data).arena_required_bytes()
    for kind in (np.int64, np.int32, np.uint32):
        assert Interpreter.from_bytes(data, arena_size=kind(smallest)).arena_size == smallest
    it = Interpreter.from_bytes(data, preserve_all_tensors=np.bool_(True))
    assert it.preserve_all_tensors is True
    x = np.zeros(tuple(it.get_input_details(np.int64(0))["shape"]), np.int8)
    it.set_input(x, np.int32(0))


def test_an_input_whose_array_conversion_fails_is_an_input_error():
    it = Interpreter.from_bytes(_two_relu_model())
    with pytest.raises(InputError, match="cannot convert .*RuntimeError: sensor offline"):
        it.set_input(_ArrayFails(), 0)


# ---- BLAS threads (issue 9) ------------------------------------------------------------------
def _blas_threads() -> list[int]:
    from threadpoolctl import threadpool_info
    return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]


def test_blas_pool_is_capped_during_invoke_and_restored_after():
    from threadpoolctl import threadpool_limits
    from micro_rt import Registration
    seen = []

    def invoke(ctx, node):
        seen.append(_blas_threads())
        ctx.output(node, 0).data[...] = ctx.input(node, 0).data

    b = ModelBuilder()
    x, y = b.add_tensor("x", [1, 4], "FLOAT32"), b.add_tensor("y", [1, 4], "FLOAT32")
    b.add_operator("PROBE", [x], [y], custom_options=b"")
    b.inputs, b.outputs = [x], [y]
    data = b.build()
    assert _blas_threads(), "numpy links no BLAS library threadpoolctl can see"
    with threadpool_limits(limits=2, user_api="blas"):     # whatever the environment set
        for threads, expected in ((1, 1), (None, 2), (2, 2)):
            resolver = micro_rt.builtin_op_resolver()
            resolver.add_custom("PROBE", Registration(invoke=invoke))
            it = Interpreter.from_bytes(data, op_resolver=resolver, blas_threads=threads)
            seen.clear()
            it.invoke()
            it.invoke(progress=lambda done, total: None)      # the per-operator path too
            assert seen == [[expected] * len(seen[0])] * 2, (threads, seen)
            assert set(_blas_threads()) == {2}                # the caller's setting is back
        with pytest.raises(KernelError):                       # restored after a failure too
            resolver.add_custom("PROBE", Registration(invoke=lambda ctx, node: 1 / 0))
            Interpreter.from_bytes(data, op_resolver=resolver).invoke()
        assert set(_blas_threads()) == {2}


def test_random_inputs_cover_uint64_inputs():
    """Seeded inputs for a uint64 input (SignalFilterBankSquareRoot's) span its whole range: the
    uniform draw must not overflow int64 (it raised ValueError)."""
    from devtools.op_models.signal import single_op
    data = single_op("SignalFilterBankSquareRoot", [((40,), "UINT64"), ((), "INT32")], [((40,), "UINT32")], {})
    it = Interpreter.from_bytes(data)
    for seed in range(3):
        x, _ = random_inputs(it, seed)
        assert x.dtype == np.uint64 and x.shape == (40,) and int(x.max()) > 1 << 63
    assert np.array_equal(random_inputs(it, 1)[0], random_inputs(it, 1)[0])
