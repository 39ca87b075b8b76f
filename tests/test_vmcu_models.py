"""Whole operators of real models on the virtual MCU vs the host: every models/*_f32.tflite,
hello_world_float and test_conv_model run whole on the MCU with the host Interpreter's outputs
(float32 on every core: soft-float on the M0+, VFP on the M4 / M7 / M33), and every int8 op of the
shared TFLM models run both ways.
"""
from __future__ import annotations

import numpy as np
import pytest

from conftest import missing
from vmcu_cases import CORES_FLOAT, ROOT, SHARED, T, assert_model_whole_on_mcu, assert_same, firmware_elf, run_both


F32_MODELS = sorted(p.name for p in (ROOT / "models").glob("*_f32.tflite"))
SHARED_FLOAT_MODELS = ["hello_world_float.tflite", "test_conv_model.tflite"]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("core", CORES_FLOAT)
@pytest.mark.parametrize("model", F32_MODELS + SHARED_FLOAT_MODELS)
def test_float_model_whole_on_mcu(model, core):
    """Every op of the float32 models (and the shared float / mixed models) runs on the MCU,
    with the host Interpreter's outputs: bit-equal, or within SOFTMAX_MAX_ULP when the model
    has a transcendental op (newlib vs glibc, see above)."""
    path = ROOT / "models" / model if model in F32_MODELS else SHARED / model
    if not path.exists():
        missing(f"shared model {model} not available (needs ../shared/models)")
    firmware_elf(core)
    assert_model_whole_on_mcu(path.read_bytes(), model, core)


MODELS = ["person_detect.tflite", "micro_speech_quantized.tflite", "network_tester_model.tflite",
          "mobilenet_v2_quantized_1x3x224x224.tflite"]


@pytest.mark.parametrize("model", MODELS)
def test_model_ops(model):
    path = SHARED / model
    if not path.exists():
        missing(f"shared model {model} not available (needs ../shared/models)")
    from micro_rt.model import read_model
    from micro_rt.cortexm import ops
    m = read_model(path.read_bytes())
    sg = m.main
    rng = np.random.default_rng(12)
    seen: dict = {}
    for op in sg.operators:
        if op.op_name in seen and seen[op.op_name] >= (2 if "mobilenet" in model else 1000):
            continue
        infos = [sg.tensors[i] for i in op.inputs if i >= 0]
        if not infos or not ops.supported(op.op_name, infos[0].dtype):
            continue
        if "mobilenet" in model and any(int(np.prod(sg.tensors[i].shape)) > 200000 for i in op.outputs):
            continue
        seen[op.op_name] = seen.get(op.op_name, 0) + 1

        def mk(i):
            ti = sg.tensors[i]
            q = ti.quantization
            return T(i, ti.shape, ti.dtype, data=ti.data if ti.is_constant else None,
                     scales=q.scales if q is not None else (), zero_points=q.zero_points if q is not None else (),
                     qdim=q.quantized_dimension if q is not None else 0, name=ti.name)
        ins = [None if i < 0 else mk(i) for i in op.inputs]
        outs = [mk(i) for i in op.outputs]
        seeds = {t.index: (rng.integers(-128, 128, size=t.shape) if t.dtype == np.int8 else
                           rng.normal(size=t.shape)) for t in ins if t is not None and not t.is_constant}
        for core in ("cortex-m0plus", "cortex-m4"):
            h, mm, _ = run_both(core, op.op_name, dict(op.options), ins, outs, seeds)
            assert_same(h, mm, f"{model} op {op.index} {op.op_name} on {core}")
    assert seen, "no op ran"
