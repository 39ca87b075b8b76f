"""Builder-made single-operator models run whole on the virtual MCU through the Interpreter (plan,
CMSIS-NN scratch, arena addresses): every operator in a C kernel (a complete profile) with the
host's outputs, on the M0+ and the M4. For the types the converter models of models/ops do not
hold: int16 AVERAGE_POOL_2D / MAX_POOL_2D / SOFTMAX / MEAN, int8 CUMSUM, LOG_SOFTMAX,
L2_NORMALIZATION (int8, float32), L2_POOL_2D.
"""
from __future__ import annotations

import numpy as np
import pytest

from vmcu_cases import CORES_FAST, assert_close_ulp_or_abs, assert_model_whole_on_mcu, firmware_elf

# LOG_SOFTMAX float32 (newlib's expf / logf): within 4 ulp of the host's value or of 1.0 (see
# test_vmcu_normalization); every other output bit-equal
LIBM_ULP = 4


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
    assert_model_whole_on_mcu(_single_op_models()[name], name, core, range(3),
                              lambda h, m, what: assert_close_ulp_or_abs(h, m, what, LIBM_ULP))


def test_int16_avgpool_scratch_in_cmsis_nn_plan():
    """TFLM's CMSIS-NN AveragePrepare asks for arm_avgpool_s16_get_buffer_size bytes (one int32 per
    channel on the DSP cores, none on the M0+); the reference kernels ask for none."""
    from micro_rt import Interpreter
    data = _single_op_models()["avgpool_int16"]
    sizes = {(core, kernels): Interpreter.from_bytes(data, target=core, kernels=kernels, plan_only=True).plan.total_bytes
             for core in ("cortex-m0plus", "cortex-m4") for kernels in ("reference", "cmsis-nn")}
    assert sizes[("cortex-m4", "cmsis-nn")] - sizes[("cortex-m4", "reference")] >= 5 * 4
    assert sizes[("cortex-m0plus", "cmsis-nn")] - sizes[("cortex-m0plus", "reference")] < 5 * 4
