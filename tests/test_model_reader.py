"""The model reader and builder: real files read, round trips, and broken files named precisely."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import SHARED_MODELS, missing, project_models, shared_model
from micro_rt import ModelError, schema
from micro_rt.builder import ModelBuilder
from micro_rt.model import read_model


def _tiny_model() -> ModelBuilder:
    b = ModelBuilder()
    x = b.add_tensor("x", [1, 4], "INT8", scale=0.5, zero_point=-1)
    w = b.add_tensor("w", [3, 4], "INT8", data=np.arange(12).reshape(3, 4), scale=[0.1, 0.2, 0.3],
                     zero_point=0, quantized_dimension=0)
    bias = b.add_tensor("b", [3], "INT32", data=np.array([1, 2, 3]), scale=[0.05, 0.1, 0.15])
    y = b.add_tensor("y", [1, 3], "INT8", scale=0.25, zero_point=2)
    b.add_operator("FULLY_CONNECTED", [x, w, bias], [y], version=4,
                   options={"fused_activation_function": "RELU", "keep_num_dims": True})
    b.inputs, b.outputs = [x], [y]
    return b


def test_reads_every_shared_model():
    paths = sorted(SHARED_MODELS.glob("**/*.tflite"))
    if not paths:
        missing("shared models not available (needs ../shared/models)")
    for path in paths:
        model = read_model(path.read_bytes())
        assert model.main.operators, path.name


def test_reads_project_models():
    for path in project_models():
        model = read_model(path.read_bytes())
        assert model.main.inputs and model.main.outputs, path.name


def test_person_detect_details():
    model = read_model(shared_model("person_detect.tflite").read_bytes())
    sg = model.main
    assert [sg.tensors[i].shape for i in sg.inputs] == [(1, 96, 96, 1)]
    conv = next(op for op in sg.operators if op.op_name == "CONV_2D")
    assert conv.options["padding"] in ("SAME", "VALID") and conv.options["stride_w"] >= 1
    weights = sg.tensors[conv.inputs[1]]
    assert weights.is_constant and weights.data.dtype == np.int8
    assert weights.quantization.scales.size == weights.shape[0]


def test_offline_plan_metadata_is_read():
    model = read_model(shared_model("person_detect_vela.tflite").read_bytes())
    assert "OfflineMemoryAllocation" in model.metadata
    raw = np.frombuffer(model.metadata_bytes("OfflineMemoryAllocation"), "<i4")
    assert raw[2] == len(model.main.tensors)


def test_builder_round_trip_keeps_everything():
    model = read_model(_tiny_model().build())
    sg = model.main
    op = sg.operators[0]
    assert op.op_name == "FULLY_CONNECTED" and op.version == 4
    assert op.options["fused_activation_function"] == "RELU" and op.options["keep_num_dims"] is True
    w = sg.tensors[op.inputs[1]]
    np.testing.assert_array_equal(w.data, np.arange(12).reshape(3, 4))
    np.testing.assert_allclose(w.quantization.scales, [0.1, 0.2, 0.3], rtol=1e-6)
    assert sg.tensors[op.outputs[0]].quantization.zero_points.tolist() == [2]


def test_from_model_rebuild_is_equivalent():
    raw = shared_model("micro_speech_quantized.tflite").read_bytes()
    a, b = read_model(raw), read_model(ModelBuilder.from_model(read_model(raw)).build())
    assert [o.options for o in a.main.operators] == [o.options for o in b.main.operators]
    for ta, tb in zip(a.main.tensors, b.main.tensors):
        assert (ta.name, ta.shape, ta.type_name) == (tb.name, tb.shape, tb.type_name)
        if ta.is_constant:
            np.testing.assert_array_equal(ta.data, tb.data)


def test_large_builtin_codes_survive():
    b = ModelBuilder()
    x = b.add_tensor("x", [2], "FLOAT32")
    y = b.add_tensor("y", [2], "FLOAT32")
    b.add_operator("GELU", [x], [y], options={"approximate": True})
    b.inputs, b.outputs = [x], [y]
    op = read_model(b.build()).main.operators[0]
    assert op.op_name == "GELU" and op.options == {"approximate": True}



def _one_op(op: str, options: dict) -> ModelBuilder:
    b = ModelBuilder()
    x = b.add_tensor("x", [1, 4], "FLOAT32")
    y = b.add_tensor("y", [1, 4], "FLOAT32")
    b.add_operator(op, [x], [y], options=options)
    b.inputs, b.outputs = [x], [y]
    return b


@pytest.mark.parametrize("value", [2**31 - 1, -2**31, 0, -1, 1])
def test_int32_options_round_trip_at_the_extremes(value):
    b = ModelBuilder()
    x = b.add_tensor("x", [1, 8], "FLOAT32")
    begin = b.add_tensor("begin", [2], "INT32", data=np.array([0, 0]))
    end = b.add_tensor("end", [2], "INT32", data=np.array([1, 8]))
    step = b.add_tensor("step", [2], "INT32", data=np.array([1, 1]))
    y = b.add_tensor("y", [1, 8], "FLOAT32")
    masks = {"begin_mask": value, "end_mask": -value - 1 if value < 0 else value,
             "shrink_axis_mask": value}
    b.add_operator("STRIDED_SLICE", [x, begin, end, step], [y], options=masks)
    b.inputs, b.outputs = [x], [y]
    options = read_model(b.build()).main.operators[0].options
    assert {k: options[k] for k in masks} == masks


@pytest.mark.parametrize("value", [np.inf, -np.inf, 0.0, -0.0, np.finfo(np.float32).max,
                                   np.finfo(np.float32).tiny, 1.5])
def test_float_options_round_trip(value):
    alpha = read_model(_one_op("LEAKY_RELU", {"alpha": value}).build()).main.operators[0].options["alpha"]
    assert alpha == value and np.signbit(alpha) == np.signbit(value)


def test_nan_option_round_trips():
    alpha = read_model(_one_op("LEAKY_RELU", {"alpha": np.nan}).build()).main.operators[0].options["alpha"]
    assert np.isnan(alpha)


@pytest.mark.parametrize("value", [True, False])
def test_bool_options_round_trip(value):
    options = read_model(_one_op("MEAN", {"keep_dims": value}).build()).main.operators[0].options
    assert options["keep_dims"] is value


@pytest.mark.parametrize("kind_table, field, value", [("MirrorPadOptions", "mode", 127),
                                                      ("MirrorPadOptions", "mode", -128),
                                                      ("CallOptions", "subgraph", 2**32 - 1)])
def test_byte_and_uint_options_round_trip(kind_table, field, value):
    b = _one_op("RELU", {})           # RELU has no options of its own: any table is kept as is
    b.operators[0].options_table, b.operators[0].options = kind_table, {field: value}
    assert read_model(b.build()).main.operators[0].options[field] == value


@pytest.mark.parametrize("value", [2**31, -2**31 - 1, 1.5, True])
def test_builder_refuses_an_int32_option_out_of_range(value):
    with pytest.raises(ValueError, match="StridedSliceOptions.begin_mask"):
        _one_op("STRIDED_SLICE", {"begin_mask": value}).build()


# ---- options type set, table absent ----------------------------------------------------------
def _without_table(op: str) -> ModelBuilder:
    b = ModelBuilder()
    rng = np.random.default_rng(3)
    x = b.add_tensor("x", [1, 8], "FLOAT32")
    if op == "FULLY_CONNECTED":
        w = b.add_tensor("w", [3, 8], "FLOAT32", data=rng.standard_normal((3, 8)))
        inputs, shape = [x, w, -1], [1, 3]
    elif op == "RESHAPE":
        inputs, shape = [x, b.add_tensor("s", [2], "INT32", data=np.array([2, 4]))], [2, 4]
    elif op == "STRIDED_SLICE":
        inputs = [x] + [b.add_tensor(n, [2], "INT32", data=np.array(v)) for n, v in
                        (("begin", [0, 1]), ("end", [1, 7]), ("step", [1, 2]))]
        shape = [1, 3]
    elif op == "MEAN":
        inputs, shape = [x, b.add_tensor("axis", [1], "INT32", data=np.array([1]))], [1]
    else:
        inputs, shape = [x], [1, 8]
    y = b.add_tensor("y", shape, "FLOAT32")
    b.add_operator(op, inputs, [y], omit_options_table=True)
    b.inputs, b.outputs = [x], [y]
    return b


@pytest.mark.parametrize("op", ["FULLY_CONNECTED", "SOFTMAX", "RESHAPE", "STRIDED_SLICE", "MEAN"])
def test_options_type_without_table_reads_as_defaults(op):
    """TFLM parses such an operator as one without options (all defaults); so does micro_rt."""
    options = read_model(_without_table(op).build()).main.operators[0].options
    assert options == schema.option_defaults(schema.OP_OPTIONS[op])


@pytest.mark.parametrize("op", ["FULLY_CONNECTED", "SOFTMAX", "RESHAPE", "STRIDED_SLICE", "MEAN"])
def test_options_type_without_table_runs_like_tflm(op, oracle):
    result = oracle.check_model(_without_table(op).build(), seeds=range(5))
    assert not result["failures"], result


# ---- broken files ----------------------------------------------------------------------------
def _raises(data: bytes, *fragments: str):
    with pytest.raises(ModelError) as info:
        read_model(data)
    for fragment in fragments:
        assert fragment in str(info.value), str(info.value)
    return info.value


def test_not_a_flatbuffer():
    _raises(b"", "too short")
    _raises(b"\x10\x00\x00\x00GIF8" + bytes(32), "file identifier")


def test_truncated_file_names_the_field():
    data = _tiny_model().build()
    for cut in (12, len(data) // 3, len(data) // 2, len(data) - 9):
        with pytest.raises(ModelError):
            read_model(data[:cut])


def test_operator_input_out_of_range():
    b = _tiny_model()
    b.operators[0].inputs[1] = 91
    _raises(b.build(), "operator 0 input 1 refers to tensor 91", "4 tensors")


def test_subgraph_output_out_of_range():
    b = _tiny_model()
    b.outputs = [7]
    _raises(b.build(), "refers to tensor 7")


def test_constant_buffer_size_must_match_shape():
    b = _tiny_model()
    b.buffers[b.tensors[1].buffer] = bytes(11)
    _raises(b.build(), "'w'", "11 bytes", "needs 12")


def test_forged_huge_dimension_is_refused():
    b = _tiny_model()
    b.tensors[3].shape = (1 << 20, 1 << 20, 64)
    _raises(b.build(), "'y'", "limit")


def test_negative_dimension_is_refused():
    b = _tiny_model()
    b.tensors[0].shape = (1, -4)
    _raises(b.build(), "negative dimension")


def test_per_channel_count_must_match():
    b = _tiny_model()
    b.tensors[1].scales = [0.1, 0.2]
    b.tensors[1].zero_points = [0, 0]
    _raises(b.build(), "2 per-channel scales")


def test_opcode_index_out_of_range():
    b = _tiny_model()
    b.operators[0].opcode_index = 5
    _raises(b.build(), "opcode_index refers to operator_code 5")


def test_operators_out_of_order():
    b = _tiny_model()
    mid = b.add_tensor("mid", [1, 3], "INT8", scale=0.25)
    out2 = b.add_tensor("out2", [1, 3], "INT8", scale=0.25)
    b.add_operator("RELU", [mid], [out2])
    b.add_operator("RELU", [b.outputs[0]], [mid])
    b.outputs = [out2]
    _raises(b.build(), "before any operator produces it")


def test_two_producers():
    b = _tiny_model()
    b.add_operator("RELU", [0], [3])
    _raises(b.build(), "written by operators 0 and 1")


def test_wrong_options_table():
    b = _tiny_model()
    b.operators[0].options_table = "Conv2DOptions"
    b.operators[0].options = {}
    _raises(b.build(), "carries Conv2DOptions, expected FullyConnectedOptions")


def test_bad_schema_version():
    b = _tiny_model()
    b.schema_version = 2
    _raises(b.build(), "schema version is 2")
