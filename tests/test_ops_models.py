"""The converter-made operator models (models/ops/, made by models/make_models_ops.py) that micro_rt
runs whole: host outputs equal the tflite-micro oracle's on 20 seeds, the arena's head / tail /
total equal the oracle's printout and the reported minimum is TFLM's true minimum, and on the
virtual MCU (CMSIS-NN flavour) every operator runs in a C kernel (a complete profile) with the
host's outputs, on the M0+ and the M4.

OPS_MODELS lists the models by the family that made them runnable; a model joins when all of its
operators have host and C kernels (one line per family keeps parallel additions apart).
"""
from __future__ import annotations

import numpy as np
import pytest

from conftest import PROJECT_MODELS
from kernel_cases import assert_arena_matches_oracle, assert_minimum_is_tflms
from vmcu_cases import CORES_FAST, assert_close_ulp_or_abs, assert_model_whole_on_mcu, firmware_elf

OPS = PROJECT_MODELS / "ops"
OPS_MODELS = [
    # reduce family, ARG_MAX / ARG_MIN, CUMSUM
    "reduce_f32.tflite", "reduce_int8.tflite", "reduce_int16x8.tflite", "arg_min_max_f32.tflite",
    "arg_min_max_int8.tflite", "cumsum_f32.tflite",
]
# float32 results of newlib's expf / logf are within this many ulp of the host's, or of 1.0 (a model
# whose ops include one of cortexm.ops.TRANSCENDENTAL_F32_OPS; see test_vmcu_normalization)
LIBM_ULP = 4


def _path(name: str):
    path = OPS / name
    assert path.exists(), f"{path} missing (models/make_models_ops.py makes it)"
    return path


@pytest.mark.parametrize("name", OPS_MODELS)
def test_ops_model_matches_oracle(name, oracle):
    report = oracle.check_model(_path(name).read_bytes(), seeds=range(20))
    assert not report["failures"], f"{name}: {report['failures'][0]}"


@pytest.mark.parametrize("name", OPS_MODELS)
def test_ops_model_arena_is_oracles(name, oracle):
    data = _path(name).read_bytes()
    assert_arena_matches_oracle(oracle, data, name)
    assert_minimum_is_tflms([(name, data)])


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("core", CORES_FAST)
@pytest.mark.parametrize("name", OPS_MODELS)
def test_ops_model_whole_on_mcu(name, core):
    firmware_elf(core)
    _assert_mcu_equals_host(_path(name).read_bytes(), name, core)


def _assert_mcu_equals_host(data: bytes, name: str, core: str) -> None:
    assert_model_whole_on_mcu(data, name, core, range(3),
                              lambda h, m, what: assert_close_ulp_or_abs(h, m, what, LIBM_ULP))


# --------------------------------------------------------------------------- builder-made single ops
# The types the converter models above do not hold (int16 pooling and SOFTMAX, int16 MEAN, int8
# CUMSUM, LOG_SOFTMAX, L2_NORMALIZATION, L2_POOL_2D), each alone in a builder-made model run whole
# on the virtual MCU through the Interpreter (plan, CMSIS-NN scratch, arena addresses).

def _single_op_models() -> dict:
    from kernel_cases import f32, i32, q8, q16, single_op
    pool = {"padding": "SAME", "stride_h": 2, "stride_w": 2, "filter_height": 3, "filter_width": 2,
            "fused_activation_function": "RELU"}
    axes = i32((2,), data=np.array([1, 2], np.int32))
    return {
        "avgpool_int16": single_op("AVERAGE_POOL_2D", [q16((1, 9, 8, 5), 0.002)], q16((1, 5, 4, 5), 0.002), pool),
        "maxpool_int16": single_op("MAX_POOL_2D", [q16((1, 9, 8, 5), 0.002)], q16((1, 5, 4, 5), 0.002), pool),
        "l2pool_f32": single_op("L2_POOL_2D", [f32((1, 9, 8, 5))], f32((1, 5, 4, 5)), pool),
        "softmax_int16": single_op("SOFTMAX", [q16((2, 40), 0.001)], q16((2, 40), 1 / 32768), {"beta": 1.0}),
        "mean_int16": single_op("MEAN", [q16((1, 6, 5, 8), 0.002), axes], q16((1, 8), 0.001), {"keep_dims": False}),
        "cumsum_int8": single_op("CUMSUM", [q8((2, 6, 4), 0.05, 3), i32((), data=np.array(1, np.int32))],
                                 q8((2, 6, 4), 0.4, -2), {"exclusive": False, "reverse": True}),
        "log_softmax_int8": single_op("LOG_SOFTMAX", [q8((3, 30), 0.1, 3)], q8((3, 30), 16 / 256, 127)),
        "log_softmax_f32": single_op("LOG_SOFTMAX", [f32((3, 30))], f32((3, 30))),
        "l2norm_int8": single_op("L2_NORMALIZATION", [q8((3, 30), 0.1, 3)], q8((3, 30), 1 / 128, 0),
                                 {"fused_activation_function": "NONE"}),
        "l2norm_f32": single_op("L2_NORMALIZATION", [f32((3, 30))], f32((3, 30)),
                                {"fused_activation_function": "NONE"}),
    }


SINGLE_OPS = ["avgpool_int16", "maxpool_int16", "l2pool_f32", "softmax_int16", "mean_int16", "cumsum_int8",
              "log_softmax_int8", "log_softmax_f32", "l2norm_int8", "l2norm_f32"]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("core", CORES_FAST)
@pytest.mark.parametrize("name", SINGLE_OPS)
def test_single_op_whole_on_mcu(name, core):
    firmware_elf(core)
    _assert_mcu_equals_host(_single_op_models()[name], name, core)


def test_int16_avgpool_scratch_in_cmsis_nn_plan():
    """TFLM's CMSIS-NN AveragePrepare asks for arm_avgpool_s16_get_buffer_size bytes (one int32 per
    channel on the DSP cores, none on the M0+); the reference kernels ask for none."""
    from micro_rt import Interpreter
    data = _single_op_models()["avgpool_int16"]
    sizes = {(core, kernels): Interpreter.from_bytes(data, target=core, kernels=kernels, plan_only=True).plan.total_bytes
             for core in ("cortex-m0plus", "cortex-m4") for kernels in ("reference", "cmsis-nn")}
    assert sizes[("cortex-m4", "cmsis-nn")] - sizes[("cortex-m4", "reference")] >= 5 * 4
    assert sizes[("cortex-m0plus", "cmsis-nn")] - sizes[("cortex-m0plus", "reference")] < 5 * 4
