"""Single-op models of every registered builtin in every tensor-type combination worth asking
about: the types a kernel runs, the neighbours TFLM refuses (uint8, the old TFLite
quantization; int64; bool; hybrid float-activation / int8-weight layers; int64 biases on int8
layers). The type tests (tests/test_kernels_types.py: micro_rt's prepare accepts exactly what
TFLM's does; test_op_coverage.py, ...) and benchmarks/bench_op_cycles.py share them; TFLM's
verdicts on them come from tests/oracle_verdicts.py.

`type_cases()` returns (label, op, model bytes); the label names the types, e.g.
"CAST UINT8->INT32" or "CONV_2D in=INT16 filter=INT8 bias=INT32".
"""
from __future__ import annotations

from typing import Any, Callable, Iterator, Sequence

import numpy as np

from devtools.op_models.lstm import lstm_model
from devtools.op_models.single_op import single_op
from devtools.op_models.svdf import svdf_model
from micro_rt.builder import ModelBuilder

TYPES = ("FLOAT32", "INT8", "INT16", "INT32", "UINT8", "INT64", "BOOL")
QUANTIZED = ("INT8", "INT16", "UINT8")
# Quantization that TFLM's int8 LOGISTIC / SOFTMAX / TANH outputs require (and uint8's twin).
FIXED_OUT = {"LOGISTIC": {"INT8": (1 / 256, -128), "UINT8": (1 / 256, 0), "INT16": (1 / 32768, 0)},
             "SOFTMAX": {"INT8": (1 / 256, -128), "UINT8": (1 / 256, 0), "INT16": (1 / 32768, 0)},
             "TANH": {"INT8": (1 / 128, 0), "UINT8": (1 / 128, 128), "INT16": (1 / 32768, 0)}}


def spec(shape: Sequence[int], typ: str, scale: float = 0.05, zp: int = 0, **kw: Any) -> dict:
    """A tensor spec for `single_op`; quantized types get a scale and zero point
    (uint8 the old style's mid-range zero point)."""
    d = dict(shape=tuple(shape), type=typ, **kw)
    if typ in QUANTIZED:
        d.update(scale=scale, zp=128 if typ == "UINT8" and zp == 0 else zp)
    return d


def const(shape: Sequence[int], typ: str, values: Any, **kw: Any) -> dict:
    return spec(shape, typ, data=np.asarray(values).reshape(shape), **kw)


def _i32(values) -> dict:
    values = np.asarray(values)
    return dict(shape=values.shape, type="INT32", data=values)


def _unary(op, options=None):
    def make(t):
        s = (2, 3, 4)
        scale, zp = FIXED_OUT.get(op, {}).get(t, (0.04, 0))
        return single_op(op, [spec(s, t, 0.03, 1 if t in ("INT8",) else 0)], spec(s, t, scale, zp), options)
    return make


def _binary(op):
    def make(t):
        s = (2, 3, 4)
        same = op in ("MAXIMUM", "MINIMUM")
        return single_op(op, [spec(s, t, 0.05), spec((4,), t, 0.05 if same else 0.07)],
                         spec(s, t, 0.05 if same else 0.1))
    return make


def _pool(op):
    def make(t):
        return single_op(op, [spec((1, 4, 4, 2), t)], spec((1, 2, 2, 2), t),
                         {"padding": "VALID", "stride_h": 2, "stride_w": 2,
                          "filter_height": 2, "filter_width": 2})
    return make


def _same_type_cases():
    s4 = (2, 3, 4, 5)
    makers = {
        "RESHAPE": lambda t: single_op("RESHAPE", [spec(s4, t), _i32([6, 20])], spec((6, 20), t),
                                       {"new_shape": [6, 20]}),
        "SQUEEZE": lambda t: single_op("SQUEEZE", [spec((1, 3, 1, 5), t)], spec((3, 5), t),
                                       {"squeeze_dims": [0, 2]}),
        "EXPAND_DIMS": lambda t: single_op("EXPAND_DIMS", [spec((3, 5), t), _i32([-1])], spec((3, 5, 1), t)),
        "TRANSPOSE": lambda t: single_op("TRANSPOSE", [spec((3, 4, 5), t), _i32([2, 1, 0])], spec((5, 4, 3), t)),
        "PAD": lambda t: single_op("PAD", [spec((2, 3), t), _i32([[0, 1], [2, 0]])], spec((3, 5), t)),
        "PADV2": lambda t: single_op("PADV2", [spec((2, 3), t), _i32([[0, 1], [2, 0]]), const((1,), t, [1])],
                                     spec((3, 5), t)),
        "CONCATENATION": lambda t: single_op("CONCATENATION", [spec((2, 3), t), spec((2, 2), t)],
                                             spec((2, 5), t), {"axis": 1}),
        "PACK": lambda t: single_op("PACK", [spec((3, 4), t), spec((3, 4), t)], spec((3, 2, 4), t),
                                    {"values_count": 2, "axis": 1}),
        "STRIDED_SLICE": lambda t: single_op("STRIDED_SLICE", [spec((4, 6), t), _i32([1, 0]), _i32([4, 6]),
                                                               _i32([1, 2])], spec((3, 3), t)),
        "MEAN": lambda t: single_op("MEAN", [spec((1, 4, 4, 3), t), _i32([1, 2])], spec((1, 1, 1, 3), t),
                                    {"keep_dims": True}),
        "SOFTMAX": lambda t: single_op("SOFTMAX", [spec((2, 7), t, 0.1)],
                                       spec((2, 7), t, *FIXED_OUT["SOFTMAX"].get(t, (0.1, 0))), {"beta": 1.0}),
        "LEAKY_RELU": _unary("LEAKY_RELU", {"alpha": 0.2}),
        "RESIZE_NEAREST_NEIGHBOR": lambda t: single_op("RESIZE_NEAREST_NEIGHBOR", [spec((1, 2, 3, 2), t),
                                                                                 _i32([4, 5])],
                                                       spec((1, 4, 5, 2), t)),
        "RESIZE_BILINEAR": lambda t: single_op("RESIZE_BILINEAR", [spec((1, 2, 3, 2), t), _i32([4, 5])],
                                               spec((1, 4, 5, 2), t)),
        "BATCH_MATMUL": lambda t: single_op("BATCH_MATMUL", [spec((2, 3, 4), t), spec((2, 4, 5), t)],
                                            spec((2, 3, 5), t, 0.5)),
        "AVERAGE_POOL_2D": _pool("AVERAGE_POOL_2D"),
        "MAX_POOL_2D": _pool("MAX_POOL_2D"),
    }
    for op in ("RELU", "RELU6", "LOGISTIC", "TANH", "HARD_SWISH"):
        makers[op] = _unary(op)
    for op in ("ADD", "SUB", "MUL", "MAXIMUM", "MINIMUM"):
        makers[op] = _binary(op)
    for op, make in makers.items():
        for t in TYPES:
            yield f"{op} {t}", op, make(t)
    for t in TYPES:
        for out in ("INT32", "INT64"):
            yield f"SHAPE {t}->{out}", "SHAPE", single_op("SHAPE", [spec((2, 3), t)], spec((2,), out),
                                                          {"out_type": out})


def _conversion_cases():
    s = (3, 5)
    for a in TYPES:
        for b in TYPES:
            yield f"CAST {a}->{b}", "CAST", single_op("CAST", [dict(shape=s, type=a)], dict(shape=s, type=b))
    for a in ("FLOAT32", "INT8", "INT16", "INT32", "UINT8"):
        for b in ("INT8", "INT16", "INT32", "UINT8", "FLOAT32"):
            yield (f"QUANTIZE {a}->{b}", "QUANTIZE",
                   single_op("QUANTIZE", [spec(s, a, 0.02)], spec(s, b, 0.03)))
    for a in ("INT8", "INT16", "INT32", "UINT8", "FLOAT32"):
        for b in ("FLOAT32", "INT32"):
            yield (f"DEQUANTIZE {a}->{b}", "DEQUANTIZE",
                   single_op("DEQUANTIZE", [dict(shape=s, type=a, scale=0.02, zp=0) if a == "INT32" else spec(s, a, 0.02)],
                             dict(shape=s, type=b)))


# (input, filter, bias) types of the weighted layers; "-" = no bias.
LAYER_TYPES = [("FLOAT32", "FLOAT32", "FLOAT32"), ("INT8", "INT8", "INT32"), ("INT8", "INT8", "INT64"),
               ("INT8", "INT8", "-"), ("INT16", "INT8", "INT64"), ("INT16", "INT8", "INT32"),
               ("INT16", "INT8", "-"), ("INT16", "INT16", "INT64"), ("UINT8", "UINT8", "INT32"),
               ("FLOAT32", "INT8", "FLOAT32"), ("INT8", "INT8", "INT16"), ("INT8", "INT8", "FLOAT32"),
               ("FLOAT32", "FLOAT32", "INT32"), ("INT32", "INT32", "INT32")]


def _layer(op: str, it: str, ft: str, bt: str) -> bytes:
    rng = np.random.default_rng(3)
    oc = 4
    x: tuple[int, ...]
    fshape: tuple[int, ...]
    y: tuple[int, ...]
    if op == "CONV_2D":
        x, fshape, y = (1, 5, 5, 3), (oc, 3, 3, 3), (1, 3, 3, oc)
        opts = {"padding": "VALID", "stride_h": 1, "stride_w": 1}
    elif op == "DEPTHWISE_CONV_2D":
        x, fshape, y = (1, 5, 5, 2), (1, 3, 3, oc), (1, 3, 3, oc)
        opts = {"padding": "VALID", "stride_h": 1, "stride_w": 1, "depth_multiplier": 2}
    elif op == "TRANSPOSE_CONV":
        x, fshape, y = (1, 3, 3, 3), (oc, 3, 3, 3), (1, 5, 5, oc)
        opts = {"padding": "VALID", "stride_h": 1, "stride_w": 1}
    else:
        x, fshape, y = (2, 6), (oc, 6), (2, oc)
        opts = {}
    w = rng.integers(-100, 100, fshape)
    bias = None if bt == "-" else const((oc,), bt, rng.integers(-500, 500, oc), scale=0.05 * 0.01)
    inputs = [spec(x, it, 0.05), const(fshape, ft, w, scale=0.01), bias]
    if op == "TRANSPOSE_CONV":          # inputs: output shape, filter, input, bias
        inputs = [_i32(list(y)), inputs[1], inputs[0]] + ([bias] if bias else [])
    return single_op(op, inputs, spec(y, it, 0.2), opts)


def _layer_cases():
    for op in ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "TRANSPOSE_CONV"):
        for it, ft, bt in LAYER_TYPES:
            yield f"{op} in={it} filter={ft} bias={bt}", op, _layer(op, it, ft, bt)
    for lt, rt in (("FLOAT32", "INT8"), ("INT8", "INT16"), ("INT16", "INT8")):     # hybrid / mixed
        yield (f"BATCH_MATMUL lhs={lt} rhs={rt}", "BATCH_MATMUL",
               single_op("BATCH_MATMUL", [spec((2, 3, 4), lt), const((2, 4, 5), rt, np.ones((2, 4, 5)))],
                         spec((2, 3, 5), lt)))


def _retyped(data: bytes, types: dict) -> bytes:
    """The model with tensors renamed to other types ({tensor name: type name})."""
    from micro_rt.model import read_model
    from micro_rt.schema import NUMPY_DTYPE
    b = ModelBuilder.from_model(read_model(data))
    for t in b.tensors:
        if t.name not in types:
            continue
        old, new = NUMPY_DTYPE[t.type_name], NUMPY_DTYPE[types[t.name]]
        t.type_name = types[t.name]
        if t.buffer:        # constants keep their values, in the new type's bytes
            values: np.ndarray = np.frombuffer(b.buffers[t.buffer], old)
            b.buffers[t.buffer] = np.clip(values, -100, 100).astype(new).tobytes()
        if t.type_name == "FLOAT32":
            t.scales = t.zero_points = None
        elif not t.scales:
            t.scales, t.zero_points = [0.01], [0]
        if t.type_name == "UINT8":
            assert t.scales is not None
            t.zero_points = [128] * len(t.scales)
    return b.build()


def _recurrent_cases():
    for kind in ("float", "int8", "int16"):
        yield f"SVDF {kind}", "SVDF", svdf_model(1, 5, 4, 2, 3, kind=kind)
    yield ("SVDF hybrid in=FLOAT32 weights=INT8", "SVDF",
           _retyped(svdf_model(1, 5, 4, 2, 3, kind="int16"),
                    {"input": "FLOAT32", "output": "FLOAT32", "state": "FLOAT32", "bias": "FLOAT32",
                     "weights_time": "INT8"}))
    yield ("SVDF in=UINT8", "SVDF", _retyped(svdf_model(1, 5, 4, 2, 3, kind="int16"),
                                             {"input": "UINT8", "output": "UINT8", "weights_feature": "UINT8"}))
    yield "UNIDIRECTIONAL_SEQUENCE_LSTM float", "UNIDIRECTIONAL_SEQUENCE_LSTM", lstm_model("float32", 1, 3, 4, 3)
    yield "UNIDIRECTIONAL_SEQUENCE_LSTM int8", "UNIDIRECTIONAL_SEQUENCE_LSTM", lstm_model("int8", 1, 3, 4, 3)
    yield "UNIDIRECTIONAL_SEQUENCE_LSTM int16", "UNIDIRECTIONAL_SEQUENCE_LSTM", lstm_model("int16", 1, 3, 4, 3)
    weights = {f"w{k}": "INT8" for k in range(8)}
    yield ("UNIDIRECTIONAL_SEQUENCE_LSTM hybrid in=FLOAT32 weights=INT8", "UNIDIRECTIONAL_SEQUENCE_LSTM",
           _retyped(lstm_model("float32", 1, 3, 4, 3), weights))
    yield ("UNIDIRECTIONAL_SEQUENCE_LSTM in=UINT8", "UNIDIRECTIONAL_SEQUENCE_LSTM",
           _retyped(lstm_model("int8", 1, 3, 4, 3), {"x": "UINT8", "y": "UINT8", "h": "UINT8",
                                                     **{f"w{k}": "UINT8" for k in range(8)}}))


def binary_ops_and_comparison_cases() -> Iterator[tuple[str, str, bytes]]:
    """DIV .. PRELU (kernels/binary_ops.py), the comparisons, LOGICAL_AND / OR and SELECT_V2
    (kernels/comparisons.py). Divisors are constants without zeros: TFLM's FLOOR_DIV and int32
    DIV refuse a zero divisor when invoked, and the oracle's verdict invokes on zeros."""
    s = (2, 3, 4)
    divisor = [3, -2, 5, 7]
    makers: dict[str, Callable[..., bytes]] = {
        op: (lambda t, op=op: single_op(op, [spec(s, t, 0.05), const((4,), t, divisor, scale=0.07)],
                                        spec(s, t, 0.1)))
        for op in ("DIV", "FLOOR_DIV", "FLOOR_MOD")}
    makers["SQUARED_DIFFERENCE"] = _binary("SQUARED_DIFFERENCE")
    makers["ADD_N"] = lambda t: single_op("ADD_N", [spec(s, t, 0.05)] * 3, spec(s, t, 0.1))
    makers["PRELU"] = lambda t: single_op("PRELU", [spec(s, t, 0.05), const((4,), "INT8" if t == "INT16" else t,
                                                                            [1, -2, 3, 0], scale=0.02)],
                                          spec(s, t, 0.06))
    for op in ("EQUAL", "NOT_EQUAL", "GREATER", "GREATER_EQUAL", "LESS", "LESS_EQUAL"):
        makers[op] = lambda t, op=op: single_op(op, [spec(s, t, 0.05), spec((4,), t, 0.07)], spec(s, "BOOL"))
    for op in ("LOGICAL_AND", "LOGICAL_OR"):
        makers[op] = _binary(op)
    makers["SELECT_V2"] = lambda t: single_op("SELECT_V2", [spec(s, "BOOL"), spec(s, t, 0.05), spec((4,), t, 0.05)],
                                              spec(s, t, 0.05))
    for op, make in makers.items():
        for t in TYPES:
            yield f"{op} {t}", op, make(t)


def _unary_math_cases():
    """ABS ... ZEROS_LIKE (the unary math family) in every type; int16 ABS also unquantized."""
    s = (2, 3, 4)
    for op in ("ABS", "CEIL", "COS", "ELU", "EXP", "FLOOR", "LOG", "LOGICAL_NOT", "NEG", "ROUND", "RSQRT", "SIN",
               "SQRT", "SQUARE", "ZEROS_LIKE"):
        for t in TYPES:
            zp = -128 if op == "RSQRT" and t == "INT8" else 0       # RSQRT: every input above zero
            yield f"{op} {t}", op, single_op(op, [spec(s, t, 0.03, zp)], spec(s, t, 0.04, zp))
    yield "ABS INT16 unquantized", "ABS", single_op("ABS", [dict(shape=s, type="INT16")], dict(shape=s, type="INT16"))


def _reduce_family_cases():
    """SUM, REDUCE_MAX / MIN / ALL, ARG_MAX / ARG_MIN (int32 and int64 outputs), CUMSUM,
    LOG_SOFTMAX, L2_NORMALIZATION and L2_POOL_2D in every type."""
    s = (2, 3, 4)
    for t in TYPES:
        for op in ("SUM", "REDUCE_MAX", "REDUCE_MIN", "REDUCE_ALL"):
            same = op in ("REDUCE_MAX", "REDUCE_MIN")
            yield f"{op} {t}", op, single_op(op, [spec(s, t), _i32([1, -1])], spec((2,), t, 0.05 if same else 0.4),
                                             {"keep_dims": False})
        for op in ("ARG_MAX", "ARG_MIN"):
            for out in ("INT32", "INT64"):
                yield (f"{op} {t}->{out}", op,
                       single_op(op, [spec(s, t), _i32([1])], dict(shape=(2, 4), type=out), {"output_type": out}))
        yield f"CUMSUM {t}", "CUMSUM", single_op("CUMSUM", [spec(s, t), _i32(np.array(-1))], spec(s, t, 0.3),
                                                 {"exclusive": True, "reverse": False})
        log_out = (16 / 256, 127) if t == "INT8" else (0.0625, 0)
        yield f"LOG_SOFTMAX {t}", "LOG_SOFTMAX", single_op("LOG_SOFTMAX", [spec(s, t, 0.1)], spec(s, t, *log_out))
        yield (f"L2_NORMALIZATION {t}", "L2_NORMALIZATION",
               single_op("L2_NORMALIZATION", [spec(s, t, 0.1, 1 if t == "INT8" else 0)], spec(s, t, 1 / 128),
                         {"fused_activation_function": "NONE"}))
        yield f"L2_POOL_2D {t}", "L2_POOL_2D", _pool("L2_POOL_2D")(t)


def _passing_subgraph(b: ModelBuilder, typ: str, shape, outputs: str = "same") -> int:
    """A subgraph with one input of `typ` and as output that input ("same") or a constant
    False condition ("false"), no operators (TFLM copies straight through)."""
    sg = b.add_subgraph(f"pass_{outputs}")
    a = b.add_tensor("a", shape, typ, subgraph=sg, **_quantization(typ))
    b.subgraphs[sg - 1].inputs = [a]
    b.subgraphs[sg - 1].outputs = [a] if outputs == "same" else [
        b.add_tensor("stop", (), "BOOL", data=np.array(False), subgraph=sg)]
    return sg


def _quantization(typ: str) -> dict:
    return {"scale": 0.05, "zero_point": 128 if typ == "UINT8" else 0} if typ in QUANTIZED else {}


def _io(b: ModelBuilder, typ: str, shape) -> tuple[int, int]:
    x = b.add_tensor("x", shape, typ, **_quantization(typ))
    y = b.add_tensor("y", shape, typ, **_quantization(typ))
    return x, y


def _control_cases():
    """IF (a bool condition, or another type) and WHILE around subgraphs that pass their data
    through; the resource variables holding each type; CALL_ONCE initialising one."""
    shape = (2, 3)
    for t in TYPES:
        for cond_type in ("BOOL", "INT32") if t == "FLOAT32" else ("BOOL",):
            b = ModelBuilder("kernel test")
            cond = b.add_tensor("cond", (1,), cond_type)
            x, y = _io(b, t, shape)
            then, other = _passing_subgraph(b, t, shape), _passing_subgraph(b, t, shape)
            b.add_operator("IF", [cond, x], [y], options={"then_subgraph_index": then,
                                                           "else_subgraph_index": other})
            b.inputs, b.outputs = [cond, x], [y]
            yield f"IF cond={cond_type} data={t}", "IF", b.build()
        b = ModelBuilder("kernel test")
        x, y = _io(b, t, shape)
        cond, body = _passing_subgraph(b, t, shape, "false"), _passing_subgraph(b, t, shape)
        b.add_operator("WHILE", [x], [y], options={"cond_subgraph_index": cond,
                                                    "body_subgraph_index": body})
        b.inputs, b.outputs = [x], [y]
        yield f"WHILE {t}", "WHILE", b.build()
        for op in ("VAR_HANDLE", "ASSIGN_VARIABLE", "READ_VARIABLE"):
            b = ModelBuilder("kernel test")
            x, y = _io(b, t, shape)
            handle = b.add_tensor("handle", (), "RESOURCE")
            b.add_operator("VAR_HANDLE", [], [handle], options={"shared_name": "v"})
            b.add_operator("ASSIGN_VARIABLE", [handle, x], [])
            b.add_operator("READ_VARIABLE", [handle], [y])
            b.inputs, b.outputs = [x], [y]
            yield f"{op} {t} (VAR_HANDLE, ASSIGN_VARIABLE, READ_VARIABLE)", op, b.build()
    b = ModelBuilder("kernel test")
    x, y = _io(b, "FLOAT32", shape)
    init = b.add_subgraph("init")
    value = b.add_tensor("value", shape, "FLOAT32", data=np.arange(6, dtype=np.float32).reshape(shape),
                         subgraph=init)
    init_handle = b.add_tensor("handle", (), "RESOURCE", subgraph=init)
    b.add_operator("VAR_HANDLE", [], [init_handle], options={"shared_name": "v"}, subgraph=init)
    b.add_operator("ASSIGN_VARIABLE", [init_handle, value], [], subgraph=init)
    handle, read = b.add_tensor("handle", (), "RESOURCE"), b.add_tensor("read", shape, "FLOAT32")
    b.add_operator("CALL_ONCE", [], [], options={"init_subgraph_index": init})
    b.add_operator("VAR_HANDLE", [], [handle], options={"shared_name": "v"})
    # the harness compares after a reset, which TFLM's CALL_ONCE does not undo: the variable
    # is assigned again before it is read (test_control_flow compares initial values)
    b.add_operator("ASSIGN_VARIABLE", [handle, x], [])
    b.add_operator("READ_VARIABLE", [handle], [read])
    b.add_operator("ADD", [read, x], [y])
    b.inputs, b.outputs = [x], [y]
    yield "CALL_ONCE FLOAT32 (an initializer subgraph assigning a variable)", "CALL_ONCE", b.build()


def type_cases() -> list[tuple[str, str, bytes]]:
    return [*_same_type_cases(), *_conversion_cases(), *_layer_cases(), *_recurrent_cases(),
            *_data_movement_cases(), *_control_cases(),
            *binary_ops_and_comparison_cases(), *_unary_math_cases(),
            *_reduce_family_cases()]


def _data_movement_cases():
    """Issue 12's data-movement family (kernels/space_depth.py, slicing.py, gather.py,
    broadcast.py): each op in every type, plus the index / shape tensor types TFLM takes or
    refuses. Indices are constants, so zeros fed to the graph inputs stay in range."""
    s3 = (3, 4, 5)
    makers = {
        "DEPTH_TO_SPACE": lambda t: single_op("DEPTH_TO_SPACE", [spec((1, 2, 3, 8), t)], spec((1, 4, 6, 2), t),
                                              {"block_size": 2}),
        "SPACE_TO_DEPTH": lambda t: single_op("SPACE_TO_DEPTH", [spec((1, 4, 6, 2), t)], spec((1, 2, 3, 8), t),
                                              {"block_size": 2}),
        # no padding: TFLM pads with a persistent byte nothing fills (see kernels/space_depth.py)
        "SPACE_TO_BATCH_ND": lambda t: single_op("SPACE_TO_BATCH_ND", [spec((1, 4, 6, 2), t), _i32([2, 2]),
                                                                       _i32([[0, 0], [0, 0]])], spec((4, 2, 3, 2), t)),
        "BATCH_TO_SPACE_ND": lambda t: single_op("BATCH_TO_SPACE_ND", [spec((4, 2, 3, 2), t), _i32([2, 2]),
                                                                       _i32([[0, 0], [1, 0]])], spec((1, 4, 5, 2), t)),
        "SLICE": lambda t: single_op("SLICE", [spec(s3, t), _i32([1, 0, 2]), _i32([2, -1, 3])], spec((2, 4, 3), t)),
        "REVERSE_V2": lambda t: single_op("REVERSE_V2", [spec(s3, t), _i32([1, 2])], spec(s3, t)),
        "SPLIT": lambda t: single_op("SPLIT", [_i32(1), spec(s3, t)], outputs=[spec((3, 2, 5), t)] * 2,
                                     options={"num_splits": 2}),
        "SPLIT_V": lambda t: single_op("SPLIT_V", [spec(s3, t), _i32([1, 3]), _i32(1)],
                                       outputs=[spec((3, 1, 5), t), spec((3, 3, 5), t)], options={"num_splits": 2}),
        "UNPACK": lambda t: single_op("UNPACK", [spec((3, 2, 5), t)], outputs=[spec((3, 5), t)] * 2,
                                      options={"num": 2, "axis": 1}),
        "DYNAMIC_UPDATE_SLICE": lambda t: single_op("DYNAMIC_UPDATE_SLICE", [spec(s3, t), spec((1, 2, 3), t),
                                                                             _i32([1, 1, 1])], spec(s3, t)),
        "GATHER": lambda t: single_op("GATHER", [spec(s3, t), _i32([2, 0])], spec((3, 2, 5), t), {"axis": 1}),
        "GATHER_ND": lambda t: single_op("GATHER_ND", [spec(s3, t), _i32([[1, 2], [0, 3]])], spec((2, 5), t)),
        "EMBEDDING_LOOKUP": lambda t: single_op("EMBEDDING_LOOKUP", [_i32([2, 0, 1]), spec((4, 5), t)],
                                                spec((3, 5), t)),
        "FILL": lambda t: single_op("FILL", [_i32([2, 3]), spec((), t)], spec((2, 3), t)),
        "BROADCAST_TO": lambda t: single_op("BROADCAST_TO", [spec((1, 3), t), _i32([2, 4, 3])], spec((2, 4, 3), t)),
        "BROADCAST_ARGS": lambda t: single_op("BROADCAST_ARGS", [const((3,), t, [2, 1, 3]), const((2,), t, [4, 1])],
                                              spec((3,), t)),
        "MIRROR_PAD": lambda t: single_op("MIRROR_PAD", [spec((2, 3, 4), t), _i32([[0, 1], [1, 1], [2, 0]])],
                                          spec((3, 5, 6), t), {"mode": 0}),
    }
    for op, make in makers.items():
        for t in TYPES:
            yield f"{op} {t}", op, make(t)
    i64 = lambda values: const(np.shape(values), "INT64", values)  # noqa: E731
    for it in ("INT64", "INT16"):
        yield (f"GATHER positions={it}", "GATHER",
               single_op("GATHER", [spec(s3, "INT8"), const((2,), it, [2, 0])], spec((3, 2, 5), "INT8"), {"axis": 1}))
    yield ("GATHER_ND indices=INT64", "GATHER_ND",
           single_op("GATHER_ND", [spec(s3, "INT8"), i64([[1, 2], [0, 3]])], spec((2, 5), "INT8")))
    for out in ("FLOAT32", "INT8", "INT16"):
        yield (f"EMBEDDING_LOOKUP table=INT8 out={out}", "EMBEDDING_LOOKUP",
               single_op("EMBEDDING_LOOKUP", [_i32([2, 0, 1]), spec((4, 5), "INT8", 0.02)], spec((3, 5), out)))
    yield ("EMBEDDING_LOOKUP table=INT8 zp=3 out=FLOAT32", "EMBEDDING_LOOKUP",
           single_op("EMBEDDING_LOOKUP", [_i32([2, 0, 1]), spec((4, 5), "INT8", 0.02, 3)], spec((3, 5), "FLOAT32")))
    yield ("EMBEDDING_LOOKUP ids=INT64", "EMBEDDING_LOOKUP",
           single_op("EMBEDDING_LOOKUP", [i64([2, 0, 1]), spec((4, 5), "FLOAT32")], spec((3, 5), "FLOAT32")))
    for t in ("FLOAT32", "INT8", "INT32"):
        yield (f"FILL {t} dims=INT64", "FILL", single_op("FILL", [i64([2, 3]), spec((), t)], spec((2, 3), t)))
        yield (f"DYNAMIC_UPDATE_SLICE {t} start=INT64", "DYNAMIC_UPDATE_SLICE",
               single_op("DYNAMIC_UPDATE_SLICE", [spec(s3, t), spec((1, 2, 3), t), i64([1, 1, 1])], spec(s3, t)))
        yield (f"SLICE {t} begin=INT64", "SLICE",
               single_op("SLICE", [spec(s3, t), i64([1, 0, 2]), i64([2, -1, 3])], spec((2, 4, 3), t)))
        yield (f"BROADCAST_TO {t} shape=INT64", "BROADCAST_TO",
               single_op("BROADCAST_TO", [spec((1, 3), t), i64([2, 4, 3])], spec((2, 4, 3), t)))
        yield (f"MIRROR_PAD {t} padding=INT64", "MIRROR_PAD",
               single_op("MIRROR_PAD", [spec((2, 3, 4), t), i64([[0, 1], [1, 1], [2, 0]])], spec((3, 5, 6), t),
                         {"mode": 1}))
