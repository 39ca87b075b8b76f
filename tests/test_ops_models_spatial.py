"""The converter-made models of models/ops/ (models/make_models_ops.py) for TRANSPOSE_CONV,
RESIZE_NEAREST_NEIGHBOR, RESIZE_BILINEAR and BATCH_MATMUL: host outputs bit-exact with the
tflite-micro oracle on 20 seeds and the edge inputs, the arena (head, tail, total) equal to the
oracle's printout, and on the virtual MCU (M0+ plain C, M4 DSP) every operator runs in C with
the host's outputs and a cycle count (a complete profile)."""
from __future__ import annotations

import numpy as np
import pytest

from kernel_cases import assert_bits_equal, assert_matches_oracle_on_seeds_and_edges
from micro_rt import Interpreter
from micro_rt.arena import align_up
from micro_rt.inputs import random_inputs
from vmcu_cases import ROOT, firmware_elf

OPS_DIR = ROOT / "models" / "ops"
# The models of this family (each must exist: make_models_ops.py writes them).
MODELS = ["transpose_conv_f32", "transpose_conv_int8", "transpose_conv_int16x8", "resize_f32", "resize_int8",
          "resize_int16x8", "batch_matmul_f32", "batch_matmul_int8", "batch_matmul_int16x8"]


def _data(name: str) -> bytes:
    path = OPS_DIR / f"{name}.tflite"
    assert path.exists(), f"{path} missing: run models/make_models_ops.py"
    return path.read_bytes()


@pytest.mark.parametrize("name", MODELS)
def test_host_matches_oracle(name, oracle):
    assert_matches_oracle_on_seeds_and_edges(oracle, _data(name), seeds=20, seed=len(name))


# Models whose CMSIS-NN glue allocates what the reference kernel does (the others: TRANSPOSE_CONV
# int8 requests arm_transpose_conv_s8's buffers, BATCH_MATMUL's glue has a larger OpData; their
# sizes are checked in test_kernels_transpose_conv / test_kernels_batch_matmul).
CMSIS_AS_REFERENCE = ["transpose_conv_f32", "transpose_conv_int16x8", "resize_f32", "resize_int8", "resize_int16x8"]
ARENA_CASES = [(name, "reference") for name in MODELS] + [(name, "cmsis-nn") for name in CMSIS_AS_REFERENCE]


@pytest.mark.parametrize("name,kernels", ARENA_CASES)
def test_arena_matches_oracle(name, kernels, oracle):
    """Head, tail and total against the oracle (a reference-kernel build)."""
    data = _data(name)
    plan = Interpreter.from_bytes(data, target="host64", kernels=kernels, plan_only=True).plan
    theirs = oracle.allocations(data, align_up(max(plan.required_bytes * 2, 64 * 1024)))
    assert (plan.head_bytes, plan.tail_bytes, plan.total_bytes) == (theirs["head"], theirs["tail"], theirs["total"])


@pytest.mark.parametrize("core", ["cortex-m0plus", "cortex-m4"])
@pytest.mark.parametrize("name", MODELS)
def test_mcu_matches_host_with_a_complete_profile(name, core):
    firmware_elf(core)
    data = _data(name)
    host = Interpreter.from_bytes(data, target=core)
    emu = Interpreter.from_bytes(data, target=core, kernels="cmsis-nn")
    for seed in range(3):
        for i, x in enumerate(random_inputs(host, seed)):
            host.set_input(x, i)
            emu.set_input(x, i)
        host.invoke()
        emu.invoke()
        off = [f"{r.index} {r.op}" for r in emu.last_run if not (r.on_mcu and r.cycles > 0)]
        assert not off, f"{name} on {core}: not counted on the MCU: {off}"
        for k in range(host.num_outputs):
            assert_bits_equal(emu.get_output(k), host.get_output(k), f"{name} on {core} output {k}")
