"""Conv / depthwise / fully connected at the edges of TFLM's integer types, against the
tflite-micro oracle and the virtual MCU (CMSIS-NN build on a Cortex-M4):

- biases near +-2^31: TFLM's int32 accumulator wraps (acc + bias), so must the host's;
- 16x8 layers with an int32 bias: TFLM's int32-accumulator variant (wrapping sum, double
  rounding), not the int64 one;
- requantization multipliers of 2^31 and more: TFLM's MultiplyByQuantizedMultiplier shifts
  left past 31 bits, undefined in C++ (the x86 oracle masks the shift count, an Arm build
  gives 0): refused; up to 2^31 they run and agree;
- strides and dilations beyond int16: TFLM's ConvParams / DepthwiseParams keep them (and
  the padding) as int16_t, so its kernels run with the wrapped values; micro_rt does the same
  on the host (the MCU glue leaves such nodes to the host);
- a depthwise depth_multiplier option that disagrees with the channels is refused (TFLM would
  index channels out of range);
- a float filter holding NaN or Inf on windows that reach outside the image is refused (TFLM
  skips those taps, micro_rt's kernels multiply them by zero padding);
- float results beyond the float32 range come out as +-FLT_MAX, TFLM's unbounded activation
  range (std::numeric_limits<float>::lowest() / max()), on the host and the MCU.
"""
from __future__ import annotations

import numpy as np
import pytest

from kernel_cases import assert_bits_equal, f32, q8, q16, random_input, single_op
from micro_rt import Interpreter
from micro_rt.errors import KernelError
from micro_rt.kernels.padding import compute_padding_height_width

INT32_MAX, INT32_MIN = (1 << 31) - 1, -(1 << 31)


def layer(op: str, rng, *, kind="int8", bias=None, bias_type="INT32", out_scale=0.2, w_scale=0.01,
          per_channel=False, dil=(1, 1), stride=(1, 1), ic=3, fsize=(3, 3), padding="VALID",
          in_shape=(1, 6, 7), batches=2, depth_multiplier=None) -> bytes:
    """One CONV_2D / DEPTHWISE_CONV_2D / FULLY_CONNECTED model (random weights from rng)."""
    mk_act = {"int8": lambda s, sc, zp: q8(s, sc, zp), "int16": lambda s, sc, zp: q16(s, sc, 0),
              "float32": lambda s, sc, zp: f32(s)}[kind]
    if op == "FULLY_CONNECTED":
        oc, fshape, x_shape = 4, (4, ic * 2), (batches, ic * 2)
        y_shape, opts, qdim = (batches, 4), {}, 0
    else:
        dw = op == "DEPTHWISE_CONV_2D"
        oc = ic * 2 if dw else 4
        fshape = (1, *fsize, oc) if dw else (oc, *fsize, ic)
        x_shape = (*in_shape, ic)
        _, oh, ow = compute_padding_height_width(stride[0], stride[1], dil[0], dil[1], in_shape[1],
                                                 in_shape[2], fsize[0], fsize[1], padding)
        y_shape, qdim = (in_shape[0], oh, ow, oc), 3 if dw else 0
        opts = dict(padding=padding, stride_h=stride[0], stride_w=stride[1], dilation_h_factor=dil[0],
                    dilation_w_factor=dil[1])
        if dw:
            opts["depth_multiplier"] = 2 if depth_multiplier is None else depth_multiplier
    w = rng.integers(-127, 128, fshape)
    if kind == "float32":
        flt = dict(shape=fshape, type="FLOAT32", data=w / 64.0)
    else:
        scales = list(rng.uniform(0.5, 1.5, oc) * w_scale) if per_channel else w_scale
        flt = dict(shape=fshape, type="INT8", data=w, scale=scales, zp=0, qdim=qdim)
    b = None
    if bias is not None:
        if kind == "float32":
            b = dict(shape=(oc,), type="FLOAT32", data=np.asarray(bias, np.float32) / 8)
        else:
            b = dict(shape=(oc,), type=bias_type, data=np.asarray(bias, np.int64), scale=0.05 * w_scale, zp=0)
    return single_op(op, [mk_act(x_shape, 0.05, 3), flt, b], mk_act(y_shape, out_scale, -5), opts)


def run_three(oracle, data: bytes, seeds=range(4), on_mcu: bool = True) -> None:
    """micro_rt on the host, micro_rt on the virtual MCU and the oracle: outputs bit-equal."""
    host = Interpreter.from_bytes(data)
    mcu = Interpreter.from_bytes(data, target="cortex-m4", kernels="cmsis-nn", emulate=True)
    theirs = oracle.interpreter(data, 1 << 20)
    details = host.get_input_details(0)
    for seed in seeds:
        x = random_input(details["dtype"], details["shape"], np.random.default_rng(seed), first=seed == 0)
        for it in (host, mcu, theirs):
            it.set_input(x, 0)
            it.invoke()
        want = np.array(theirs.get_output(0))
        assert_bits_equal(host.get_output(0), want, f"host, seed {seed}")
        assert_bits_equal(mcu.get_output(0), want, f"MCU, seed {seed}")
    assert [r.on_mcu for r in mcu.last_run] == [on_mcu]


LAYERS = [("CONV_2D", {}), ("CONV_2D", {"fsize": (1, 1)}), ("CONV_2D", {"per_channel": True}),
          ("DEPTHWISE_CONV_2D", {}), ("DEPTHWISE_CONV_2D", {"ic": 1}),
          ("DEPTHWISE_CONV_2D", {"depth_multiplier": 2, "ic": 4}),
          ("FULLY_CONNECTED", {}), ("FULLY_CONNECTED", {"per_channel": True, "batches": 3})]


@pytest.mark.parametrize("op,kw", LAYERS, ids=[f"{op}-{k}" for k, (op, _) in enumerate(LAYERS)])
def test_bias_near_int32_limits_wraps_like_tflm(op, kw, oracle):
    rng = np.random.default_rng(len(op) + len(kw))
    for trial in range(4):
        oc = 4 if op != "DEPTHWISE_CONV_2D" else kw.get("ic", 3) * 2
        near = [INT32_MAX - int(rng.integers(0, 30000)), INT32_MIN + int(rng.integers(0, 30000)),
                INT32_MAX, INT32_MIN]
        bias = (near * oc)[:oc]
        run_three(oracle, layer(op, rng, bias=bias, out_scale=50.0, **kw))


@pytest.mark.parametrize("op", ["CONV_2D", "FULLY_CONNECTED"])
def test_16x8_with_int32_bias_uses_tflm_int32_variant(op, oracle):
    rng = np.random.default_rng(7)
    for bias in (rng.integers(-3000, 3000, 4), [INT32_MAX - 5, INT32_MIN + 9, INT32_MAX, 0]):
        run_three(oracle, layer(op, rng, kind="int16", bias=bias, out_scale=0.5))
    run_three(oracle, layer(op, rng, kind="int16", bias=rng.integers(-3000, 3000, 4), bias_type="INT64"))


@pytest.mark.parametrize("op", ["CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED"])
def test_multipliers_up_to_2_pow_31_agree(op, oracle):
    rng = np.random.default_rng(11)
    for ratio in (2.0 ** 10, 2.0 ** 20, 2.0 ** 30, 2.0 ** 30 * 1.9):   # shift 11 .. 31
        # TFLM's depthwise kernel crashes without a bias; a fully connected bias's scale must
        # match input x weights within 2% of the (here tiny) output scale, so it gets none.
        bias = None if op == "FULLY_CONNECTED" else rng.integers(-5, 5, 6 if op == "DEPTHWISE_CONV_2D" else 4)
        run_three(oracle, layer(op, rng, out_scale=float(np.float32(0.05 * 0.01 / ratio)), bias=bias))


@pytest.mark.parametrize("op", ["CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED"])
@pytest.mark.parametrize("ratio", [2.0 ** 31 * 1.01, 2.0 ** 40, 1e30])
def test_multipliers_from_2_pow_31_refused(op, ratio):
    data = layer(op, np.random.default_rng(1), out_scale=float(np.float32(0.05 * 0.01 / ratio)))
    with pytest.raises(KernelError, match=r"op 0 .*left shift \d+, at most 31 is defined.*undefined in C\+\+"):
        Interpreter.from_bytes(data)


def test_16x8_multiplier_limit_is_the_int64_variant():
    """TFLM's int64 MultiplyByQuantizedMultiplier shifts right by 15 - shift: shift 15 up is
    undefined."""
    rng = np.random.default_rng(2)
    with pytest.raises(KernelError, match="at most 14 is defined"):
        Interpreter.from_bytes(layer("CONV_2D", rng, kind="int16", out_scale=float(np.float32(0.05 * 0.01 / 2.0 ** 15))))
    Interpreter.from_bytes(layer("CONV_2D", rng, kind="int16", out_scale=float(np.float32(0.05 * 0.01 / 2.0 ** 13))))


WINDOWS = [((65537, 1), (1, 1)), ((1, 65538), (1, 1)), ((32768, 1), (1, 1)), ((40000, 40000), (1, 1)),
           ((65535, 2), (1, 1)), ((1, 1), (65537, 1)), ((2, 2), (65536, 1)), ((32767, 1), (1, 1))]


@pytest.mark.parametrize("op", ["CONV_2D", "DEPTHWISE_CONV_2D"])
@pytest.mark.parametrize("kind", ["int8", "float32"])
def test_int16_window_fields_wrap_like_tflm(op, kind, oracle):
    rng = np.random.default_rng(5)
    for dil, stride in WINDOWS:
        data = layer(op, rng, kind=kind, dil=dil, stride=stride, padding="SAME",
                     bias=rng.integers(-300, 300, 4 if op == "CONV_2D" else 6))
        wraps = any(v > 32767 for v in (*dil, *stride))
        if kind == "float32":
            from kernel_cases import assert_single_op_matches_oracle
            assert_single_op_matches_oracle(oracle, data, trials=3)
        else:
            run_three(oracle, data, seeds=range(3), on_mcu=not wraps)


def test_depth_multiplier_option_must_match_the_channels():
    data = layer("DEPTHWISE_CONV_2D", np.random.default_rng(3), depth_multiplier=3)
    with pytest.raises(KernelError, match="depth_multiplier option 3 .* 6 / 3"):
        Interpreter.from_bytes(data)
    data = layer("DEPTHWISE_CONV_2D", np.random.default_rng(3), depth_multiplier=65538)   # int16: 2
    Interpreter.from_bytes(data)


@pytest.mark.parametrize("op", ["CONV_2D", "DEPTHWISE_CONV_2D"])
@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_non_finite_float_filter_on_padded_windows_is_refused(op, bad, oracle):
    """TFLM skips a window's taps outside the image; micro_rt's host and MCU kernels multiply
    them by zero padding, and 0 x NaN or 0 x Inf is NaN where TFLM adds nothing (fuzzing: a
    NaN weight in depthwise_variants_f32). Refused when a window reaches padding; with VALID
    padding there is no such tap, and the model runs and agrees."""
    shape = (2, 3, 3, 2) if op == "CONV_2D" else (1, 3, 3, 2)
    w = np.random.default_rng(4).normal(0, 0.5, shape).astype(np.float32)
    w[0, 0, 0, 0] = bad                                   # a corner tap: outside for edge outputs

    def model(padding):
        return single_op(op, [f32((1, 5, 5, 2)), f32(shape, data=w), f32((2,), data=np.ones(2))],
                         f32((1, 5, 5, 2) if padding == "SAME" else (1, 3, 3, 2)),
                         dict(padding=padding, stride_h=1, stride_w=1, **({"depth_multiplier": 1}
                                                                           if op != "CONV_2D" else {})))
    x = random_input(np.float32, (1, 5, 5, 2), np.random.default_rng(0))
    theirs = oracle.run(model("SAME"), [x], 1, arena_size=1 << 20)[0]
    # TFLM skips the tap at the corner output; inside, the sum is NaN or +-Inf (clamped to FLT_MAX)
    inner = theirs[0, 2, 2, 0]
    assert np.isfinite(theirs[0, 0, 0, 0]) and (np.isnan(inner) or abs(inner) == np.finfo(np.float32).max)
    with pytest.raises(KernelError, match=rf"op 0 {op}: filter 'in1' holds non-finite values "
                                          r"\((nan|inf) at \[0, 0, 0, 0\]\).*outside the image"):
        Interpreter.from_bytes(model("SAME"))
    for kernels, target in (("reference", "host64"), ("cmsis-nn", "cortex-m4")):
        ours = Interpreter.from_bytes(model("VALID"), kernels=kernels, target=target, emulate=target != "host64")
        ours.set_input(x, 0)
        ours.invoke()
        np.testing.assert_allclose(ours.get_output(0), oracle.run(model("VALID"), [x], 1)[0],
                                   rtol=1e-6, equal_nan=True)


BIG = float(np.float32(3e38))
FLOAT_OVERFLOW = [  # op, input specs, output spec, options
    ("ADD", [f32((2, 4)), f32((2, 4))], f32((2, 4)), {}),
    ("SUB", [f32((2, 4)), f32((2, 4))], f32((2, 4)), {}),
    ("MUL", [f32((2, 4)), f32((2, 4))], f32((2, 4)), {}),
    ("FULLY_CONNECTED", [f32((2, 4)), f32((3, 4), data=np.full((3, 4), 2.0)), None], f32((2, 3)), {}),
    ("CONV_2D", [f32((1, 2, 4, 1)), f32((2, 1, 2, 1), data=np.full((2, 1, 2, 1), 2.0))], f32((1, 2, 3, 2)),
     {"padding": "VALID", "stride_h": 1, "stride_w": 1}),
    ("AVERAGE_POOL_2D", [f32((1, 4, 2, 1))], f32((1, 2, 1, 1)),
     {"padding": "VALID", "filter_height": 2, "filter_width": 2, "stride_h": 2, "stride_w": 2}),
]


@pytest.mark.parametrize("act", ["NONE", "RELU"])
@pytest.mark.parametrize("case", range(len(FLOAT_OVERFLOW)), ids=[c[0] for c in FLOAT_OVERFLOW])
def test_float_overflow_clamps_to_float_max_like_tflm(case, act, oracle):
    """TFLM's float activation range without a bound is std::numeric_limits<float>::lowest()
    / max(), so a sum or product that overflows to +-Inf comes out as +-FLT_MAX (RELU: +Inf
    too); host and MCU must do the same."""
    op, ins, out, options = FLOAT_OVERFLOW[case]
    data = single_op(op, ins, out, dict(options, fused_activation_function=act))
    x = np.resize(np.float32([BIG, BIG, 1.5, BIG, -BIG, -BIG, -2.0, -BIG]), ins[0]["shape"])
    if op == "MUL":
        x = np.sign(x) * np.float32(1e20)
    inputs = [x] + ([-x if op == "SUB" else x] if op in ("ADD", "SUB", "MUL") else [])
    want = oracle.run(data, inputs, 1, arena_size=1 << 20)[0]
    assert np.isin(np.abs(want), [np.finfo(np.float32).max]).any()     # the case overflows
    for kernels, target in (("reference", "host64"), ("cmsis-nn", "cortex-m4")):
        ours = Interpreter.from_bytes(data, kernels=kernels, target=target, emulate=target != "host64")
        for k, v in enumerate(inputs):
            ours.set_input(v, k)
        with np.errstate(over="ignore"):
            ours.invoke()
        np.testing.assert_array_equal(ours.get_output(0), want, err_msg=f"{op} {act} on {target}")
