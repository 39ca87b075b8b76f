"""UNIDIRECTIONAL_SEQUENCE_LSTM: TFLM's reference kernel (unidirectional_sequence_lstm.cc,
lstm_eval.h / lstm_eval.cc, lstm_eval_common.cc, lstm_shared.h).

TFLM's current kernel runs the standard (keras) LSTM only: all four gates with their input and
recurrent weights and biases, no peephole, no projection, no layer norm (those inputs must be
absent, -1). Each time step computes, from the *old* hidden state h and cell state c:

    gate = act(FC(x_t, W_gate, bias_gate) + FC(h, R_gate, no bias))   act: sigmoid, tanh for cell
    c    = clip(f * c + i * g)
    h    = tanh(c) * o;  output[t] = h

Float32: every FC is `total += x * w` in float32 in depth order, then `total + bias`;
sigmoid is `1 / (1 + expf(-x))` with TFLM's cut-offs and tanh is `tanhf`, both taken from the C
library itself (glibc's expf/tanhf are not correctly rounded, numpy's exp/tanh differ from them).

int8 (8x8->16): each FC is reference_integer_ops::FullyConnected with an int16 output of scale
2^-12 (multiplier from the scales in double arithmetic), the
two FC outputs are added with int16 saturation, sigmoid/tanh are TFLM's int16 lookup-table
routines (reference_integer_ops::Logistic / Tanh on sigmoid_table_uint16, precomputed here for
all 65536 inputs), and the element-wise products are reference_integer_ops::MulElementwise with
the CreateInterGateMulParams multipliers (gate outputs of scale 2^-15).

Batch-major inputs run batch after batch in TFLM; rows never interact, so all batches step
together here. The input FC does not depend on the state and is computed for the whole
sequence at once. Memory: OpDataLSTM in init, four scratch buffers of batch x state cells in
prepare, exactly as TFLM (the buffers themselves are not needed by the host kernel).
"""
from __future__ import annotations

import ctypes
import ctypes.util
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from micro_rt.kernel_api import Registration, op_data_init

from .fixedpoint import fail
from .tflite_types import HYBRID, type_label
from .fully_connected import _ACCUMULATE_LIMIT, sequential_matvec_f32
from .quant import InPlaceRequant as _InPlaceRequant
from .quant import _clip as _CLIP
from .quant import check_left_shift, quantize_multiplier, requantize, wrap_int32

# lstm_shared.h tensor indices.
INPUT = 0
INPUT_TO_GATE = {"input": 1, "forget": 2, "cell": 3, "output": 4}
RECURRENT_TO_GATE = {"input": 5, "forget": 6, "cell": 7, "output": 8}
PEEPHOLE = (9, 10, 11)
GATE_BIAS = {"input": 12, "forget": 13, "cell": 14, "output": 15}
PROJECTION = (16, 17)
OUTPUT_STATE = 18
CELL_STATE = 19
LAYER_NORM = (20, 21, 22, 23)
GATES = ("input", "forget", "cell", "output")   # column blocks of the stacked weights

# TFLM's gate scales (lstm_eval_common.cc): Q3.12 into the non-linearities, Q0.15 out. The
# current source spells both exactly (earlier releases used 0.00003051757f, 4.5 ulp below 2^-15,
# which the oracle build does not: it agrees with the exact value).
NONLINEAR_INPUT_SCALE = 2.0 ** -12
NONLINEAR_OUTPUT_SCALE = 2.0 ** -15

# sigmoid(i / 24) in 0.16 fixed point (TFLM's sigmoid_table_uint16, common.h).
SIGMOID_TABLE_UINT16 = np.array([
    32768, 33451, 34133, 34813, 35493, 36169, 36843, 37513, 38180, 38841, 39498, 40149, 40794, 41432, 42064, 42688,
    43304, 43912, 44511, 45102, 45683, 46255, 46817, 47369, 47911, 48443, 48964, 49475, 49975, 50464, 50942, 51409,
    51865, 52311, 52745, 53169, 53581, 53983, 54374, 54755, 55125, 55485, 55834, 56174, 56503, 56823, 57133, 57433,
    57724, 58007, 58280, 58544, 58800, 59048, 59288, 59519, 59743, 59959, 60168, 60370, 60565, 60753, 60935, 61110,
    61279, 61441, 61599, 61750, 61896, 62036, 62172, 62302, 62428, 62549, 62666, 62778, 62886, 62990, 63090, 63186,
    63279, 63368, 63454, 63536, 63615, 63691, 63765, 63835, 63903, 63968, 64030, 64090, 64148, 64204, 64257, 64308,
    64357, 64405, 64450, 64494, 64536, 64576, 64614, 64652, 64687, 64721, 64754, 64786, 64816, 64845, 64873, 64900,
    64926, 64950, 64974, 64997, 65019, 65039, 65060, 65079, 65097, 65115, 65132, 65149, 65164, 65179, 65194, 65208,
    65221, 65234, 65246, 65258, 65269, 65280, 65291, 65301, 65310, 65319, 65328, 65337, 65345, 65352, 65360, 65367,
    65374, 65381, 65387, 65393, 65399, 65404, 65410, 65415, 65420, 65425, 65429, 65433, 65438, 65442, 65445, 65449,
    65453, 65456, 65459, 65462, 65465, 65468, 65471, 65474, 65476, 65479, 65481, 65483, 65485, 65488, 65489, 65491,
    65493, 65495, 65497, 65498, 65500, 65501, 65503, 65504, 65505, 65507, 65508, 65509, 65510, 65511, 65512, 65513,
    65514, 65515, 65516, 65517, 65517, 65518, 65519, 65520, 65520, 65521, 65522, 65522, 65523, 65523, 65524, 65524,
    65525, 65525, 65526, 65526, 65526, 65527, 65527, 65528, 65528, 65528, 65529, 65529, 65529, 65529, 65530, 65530,
    65530, 65530, 65531, 65531, 65531, 65531, 65531, 65532, 65532, 65532, 65532, 65532, 65532, 65533, 65533, 65533,
    65533, 65533, 65533, 65533, 65533, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65535,
], dtype=np.int64)

_INT16_DOMAIN = np.arange(-32768, 32768, dtype=np.int64)


# --------------------------------------------------------------------------- int16 activations

def _scaled_input(x: np.ndarray, input_multiplier: int, input_left_shift: int) -> np.ndarray:
    """The int16 activations' input rescale (3 << shift when no multiplier is given)."""
    x = np.asarray(x, dtype=np.int64)
    if input_multiplier == 0:
        input_multiplier, input_left_shift = 3 << input_left_shift, 0
    rnd = (1 << (input_left_shift - 1)) if input_left_shift > 0 else 0
    return (x * input_multiplier + rnd) >> input_left_shift


def _sigmoid_lut(magnitude: np.ndarray, frac_bits: int, saturated: int) -> np.ndarray:
    """TFLM's 256-entry sigmoid table, linearly interpolated on the low `frac_bits` bits."""
    upper = magnitude >> frac_bits
    idx = np.minimum(upper, 254)
    ua = SIGMOID_TABLE_UINT16[idx]
    ub = SIGMOID_TABLE_UINT16[idx + 1]
    mask = (1 << frac_bits) - 1
    return np.where(upper >= 255, saturated, (ua << frac_bits) + (magnitude & mask) * (ub - ua))


def logistic_int16(x: np.ndarray, input_multiplier: int = 0, input_left_shift: int = 0) -> np.ndarray:
    """reference_integer_ops::Logistic on int16 (LUT with linear interpolation), int64 out."""
    v = _scaled_input(x, input_multiplier, input_left_shift)
    r = _sigmoid_lut(np.abs(v), 9, 0x7FFF << 10)
    r = np.where(v >= 0, r + (1 << 9), (1 << 25) - r + (1 << 9) - 1)
    return r >> 10


def tanh_int16(x: np.ndarray, input_multiplier: int = 0, input_left_shift: int = 0) -> np.ndarray:
    """reference_integer_ops::Tanh on int16 (the sigmoid LUT, tanh(x) = 2 sigmoid(2x) - 1)."""
    v = _scaled_input(x, input_multiplier, input_left_shift)
    r = _sigmoid_lut(np.abs(v), 8, 0xFFFF << 8)
    r = np.where(v >= 0, r - (1 << 23) + (1 << 7), -r + (1 << 23) + (1 << 7) - 1)
    return r >> 8


def lstm_tanh_params(cell_state_scale_power: int) -> tuple[int, int]:
    """lstm_internal::Tanh: the (multiplier, left shift) it passes for a Q(power) input."""
    left_shift = 15 + cell_state_scale_power - 3
    multiplier = 0
    if left_shift < 0:
        left_shift, multiplier = -left_shift, 3
    return multiplier, left_shift


def checked_log2_pot(x: float) -> tuple[int, bool]:
    """tflite::CheckedLog2 in float32: the rounded exponent (TfLiteRound: halves away from
    zero) and whether x is a power of two (fractional part of log2 below 1e-3)."""
    with np.errstate(all="ignore"):
        x_log2 = np.float32(np.log(np.float32(x))) * (np.float32(1.0) / np.float32(np.log(np.float32(2.0))))
    if not np.isfinite(x_log2):
        return 0, False
    rounded = np.float32(np.copysign(np.floor(np.abs(x_log2) + np.float32(0.5)), x_log2))
    return int(rounded), bool(np.abs(np.float32(x_log2 - rounded)) < np.float32(1e-3))


def checked_log2(x: float) -> int:
    """tflite::CheckedLog2's rounded exponent (its 'is a power of two' verdict is ignored)."""
    return checked_log2_pot(x)[0]


# --------------------------------------------------------------------------- float helpers

def _libm_float_fn(name: str):
    """A float function of the C library as a numpy ufunc (None when unavailable)."""
    try:
        libm = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
        f = getattr(libm, name)
        f.restype = ctypes.c_float
        f.argtypes = [ctypes.c_float]
        return np.frompyfunc(f, 1, 1)
    except Exception:  # pragma: no cover
        return None


_EXPF = _libm_float_fn("expf")
_TANHF = _libm_float_fn("tanhf")


def expf(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, np.float32)
    if _EXPF is not None:
        return np.asarray(_EXPF(x), dtype=np.float32).reshape(x.shape)
    return np.exp(x.astype(np.float64)).astype(np.float32)   # pragma: no cover


def tanhf(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, np.float32)
    if _TANHF is not None:
        return np.asarray(_TANHF(x), dtype=np.float32).reshape(x.shape)
    return np.tanh(x.astype(np.float64)).astype(np.float32)   # pragma: no cover


def logistic_f32(x: np.ndarray) -> np.ndarray:
    """reference_ops::Logistic (float): 1 beyond 16.619..., expf(x) below -9."""
    x = np.asarray(x, np.float32)
    one = np.float32(1.0)
    upper = x > np.float32(16.619047164916992188)
    lower = x < np.float32(-9.0)
    e = expf(np.where(lower, x, -x))
    mid = one / (one + e)
    return np.where(upper, one, np.where(lower, e, mid)).astype(np.float32)


def sequential_fc_f32(x2: np.ndarray, w_t: np.ndarray, out: np.ndarray, tmp: np.ndarray) -> np.ndarray:
    """out = x2 @ w_t accumulated in float32 in depth order (the reference loop), no bias."""
    if 0 < out.size * x2.shape[1] <= _ACCUMULATE_LIMIT:
        out[...] = sequential_matvec_f32(x2, w_t)     # the same sums (fully_connected.py)
        return out
    out[...] = 0
    xt = x2.T
    for d in range(xt.shape[0]):
        np.multiply(xt[d][:, None], w_t[d][None, :], out=tmp)
        out += tmp
    return out


# --------------------------------------------------------------------------- op data

@dataclass
class OpDataLSTM:
    kind: str = ""                 # "float32" or "int8"
    time_major: bool = False
    batch: int = 0
    steps: int = 0
    n_input: int = 0
    n_state: int = 0
    activation: str = "TANH"       # cell gate non-linearity (TANH: the schema has no SIGMOID)
    cell_clip: float = 0.0
    buffer_indices: list = field(default_factory=list)
    # stacked weights: (depth, 4 * state), column blocks in GATES order
    w_in_t: Any = None
    w_rec_t: Any = None
    bias: Any = None               # (4 * state,)
    # int8 path
    input_zp: int = 0
    hidden_zp: int = 0
    in_mult: Any = None            # per column (4 * state,)
    in_shift: Any = None
    rec_mult: Any = None
    rec_shift: Any = None
    quantized_cell_clip: int = 0
    cell_power: int = 0
    sigmoid_lut: Any = None        # int16 result for int16 input + 32768
    gate_tanh_lut: Any = None
    cell_tanh_lut: Any = None
    forget_cell_mul: tuple = (0, 0)
    input_mul: tuple = (0, 0)
    output_mul: tuple = (0, 0)
    bufs: Any = None               # invoke buffers and constants, made in prepare


lstm_init = op_data_init("OpDataLSTM", OpDataLSTM)


def _scale(t) -> float:
    s = getattr(t, "scales", None)
    return float(np.float32(s[0])) if s is not None and len(s) else 0.0


def _zp(t) -> int:
    z = getattr(t, "zero_points", None)
    return int(z[0]) if z is not None and len(z) else 0


def _desc(t) -> str:
    return f"'{t.name}' ({np.dtype(t.dtype).name}{list(t.shape)})"


def _validate(ctx, node):
    """LstmTensors::ValidateTensorStatus and ValidateTensorSize."""
    if len(node.inputs) != 24:
        raise fail(node, f"needs 24 inputs, has {len(node.inputs)}")
    if len(node.outputs) != 1:
        raise fail(node, f"needs 1 output, has {len(node.outputs)}")
    t = [ctx.input(node, i) for i in range(24)]
    out = ctx.output(node, 0)
    x = t[INPUT]
    if x is None:
        raise fail(node, "the input tensor is missing")
    for idx, what in ((OUTPUT_STATE, "output (hidden) state"), (CELL_STATE, "cell state")):
        if t[idx] is None:
            raise fail(node, f"the {what} tensor (input {idx}) is missing")
        if not t[idx].is_variable:
            raise fail(node, f"the {what} {_desc(t[idx])} must be a variable tensor")
    if t[OUTPUT_STATE].dtype != x.dtype:
        raise fail(node, f"output state {_desc(t[OUTPUT_STATE])} and input {_desc(x)} differ in type")
    if out.dtype != x.dtype:
        raise fail(node, f"output {_desc(out)} and input {_desc(x)} differ in type")
    for i in range(1, 9):
        if t[i] is None:
            raise fail(node, f"weights input {i} is missing (CIFG LSTMs are not supported by TFLM)")
        if t[i].dtype != t[2].dtype:
            raise fail(node, f"weights {_desc(t[i])} differ in type from {_desc(t[2])}")
    for i in range(12, 16):
        if t[i] is None:
            raise fail(node, f"gate bias input {i} is missing")
        if t[i].dtype != t[13].dtype:
            raise fail(node, f"bias {_desc(t[i])} differs in type from {_desc(t[13])}")
    for group, what in ((PEEPHOLE, "peephole"), (PROJECTION, "projection"), (LAYER_NORM, "layer norm")):
        for i in group:
            if t[i] is not None:
                raise fail(node, f"{what} input {i} {_desc(t[i])} is present; TFLM's LSTM kernel "
                                 "supports only the standard LSTM (no peephole, projection or layer norm)")
    if len(x.shape) != 3:
        raise fail(node, f"input {_desc(x)} must be 3-D")
    for i in list(range(1, 9)) + list(range(12, 16)):
        if t[i].data is None:
            raise fail(node, f"weights/bias {_desc(t[i])} must be constant")
    return t, out


def lstm_prepare(ctx, node) -> None:
    data: OpDataLSTM = node.user_data
    t, out = _validate(ctx, node)
    x, h, c = t[INPUT], t[OUTPUT_STATE], t[CELL_STATE]
    opts = node.options
    data.time_major = bool(opts.get("time_major", False))
    data.batch = int(x.shape[1] if data.time_major else x.shape[0])
    data.steps = int(x.shape[0] if data.time_major else x.shape[1])
    data.n_input = int(x.shape[2])
    if len(h.shape) < 2:
        raise fail(node, f"output state {_desc(h)} must be 2-D (batch, state)")
    data.n_state = int(h.shape[1])
    b, s, d = data.batch, data.n_state, data.n_input
    for i in range(1, 5):
        if tuple(t[i].shape) != (s, d):
            raise fail(node, f"input weights {_desc(t[i])} must have shape {[s, d]}")
    for i in range(5, 9):
        if tuple(t[i].shape) != (s, s):
            raise fail(node, f"recurrent weights {_desc(t[i])} must have shape {[s, s]}")
    for i in range(12, 16):
        if tuple(t[i].shape) != (s,):
            raise fail(node, f"bias {_desc(t[i])} must have shape {[s]}")
    for st in (h, c):
        if int(np.prod(st.shape)) != b * s:
            raise fail(node, f"state {_desc(st)} must hold batch x state = {b * s} values")
    if len(out.shape) != 3 or tuple(out.shape[:2]) != tuple(x.shape[:2]) or out.shape[2] != s:
        raise fail(node, f"output {_desc(out)} must have shape {[*x.shape[:2], s]}")
    data.activation = opts.get("fused_activation_function", "TANH")
    if data.activation != "TANH":
        # TFLM asserts: the cell gate is sigmoid or tanh, and the schema cannot express sigmoid.
        raise fail(node, f"cell gate activation {data.activation} is not supported (TANH only)")
    data.cell_clip = float(np.float32(opts.get("cell_clip", 0.0) or 0.0))
    if not math.isfinite(data.cell_clip):
        raise fail(node, f"cell_clip {data.cell_clip!r} is not finite (TFLM would convert it to an "
                         "integer clip: undefined)")

    xt, wt = np.dtype(x.dtype), np.dtype(t[2].dtype)
    ct = np.dtype(c.dtype)
    if xt not in (np.float32, np.int8, np.int16):
        raise fail(node, f"input {_desc(x)}: Input type {type_label(xt)} not supported.")
    if ct == np.float32:
        if xt != np.float32 or wt != np.float32:
            # TFLM's float kernel would read int8 weights as float32 words (hybrid model).
            raise fail(node, f"float cell state needs float32 input and weights, got input {_desc(x)}, "
                             f"weights {_desc(t[2])}: {HYBRID}")
        _prepare_float(data, t)
    elif ct == np.int16:
        if xt != np.int8 or wt != np.int8 or np.dtype(t[13].dtype) != np.int32:
            raise fail(node, f"int16 cell state is supported with int8 input, int8 weights and int32 "
                             f"bias (got input {_desc(x)}, weights {_desc(t[2])}, bias {_desc(t[13])})")
        _prepare_int8(node, data, t)
    else:
        raise fail(node, f"cell state {_desc(c)}: type not supported (float32 or int16)")
    # Four gate buffers of batch x state cells, as TFLM requests them.
    data.buffer_indices = [ctx.request_scratch(b * s * ct.itemsize) for _ in range(4)]


def _stack(t, idx: dict, dtype) -> np.ndarray:
    """(depth, 4 * state): the transposed weights of the four gates side by side."""
    return np.ascontiguousarray(np.concatenate(
        [np.asarray(t[idx[g]].data, dtype=dtype).T for g in GATES], axis=1))


def _prepare_float(data: OpDataLSTM, t) -> None:
    data.kind = "float32"
    data.w_in_t = _stack(t, INPUT_TO_GATE, np.float32)
    data.w_rec_t = _stack(t, RECURRENT_TO_GATE, np.float32)
    data.bias = np.concatenate([np.asarray(t[GATE_BIAS[g]].data, np.float32) for g in GATES])


def _fc_multiplier(in_scale: float, w_scale: float) -> tuple[int, int]:
    """CalculateOpDataFullyConnected's multiplier for a gate FC: the two float scales multiplied
    and divided in double (the oracle build rounds this way: a float32 product differs by up
    to ~100 in the multiplier and flips rare ties, seen on dtln), then QuantizeMultiplier."""
    return quantize_multiplier(float(in_scale) * float(w_scale) / NONLINEAR_INPUT_SCALE)


def _mul_params(s1: float, s2: float, s_out: float) -> tuple[int, int]:
    """CreateInterGateMulParams: double arithmetic, QuantizeMultiplier."""
    return quantize_multiplier(float(s1) * float(s2) / float(s_out))


def _prepare_int8(node, data: OpDataLSTM, t) -> None:
    data.kind = "int8"
    x, h, c = t[INPUT], t[OUTPUT_STATE], t[CELL_STATE]
    for i in range(1, 9):
        if len(t[i].scales) != 1:
            raise fail(node, f"weights {_desc(t[i])}: per-channel LSTM weights are not supported")
    data.input_zp, data.hidden_zp = _zp(x), _zp(h)
    s = data.n_state
    # Weights minus their zero point (weights_offset), exact in float64 matmuls.
    data.w_in_t = np.ascontiguousarray(np.concatenate(
        [(np.asarray(t[INPUT_TO_GATE[g]].data, np.float64) - _zp(t[INPUT_TO_GATE[g]])).T for g in GATES], axis=1))
    data.w_rec_t = np.ascontiguousarray(np.concatenate(
        [(np.asarray(t[RECURRENT_TO_GATE[g]].data, np.float64) - _zp(t[RECURRENT_TO_GATE[g]])).T
         for g in GATES], axis=1))
    data.bias = np.concatenate([np.asarray(t[GATE_BIAS[g]].data, np.int64) for g in GATES])
    in_m, in_s, rec_m, rec_s = [], [], [], []
    for g in GATES:
        m, sh = _fc_multiplier(_scale(x), _scale(t[INPUT_TO_GATE[g]]))
        check_left_shift(node, sh, f"input {_desc(x)} x input weights {_desc(t[INPUT_TO_GATE[g]])}")
        in_m += [m] * s
        in_s += [sh] * s
        m, sh = _fc_multiplier(_scale(h), _scale(t[RECURRENT_TO_GATE[g]]))
        check_left_shift(node, sh, f"output state {_desc(h)} x recurrent weights "
                                   f"{_desc(t[RECURRENT_TO_GATE[g]])}")
        rec_m += [m] * s
        rec_s += [sh] * s
    data.in_mult, data.in_shift = np.array(in_m, np.int64), np.array(in_s, np.int64)
    data.rec_mult, data.rec_shift = np.array(rec_m, np.int64), np.array(rec_s, np.int64)

    cell_scale = _scale(c)
    data.cell_power = checked_log2(cell_scale)
    multiplier, shift = lstm_tanh_params(data.cell_power)
    if (multiplier == 0 and shift > 14) or shift > 31:
        # 3 << shift times an int16 overflows int32 from shift 15; shifts past 31 bits
        how = (f"multiplies it by 3 << {shift}, which overflows int32 for large values" if multiplier == 0
               else f"shifts it right by {shift} bits, past the int32 width")
        raise fail(node, f"cell state {_desc(c)} scale 2^{data.cell_power}: TFLM's tanh of the cell "
                         f"state {how} (undefined in C++); a quantization scale is wrong")
    clip = float(np.float32(data.cell_clip)) / float(cell_scale) if cell_scale else 0.0
    data.quantized_cell_clip = int(math.trunc(min(max(clip, -32768.0), 32767.0)))
    data.forget_cell_mul = _mul_params(NONLINEAR_OUTPUT_SCALE, cell_scale, cell_scale)
    data.input_mul = _mul_params(NONLINEAR_OUTPUT_SCALE, NONLINEAR_OUTPUT_SCALE, cell_scale)
    data.output_mul = _mul_params(NONLINEAR_OUTPUT_SCALE, NONLINEAR_OUTPUT_SCALE, _scale(h))
    for (_, shift), what in ((data.forget_cell_mul, f"forget gate x cell state {_desc(c)}"),
                             (data.input_mul, f"input gate x cell gate into cell state {_desc(c)}"),
                             (data.output_mul, f"output gate x cell into output state {_desc(h)}")):
        check_left_shift(node, shift, what)

    data.sigmoid_lut = logistic_int16(_INT16_DOMAIN).astype(np.int64)
    data.gate_tanh_lut = tanh_int16(_INT16_DOMAIN, *lstm_tanh_params(-12)).astype(np.int64)
    data.cell_tanh_lut = tanh_int16(_INT16_DOMAIN, *lstm_tanh_params(data.cell_power)).astype(np.int64)
    _prepare_int8_buffers(data)


# --------------------------------------------------------------------------- invoke

def lstm_invoke(ctx, node) -> None:
    data: OpDataLSTM = node.user_data
    x = ctx.input(node, INPUT).data
    h_t = ctx.input(node, OUTPUT_STATE)
    c_t = ctx.input(node, CELL_STATE)
    out = ctx.output(node, 0).data
    b, s = data.batch, data.n_state
    # Views as (steps, batch, features) whichever the layout.
    xs = x if data.time_major else x.transpose(1, 0, 2)
    os_ = out if data.time_major else out.transpose(1, 0, 2)
    h = h_t.data.reshape(b, s)
    c = c_t.data.reshape(b, s)
    if data.kind == "float32":
        _run_float(data, xs, os_, h, c)
    else:
        _run_int8(data, xs, os_, h, c)


def _run_float(data: OpDataLSTM, xs, os_, h, c) -> None:
    b, s, steps = data.batch, data.n_state, data.steps
    s4 = 4 * s
    x2 = np.asarray(xs, np.float32).reshape(steps * b, data.n_input)
    in_fc = np.empty((steps * b, s4), np.float32)
    sequential_fc_f32(x2, data.w_in_t, in_fc, np.empty_like(in_fc))
    in_fc += data.bias
    in_fc = in_fc.reshape(steps, b, s4)
    rec = np.empty((b, s4), np.float32)
    tmp = np.empty_like(rec)
    clip = np.float32(data.cell_clip)
    hs = np.array(h, np.float32)
    cs = np.array(c, np.float32)
    for step in range(steps):
        sequential_fc_f32(hs, data.w_rec_t, rec, tmp)
        rec += np.float32(0.0)                      # total + bias_value (0.0f) of the bias-less FC
        pre = in_fc[step] + rec
        i_g = logistic_f32(pre[:, 0:s])
        f_g = logistic_f32(pre[:, s:2 * s])
        g_g = tanhf(pre[:, 2 * s:3 * s])
        o_g = logistic_f32(pre[:, 3 * s:])
        cs = f_g * cs
        cs = cs + i_g * g_g
        if data.cell_clip > 0:
            cs = np.maximum(np.minimum(clip, cs), -clip)
        hs = tanhf(cs) * o_g
        os_[step] = hs
    h[...] = hs
    c[...] = cs


def _clamp(x: np.ndarray, lo: int, hi: int) -> np.ndarray:
    """In-place clamp (np.clip costs more than the arithmetic on these short rows)."""
    np.minimum(x, hi, out=x)
    np.maximum(x, lo, out=x)
    return x


def _requant16(acc: np.ndarray, mult, shift) -> np.ndarray:
    """MultiplyByQuantizedMultiplier (double rounding) and the int16 clamp."""
    return _clamp(requantize(acc, mult, shift), -32768, 32767)


def _run_int8(data: OpDataLSTM, xs, os_, h, c) -> None:
    """TFLM's integer LSTM (lstm_eval.h, 8x8->16): every gate is the input FC and the
    recurrent FC, each requantized to int16 on its own (with saturation), then added with
    int16 saturation. The input FCs do not depend on the state: one matmul for all steps and
    gates. Every buffer comes from prepare (`data.bufs`)."""
    bf = data.bufs
    # The input zero point is folded into the bias: (x - zp).w = x.w - zp * sum(w), exact.
    x_f, in_acc = bf["x_f"], bf["in_acc"]
    x_f[...] = xs
    in_acc[...] = np.dot(x_f.reshape(-1, data.n_input), bf["w_in"], out=bf["in_f"])
    in_acc += bf["in_bias"]
    if bf["wrap_in"]:
        in_acc[...] = wrap_int32(in_acc)
    bf["rq_in"](in_acc)
    # Saturated to int16, then moved to the gate's block of the stacked lookup table
    # (index = value + 32768 + gate * 65536); the recurrent part is added to it per step.
    _CLIP(in_acc, bf["m32768"], bf["p32767"], out=in_acc)
    in_acc += bf["lut_offset"]
    in_fc = in_acc.reshape(data.steps, data.batch, 4 * data.n_state)
    if bf["fast"]:
        _steps_int8_fast(data, in_fc, os_, h, c)
    else:
        _steps_int8_generic(data, in_fc, os_, h, c)


def _steps_int8_fast(data: OpDataLSTM, in_fc, os_, h, c) -> None:
    """The step loop with the requantizations inlined (no int32 wrap-around possible). The
    multipliers of the three element-wise products are folded into the gate lookup table
    (exact: int64 products below 2^62), the hidden zero point into the recurrent weights (an
    extra row against a constant 1) and, where it fits, into the output rounding constant."""
    bf = data.bufs
    rq_rec, rq_cell, rq_out = bf["rq_rec"], bf["rq_cell"], bf["rq_out"]
    w_rec, rec_f, acc = bf["w_rec"], bf["rec_f"], bf["acc"]
    rm, radd, rr, rneg, rlim = rq_rec.full_mult, rq_rec.add, rq_rec.right, rq_rec.neg, rq_rec.lim
    cadd, cr, cneg, clim = rq_cell.add, rq_cell.right, rq_cell.neg, rq_cell.lim
    oadd, orr, oneg, olim, hz_add = bf["out_add"], rq_out.right, rq_out.neg, rq_out.lim, bf["hz_add"]
    c31 = rq_rec.c31
    lo16, hi16 = bf["m32768"], bf["p32767"]
    glo, ghi = bf["gate_lo"], bf["gate_hi"]
    clo, chi, olo, ohi = bf["cell_lo"], bf["cell_hi"], bf["m128"], bf["p127"]
    lut4s, ctanh = bf["lut4_scaled"], bf["cell_tanh_rot"]
    gates, prod, cs, hq, hsm, h_in = bf["gates"], bf["prod"], bf["cs"], bf["hq"], bf["hsm"], bf["h_in"]
    i_g, f_g, g_g, o_g = bf["i_g"], bf["f_g"], bf["g_g"], bf["o_g"]
    p_fc, p_ig = prod[0], prod[1]
    dot, multiply, less, add, clip = np.dot, np.multiply, np.less, np.add, _CLIP
    h_in[...] = h
    cs[...] = c
    for step in range(data.steps):
        acc[...] = dot(hsm, w_rec, out=rec_f)
        acc *= rm
        less(acc, rlim, out=rneg)
        acc += radd
        acc >>= c31
        acc -= rneg
        acc >>= rr
        clip(acc, lo16, hi16, out=acc)
        acc += in_fc[step]
        clip(acc, glo, ghi, out=acc)              # int16 saturation of the sum, per gate block
        gates[...] = lut4s[acc]
        multiply(f_g, cs, out=p_fc)               # forget x cell, input x cell gate
        multiply(i_g, g_g, out=p_ig)
        less(prod, clim, out=cneg)
        prod += cadd
        prod >>= c31
        prod -= cneg
        prod >>= cr
        clip(prod, lo16, hi16, out=prod)
        add(p_fc, p_ig, out=cs)
        clip(cs, clo, chi, out=cs)                # int16 saturation (and the cell clip)
        hq[...] = ctanh[cs]
        hq *= o_g
        less(hq, olim, out=oneg)
        hq += oadd
        hq >>= c31
        hq -= oneg
        hq >>= orr
        if hz_add is not None:
            hq += hz_add
        clip(hq, olo, ohi, out=hq)
        os_[step] = hq
        h_in[...] = hq
    if data.steps:
        h[...] = hq
    c[...] = cs


def _steps_int8_generic(data: OpDataLSTM, in_fc, os_, h, c) -> None:
    """The step loop for any requantization (left shifts, shifts of 0)."""
    bf = data.bufs
    s = data.n_state
    w_rec, rec_f, acc = bf["w_rec"], bf["rec_f"], bf["acc"]
    rq_rec, rq_cell, rq_out = bf["rq_rec"], bf["rq_cell"], bf["rq_out"]
    lo16, hi16 = bf["m32768"], bf["p32767"]
    gates, prod, cs, hq, hsm, h_in = bf["gates"], bf["prod"], bf["cs"], bf["hq"], bf["hsm"], bf["h_in"]
    h_in[...] = h
    cs[...] = c
    for step in range(data.steps):
        acc[...] = np.dot(hsm, w_rec, out=rec_f)
        rq_rec(acc)
        _CLIP(acc, lo16, hi16, out=acc)
        acc += in_fc[step]
        _CLIP(acc, bf["gate_lo"], bf["gate_hi"], out=acc)
        bf["lut4"].take(acc, out=gates)
        np.multiply(gates[:, s:2 * s], cs, out=prod[0])
        np.multiply(gates[:, 0:s], gates[:, 2 * s:3 * s], out=prod[1])
        rq_cell(prod)
        _CLIP(prod, lo16, hi16, out=prod)
        np.add(prod[0], prod[1], out=cs)
        _CLIP(cs, bf["cell_lo"], bf["cell_hi"], out=cs)
        bf["cell_tanh_rot"].take(cs, out=hq)
        hq *= gates[:, 3 * s:]
        rq_out(hq)
        hq += bf["hz"]
        _CLIP(hq, bf["m128"], bf["p127"], out=hq)
        os_[step] = hq
        h_in[...] = hq
    if data.steps:
        h[...] = hq
    c[...] = cs


def _prepare_int8_buffers(data: OpDataLSTM) -> None:
    """Everything _run_int8 writes, and its constants, made once."""
    b, s, steps, d = data.batch, data.n_state, data.steps, data.n_input
    i64 = np.int64
    c0 = lambda v: np.asarray(v, i64)           # noqa: E731 - 0-d operands convert fastest
    bf: dict = {}
    # Input FC over all steps: float32 when every partial sum of |x| * |w| stays below 2^24
    # (exact), else float64 (exact below 2^53).
    w_in = data.w_in_t                                            # (d, 4s), weights - zp
    w_abs = float(np.abs(w_in).sum(axis=0).max(initial=0))
    ft_in = np.float32 if 128 * w_abs < 2 ** 24 else np.float64
    bf["x_f"] = np.empty((steps, b, d), ft_in)
    bf["w_in"] = np.ascontiguousarray(w_in.astype(ft_in))
    bf["in_f"] = np.empty((steps * b, 4 * s), ft_in)
    bf["in_acc"] = np.empty((steps * b, 4 * s), i64)
    zp_term = data.input_zp * np.rint(w_in.sum(axis=0)).astype(i64)
    bf["in_bias"] = np.ascontiguousarray(np.broadcast_to(data.bias - zp_term, (steps * b, 4 * s)))
    x_span = max(abs(-128 - data.input_zp), abs(127 - data.input_zp))
    bias_bound = float(np.abs(data.bias).max(initial=0))
    bf["wrap_in"] = w_abs * x_span + bias_bound >= 2 ** 31
    in_bound = (1 << 31) if bf["wrap_in"] else int(w_abs * x_span + bias_bound)
    bf["rq_in"] = _InPlaceRequant(data.in_mult, data.in_shift, (steps * b, 4 * s), in_bound)
    g = np.repeat(np.arange(4, dtype=i64) * 65536, s)
    bf["lut_offset"] = np.ascontiguousarray(np.broadcast_to(g + 32768, (steps * b, 4 * s)))
    bf["gate_lo"] = np.ascontiguousarray(np.broadcast_to(g, (b, 4 * s)))
    bf["gate_hi"] = bf["gate_lo"] + 65535
    bf["m32768"], bf["p32767"] = c0(-32768), c0(32767)
    bf["m128"], bf["p127"] = c0(-128), c0(127)
    bf["hz"] = c0(data.hidden_zp)
    lo, hi = -32768, 32767
    if data.cell_clip > 0:                    # clamp(clamp(x, int16), +-clip): clip <= 32767
        q = data.quantized_cell_clip
        lo, hi = (max(lo, -q), min(hi, q)) if q >= 0 else (-q, -q)   # min(x, q) then max(., -q)
    bf["cell_lo"], bf["cell_hi"] = c0(lo), c0(hi)

    # Recurrent FC on the raw hidden state plus a constant 1 against the row -zp * sum(w):
    # sum((h - zp) * w) exactly; float32 when the partial sums stay below 2^24.
    w_rec = data.w_rec_t                                          # (s, 4s), weights - zp
    zp_row = -data.hidden_zp * w_rec.sum(axis=0, keepdims=True)
    r_abs = float(np.abs(w_rec).sum(axis=0).max(initial=0))
    ft = np.float32 if 256 * r_abs < 2 ** 24 else np.float64
    bf["w_rec"] = np.ascontiguousarray(np.concatenate([w_rec, zp_row]).astype(ft))
    bf["rec_f"] = np.empty((b, 4 * s), ft)
    hsm = bf["hsm"] = np.ones((b, s + 1), ft)
    bf["h_in"] = hsm[:, :s]
    # The recurrent dot products stay far inside int32 (state x 255 x 255), as in the C code
    # they are not wrapped.
    bf["rq_rec"] = _InPlaceRequant(data.rec_mult, data.rec_shift, (b, 4 * s), int(255 * r_abs))
    fm, fs = data.forget_cell_mul
    im, ish = data.input_mul
    # Products of a Q0.15 gate and an int16 value: |p| <= 2^30.
    rq_cell = bf["rq_cell"] = _InPlaceRequant(np.array([fm, im], i64).reshape(2, 1, 1),
                                              np.array([fs, ish], i64).reshape(2, 1, 1), (2, b, s), 1 << 30)
    om, osh = data.output_mul
    rq_out = bf["rq_out"] = _InPlaceRequant(om, osh, (b, s), 1 << 30)
    bf["fast"] = not (bf["rq_rec"].generic or rq_cell.generic or rq_out.generic)
    # The hidden zero point joins the output rounding constant when the sum cannot overflow:
    # adding zp * 2^(31 + r) before the two floor shifts adds exactly zp after them.
    hz_add = c0(data.hidden_zp)
    out_add = rq_out.add
    om_eff = int(rq_out.mult_eff)
    if bf["fast"]:
        r = int(rq_out.right.flat[0])
        folded = int(out_add.flat[0]) + (data.hidden_zp << (31 + r))
        if (1 << 30) * abs(om_eff) + abs(folded) < 2 ** 63 - 1:
            out_add = np.full((b, s), folded, i64)
            hz_add = None
    bf["out_add"], bf["hz_add"] = out_add, hz_add
    sig = data.sigmoid_lut.astype(i64)
    gtanh = data.gate_tanh_lut.astype(i64)
    bf["lut4"] = np.ascontiguousarray(np.concatenate([sig, sig, gtanh, sig]))
    # Fast path: input gate x im (it multiplies the cell gate), forget gate x fm (it
    # multiplies the cell state), output gate x om (it multiplies tanh(cell)).
    fm_eff, im_eff = (int(v) for v in rq_cell.mult_eff.ravel())
    bf["lut4_scaled"] = np.ascontiguousarray(np.concatenate([sig * im_eff, sig * fm_eff, gtanh, sig * om_eff]))
    # Indexed by the int16 value itself: negative values index from the end.
    bf["cell_tanh_rot"] = np.ascontiguousarray(np.roll(data.cell_tanh_lut.astype(i64), -32768))
    gates = bf["gates"] = np.empty((b, 4 * s), i64)
    bf["i_g"], bf["f_g"] = gates[:, 0:s], gates[:, s:2 * s]
    bf["g_g"], bf["o_g"] = gates[:, 2 * s:3 * s], gates[:, 3 * s:]
    bf["prod"] = np.empty((2, b, s), i64)
    bf["acc"] = np.empty((b, 4 * s), i64)
    bf["cs"] = np.empty((b, s), i64)
    bf["hq"] = np.empty((b, s), i64)
    data.bufs = bf


UNIDIRECTIONAL_SEQUENCE_LSTM = Registration(invoke=lstm_invoke, prepare=lstm_prepare, init=lstm_init,
                                            name="UNIDIRECTIONAL_SEQUENCE_LSTM")

BUILTINS = [("UNIDIRECTIONAL_SEQUENCE_LSTM", UNIDIRECTIONAL_SEQUENCE_LSTM, 3)]
