"""What the kernel tests (test_kernels_a.py, test_kernels_b.py) share.

* `single_op`: a one-operator model built with `micro_rt.builder.ModelBuilder` from tensor
  specs (`q8`, `q16`, `f32`, `i32`; a list of scales makes a per-channel tensor);
* `assert_single_op_matches_oracle`: run it through `micro_rt.Interpreter` and the
  tflite-micro oracle on the same seeded inputs, outputs equal bit for bit;
* `assert_ops_match_oracle`: a real model with every tensor preserved on both sides, each
  operator's output tensor compared (the pattern of `micro_rt.tools.oracle.first_differing_op`);
* `kernel_persistent`: the persistent bytes the kernels asked for, read from the arena.
"""
from __future__ import annotations

from collections import Counter
from typing import Optional, Sequence

import numpy as np
import pytest

from micro_rt import Interpreter
from micro_rt.builder import ModelBuilder
from micro_rt.errors import KernelError, UnsupportedOpError
from micro_rt.model import read_model
from micro_rt.tools.oracle import invoke_both


# --------------------------------------------------------------------------- tensor specs

def q8(shape, scale, zp, **kw) -> dict:
    return dict(shape=shape, type="INT8", scale=scale, zp=zp, **kw)


def q16(shape, scale, zp=0, **kw) -> dict:
    return dict(shape=shape, type="INT16", scale=scale, zp=zp, **kw)


def f32(shape, **kw) -> dict:
    return dict(shape=shape, type="FLOAT32", **kw)


def i32(shape, **kw) -> dict:
    return dict(shape=shape, type="INT32", **kw)


def single_op(op: str, inputs: Sequence[Optional[dict]], output: Optional[dict] = None,
              options: Optional[dict] = None, outputs: Optional[Sequence[dict]] = None) -> bytes:
    """A model of one operator. `inputs`: specs, None for an omitted optional input (-1);
    inputs without `data` become the graph inputs, the op's outputs the graph outputs."""
    b = ModelBuilder("kernel test")
    ins, graph_inputs = [], []
    for k, spec in enumerate(inputs):
        if spec is None:
            ins.append(-1)
            continue
        t = b.add_tensor(f"in{k}", spec["shape"], spec.get("type", "INT8"), data=spec.get("data"),
                         scale=spec.get("scale"), zero_point=spec.get("zp"),
                         quantized_dimension=spec.get("qdim", 0))
        ins.append(t)
        if spec.get("data") is None:
            graph_inputs.append(t)
    outs = [b.add_tensor(f"out{k}", spec["shape"], spec.get("type", "INT8"), scale=spec.get("scale"),
                         zero_point=spec.get("zp"), quantized_dimension=spec.get("qdim", 0))
            for k, spec in enumerate(outputs or [output])]
    b.add_operator(op, ins, outs, options=options or {})
    b.inputs, b.outputs = graph_inputs, outs
    return b.build()


def op_submodel(data: bytes, k: int) -> bytes:
    """Operator `k` of a model alone, its non-constant inputs made graph inputs (for models
    micro_rt cannot run whole: the oracle's tensors are fed to the one operator)."""
    model = read_model(data)
    b = ModelBuilder.from_model(model)
    op = b.operators[k]
    b.operators = [op]
    tensors = model.main.tensors
    b.inputs = [i for i in op.inputs if i >= 0 and not tensors[i].is_constant
                and not tensors[i].is_variable]
    b.outputs = list(op.outputs)
    return b.build()


# --------------------------------------------------------------------------- inputs

def random_input(dtype, shape, rng, first: bool = False) -> np.ndarray:
    """Seeded input; the first trial covers every int8 value (and small int32s)."""
    dtype = np.dtype(dtype)
    if dtype == np.int8:
        if first:
            return np.resize(np.arange(-128, 128), int(np.prod(shape))).reshape(shape).astype(np.int8)
        return rng.integers(-128, 128, size=shape).astype(np.int8)
    if dtype in (np.int16, np.uint8, np.uint32):
        info = np.iinfo(dtype)
        return rng.integers(int(info.min), int(info.max) + 1, size=shape, dtype=np.int64).astype(dtype)
    if dtype == np.int64:
        return rng.integers(-(1 << 40), 1 << 40, size=shape, dtype=np.int64)
    if dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if dtype == np.int32:
        if first:
            return rng.integers(-1000, 1000, size=shape).astype(np.int32)
        return rng.integers(-(1 << 31), 1 << 31, size=shape, dtype=np.int64).astype(np.int32)
    return (rng.standard_normal(size=shape) * 4).astype(np.float32)


def model_inputs(sg, rng, first: bool = False) -> list[np.ndarray]:
    """One seeded input per graph input of subgraph `sg` (`read_model(data).main`)."""
    return [random_input(sg.tensors[i].dtype, sg.tensors[i].shape, rng, first) for i in sg.inputs]


# --------------------------------------------------------------------------- comparison

def assert_bits_equal(got: np.ndarray, want: np.ndarray, what: str) -> None:
    want = np.asarray(want)
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} vs oracle {want.dtype}"
    want = want.reshape(got.shape) if want.size == got.size else want
    assert got.shape == want.shape, f"{what}: shape {got.shape} vs oracle {want.shape}"
    if not np.array_equal(got.reshape(-1).view(np.uint8), want.reshape(-1).view(np.uint8)):
        bad = np.nonzero(got.ravel() != want.ravel())[0]
        raise AssertionError(f"{what}: {len(bad)} of {got.size} elements differ, e.g. at {bad[:5]}: "
                             f"oracle {want.ravel()[bad[:5]]}, micro_rt {got.ravel()[bad[:5]]}")


def oracle_load_and_run(oracle, data: bytes):
    """The oracle's interpreter after one invoke on zeros and a reset (variable tensors such
    as SVDF / LSTM state back to their start); TFLM's refusal raises RuntimeError."""
    theirs = oracle.interpreter(data, 1 << 20)
    sg = read_model(data).main
    for k, i in enumerate(sg.inputs):
        theirs.set_input(np.zeros(sg.tensors[i].shape, sg.tensors[i].dtype), k)
    theirs.invoke()
    theirs.reset()
    return theirs


def _oracle_accepts(oracle, data: bytes):
    """The oracle's interpreter, or None when TFLM rejects the model (at load or first invoke)."""
    try:
        return oracle_load_and_run(oracle, data)
    except RuntimeError:
        return None


def assert_single_op_matches_oracle(oracle, data: bytes, trials: int = 3, seed: int = 0,
                                    may_reject: bool = False) -> None:
    """Bit-exact outputs on `trials` seeded inputs. With `may_reject`, a model TFLM rejects
    must be rejected by our prepare too (a KernelError when the interpreter is built)."""
    theirs = _oracle_accepts(oracle, data)
    if theirs is None:
        assert may_reject, "the oracle rejected a model the test expects to run"
        with pytest.raises(KernelError):
            Interpreter.from_bytes(data)
        return
    ours = Interpreter.from_bytes(data)
    rng = np.random.default_rng(seed)
    for trial in range(trials):
        invoke_both(ours, theirs, model_inputs(ours.model.main, rng, first=trial == 0))
        for k in range(ours.num_outputs):
            assert_bits_equal(ours.get_output(k), theirs.get_output(k), f"trial {trial} output {k}")


def _without_offline_plan(data: bytes) -> bytes:
    """The model without OfflineMemoryAllocation metadata: an offline plan overlaps tensors,
    which cannot all be preserved (TFLM then fails to allocate); kernels do not care."""
    model = read_model(data)
    if model.metadata_bytes("OfflineMemoryAllocation") is None:
        return data
    b = ModelBuilder.from_model(model)
    b.metadata = [(name, buf) for name, buf in b.metadata if name != "OfflineMemoryAllocation"]
    return b.build()


def assert_ops_match_oracle(oracle, data: bytes, seeds: Sequence[int]) -> Counter:
    """Every operator's output tensor equal to the oracle's, both interpreters preserving all
    tensors; returns how many ops of each kind were compared (summed over seeds).

    A model with operators micro_rt has no kernel for is run whole by the oracle only; each
    operator micro_rt does support is then run alone (`op_submodel`) on the oracle's inputs.
    """
    data = _without_offline_plan(data)
    sg = read_model(data).main
    single: dict = {}
    try:
        ours = Interpreter.from_bytes(data, preserve_all_tensors=True)
        arena = max(ours.arena_required_bytes() * 2, 1 << 16)
    except UnsupportedOpError:
        ours, arena = None, max(len(data) * 10, 1 << 20)
        for op in sg.operators:
            try:
                single[op.index] = Interpreter.from_bytes(op_submodel(data, op.index))
            except UnsupportedOpError:
                pass
        assert single, "micro_rt supports none of the model's operators"
    theirs = oracle.interpreter(data, arena, preserve_all_tensors=True)
    checked: Counter = Counter()
    for seed in seeds:
        inputs = model_inputs(sg, np.random.default_rng(seed))
        for k, x in enumerate(inputs):
            theirs.set_input(x, k)
            if ours is not None:
                ours.set_input(x, k)
        theirs.invoke()
        if ours is not None:
            ours.invoke()
        for op in sg.operators:
            it = ours if ours is not None else single.get(op.index)
            if it is None:
                continue
            if it is not ours:
                for k, t in enumerate(it.model.main.inputs):
                    it.set_input(np.array(theirs.GetTensor(t, 0)["tensor_data"]).reshape(
                        it.tensors[t].shape), k)
                it.invoke()
            for t in op.outputs:
                assert_bits_equal(it.get_tensor(t), theirs.GetTensor(t, 0)["tensor_data"],
                                  f"seed {seed} op {op.index} {op.op_name} output tensor {t} "
                                  f"('{sg.tensors[t].name}')")
            checked[op.op_name] += 1
    return checked


# --------------------------------------------------------------------------- arena accounting

def kernel_persistent(it: Interpreter) -> tuple[int, int]:
    """(allocations, bytes requested) the kernels made through allocate_persistent: the arena's
    "Persistent buffer data" less the interpreter's two input/output pointer arrays."""
    use = it._allocator.arena.categories["Persistent buffer data"]
    sg = it.model.main
    return use.count - 2, use.requested - it.target.pointer_size * (len(sg.inputs) + len(sg.outputs))


def scratch_sizes(it: Interpreter) -> list[int]:
    return [nbytes for _, nbytes in it._allocator.scratch_requests]
