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


def test_minimum_is_tflite_micros(oracle):
    """micro_rt's reported minimum arena is TFLM's true one (it allocates there, fails 16 bytes
    below) for the TRANSPOSE_CONV and RESIZE models here, the seanet TRANSPOSE_CONV graphs,
    and an int16 TRANSPOSE_CONV with an int16 bias (its second scratch buffer)."""
    from oracle_minimum import minimum_mismatches
    from conftest import SHARED_MODELS, missing
    from test_kernels_transpose_conv import transpose_conv_model
    named = {name: _data(name) for name in MODELS if not name.startswith("batch_matmul")}
    seanet = SHARED_MODELS / "integration_tests" / "seanet" / "transpose_conv"
    if not seanet.exists():
        missing("../shared/models (seanet integration tests) not available")
    named.update({p.name: p.read_bytes() for p in sorted(seanet.rglob("*.tflite"))})
    named["tconv int16 bias16"] = transpose_conv_model(np.random.default_rng(9), dtype="int16", bias_type="INT16")
    cases = []
    for name, data in named.items():
        it = Interpreter.from_bytes(data, target="host64", plan_only=True)
        assert not it.unresolved, name
        cases.append((name, data, it.arena_required_bytes()))
    assert minimum_mismatches(cases) == []


def test_batch_matmul_minimum_is_safe_and_within_its_prepare_allocations(oracle):
    """BATCH_MATMUL's Prepare makes its temporary TfLiteTensors first, then its persistent
    allocations while they are live; TFLM checks a persistent allocation against the head only,
    so in an arena a little smaller than micro_rt's figure those allocations overwrite parts of
    the live temporaries, and TFLM still succeeds unless a pointer it reads back when freeing
    them was hit. micro_rt reports the arena where nothing overlaps: never below TFLM's true
    minimum, and above it by less than what the prepare allocates persistently."""
    from oracle_minimum import true_minimum
    from test_kernels_batch_matmul import bmm_model
    rng = np.random.default_rng(9)
    named = {name: _data(name) for name in MODELS if name.startswith("batch_matmul")}
    named["bmm int8 adj_x"] = bmm_model(rng, "int8", lhs=(2, 4, 3), adj_x=True)
    named["bmm int16 adj_y const"] = bmm_model(rng, "int16", rhs=(2, 5, 4), adj_y=True, const_rhs=True)
    for name, data in named.items():
        it = Interpreter.from_bytes(data, target="host64", plan_only=True)
        ours = it.arena_required_bytes()
        truth = true_minimum(data, ours)
        sg = it.model.main
        # The prepare's persistent bytes, each 16-aligned: quantization struct, transposed
        # copies (TfLiteEvalTensor, dims, data), the output's writable dims; every node.
        bound = 0
        for op in sg.operators:
            lhs, rhs = sg.tensors[op.inputs[0]], sg.tensors[op.inputs[1]]
            copies = [t for t, needed in ((lhs, op.options.get("adj_x")), (rhs, not op.options.get("adj_y"))) if needed]
            bound += 32 + 16 + sum(32 + 32 + align_up(int(np.prod(t.shape)) * np.dtype(t.dtype).itemsize)
                                   for t in copies)
        assert truth <= ours < truth + bound, (name, ours, truth, bound)
