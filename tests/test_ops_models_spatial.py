"""Beyond tests/test_ops_models.py's sweep, for TRANSPOSE_CONV, RESIZE_NEAREST_NEIGHBOR,
RESIZE_BILINEAR and BATCH_MATMUL: the CMSIS-NN flavour's arena against the oracle where its glue
allocates as the reference kernel does; the reported minimum arena against TFLM's true one for
the seanet TRANSPOSE_CONV graphs and an int16-bias TRANSPOSE_CONV; BATCH_MATMUL's minimum where
TFLM lets its persistent allocations overwrite its live temporaries."""
from __future__ import annotations

import numpy as np
import pytest

from micro_rt import Interpreter
from micro_rt.arena import align_up
from vmcu_cases import ROOT

OPS_DIR = ROOT / "models" / "ops"


def _data(name: str) -> bytes:
    path = OPS_DIR / f"{name}.tflite"
    assert path.exists(), f"{path} missing: run models/make_models_ops.py"
    return path.read_bytes()


# Models whose CMSIS-NN glue allocates what the reference kernel does (the others: TRANSPOSE_CONV
# int8 requests arm_transpose_conv_s8's buffers, BATCH_MATMUL's glue has a larger OpData; their
# sizes are checked in test_kernels_transpose_conv / test_kernels_batch_matmul).
CMSIS_AS_REFERENCE = ["transpose_conv_f32", "transpose_conv_int16x8", "resize_f32", "resize_int8", "resize_int16x8"]


@pytest.mark.parametrize("name", CMSIS_AS_REFERENCE)
def test_cmsis_nn_arena_matches_oracle(name, oracle):
    """Head, tail and total of the CMSIS-NN flavour against the oracle (a reference build)."""
    data = _data(name)
    plan = Interpreter.from_bytes(data, target="host64", kernels="cmsis-nn", plan_only=True).plan
    theirs = oracle.allocations(data, align_up(max(plan.required_bytes * 2, 64 * 1024)))
    assert (plan.head_bytes, plan.tail_bytes, plan.total_bytes) == (theirs["head"], theirs["tail"], theirs["total"])


def test_minimum_is_tflite_micros(oracle):
    """micro_rt's reported minimum arena is TFLM's true one (it allocates there, fails 16 bytes
    below) for the seanet TRANSPOSE_CONV graphs and an int16 TRANSPOSE_CONV with an int16 bias
    (its second scratch buffer); the models/ops models are test_ops_models.py's."""
    from oracle_minimum import minimum_mismatches
    from conftest import SHARED_MODELS, missing
    from test_kernels_transpose_conv import transpose_conv_model
    named = {}
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
    named = {name: _data(name) for name in ("batch_matmul_int8", "batch_matmul_int16x8")}
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
