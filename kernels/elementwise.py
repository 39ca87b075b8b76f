"""ADD, SUB, MUL, MAXIMUM, MINIMUM: TFLM's reference kernels, bit-exact, in numpy.

int8: the binary op is precomputed in prepare as a 256 x 256 table of int8 results (every
input pair evaluated with TFLM's fixed-point arithmetic), so invoke is one gather.
int16 / int32 / float32 are computed element-wise with broadcasting.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from micro_rt.kernel_api import KernelContext, Node, Registration, TempRule, op_data_init

from .fixedpoint import INT32_MAX, INT32_MIN, multiply_by_quantized_multiplier, wrap_int32
from .kernel_util import (activation_range_float, activation_range_int, activation_range_quantized,
                          check_quantized, is_quantized, kernel_error, require_inputs, scale_of,
                          tensor_desc, type_label, zero_point_of)
from .lookup_tables import int8_domain
from .quant import check_left_shift, quantize_multiplier, quantize_multiplier_smaller_than_one_exp


@dataclass
class BinaryData:
    kind: str = ""                      # "float", "int8", "int16", "int32", "int64"
    params: dict = field(default_factory=dict)
    lut: Optional[np.ndarray] = None    # int8: 65536 results indexed by (a_u8 << 8) | b_u8
    out_shape: tuple = ()
    fmin: float | np.float32 = float("-inf")     # float32 bounds: the clamp compares in float32
    fmax: float | np.float32 = float("inf")
    imin: int = INT32_MIN
    imax: int = INT32_MAX


# --------------------------------------------------------------------------- pure math

def add_sub_output_real_multiplier(in1, in2, out) -> float:
    """CalculateOpDataAdd's real output multiplier: 2 * max(input scales) / (2^left_shift *
    output scale), which TFLM requires below 1."""
    left_shift = 15 if out.dtype == np.int16 else 20
    twice = 2.0 * float(max(np.float32(scale_of(in1)), np.float32(scale_of(in2))))
    return twice / (float(1 << left_shift) * scale_of(out))


def add_sub_params(in1, in2, out, activation: str, is_sub: bool) -> dict:
    """CalculateOpDataAdd / CalculateOpDataSub for int8 / int16 outputs (left shift 20 / 15)."""
    left_shift = 15 if out.dtype == np.int16 else 20
    s1, s2, so = scale_of(in1), scale_of(in2), scale_of(out)
    # Computed in double, for SUB as for ADD: some TFLM sources compute SUB's in float, but the
    # oracle build (and the seanet golden data) need double.
    twice = 2.0 * float(max(np.float32(s1), np.float32(s2)))
    r1 = s1 / twice
    r2 = s2 / twice
    ro = add_sub_output_real_multiplier(in1, in2, out)
    m1, sh1 = quantize_multiplier_smaller_than_one_exp(r1)
    m2, sh2 = quantize_multiplier_smaller_than_one_exp(r2)
    mo, sho = quantize_multiplier_smaller_than_one_exp(ro)
    amin, amax = activation_range_quantized(activation, so, zero_point_of(out), out.dtype)
    return dict(left_shift=left_shift, in1_off=-zero_point_of(in1), in2_off=-zero_point_of(in2),
                out_off=zero_point_of(out), m1=m1, sh1=sh1, m2=m2, sh2=sh2, mo=mo, sho=sho,
                amin=amin, amax=amax)


def add_sub_quantized(a: np.ndarray, b: np.ndarray, p: dict, is_sub: bool) -> np.ndarray:
    """TFLM AddElementwise / SubElementwise (general quantized path) on int64 arrays."""
    x1 = (np.asarray(a, np.int64) + p["in1_off"]) * (1 << p["left_shift"])
    x2 = (np.asarray(b, np.int64) + p["in2_off"]) * (1 << p["left_shift"])
    s1 = multiply_by_quantized_multiplier(wrap_int32(x1), p["m1"], p["sh1"])
    s2 = multiply_by_quantized_multiplier(wrap_int32(x2), p["m2"], p["sh2"])
    raw = wrap_int32(s1 - s2 if is_sub else s1 + s2)
    out = multiply_by_quantized_multiplier(raw, p["mo"], p["sho"]) + p["out_off"]
    return np.clip(out, p["amin"], p["amax"])


def mul_params(in1, in2, out, activation: str) -> dict:
    real = float(scale_of(in1)) * float(scale_of(in2)) / float(scale_of(out))
    m, sh = quantize_multiplier(real)
    amin, amax = activation_range_quantized(activation, scale_of(out), zero_point_of(out), out.dtype)
    return dict(in1_off=-zero_point_of(in1), in2_off=-zero_point_of(in2),
                out_off=zero_point_of(out), m=m, sh=sh, amin=amin, amax=amax)


def mul_quantized(a: np.ndarray, b: np.ndarray, p: dict) -> np.ndarray:
    """reference_integer_ops::MulElementwise."""
    prod = wrap_int32((np.asarray(a, np.int64) + p["in1_off"]) * (np.asarray(b, np.int64) + p["in2_off"]))
    out = multiply_by_quantized_multiplier(prod, p["m"], p["sh"]) + p["out_off"]
    return np.clip(out, p["amin"], p["amax"])


def pair_table(fn, dtype=np.int8) -> np.ndarray:
    """All 256 x 256 int8 pairs through fn, as a table of `dtype` indexed by (a_u8 << 8) | b_u8
    (pair_index)."""
    d = int8_domain()
    a = np.repeat(d, 256)
    b = np.tile(d, 256)
    return fn(a, b).astype(dtype)


def pair_index(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The pair_table index of each (a, b) element pair (int8 arrays, broadcasting)."""
    au = np.ascontiguousarray(a).view(np.uint8).astype(np.uint16)
    bu = np.ascontiguousarray(b).view(np.uint8)
    return (au << 8) | bu


# --------------------------------------------------------------------------- kernels

def check_broadcast(node, in1, in2, out, max_rank: Optional[int] = None) -> tuple:
    """The shape the two inputs broadcast to (numpy's rules), refusing inputs that do not
    broadcast and an output of another size; `max_rank`: the most dimensions TFLM's kernel
    handles (its RuntimeShape holds 6, some kernels fewer)."""
    if max_rank is not None:
        for role, t in (("input 1", in1), ("input 2", in2), ("output", out)):
            if len(t.shape) > max_rank:
                raise kernel_error(node, f"{role} {tensor_desc(t)} has {len(t.shape)} dimensions; TFLM's "
                                         f"kernel handles at most {max_rank} (beyond that it overruns its "
                                         "shape arrays: undefined behaviour)")
    try:
        shape = np.broadcast_shapes(tuple(in1.shape), tuple(in2.shape))
    except ValueError:
        raise kernel_error(node, f"inputs {tensor_desc(in1)} and {tensor_desc(in2)} do not broadcast")
    if tuple(shape) != tuple(out.shape) and int(np.prod(shape)) != int(np.prod(out.shape)):
        raise kernel_error(node, f"output {tensor_desc(out)} does not match broadcast shape {list(shape)}")

    def without_leading_ones(dims) -> tuple:
        dims = tuple(int(d) for d in dims)
        while dims and dims[0] == 1:
            dims = dims[1:]
        return dims
    # Inputs of different shapes: TFLM walks the output's shape with the inputs' strides, so only
    # the broadcast shape (up to leading 1s) reads them in place.
    if tuple(in1.shape) != tuple(in2.shape) and without_leading_ones(shape) != without_leading_ones(out.shape):
        raise kernel_error(node, f"output {tensor_desc(out)} is not the broadcast shape {list(shape)} of "
                                 f"inputs {tensor_desc(in1)} and {tensor_desc(in2)}: TFLM's broadcast walks "
                                 "the output's shape and would read the inputs out of place")
    return tuple(shape)


def _binary_prepare(op: str):
    def prepare(ctx: KernelContext, node: Node):
        data: BinaryData = node.user_data
        if data is None:
            data = node.user_data = BinaryData()
        in1, in2 = require_inputs(ctx, node, 2)
        out = ctx.output(node, 0)
        if in1.dtype != in2.dtype:
            raise kernel_error(node, f"input {tensor_desc(in1)} and input {tensor_desc(in2)} differ in type")
        if op in ("ADD", "SUB", "MUL") and in1.dtype != out.dtype:
            raise kernel_error(node, f"output {tensor_desc(out)} type differs from input {tensor_desc(in1)}")
        data.out_shape = check_broadcast(node, in1, in2, out)
        act = node.options.get("fused_activation_function", "NONE")
        dt = np.dtype(out.dtype)
        if op in ("MAXIMUM", "MINIMUM"):
            _prepare_min_max(node, data, op, out)
        elif dt == np.float32:
            data.kind = "float"
            lo, hi = activation_range_float(act)
            data.fmin, data.fmax = np.float32(lo), np.float32(hi)
        elif dt in (np.int8, np.int16):
            _prepare_quantized(node, data, op, in1, in2, out, act)
        elif dt == np.int32:
            if op in ("ADD", "SUB") and (is_quantized(in1) or is_quantized(in2)):
                raise kernel_error(node, "only unquantized int32 is supported")
            data.kind = "int32"
            if op == "ADD":
                data.imin, data.imax = INT32_MIN, INT32_MAX
            else:
                data.imin, data.imax = activation_range_int(act, np.int32)
        else:
            raise kernel_error(node, f"output {tensor_desc(out)}: Type {type_label(dt)} not supported.")

    return prepare


def _prepare_min_max(node, data: BinaryData, op: str, out) -> None:
    """MAXIMUM / MINIMUM: any of TFLM's types; int8 as a pair table."""
    dt = np.dtype(out.dtype)
    if dt not in (np.float32, np.int8, np.int16, np.int32, np.int64):
        raise kernel_error(node, f"output {tensor_desc(out)}: Type {type_label(dt)} is not supported "
                                 "by Maximum/Minimum.")
    data.kind = "plain"
    if dt == np.int8:
        fn = (lambda a, b: np.where(a > b, a, b)) if op == "MAXIMUM" else \
             (lambda a, b: np.where(a < b, a, b))
        data.lut = pair_table(fn)
        data.kind = "int8"


def _prepare_quantized(node, data: BinaryData, op: str, in1, in2, out, act: str) -> None:
    """int8 / int16 ADD, SUB, MUL: TFLM's parameters, the element function (`params["fn"]`)
    and, for int8, its table of every input pair."""
    dt = np.dtype(out.dtype)
    # ADD / SUB divide by every scale (TFLM aborts on a zero one), MUL by the output's.
    for t, role in ((in1, "input 1"), (in2, "input 2"), (out, "output")):
        if op != "MUL" or role == "output":
            check_quantized(node, t, role)
    if op == "MUL":
        p = mul_params(in1, in2, out, act)
        check_left_shift(node, p["sh"], "input 1 x input 2 / output scale")
        if dt == np.int16 and (p["in1_off"] or p["in2_off"] or p["out_off"]):
            raise kernel_error(node, "int16 MUL needs zero points of 0")
        fn = lambda a, b: mul_quantized(a, b, p)  # noqa: E731
    else:
        is_sub = op == "SUB"
        ro = add_sub_output_real_multiplier(in1, in2, out)
        if not ro < 1.0:
            raise kernel_error(node, f"output {tensor_desc(out)} scale is too small for the inputs': the "
                                     f"output multiplier 2 * max(input scales) / (2^left_shift * output "
                                     f"scale) = {ro:g} is not below 1 (TFLM's QuantizeMultiplierSmallerThanOneExp "
                                     "aborts: TFLITE_CHECK_LT(double_multiplier, 1.))")
        p = add_sub_params(in1, in2, out, act, is_sub)
        fn = lambda a, b: add_sub_quantized(a, b, p, is_sub)  # noqa: E731
    data.params = p
    data.params["fn"] = fn
    if dt == np.int8:
        data.kind = "int8"
        data.lut = pair_table(fn)
    else:
        data.kind = "int16"


def _binary_invoke(op: str):
    def invoke(ctx: KernelContext, node: Node):
        data: BinaryData = node.user_data
        in1, in2, out = ctx.required_input(node, 0), ctx.required_input(node, 1), ctx.output(node, 0)
        a, b = in1.data, in2.data
        dst = out.data
        if dst.shape != data.out_shape:
            dst = dst.reshape(data.out_shape)
        kind = data.kind
        if kind == "int8":
            assert data.lut is not None             # prepare made it for int8
            np.take(data.lut, pair_index(a, b), out=dst)
        elif kind == "float":
            if op == "ADD":
                r = np.add(a, b)
            elif op == "SUB":
                r = np.subtract(a, b)
            else:
                r = np.multiply(a, b)
            np.minimum(np.maximum(r, data.fmin), data.fmax, out=dst)
        elif kind == "int16":
            dst[...] = data.params["fn"](a, b)
        elif kind == "int32":
            a64, b64 = np.asarray(a, np.int64), np.asarray(b, np.int64)
            if op == "ADD":
                r = a64 + b64
            elif op == "SUB":
                r = a64 - b64
            else:
                r = a64 * b64
            if dst.dtype == np.int32:
                r = wrap_int32(r)
            dst[...] = np.clip(r, data.imin, data.imax)
        else:  # MAXIMUM / MINIMUM, any type
            if op == "MAXIMUM":
                dst[...] = np.where(a > b, a, b)
            else:
                dst[...] = np.where(a < b, a, b)
    return invoke


def _registration(op: str, struct_name: Optional[str], *, temps: TempRule) -> Registration:
    return Registration(invoke=_binary_invoke(op), prepare=_binary_prepare(op),
                        init=op_data_init(struct_name, BinaryData), name=op, temps=temps)


BUILTINS: list[tuple[str, Registration, int]] = [
    ("ADD", _registration("ADD", "OpDataAdd", temps="i0 i1 o0"), 5),
    ("SUB", _registration("SUB", "OpDataSub", temps="i0 i1 o0"), 5),
    ("MUL", _registration("MUL", "OpDataMul", temps="i0 i1 o0"), 7),
    ("MAXIMUM", _registration("MAXIMUM", None, temps=""), 4),
    ("MINIMUM", _registration("MINIMUM", None, temps=""), 4),
]
