"""The integer paths of UNIDIRECTIONAL_SEQUENCE_LSTM (TFLM's lstm_eval.h / lstm_eval_common.cc,
8x8->16: int8 input, weights and hidden state, int16 cell state, int32 biases; and 16x8->16,
int16 input and hidden state with int64 biases, at the end of this module).

Each FC is reference_integer_ops::FullyConnected with an int16 output of scale 2^-12
(multiplier from the scales in double arithmetic); the input and the recurrent FC of a gate
are added with int16 saturation; sigmoid / tanh are TFLM's int16 lookup-table routines
(fixedpoint.logistic_int16 / tanh_int16, evaluated here for all 65536 inputs once); the
element-wise products are reference_integer_ops::MulElementwise with the
CreateInterGateMulParams multipliers (gate outputs of scale 2^-15).

Prepare makes every buffer and constant invoke needs (`data.bufs`), in named steps; invoke
computes the input FCs of the whole sequence at once (they do not depend on the state), then
steps through time with one of two step bodies: the folded one (requantizations inlined,
multipliers folded into the gate tables) when no requantization can leave int32, else the
generic one.
"""
from __future__ import annotations

import math
from typing import Optional

import numpy as np

from .exact_matmul import exact_float_type, max_abs_offset
from .fixedpoint import logistic_int16, multiply_by_quantized_multiplier, tanh_int16, wrap_int32
from .kernel_util import kernel_error, scale_of, tensor_desc, zero_point_of
from .lstm_common import (CELL_STATE, GATE_BIAS, GATES, INPUT, INPUT_TO_GATE, OUTPUT_STATE, RECURRENT_TO_GATE,
                          OpDataLSTM, stack_gates)
from .quant import MAX_LEFT_SHIFT, MAX_LEFT_SHIFT_WIDE, check_left_shift, checked_log2, quantize_multiplier
from .requant import InPlaceRequant, clip, requantize_wide, round_and_shift

# TFLM's gate scales (lstm_eval_common.cc): Q3.12 into the non-linearities, Q0.15 out. The
# current source spells both exactly (earlier releases used 0.00003051757f, 4.5 ulp below 2^-15,
# which the oracle build does not: it agrees with the exact value).
NONLINEAR_INPUT_SCALE = 2.0 ** -12
NONLINEAR_OUTPUT_SCALE = 2.0 ** -15

_INT16_VALUES = np.arange(-32768, 32768, dtype=np.int64)   # gate lookup tables: value + 32768


def lstm_tanh_params(cell_state_scale_power: int) -> tuple[int, int]:
    """lstm_internal::Tanh: the (multiplier, left shift) it passes for a Q(power) input."""
    left_shift = 15 + cell_state_scale_power - 3
    multiplier = 0
    if left_shift < 0:
        left_shift, multiplier = -left_shift, 3
    return multiplier, left_shift


# --------------------------------------------------------------------------- prepare

def prepare_int8(node, data: OpDataLSTM, t: list) -> None:
    """Quantization parameters, gate lookup tables, then the invoke buffers."""
    data.kind = "int8"
    _per_tensor_weights(node, t)
    _gate_fc_params(node, data, t)
    _cell_and_product_params(node, data, t)
    _lookup_tables(data)
    data.bufs = {}
    _input_fc_buffers(data, data.bufs)
    _saturation_bounds(data, data.bufs)
    _recurrent_fc_buffers(data, data.bufs)
    _product_requantizers(data, data.bufs)
    _gate_tables(data, data.bufs)
    _step_buffers(data, data.bufs)


def _per_tensor_weights(node, t: list) -> None:
    for i in range(1, 9):
        if len(t[i].scales) != 1:
            raise kernel_error(node, f"weights {tensor_desc(t[i])}: per-channel LSTM weights are not supported")


def _lookup_tables(data: OpDataLSTM) -> None:
    """The gates' sigmoid and tanh and the cell's tanh for every int16 value (+ 32768)."""
    data.sigmoid_lut = logistic_int16(_INT16_VALUES).astype(np.int64)
    data.gate_tanh_lut = tanh_int16(_INT16_VALUES, *lstm_tanh_params(-12)).astype(np.int64)
    data.cell_tanh_lut = tanh_int16(_INT16_VALUES, *lstm_tanh_params(data.cell_power)).astype(np.int64)


def _fc_multiplier(in_scale: float, w_scale: float) -> tuple[int, int]:
    """CalculateOpDataFullyConnected's multiplier for a gate FC: the two float scales multiplied
    and divided in double (the oracle build rounds this way: a float32 product differs by up
    to ~100 in the multiplier and flips rare ties, seen on dtln), then QuantizeMultiplier."""
    return quantize_multiplier(float(in_scale) * float(w_scale) / NONLINEAR_INPUT_SCALE)


def _mul_params(s1: float, s2: float, s_out: float) -> tuple[int, int]:
    """CreateInterGateMulParams: double arithmetic, QuantizeMultiplier."""
    return quantize_multiplier(float(s1) * float(s2) / float(s_out))


def _gate_fc_params(node, data: OpDataLSTM, t: list, limit: int = MAX_LEFT_SHIFT) -> None:
    """Zero points, the stacked weights less their zero point (exact in float64 matmuls), the
    biases, and one multiplier and shift per column of the input and the recurrent FC (refused
    where C++ leaves the requantization's left shift undefined)."""
    x, h = t[INPUT], t[OUTPUT_STATE]
    s = data.n_state
    data.input_zp, data.hidden_zp = zero_point_of(x), zero_point_of(h)
    data.w_in_t = stack_gates(t, INPUT_TO_GATE, np.float64, less_zero_point=True)
    data.w_rec_t = stack_gates(t, RECURRENT_TO_GATE, np.float64, less_zero_point=True)
    data.bias = np.concatenate([np.asarray(t[GATE_BIAS[g]].data, np.int64) for g in GATES])
    in_m, in_s, rec_m, rec_s = [], [], [], []
    for g in GATES:
        m, sh = _fc_multiplier(scale_of(x), scale_of(t[INPUT_TO_GATE[g]]))
        check_left_shift(node, sh, f"input {tensor_desc(x)} x input weights {tensor_desc(t[INPUT_TO_GATE[g]])}",
                         limit)
        in_m += [m] * s
        in_s += [sh] * s
        m, sh = _fc_multiplier(scale_of(h), scale_of(t[RECURRENT_TO_GATE[g]]))
        check_left_shift(node, sh, f"output state {tensor_desc(h)} x recurrent weights "
                                   f"{tensor_desc(t[RECURRENT_TO_GATE[g]])}", limit)
        rec_m += [m] * s
        rec_s += [sh] * s
    data.in_mult, data.in_shift = np.array(in_m, np.int64), np.array(in_s, np.int64)
    data.rec_mult, data.rec_shift = np.array(rec_m, np.int64), np.array(rec_s, np.int64)


def _cell_and_product_params(node, data: OpDataLSTM, t: list) -> None:
    """The cell state's power-of-two scale, the quantized cell clip, and the multipliers of
    the three element-wise products (forget x cell, input x cell gate, output x tanh(cell));
    refused where C++ leaves the tanh rescale or a requantization undefined."""
    c, h = t[CELL_STATE], t[OUTPUT_STATE]
    cell_scale = scale_of(c)
    data.cell_power = checked_log2(cell_scale)
    multiplier, shift = lstm_tanh_params(data.cell_power)
    if (multiplier == 0 and shift > 14) or shift > 31:
        # 3 << shift times an int16 overflows int32 from shift 15; shifts past 31 bits
        how = (f"multiplies it by 3 << {shift}, which overflows int32 for large values" if multiplier == 0
               else f"shifts it right by {shift} bits, past the int32 width")
        raise kernel_error(node, f"cell state {tensor_desc(c)} scale 2^{data.cell_power}: TFLM's tanh of "
                                 f"the cell state {how} (undefined in C++); a quantization scale is wrong")
    cell_clip = float(np.float32(data.cell_clip)) / float(cell_scale) if cell_scale else 0.0
    data.quantized_cell_clip = int(math.trunc(min(max(cell_clip, -32768.0), 32767.0)))
    data.forget_cell_mul = _mul_params(NONLINEAR_OUTPUT_SCALE, cell_scale, cell_scale)
    data.input_mul = _mul_params(NONLINEAR_OUTPUT_SCALE, NONLINEAR_OUTPUT_SCALE, cell_scale)
    data.output_mul = _mul_params(NONLINEAR_OUTPUT_SCALE, NONLINEAR_OUTPUT_SCALE, scale_of(h))
    for (_, shift), what in ((data.forget_cell_mul, f"forget gate x cell state {tensor_desc(c)}"),
                             (data.input_mul, f"input gate x cell gate into cell state {tensor_desc(c)}"),
                             (data.output_mul, f"output gate x cell into output state {tensor_desc(h)}")):
        check_left_shift(node, shift, what)


def _const(v) -> np.ndarray:
    """A 0-d int64 operand (they convert fastest in numpy's ufunc calls)."""
    return np.asarray(v, np.int64)


def _input_fc_buffers(data: OpDataLSTM, bf: dict) -> None:
    """The input FC over all steps: float32 when every partial sum of |x| * |w| stays below
    2^24 (exact), else float64 (exact below 2^53); the input zero point folded into the bias;
    the int32 wrap-around where the sums could leave int32."""
    b, s, steps, d = data.batch, data.n_state, data.steps, data.n_input
    w_in = data.w_in_t                                            # (d, 4s), weights - zp
    w_abs = float(np.abs(w_in).sum(axis=0).max(initial=0))
    ft_in = exact_float_type(w_in, 128)
    bf["x_f"] = np.empty((steps, b, d), ft_in)
    bf["w_in"] = np.ascontiguousarray(w_in.astype(ft_in))
    bf["in_f"] = np.empty((steps * b, 4 * s), ft_in)
    bf["in_acc"] = np.empty((steps * b, 4 * s), np.int64)
    zp_term = data.input_zp * np.rint(w_in.sum(axis=0)).astype(np.int64)
    bf["in_bias"] = np.ascontiguousarray(np.broadcast_to(data.bias - zp_term, (steps * b, 4 * s)))
    x_span = max_abs_offset(np.int8, data.input_zp)
    bias_bound = float(np.abs(data.bias).max(initial=0))
    bf["wrap_in"] = w_abs * x_span + bias_bound >= 2 ** 31
    in_bound = (1 << 31) if bf["wrap_in"] else int(w_abs * x_span + bias_bound)
    bf["rq_in"] = InPlaceRequant(data.in_mult, data.in_shift, (steps * b, 4 * s), in_bound)


def _saturation_bounds(data: OpDataLSTM, bf: dict) -> None:
    """The int16 / int8 clamps, the per-gate blocks of the stacked lookup table (index =
    value + 32768 + gate * 65536) and the cell state's clamp (int16, and the cell clip)."""
    b, s, steps = data.batch, data.n_state, data.steps
    g = np.repeat(np.arange(4, dtype=np.int64) * 65536, s)
    bf["lut_offset"] = np.ascontiguousarray(np.broadcast_to(g + 32768, (steps * b, 4 * s)))
    bf["gate_lo"] = np.ascontiguousarray(np.broadcast_to(g, (b, 4 * s)))
    bf["gate_hi"] = bf["gate_lo"] + 65535
    bf["m32768"], bf["p32767"] = _const(-32768), _const(32767)
    bf["m128"], bf["p127"] = _const(-128), _const(127)
    bf["hz"] = _const(data.hidden_zp)
    lo, hi = cell_state_bounds(data)
    bf["cell_lo"], bf["cell_hi"] = _const(lo), _const(hi)


def cell_state_bounds(data: OpDataLSTM) -> tuple[int, int]:
    """The new cell state's clamp: int16 saturation, then the cell clip (where one is set)."""
    lo, hi = -32768, 32767
    if data.cell_clip > 0:                    # clamp(clamp(x, int16), +-clip): clip <= 32767
        q = data.quantized_cell_clip
        lo, hi = (max(lo, -q), min(hi, q)) if q >= 0 else (-q, -q)   # min(x, q) then max(., -q)
    return lo, hi


def _recurrent_fc_buffers(data: OpDataLSTM, bf: dict) -> None:
    """The recurrent FC on the raw hidden state plus a constant 1 against the row -zp *
    sum(w): sum((h - zp) * w) exactly; float32 when the partial sums stay below 2^24."""
    b, s = data.batch, data.n_state
    w_rec = data.w_rec_t                                          # (s, 4s), weights - zp
    zp_row = -data.hidden_zp * w_rec.sum(axis=0, keepdims=True)
    r_abs = float(np.abs(w_rec).sum(axis=0).max(initial=0))
    ft = exact_float_type(w_rec, 256)
    bf["w_rec"] = np.ascontiguousarray(np.concatenate([w_rec, zp_row]).astype(ft))
    bf["rec_f"] = np.empty((b, 4 * s), ft)
    hsm = bf["hsm"] = np.ones((b, s + 1), ft)
    bf["h_in"] = hsm[:, :s]
    # The recurrent dot products stay far inside int32 (state x 255 x 255), as in the C code
    # they are not wrapped.
    bf["rq_rec"] = InPlaceRequant(data.rec_mult, data.rec_shift, (b, 4 * s), int(255 * r_abs))


def _product_requantizers(data: OpDataLSTM, bf: dict) -> None:
    """The requantizations of the element-wise products, whether the folded step body applies
    (`fast`), and the hidden zero point folded into the output rounding where it fits."""
    b, s = data.batch, data.n_state
    fm, fs = data.forget_cell_mul
    im, ish = data.input_mul
    # Products of a Q0.15 gate and an int16 value: |p| <= 2^30.
    rq_cell = bf["rq_cell"] = InPlaceRequant(np.array([fm, im], np.int64).reshape(2, 1, 1),
                                             np.array([fs, ish], np.int64).reshape(2, 1, 1), (2, b, s), 1 << 30)
    om, osh = data.output_mul
    rq_out = bf["rq_out"] = InPlaceRequant(om, osh, (b, s), 1 << 30)
    bf["fast"] = not (bf["rq_rec"].generic or rq_cell.generic or rq_out.generic)
    # The hidden zero point joins the output rounding constant when the sum cannot overflow:
    # adding zp * 2^(31 + r) before the two floor shifts adds exactly zp after them.
    hz_add: Optional[np.ndarray] = _const(data.hidden_zp)
    out_add = rq_out.add
    if bf["fast"]:
        r = int(rq_out.right.flat[0])
        folded = int(out_add.flat[0]) + (data.hidden_zp << (31 + r))
        if (1 << 30) * abs(int(rq_out.mult_eff)) + abs(folded) < 2 ** 63 - 1:
            out_add = np.full((b, s), folded, np.int64)
            hz_add = None
    bf["out_add"], bf["hz_add"] = out_add, hz_add


def _gate_tables(data: OpDataLSTM, bf: dict) -> None:
    """The four gates' lookup tables stacked (sigmoid, sigmoid, tanh, sigmoid), plain and
    with the product multipliers folded in, and the cell tanh table."""
    sig = data.sigmoid_lut.astype(np.int64)
    gtanh = data.gate_tanh_lut.astype(np.int64)
    bf["lut4"] = np.ascontiguousarray(np.concatenate([sig, sig, gtanh, sig]))
    # Folded step: input gate x im (it multiplies the cell gate), forget gate x fm (it
    # multiplies the cell state), output gate x om (it multiplies tanh(cell)).
    fm_eff, im_eff = (int(v) for v in bf["rq_cell"].mult_eff.ravel())
    om_eff = int(bf["rq_out"].mult_eff)
    bf["lut4_scaled"] = np.ascontiguousarray(np.concatenate([sig * im_eff, sig * fm_eff, gtanh, sig * om_eff]))
    # Indexed by the int16 value itself: negative values index from the end.
    bf["cell_tanh_rot"] = np.ascontiguousarray(np.roll(data.cell_tanh_lut.astype(np.int64), -32768))


def _step_buffers(data: OpDataLSTM, bf: dict) -> None:
    """What one step writes: the gates (and a view of each), the products, the accumulator,
    the cell state and the new hidden state."""
    b, s = data.batch, data.n_state
    gates = bf["gates"] = np.empty((b, 4 * s), np.int64)
    bf["i_g"], bf["f_g"] = gates[:, 0:s], gates[:, s:2 * s]
    bf["g_g"], bf["o_g"] = gates[:, 2 * s:3 * s], gates[:, 3 * s:]
    bf["prod"] = np.empty((2, b, s), np.int64)
    bf["acc"] = np.empty((b, 4 * s), np.int64)
    bf["cs"] = np.empty((b, s), np.int64)
    bf["hq"] = np.empty((b, s), np.int64)


# --------------------------------------------------------------------------- invoke

def run_int8(data: OpDataLSTM, xs, os_, h, c) -> None:
    """TFLM's integer LSTM: every gate is the input FC and the recurrent FC, each requantized
    to int16 on its own (with saturation), then added with int16 saturation. xs (steps,
    batch, input) in, os_ (steps, batch, state) out, h and c (batch, state) updated in place.
    Every buffer comes from prepare (`data.bufs`)."""
    bf = data.bufs
    in_fc = _input_gates(data, xs)
    step = _folded_step(data, in_fc) if bf["fast"] else _generic_step(data, in_fc)
    cs, hq, h_in = bf["cs"], bf["hq"], bf["h_in"]
    h_in[...] = h
    cs[...] = c
    for t in range(data.steps):
        step(t)
        os_[t] = hq
        h_in[...] = hq
    if data.steps:
        h[...] = hq
    c[...] = cs


def _input_gates(data: OpDataLSTM, xs) -> np.ndarray:
    """The input FCs of every step and gate in one matmul, requantized and saturated to int16,
    each moved to its gate's block of the stacked lookup table: (steps, batch, 4 * state)."""
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
    clip(in_acc, bf["m32768"], bf["p32767"], out=in_acc)
    in_acc += bf["lut_offset"]
    return in_acc.reshape(data.steps, data.batch, 4 * data.n_state)


def _folded_step(data: OpDataLSTM, in_fc):
    """One step with the requantizations inlined (no int32 wrap-around possible): the hidden
    state `hq` from `h_in` and the cell state `cs`, both in place. The multipliers of the
    three element-wise products are folded into the gate lookup table (exact: int64 products
    below 2^62), the hidden zero point into the recurrent weights (an extra row against a
    constant 1) and, where it fits, into the output rounding constant."""
    bf = data.bufs
    rq_rec, rq_cell, rq_out = bf["rq_rec"], bf["rq_cell"], bf["rq_out"]
    w_rec, rec_f, acc = bf["w_rec"], bf["rec_f"], bf["acc"]
    rm, radd, rr, rneg, rlim = rq_rec.full_mult, rq_rec.add, rq_rec.right, rq_rec.neg, rq_rec.lim
    cadd, cr, cneg, clim = rq_cell.add, rq_cell.right, rq_cell.neg, rq_cell.lim
    oadd, orr, oneg, olim, hz_add = bf["out_add"], rq_out.right, rq_out.neg, rq_out.lim, bf["hz_add"]
    lo16, hi16 = bf["m32768"], bf["p32767"]
    glo, ghi = bf["gate_lo"], bf["gate_hi"]
    clo, chi, olo, ohi = bf["cell_lo"], bf["cell_hi"], bf["m128"], bf["p127"]
    lut4s, ctanh = bf["lut4_scaled"], bf["cell_tanh_rot"]
    gates, prod, cs, hq, hsm = bf["gates"], bf["prod"], bf["cs"], bf["hq"], bf["hsm"]
    i_g, f_g, g_g, o_g = bf["i_g"], bf["f_g"], bf["g_g"], bf["o_g"]
    p_fc, p_ig = prod[0], prod[1]
    dot, multiply, add, clamp = np.dot, np.multiply, np.add, clip

    def step(t: int) -> None:
        nonlocal acc, hq                          # updated in place (augmented assignments)
        acc[...] = dot(hsm, w_rec, out=rec_f)
        acc *= rm
        round_and_shift(acc, rlim, rneg, radd, rr)
        clamp(acc, lo16, hi16, out=acc)
        acc += in_fc[t]
        clamp(acc, glo, ghi, out=acc)             # int16 saturation of the sum, per gate block
        gates[...] = lut4s[acc]
        multiply(f_g, cs, out=p_fc)               # forget x cell, input x cell gate
        multiply(i_g, g_g, out=p_ig)
        round_and_shift(prod, clim, cneg, cadd, cr)
        clamp(prod, lo16, hi16, out=prod)
        add(p_fc, p_ig, out=cs)
        clamp(cs, clo, chi, out=cs)               # int16 saturation (and the cell clip)
        hq[...] = ctanh[cs]
        hq *= o_g
        round_and_shift(hq, olim, oneg, oadd, orr)
        if hz_add is not None:
            hq += hz_add
        clamp(hq, olo, ohi, out=hq)
    return step


def _generic_step(data: OpDataLSTM, in_fc):
    """One step for any requantization (left shifts, shifts of 0): `hq` and `cs` in place."""
    bf = data.bufs
    s = data.n_state
    w_rec, rec_f, acc = bf["w_rec"], bf["rec_f"], bf["acc"]
    rq_rec, rq_cell, rq_out = bf["rq_rec"], bf["rq_cell"], bf["rq_out"]
    lo16, hi16 = bf["m32768"], bf["p32767"]
    gates, prod, cs, hq, hsm = bf["gates"], bf["prod"], bf["cs"], bf["hq"], bf["hsm"]

    def step(t: int) -> None:
        nonlocal acc, hq                          # updated in place (augmented assignments)
        acc[...] = np.dot(hsm, w_rec, out=rec_f)
        rq_rec(acc)
        clip(acc, lo16, hi16, out=acc)
        acc += in_fc[t]
        clip(acc, bf["gate_lo"], bf["gate_hi"], out=acc)
        bf["lut4"].take(acc, out=gates)
        np.multiply(gates[:, s:2 * s], cs, out=prod[0])
        np.multiply(gates[:, 0:s], gates[:, 2 * s:3 * s], out=prod[1])
        rq_cell(prod)
        clip(prod, lo16, hi16, out=prod)
        np.add(prod[0], prod[1], out=cs)
        clip(cs, bf["cell_lo"], bf["cell_hi"], out=cs)
        bf["cell_tanh_rot"].take(cs, out=hq)
        hq *= gates[:, 3 * s:]
        rq_out(hq)
        hq += bf["hz"]
        clip(hq, bf["m128"], bf["p127"], out=hq)
    return step


# --------------------------------------------------------------------------- 16x8 (int16 activations)

def prepare_int16(node, data: OpDataLSTM, t: list) -> None:
    """16x8->16 (EvalLstm<int16_t, int8_t, int16_t, int64_t>): int16 input and hidden state,
    int8 weights, int64 biases. The gate FCs accumulate in int64 and requantize with TFLM's
    int64 MultiplyByQuantizedMultiplier; the rest is the 8x8 path's, with the hidden state
    saturated to int16."""
    data.kind = "int16"
    _per_tensor_weights(node, t)
    _gate_fc_params(node, data, t, MAX_LEFT_SHIFT_WIDE)
    _cell_and_product_params(node, data, t)
    _lookup_tables(data)
    w_in, w_rec = np.rint(data.w_in_t).astype(np.int64), np.rint(data.w_rec_t).astype(np.int64)
    # int64 sums times the 16-bit reduced multiplier must stay inside int64 (C++: undefined).
    x_span = max_abs_offset(np.int16, data.input_zp)
    h_span = max_abs_offset(np.int16, data.hidden_zp)
    bound = max(int(np.abs(w_in).sum(axis=0).max(initial=0)) * x_span + int(np.abs(data.bias).max(initial=0)),
                int(np.abs(w_rec).sum(axis=0).max(initial=0)) * h_span)
    if bound * 0x7FFF >= 2 ** 63:
        raise kernel_error(node, f"biases up to {int(np.abs(data.bias).max(initial=0))}: the int64 gate sums "
                                 "times the requantization multiplier overflow int64 (undefined in C++)")
    lo, hi = cell_state_bounds(data)
    data.bufs = {"w_in": w_in, "w_rec": w_rec, "cell_lo": _const(lo), "cell_hi": _const(hi)}


def _gate_fc_wide(acc: np.ndarray, mult: np.ndarray, shift: np.ndarray) -> np.ndarray:
    """A 16x8 gate FC's output stage: int64 MultiplyByQuantizedMultiplier, the int32 cast,
    int16 saturation."""
    return np.clip(wrap_int32(requantize_wide(acc, mult, shift)), -32768, 32767)


def run_int16(data: OpDataLSTM, xs, os_, h, c) -> None:
    """The 16x8 LSTM over all steps: xs (steps, batch, input) in, os_ (steps, batch, state)
    out, h and c (batch, state) updated in place."""
    bf, s = data.bufs, data.n_state
    hh, cs = h.astype(np.int64), c.astype(np.int64)
    for t in range(data.steps):
        a = _gate_fc_wide((xs[t].astype(np.int64) - data.input_zp) @ bf["w_in"] + data.bias, data.in_mult,
                          data.in_shift)
        r = _gate_fc_wide((hh - data.hidden_zp) @ bf["w_rec"], data.rec_mult, data.rec_shift)
        g = np.clip(a + r, -32768, 32767) + 32768
        in_g, forget_g = data.sigmoid_lut[g[:, :s]], data.sigmoid_lut[g[:, s:2 * s]]
        cell_g, out_g = data.gate_tanh_lut[g[:, 2 * s:3 * s]], data.sigmoid_lut[g[:, 3 * s:]]
        kept = np.clip(multiply_by_quantized_multiplier(forget_g * cs, *data.forget_cell_mul), -32768, 32767)
        added = np.clip(multiply_by_quantized_multiplier(in_g * cell_g, *data.input_mul), -32768, 32767)
        cs = np.clip(kept + added, bf["cell_lo"], bf["cell_hi"])
        hh = np.clip(multiply_by_quantized_multiplier(data.cell_tanh_lut[cs + 32768] * out_g, *data.output_mul)
                     + data.hidden_zp, -32768, 32767)
        os_[t] = hh
    if data.steps:
        h[...] = hh
    c[...] = cs
