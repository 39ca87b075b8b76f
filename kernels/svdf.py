"""SVDF: TFLM's reference kernel (svdf.cc, svdf_common.cc: PrepareSvdf,
EvalIntegerSvdfReference<int16_t / int8_t>, EvalFloatSvdfReference).

Inputs: 0 input (batch, input_size), 1 weights_feature (num_filters, input_size),
2 weights_time (num_filters, memory_size), 3 bias (num_units,) or -1,
4 activation state, a variable tensor (batch, memory_size * num_filters) that carries over
between invokes. Output (batch, num_units), num_units = num_filters / rank.

Every invoke shifts each filter's memory one step left, writes the feature projection of
the new input into the last slot, then takes each filter's dot product with weights_time,
sums `rank` filters per unit, adds the bias.

int8 (input int8; weights_time and state both int16 or both int8): the feature dot product
(exact, int32 wrap-around) is requantized with effective_scale_1 = in * wf / state,
saturated to the state type, offset by the state zero point and stored with wrap-around;
the time dot products subtract the state zero point; the unit sums (+ bias) are
requantized with effective_scale_2 = state * wt / out, + output zero point, clamped to
int8. TFLM applies no fused activation on this path, and neither do we.
Two details follow the oracle's tflite-micro build, measured, not the current published
source: both effective scales come from double arithmetic (the source multiplies the
float scales in float32), and the zero point is added after saturating (newer sources add
it before). Int8 states start at (and reset to) their zero point: the interpreter's
ResetVariableTensors.
float32: sequential float32 accumulation in TFLM's loop order (products rounded, then
sums), then ActivationValFloat.

Allocations (checked against the oracle by the arena tests): OpDataSvdf in init; scratch
batch * num_filters * 4 bytes, plus batch * num_units * 4 on the integer path.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from micro_rt.kernel_api import KernelContext, Node, Registration, op_data_init

from .exact_matmul import max_abs_offset, sequential_matmul_f32
from .fixedpoint import wrap_int32
from .kernel_util import activation_of, kernel_error, scale_of, tensor_name, zero_point_of
from .libm import tanhf
from .quant import quantize_multiplier
from .requant import InPlaceRequant, clip

_FLOAT_ACTIVATIONS = ("NONE", "RELU", "RELU_N1_TO_1", "RELU6", "TANH", "SIGN_BIT")


@dataclass
class OpDataSvdf:
    kind: str = ""                   # "int" or "float"
    batch: int = 0
    input_size: int = 0
    num_filters: int = 0
    num_units: int = 0
    rank: int = 1
    memory_size: int = 0
    activation: str = "NONE"
    effective_scale_1_a: int = 0
    effective_scale_1_b: int = 0
    effective_scale_2_a: int = 0
    effective_scale_2_b: int = 0
    input_zero_point: int = 0
    output_zero_point: int = 0
    activation_state_zero_point: int = 0
    state_min: int = 0
    state_max: int = 0
    weights_feature_t: Any = None    # (input_size, num_filters) float64 (int) / float32 columns
    weights_time: Any = None         # (num_filters, memory_size) float64 (int) / float32
    bias: Any = None                 # (num_units,) int64 / float32, or None
    feature_zp_term: Any = None      # input zero point * each filter's weight sum
    wrap_feature: bool = False       # the int32 feature dot products could overflow
    wrap_time: bool = False          # the int32 time sums (+ bias) could overflow
    scratch_tensor_index: int = -1
    scratch_output_tensor_index: int = -1
    bufs: Any = None                 # int path: invoke buffers and constants, made in prepare


svdf_init = op_data_init("OpDataSvdf", OpDataSvdf)


def _dims(node, t, what: str, expected: tuple) -> None:
    """TF_LITE_ENSURE_EQ on a tensor's dimensions (None = any size)."""
    ok = len(t.shape) == len(expected) and all(e is None or int(d) == e for d, e in zip(t.shape, expected))
    if not ok:
        want = ", ".join("?" if e is None else str(e) for e in expected)
        raise kernel_error(node, f"{what} {tensor_name(t)} has shape {list(t.shape)}, expected [{want}]")


def svdf_prepare(ctx: KernelContext, node: Node) -> None:
    data: OpDataSvdf = node.user_data
    if data is None:                 # a caller that skipped init
        data = node.user_data = OpDataSvdf()
    inp, wf, wt, bias, state, out = _validated_tensors(ctx, node)
    _read_sizes(node, data, inp, wf, wt, bias, state, out)
    if np.dtype(inp.dtype) == np.int8:
        _check_integer_types(node, wf, wt, bias, state, out)
        _integer_quantization(node, data, inp, wf, wt, bias, state, out)
        feature_bound, time_bound = _integer_weights(data, wf, wt, bias)
        data.scratch_tensor_index = ctx.request_scratch(data.batch * data.num_filters * 4)
        data.scratch_output_tensor_index = ctx.request_scratch(data.batch * data.num_units * 4)
        _prepare_int_buffers(data, feature_bound, time_bound)
    else:
        _prepare_float(node, data, wf, wt, bias, state, out)
        data.scratch_tensor_index = ctx.request_scratch(data.batch * data.num_filters * 4)


def _validated_tensors(ctx: KernelContext, node: Node) -> tuple:
    """(input, weights_feature, weights_time, bias or None, activation state, output)."""
    if len(node.inputs) != 5:
        raise kernel_error(node, f"SVDF takes 5 inputs, got {len(node.inputs)}")
    if len(node.outputs) != 1:
        raise kernel_error(node, f"SVDF has 1 output, got {len(node.outputs)}")
    inp, wf, wt, bias, state = (ctx.input(node, i) for i in range(5))
    for t, what in ((inp, "input"), (wf, "weights_feature"), (wt, "weights_time"),
                    (state, "activation state")):
        if t is None:
            raise kernel_error(node, f"the {what} input is missing")
    return inp, wf, wt, bias, state, ctx.output(node, 0)


def _read_sizes(node, data: OpDataSvdf, inp, wf, wt, bias, state, out) -> None:
    """Batch, sizes, rank and activation into `data`; every tensor of the shape they imply,
    the input of a supported type, the weights and bias constant, the state a variable."""
    rank = int(node.options.get("rank", 1) or 0)
    if len(inp.shape) != 2:
        raise kernel_error(node, f"input {tensor_name(inp)} must be 2-D (batch, input_size), got shape {list(inp.shape)}")
    if len(wf.shape) != 2:
        raise kernel_error(node, f"weights_feature {tensor_name(wf)} must be 2-D, got shape {list(wf.shape)}")
    if len(wt.shape) != 2:
        raise kernel_error(node, f"weights_time {tensor_name(wt)} must be 2-D, got shape {list(wt.shape)}")
    batch, input_size = (int(d) for d in inp.shape)
    num_filters = int(wf.shape[0])
    if rank < 1 or num_filters % rank:
        raise kernel_error(node, f"rank {rank} does not divide the {num_filters} filters of {tensor_name(wf)}")
    num_units = num_filters // rank
    memory_size = int(wt.shape[1])

    it = np.dtype(inp.dtype)
    if it not in (np.float32, np.int8):
        raise kernel_error(node, f"input {tensor_name(inp)} has type {it.name}; SVDF takes float32 or int8")
    _dims(node, out, "output", (batch, num_units))
    _dims(node, wf, "weights_feature", (num_filters, input_size))
    _dims(node, wt, "weights_time", (num_filters, memory_size))
    if bias is not None and (len(bias.shape) < 1 or int(bias.shape[0]) != num_units):
        raise kernel_error(node, f"bias {tensor_name(bias)} has shape {list(bias.shape)}, expected [{num_units}]")
    _dims(node, state, "activation state", (batch, memory_size * num_filters))
    if not state.is_variable:
        raise kernel_error(node, f"activation state {tensor_name(state)} must be a variable tensor")
    if wf.data is None or wt.data is None or (bias is not None and bias.data is None):
        raise kernel_error(node, "weights_feature, weights_time and bias must be constant tensors")

    data.batch, data.input_size, data.num_filters = batch, input_size, num_filters
    data.num_units, data.rank, data.memory_size = num_units, rank, memory_size
    data.activation = activation_of(node)


def _check_integer_types(node, wf, wt, bias, state, out) -> None:
    """int8 input: int8 feature weights, int16 or int8 time weights and state (the same),
    int32 bias, int8 output."""
    wft, wtt, st = np.dtype(wf.dtype), np.dtype(wt.dtype), np.dtype(state.dtype)
    if wft != np.int8:
        raise kernel_error(node, f"weights_feature {tensor_name(wf)} has type {wft.name}, expected int8")
    if wtt not in (np.int16, np.int8):
        raise kernel_error(node, f"weights_time {tensor_name(wt)} has type {wtt.name}, expected int16 or int8")
    if st not in (np.int16, np.int8):
        raise kernel_error(node, f"activation state {tensor_name(state)} has type {st.name}, expected int16 or int8")
    if st != wtt:
        # TFLM's Eval reads the state with weights_time's type: only matching types work.
        raise kernel_error(node, f"activation state {tensor_name(state)} ({st.name}) and weights_time "
                                 f"{tensor_name(wt)} ({wtt.name}) must have the same type")
    if bias is not None and np.dtype(bias.dtype) != np.int32:
        raise kernel_error(node, f"bias {tensor_name(bias)} has type {np.dtype(bias.dtype).name}, expected int32")
    if np.dtype(out.dtype) != np.int8:
        raise kernel_error(node, f"output {tensor_name(out)} has type {np.dtype(out.dtype).name}, expected int8")


def _integer_quantization(node, data: OpDataSvdf, inp, wf, wt, bias, state, out) -> None:
    """The two effective scales as multipliers and shifts, the zero points, the state range."""
    in_s, wf_s, wt_s = np.float32(scale_of(inp)), np.float32(scale_of(wf)), np.float32(scale_of(wt))
    st_s, out_s = np.float32(scale_of(state)), np.float32(scale_of(out))
    # The oracle's TFLM build gets both effective scales from double arithmetic on the
    # float scales (measured: the float32 products of the published source give other
    # multipliers, off by one in a state or output now and then).
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        scale_1 = float(np.float64(in_s) * np.float64(wf_s) / np.float64(st_s))
        scale_2 = float(np.float64(st_s) * np.float64(wt_s) / np.float64(out_s))
        state_times_wt = float(np.float32(st_s * wt_s))
    if bias is not None and not abs(scale_of(bias) - state_times_wt) < 1e-5:
        raise kernel_error(node, f"bias {tensor_name(bias)} scale {scale_of(bias)} is not "
                                 f"activation state scale * weights_time scale ({state_times_wt})")
    try:
        data.effective_scale_1_a, data.effective_scale_1_b = quantize_multiplier(scale_1)
        data.effective_scale_2_a, data.effective_scale_2_b = quantize_multiplier(scale_2)
    except ValueError as e:
        raise kernel_error(node, str(e)) from None
    data.input_zero_point = zero_point_of(inp)
    data.output_zero_point = zero_point_of(out)
    data.activation_state_zero_point = zero_point_of(state)
    info = np.iinfo(np.dtype(state.dtype))
    data.state_min, data.state_max = int(info.min), int(info.max)


def _integer_weights(data: OpDataSvdf, wf, wt, bias) -> tuple[int, int]:
    """The weights as exact float64 integers, the input zero point's term, and whether the C
    int32 sums could wrap. Returns the bounds on |feature dot products| and |unit sums|."""
    data.kind = "int"
    wf64 = np.asarray(wf.data, np.float64)
    data.weights_feature_t = np.ascontiguousarray(wf64.T)
    data.feature_zp_term = data.input_zero_point * wf64.sum(axis=1)
    data.weights_time = np.asarray(wt.data, np.float64)
    data.bias = None if bias is None else np.asarray(bias.data, np.int64).reshape(-1)[:data.num_units]
    feature_bound = int(np.abs(wf64).sum(axis=1).max(initial=0)) * max_abs_offset(np.int8, data.input_zero_point)
    s_span = max(abs(data.state_min - data.activation_state_zero_point),
                 abs(data.state_max - data.activation_state_zero_point))
    time_bound = int(np.abs(data.weights_time).sum(axis=1).max(initial=0)) * s_span * data.rank + (
        0 if data.bias is None else int(np.abs(data.bias).max(initial=0)))
    data.wrap_feature = feature_bound >= 2 ** 31
    data.wrap_time = time_bound >= 2 ** 31
    return feature_bound, time_bound


def _prepare_float(node, data: OpDataSvdf, wf, wt, bias, state, out) -> None:
    """float32 throughout, an activation ActivationValFloat knows, the weights in float32."""
    for t, what in ((wf, "weights_feature"), (wt, "weights_time"), (state, "activation state"),
                    (bias, "bias"), (out, "output")):
        if t is not None and np.dtype(t.dtype) != np.float32:
            raise kernel_error(node, f"{what} {tensor_name(t)} has type {np.dtype(t.dtype).name}, expected float32")
    if data.activation not in _FLOAT_ACTIVATIONS:
        raise kernel_error(node, f"fused activation {data.activation} is not supported")
    data.kind = "float"
    data.weights_feature_t = np.ascontiguousarray(np.asarray(wf.data, np.float32).T)
    data.weights_time = np.ascontiguousarray(np.asarray(wt.data, np.float32))
    data.bias = None if bias is None else np.asarray(bias.data, np.float32).reshape(-1)[:data.num_units].copy()


def _shift_state(state: np.ndarray) -> None:
    """TFLM's left shift of the whole state buffer by one element: per (batch, filter) row,
    the memory moves one step towards the past (the last slot is rewritten next)."""
    state[:, :, :-1] = state[:, :, 1:]


def _prepare_int_buffers(data: OpDataSvdf, feature_bound: int, time_bound: int) -> None:
    """Buffers and constants of _invoke_int, made once (no allocation per invoke). Zero-point
    terms and the bias ride along in the matmuls: a constant 1 in the input row (and in the
    memory) against an extra weight row (column) holding them, exact integers in float64.
    The bounds (on |feature dot products| and |unit sums|) pick the requantizations' form."""
    b, f, m, u = data.batch, data.num_filters, data.memory_size, data.num_units
    i64 = np.int64
    c0 = lambda v: np.asarray(v, i64)            # noqa: E731 - 0-d operands convert fastest
    bf: dict = {}
    # Feature: [x, 1] . [wf^T; -zp * sum(wf)] = sum((x - zp) * wf).
    xf = bf["xf"] = np.ones((b, data.input_size + 1), np.float64)
    bf["x_in"] = xf[:, :data.input_size]
    bf["wf_aug"] = np.ascontiguousarray(np.concatenate(
        [data.weights_feature_t, -np.asarray(data.feature_zp_term, np.float64)[None, :]]))
    bf["dotf"] = np.empty((b, f), np.float64)
    bf["dot"] = np.empty((b, f), i64)
    bf["rq1"] = InPlaceRequant(data.effective_scale_1_a, data.effective_scale_1_b, (b, f),
                               (1 << 31) if data.wrap_feature else feature_bound)
    bf["smin"], bf["smax"] = c0(data.state_min), c0(data.state_max)
    bf["szp"] = c0(data.activation_state_zero_point) if data.activation_state_zero_point else None
    # Time: [mem, 1] . [wt, -zp * sum(wt) + bias (first filter of each unit)] per filter. The
    # bias may join before the int32 wrap-around: wrapping is arithmetic modulo 2^32.
    mem = bf["mem"] = np.ones((b, f, m + 1), np.float64)
    bf["mem_in"] = mem[:, :, :m]
    extra = -float(data.activation_state_zero_point) * data.weights_time.sum(axis=1)
    if data.bias is not None:
        extra = extra.copy()
        extra[::data.rank] += data.bias.astype(np.float64)
    bf["wt_aug"] = np.ascontiguousarray(np.concatenate([data.weights_time, extra[:, None]], axis=1))
    bf["timef"] = np.empty((b, f), np.float64)
    bf["acc"] = np.empty((b, f), i64)
    bf["units"] = np.empty((b, u), i64) if data.rank > 1 else None
    bf["rq2"] = InPlaceRequant(data.effective_scale_2_a, data.effective_scale_2_b, (b, u),
                               (1 << 31) if data.wrap_time else time_bound, offset=data.output_zero_point)
    bf["m128"], bf["p127"] = c0(-128), c0(127)
    data.bufs = bf


if hasattr(np, "vecdot"):                     # numpy >= 2: the gufunc, cheaper than einsum
    def _rowdot(mem, wt, out):
        return np.vecdot(mem, wt, out=out)
else:                                         # pragma: no cover
    def _rowdot(mem, wt, out):
        return np.einsum("bfm,fm->bf", mem, wt, out=out)


def _invoke_int(ctx: KernelContext, node: Node, data: OpDataSvdf) -> None:
    bf = data.bufs
    x = ctx.required_input(node, 0).data
    state = ctx.required_input(node, 4).data.reshape(data.batch, data.num_filters, data.memory_size)
    _shift_state(state)

    # Feature matmul: int32 dot products of (input - zero point), exact in float64,
    # wrapped like the C int32 when they could overflow.
    dot = bf["dot"]
    bf["x_in"][...] = x.reshape(data.batch, data.input_size)
    dot[...] = np.dot(bf["xf"], bf["wf_aug"], out=bf["dotf"])
    if data.wrap_feature:
        dot[...] = wrap_int32(dot)
    bf["rq1"](dot)                                # MultiplyByQuantizedMultiplier
    # The oracle's TFLM saturates to the state type first, then adds the state zero point
    # and narrows (wrapping) into the state buffer (newer TFLM sources add it before).
    clip(dot, bf["smin"], bf["smax"], out=dot)
    if bf["szp"] is not None:
        dot += bf["szp"]
    state[:, :, -1] = dot                         # two's-complement wrap, as the C store

    # Time: each filter's memory (less the zero point) against its time weights, + bias;
    # integer products and sums, exact in float64.
    acc = bf["acc"]
    bf["mem_in"][...] = state
    acc[...] = _rowdot(bf["mem"], bf["wt_aug"], bf["timef"])
    y = acc
    if data.rank > 1:                             # reduce over rank
        y = bf["units"]
        np.add.reduce(acc.reshape(data.batch, data.num_units, data.rank), axis=2, out=y)
    if data.wrap_time:
        y[...] = wrap_int32(y)
    bf["rq2"](y)                                  # rescale, + output zero point
    clip(y, bf["m128"], bf["p127"], out=y)
    ctx.output(node, 0).data.reshape(data.batch, data.num_units)[...] = y


def _activation_float(act: str, a: np.ndarray) -> np.ndarray:
    """ActivationValFloat (TfLiteMax(x, y) = x < y ? y : x; TfLiteMin(x, y) = y < x ? y : x)."""
    zero, one, six = np.float32(0), np.float32(1), np.float32(6)
    if act == "RELU":
        return np.where(zero < a, a, zero)
    if act == "RELU_N1_TO_1":
        m = np.where(one < a, one, a)
        return np.where(-one < m, m, -one)
    if act == "RELU6":
        m = np.where(six < a, six, a)
        return np.where(zero < m, m, zero)
    if act == "TANH":
        return tanhf(a)
    if act == "SIGN_BIT":
        return np.signbit(a).astype(np.float32)
    return a


def _invoke_float(ctx: KernelContext, node: Node, data: OpDataSvdf) -> None:
    x = np.asarray(ctx.required_input(node, 0).data, np.float32).reshape(data.batch, data.input_size)
    state = ctx.required_input(node, 4).data.reshape(data.batch, data.num_filters, data.memory_size)
    out = ctx.output(node, 0).data
    _shift_state(state)

    # Feature matmul, float32 products and sums in TFLM's order (k ascending).
    state[:, :, -1] = sequential_matmul_f32(x, data.weights_feature_t)

    # Time: sequential over memory.
    wt = data.weights_time
    scratch = np.zeros((data.batch, data.num_filters), np.float32)
    for j in range(data.memory_size):
        scratch += state[:, :, j] * wt[:, j]

    # Bias, then the rank reduction in order, then the activation.
    if data.bias is not None:
        y = np.repeat(data.bias[None, :], data.batch, axis=0)
    else:
        y = np.zeros((data.batch, data.num_units), np.float32)
    per_rank = scratch.reshape(data.batch, data.num_units, data.rank)
    for r in range(data.rank):
        y += per_rank[:, :, r]
    out.reshape(data.batch, data.num_units)[...] = _activation_float(data.activation, y)


def svdf_invoke(ctx: KernelContext, node: Node) -> None:
    data: OpDataSvdf = node.user_data
    if data.kind == "int":
        _invoke_int(ctx, node, data)
    else:
        _invoke_float(ctx, node, data)


REGISTRATION = Registration(init=svdf_init, prepare=svdf_prepare, invoke=svdf_invoke, name="SVDF",
                            temps="i0 i1 i2 i3 i4 o0")

BUILTINS = [("SVDF", REGISTRATION, 4)]
