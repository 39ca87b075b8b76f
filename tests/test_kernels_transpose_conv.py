"""TRANSPOSE_CONV bit-exact against the tflite-micro oracle (TFLM's reference kernel): float32,
int8 (per-channel and per-tensor filters) and 16x8 (int64 and int16 biases), strides, SAME /
VALID, with and without bias, fused activations, output sizes the converter can write (SAME
with out = in * stride - 1, VALID with out beyond the last window), filters smaller than the
stride, a filter computed at run time; 20 seeds and the edge inputs each; the persistent and
scratch bytes TFLM's kernel asks for; the arena against the oracle's printout."""
from __future__ import annotations

import numpy as np
import pytest

from kernel_cases import (assert_seeds_and_edges_match_oracle, f32, i32, kernel_persistent, q8, q16,
                          scratch_sizes, single_op)
from micro_rt import Interpreter
from micro_rt.arena import align_up
from micro_rt.errors import KernelError


def out_size(size: int, k: int, stride: int, padding: str, extra: int = 0) -> int:
    """The output size TensorFlow gives (plus `extra`, within what TF allows)."""
    return (size * stride if padding == "SAME" else (size - 1) * stride + k) + extra


def transpose_conv_model(rng, dtype="int8", in_shape=(1, 4, 5, 3), oc=4, k=(3, 3), stride=(2, 2),
                         padding="SAME", act="NONE", bias=True, per_channel=True, bias_type=None,
                         extra=(0, 0), constant_filter=True) -> bytes:
    n, h, w, c = in_shape
    kh, kw = k
    oh, ow = out_size(h, kh, stride[0], padding, extra[0]), out_size(w, kw, stride[1], padding, extra[1])
    fshape = (oc, kh, kw, c)
    shape = i32((4,), data=np.array([n, oh, ow, oc]))
    if dtype == "float32":
        x, y = f32(in_shape), f32((n, oh, ow, oc))
        f = f32(fshape, data=rng.normal(0, 0.5, fshape) if constant_filter else None)
        bi = f32((oc,), data=rng.normal(0, 1, oc)) if bias else None
    else:
        wide = dtype == "int16"
        in_scale = float(np.float32(rng.uniform(0.0005, 0.002) if wide else rng.uniform(0.01, 0.1)))
        fs = rng.uniform(0.002, 0.02, oc if per_channel else 1).astype(np.float32)
        f = q8(fshape, list(fs), [0] * fs.size, data=rng.integers(-127, 128, fshape) if constant_filter else None)
        bs = (np.float32(in_scale) * fs).astype(np.float32)
        bt = bias_type or ("INT64" if wide else "INT32")
        bi = dict(shape=(oc,), type=bt, scale=list(bs), zp=[0] * bs.size,
                  data=rng.integers(-3000, 3000, oc)) if bias else None
        if wide:
            x, y = q16(in_shape, in_scale), q16((n, oh, ow, oc), float(rng.uniform(0.001, 0.01)))
        else:
            x = q8(in_shape, in_scale, int(rng.integers(-20, 20)))
            y = q8((n, oh, ow, oc), float(rng.uniform(0.05, 0.5)), int(rng.integers(-30, 30)))
    options = {"padding": padding, "stride_h": stride[0], "stride_w": stride[1], "fused_activation_function": act}
    return single_op("TRANSPOSE_CONV", [shape, f, x] + ([bi] if bias else []), y, options)


CASES = []
for _dtype in ("int8", "int16", "float32"):
    for _pad in ("SAME", "VALID"):
        for _stride in ((1, 1), (2, 2), (2, 1), (1, 3), (3, 2)):
            CASES.append(dict(dtype=_dtype, padding=_pad, stride=_stride))
    for _act in ("RELU", "RELU6", "RELU_N1_TO_1"):
        CASES.append(dict(dtype=_dtype, act=_act))
    CASES += [dict(dtype=_dtype, bias=False), dict(dtype=_dtype, bias=False, padding="VALID", stride=(1, 1)),
              dict(dtype=_dtype, k=(1, 1), stride=(2, 2), padding="VALID"),          # filter smaller than stride
              dict(dtype=_dtype, k=(2, 4), stride=(3, 2), padding="SAME", extra=(-2, -1)),
              dict(dtype=_dtype, k=(3, 2), stride=(2, 2), padding="VALID", extra=(1, 1)),
              dict(dtype=_dtype, in_shape=(2, 3, 3, 5), oc=3, k=(4, 4)),
              dict(dtype=_dtype, in_shape=(1, 2, 3, 20), oc=6, k=(3, 3), stride=(2, 2)),
              dict(dtype=_dtype, constant_filter=False)]
CASES += [dict(per_channel=False), dict(dtype="int16", per_channel=False), dict(dtype="int16", bias_type="INT16"),
          dict(dtype="int16", bias_type="INT16", act="RELU")]


@pytest.mark.parametrize("number,kw", list(enumerate(CASES)),
                         ids=[f"{n}-" + "-".join(f"{a}={v}" for a, v in kw.items()) for n, kw in enumerate(CASES)])
def test_single_op_matches_tflm(number, kw, oracle):
    model = transpose_conv_model(np.random.default_rng(500 + number), **kw)
    assert_seeds_and_edges_match_oracle(oracle, model, seeds=20, seed=number, any_nan=True)


@pytest.mark.parametrize("number,kw", list(enumerate(CASES))[::5])
def test_arena_equals_oracle(number, kw, oracle):
    path_data = transpose_conv_model(np.random.default_rng(500 + number), **kw)
    it = Interpreter.from_bytes(path_data, target="host64", plan_only=True)
    plan = it.plan
    theirs = oracle.allocations(path_data, align_up(max(plan.required_bytes * 2, 64 * 1024)))
    assert (plan.head_bytes, plan.tail_bytes, plan.total_bytes) == (theirs["head"], theirs["tail"], theirs["total"])


@pytest.mark.parametrize("target", ["host64", "cortex-m4"])
def test_persistent_and_scratch_requests(target):
    """OpData from init, the per-channel multiplier and shift arrays (4 bytes per output
    channel each, every type), the accumulator scratch (int32 per output element for int8,
    int64 for 16x8) and, for an int16 bias, its int64 copy."""
    rng = np.random.default_rng(0)
    opdata = Interpreter.from_bytes(transpose_conv_model(rng), target=target).target.sizeof("OpDataTransposeConv")
    for kw, scratch in ((dict(dtype="int8"), [4 * 8 * 10 * 4]), (dict(dtype="int16"), [8 * 8 * 10 * 4]),
                        (dict(dtype="int16", bias_type="INT16"), [8 * 8 * 10 * 4, 8 * 4]),
                        (dict(dtype="float32"), [])):
        it = Interpreter.from_bytes(transpose_conv_model(rng, **kw), target=target, kernels="reference")
        assert kernel_persistent(it) == (3, opdata + 16 + 16), kw
        assert scratch_sizes(it) == scratch, kw


def test_cmsis_nn_int8_requests_the_transpose_conv_buffers_instead():
    """TFLM's CMSIS-NN glue asks arm_transpose_conv_s8_get_buffer_size and
    _get_reverse_conv_buffer_size for int8 instead of the reference int32 accumulators."""
    rng = np.random.default_rng(1)
    small = transpose_conv_model(rng, in_shape=(1, 4, 5, 3), oc=4, k=(3, 3), stride=(2, 2))
    it = Interpreter.from_bytes(small, target="cortex-m4", kernels="cmsis-nn", plan_only=True)
    # 3 input channels: not the reverse-conv path; the row buffer is
    # ((W - 1) * stride_w + max(KW, stride_h)) * OC * max(KH, stride_h) int32, no reverse buffer.
    assert scratch_sizes(it) == [((5 - 1) * 2 + 3) * 4 * 3 * 4, 0]
    wide = transpose_conv_model(rng, in_shape=(1, 3, 3, 20), oc=6, k=(3, 3), stride=(2, 2))
    it = Interpreter.from_bytes(wide, target="cortex-m4", kernels="cmsis-nn", plan_only=True)
    # 20 input channels, stride <= 2: the reverse conv (arm_convolve_s8's im2col buffer of two
    # 4-aligned q15 columns) and the reversed filter.
    assert scratch_sizes(it) == [2 * 180 * 2, 20 * 3 * 3 * 6]
    assert kernel_persistent(it)[1] == it.target.sizeof("OpDataTransposeConvCmsis") + 24 + 24


@pytest.mark.parametrize("kw,words", [
    (dict(dtype="int16", bias_type="INT32"), "reads the bias as int64"),
    (dict(bias_type="INT64"), "reads the bias as int32"),
])
def test_refuses_a_bias_tflm_reads_as_other_words(kw, words):
    with pytest.raises(KernelError, match=words):
        Interpreter.from_bytes(transpose_conv_model(np.random.default_rng(2), **kw))


def test_refuses_mismatched_channels():
    data = transpose_conv_model(np.random.default_rng(3))
    from micro_rt.builder import ModelBuilder
    from micro_rt.model import read_model
    b = ModelBuilder.from_model(read_model(data))
    out = b.tensors[b.outputs[0]]
    out.shape = list(out.shape[:3]) + [out.shape[3] + 1]
    with pytest.raises(KernelError, match="channels"):
        Interpreter.from_bytes(b.build())
