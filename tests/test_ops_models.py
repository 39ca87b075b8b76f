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
from oracle_minimum import minimum_mismatches
from vmcu_cases import CORES_FAST, assert_close_ulp, assert_same, firmware_elf

OPS = PROJECT_MODELS / "ops"
OPS_MODELS = [
    # reduce family, ARG_MAX / ARG_MIN, CUMSUM
    "reduce_f32.tflite", "reduce_int8.tflite", "reduce_int16x8.tflite", "arg_min_max_f32.tflite",
    "arg_min_max_int8.tflite", "cumsum_f32.tflite",
]
# float32 results of newlib's expf / logf are within this many ulp of the host's (a model whose
# ops include one of cortexm.ops.TRANSCENDENTAL_F32_OPS)
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
    from micro_rt import Interpreter
    from micro_rt.arena import align_up
    data = _path(name).read_bytes()
    it = Interpreter.from_bytes(data, target="host64", kernels="reference", plan_only=True)
    assert not it.unresolved, it.unresolved
    plan = it.plan
    theirs = oracle.allocations(data, align_up(max(plan.required_bytes * 2, 64 * 1024)))
    assert (plan.head_bytes, plan.tail_bytes, plan.total_bytes) == (theirs["head"], theirs["tail"], theirs["total"])
    assert minimum_mismatches([(name, data, it.arena_required_bytes())]) == []


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("core", CORES_FAST)
@pytest.mark.parametrize("name", OPS_MODELS)
def test_ops_model_whole_on_mcu(name, core):
    firmware_elf(core)
    from micro_rt import Interpreter
    from micro_rt.cortexm.ops import TRANSCENDENTAL_F32_OPS
    from micro_rt.inputs import random_inputs
    data = _path(name).read_bytes()
    host = Interpreter.from_bytes(data, target=core)
    emu = Interpreter.from_bytes(data, target=core, kernels="cmsis-nn")
    approx = any(op.op_name in TRANSCENDENTAL_F32_OPS for op in host.model.main.operators)
    for seed in range(3):
        for i, x in enumerate(random_inputs(host, seed)):
            host.set_input(x, i)
            emu.set_input(x, i)
        host.invoke()
        emu.invoke()
        off = [f"{r.index} {r.op}" for r in emu.last_run if not r.on_mcu]
        assert not off, f"{name}: ran on the host: {off}"
        for k in range(host.num_outputs):
            h, m = host.get_output(k).reshape(-1), emu.get_output(k).reshape(-1)
            if approx and h.dtype == np.float32:
                assert_close_ulp([h], [m], f"{name} output {k}", LIBM_ULP)
            else:
                assert_same([h], [m], f"{name} output {k}")
