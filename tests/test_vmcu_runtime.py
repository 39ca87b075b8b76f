"""The whole inference on the virtual MCU (issue 14): the firmware's runtime (mrt_runtime.c)
walks the model's plan, each invoke booting the image from its reset vector. Its outputs equal the host kernels'
(an Interpreter of the same model without emulate, bit for bit); each operator's record equals
what its kernel calls cost when made on their own (cortexm.ops.run_op, the kernel tests'
harness, operator after operator on a machine set up alike); the runtime's own cost is a line
of `profile` and part of its total; an operator the plan has no C kernel call for runs on the
host from inside the plan (a host entry: named, not counted, tests/test_vmcu_host_entries.py);
refusals and budget stops name the operator; state carries over between invokes."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from micro_rt import EmulationError, Interpreter, KernelError
from micro_rt.builder import ModelBuilder
from micro_rt.cli import main
from micro_rt.cortexm import ops
from micro_rt.cortexm.executor import McuExecutor
from micro_rt.cortexm.firmware_plan import scratch_offsets
from micro_rt.inputs import random_inputs

from test_vmcu_batch_matmul import bmm_transposes_model

MODELS = Path(__file__).resolve().parents[1] / "models"


def _interpreter(model, core: str, kernels: str = "cmsis-nn", emulate: bool = True, **options) -> Interpreter:
    """`model` (a path or bytes) on `core`: emulated with `options`, or on the host kernels."""
    kwargs = {"target": core, "kernels": kernels, "emulate": emulate, **({"mcu_options": options} if options else {})}
    if isinstance(model, Path):
        return Interpreter.from_file(str(model), **kwargs)
    return Interpreter.from_bytes(model, **kwargs)


def _run(it, inputs) -> list[np.ndarray]:
    for i, x in enumerate(inputs):
        it.set_input(x, i)
    it.invoke()
    return [it.get_output(i).copy() for i in range(it.num_outputs)]


def _assert_outputs_equal(expected, got, what="") -> None:
    assert len(expected) == len(got)
    for a, b in zip(expected, got):
        assert (a.dtype, a.shape, a.tobytes()) == (b.dtype, b.shape, b.tobytes()), what


class KernelByKernel:
    """The oracle for per-operator counts: the operators of a one-subgraph model run one by one,
    each as its kernel calls on their own (ops.run_op), on a machine McuExecutor sets up for the
    model as the emulated interpreter's (core, options, arena offsets, constants, persistent
    buffers; its plan is never made). A kTfLiteAbort ends the run there, as in TFLM."""

    def __init__(self, model, core: str, kernels: str = "cmsis-nn", **options):
        self.it = _interpreter(model, core, kernels, emulate=False)
        assert len(self.it.subgraphs) == 1 and not any(ops.copies_only(n.op_name) for n in self.it.nodes)
        self.executor = McuExecutor(self.it, **options)
        self.scratch = scratch_offsets(self.it)

    def run(self, inputs) -> tuple[list[np.ndarray], list]:
        it, mcu = self.it, self.executor.mcu
        for i, x in enumerate(inputs):
            it.set_input(x, i)
        results = []
        for node in it.nodes:
            tensors = {i: it.tensors[i] for i in (*node.inputs, *node.outputs) if i >= 0}
            offsets = {i: t.offset for i, t in tensors.items() if t.offset is not None}
            key = (node.subgraph, node.index)
            results.append(ops.run_op(mcu, node, tensors, offsets, self.scratch.get(key), kernels=it.kernels,
                                      persistent_offsets=self.executor.persistent_offsets.get(key, ())))
            if results[-1].ended_run:
                break
        return [it.get_output(i).copy() for i in range(it.num_outputs)], results

    def assert_laid_out_as(self, emulated) -> None:
        """The same arena offsets, persistent buffers and arena address as `emulated`'s machine."""
        assert [t.offset for t in self.it.tensors] == [t.offset for t in emulated.tensors]
        assert self.executor.persistent_offsets == emulated.executor.persistent_offsets
        assert self.executor.mcu.arena_base == emulated.executor.mcu.arena_base

    def reset(self) -> None:
        self.it.reset()

    def close(self) -> None:
        self.executor.close()
        self.it.close()


def _assert_counts_equal(records, results, cycles_within: float = 0.0) -> None:
    """Each record is on the MCU and counts what its kernel calls did on their own."""
    assert [r.index for r in records] == list(range(len(results)))
    for r, c in zip(records, results):
        assert r.on_mcu and r.instructions > 0, (r.index, r.op)
        assert (r.instructions, r.stack_bytes, r.ended_run) == (c.instructions, c.stack_bytes, c.ended_run), \
            (r.index, r.op)
        assert abs(r.cycles - c.cycles) <= cycles_within * c.cycles, (r.index, r.op, r.cycles, c.cycles)
        assert [(a.pc, a.address, a.kind, a.count) for a in r.alignment] == \
            [(e.pc, e.address, e.kind, e.count) for e in c.alignment_events], (r.index, r.op)


def _assert_runtime_small(it) -> None:
    """The runtime's own part of the last invoke: some, at most 200 instructions per entry it
    walked (each at most as often as the operator that ran most often, a loop's)."""
    own, entries = it.executor.last_runtime, len(it.executor.firmware_plan.entries)
    walked = entries * max(r.runs for r in it.last_run)
    assert 0 < own.instructions < 200 * walked and own.frame_bytes > 0, (own, entries, walked)


def _three_ways(model, core: str, kernels: str = "cmsis-nn", seeds: int = 3):
    """For each seed: the model on the MCU, on the host and kernel by kernel; the outputs equal
    the host's both ways and each record the kernels' run alone. Yields (mcu, host) after each."""
    mcu, host = _interpreter(model, core, kernels), _interpreter(model, core, kernels, emulate=False)
    alone = KernelByKernel(model, core, kernels)
    try:
        for seed in range(seeds):
            inputs = random_inputs(host, seed)
            expected, (by_kernel, results) = _run(host, inputs), alone.run(inputs)
            _assert_outputs_equal(expected, _run(mcu, inputs), seed)
            _assert_outputs_equal(expected, by_kernel, seed)
            alone.assert_laid_out_as(mcu)
            _assert_counts_equal(mcu.last_run, results)
            yield mcu, host
    finally:
        for it in (mcu, host, alone):
            it.close()


CASES = [("mobilenet_tiny_int8.tflite", "cortex-m4"), ("mobilenet_tiny_int8.tflite", "cortex-m0plus"),
         ("residual_block_f32.tflite", "cortex-m7"), ("inception_block_int8.tflite", "cortex-m33"),
         ("ops/transpose_conv_int8.tflite", "cortex-m7"), ("ops/slicing_int16x8.tflite", "cortex-m0plus"),
         ("quant_dequant_int8_floatio.tflite", "cortex-m4"), ("shape_ops_int8.tflite", "cortex-m33")]


@pytest.mark.parametrize("name,core", CASES)
def test_outputs_equal_the_host_and_counts_equal_each_kernel_run_alone(name, core):
    for mcu, host in _three_ways(MODELS / name, core):
        assert [(r.index, r.op) for r in mcu.last_run] == [(r.index, r.op) for r in host.last_run]
        _assert_runtime_small(mcu)


@pytest.mark.parametrize("options", [{"arena_misalign": 2, "strict_alignment": True},
                                     {"arena_misalign": 1, "strict_alignment": True}])
def test_unaligned_accesses_are_named_per_operator(options):
    # the same kernel (so the same pcs) runs in several operators: each names its own tensors
    path = MODELS / "mobilenet_tiny_int8.tflite"
    mcu, alone = _interpreter(path, "cortex-m4", **options), KernelByKernel(path, "cortex-m4", **options)
    inputs = random_inputs(mcu, 0)
    _run(mcu, inputs)
    _assert_counts_equal(mcu.last_run, alone.run(inputs)[1])
    alone.assert_laid_out_as(mcu)
    assert sum(len(r.alignment) for r in mcu.last_run) > 0
    for r in mcu.last_run:
        node = mcu.nodes[r.index]
        own = {f"'{mcu.tensors[i].name}'" for i in (*node.inputs, *node.outputs) if i >= 0}
        for a in r.alignment:
            assert a.op_index == r.index and (a.tensor.startswith("scratch") or any(n in a.tensor for n in own)), \
                (r.index, str(a))
    mcu.close()
    alone.close()


@pytest.mark.parametrize("core", ["cortex-m4", "cortex-m7", "cortex-m33"])
def test_with_flash_wait_states_the_memory_model_carries_across_operators(core):
    # The flash interface is simulated as the code runs, its caches carrying from operator to
    # operator (and across invokes); the argument structs lie in RAM (as TFLM's on the stack).
    # Instructions equal the kernels' run alone; cycles differ only by what the caches hold
    # when an operator starts: in the plan the runtime's own code and its reads of the entry
    # table go through the same caches between operators, as on a board, and run alone the
    # runners' constants grow the emulated flash during the first run, which empties the
    # caches. Each moves an operator's cycles by well under 1%.
    path = MODELS / "mobilenet_tiny_int8.tflite"
    mcu, host = _interpreter(path, core, flash_wait_states=5), _interpreter(path, core, emulate=False)
    alone = KernelByKernel(path, core, flash_wait_states=5)
    for seed in range(3):
        inputs = random_inputs(host, seed)
        _assert_outputs_equal(_run(host, inputs), _run(mcu, inputs), seed)
        assert mcu.executor.mcu.flash_port
        _assert_counts_equal(mcu.last_run, alone.run(inputs)[1], cycles_within=0.01)
    for it in (mcu, host, alone):
        it.close()


@pytest.mark.parametrize("case", [("bmm", "FLOAT32", "cmsis-nn"), ("bmm", "INT8", "cmsis-nn"),
                                  ("bmm", "INT8", "reference"), ("mobilenet_tiny_int8", None, "reference"),
                                  ("ops/transpose_conv_int8", None, "reference")])
@pytest.mark.parametrize("core", ["cortex-m0plus", "cortex-m4"])
def test_persistent_buffers_and_reference_kernels_run_in_the_plan(case, core):
    # BATCH_MATMUL's per-invoke transposes write TFLM's persistent buffers (after the variable
    # tensors); the reference flavour's kernels are other symbols: both in the plan, outputs
    # those of the host and per-operator counts those of the kernels run alone, several invokes
    name, dtype, kernels = case
    model = bmm_transposes_model(dtype) if name == "bmm" else MODELS / f"{name}.tflite"
    for mcu, _ in _three_ways(model, core, kernels):
        symbols = {e.symbol for e in mcu.executor.firmware_plan.entries}
    if name == "bmm":
        assert "mrt_strided_copy" in symbols, symbols
    if kernels == "reference":
        assert any(s.startswith("mrt_ref_") or s.startswith("mrt_batch_matmul") for s in symbols), symbols


def _assert_records_like_the_host(mcu, host) -> None:
    """The host's operators in its order, loop runs alike, each on the MCU; every cost inside a
    subgraph counted once, towards the subgraph-0 operator that ran it."""
    shape = [(r.subgraph, r.index, r.op, r.runs, r.ended_run) for r in host.last_run]
    assert [(r.subgraph, r.index, r.op, r.runs, r.ended_run) for r in mcu.last_run] == shape
    for r in mcu.last_run:
        assert r.on_mcu and not r.host_reason, (r.subgraph, r.index, r.op)
        if not ops.copies_only(r.op):
            assert r.instructions > 0, (r.subgraph, r.index, r.op)
    top = [r for r in mcu.last_run if r.subgraph == 0]
    for field in ("instructions", "cycles"):
        assert sum(getattr(r, field) + getattr(r, f"subgraph_{field}") for r in top) == \
            sum(getattr(r, field) for r in mcu.last_run)


CONTROL_FLOW = ["control_flow/if_flag_int8.tflite", "control_flow/while_flags_f32.tflite",
                "ops/control_if_f32.tflite", "ops/control_while_int8.tflite"]


@pytest.mark.parametrize("name", CONTROL_FLOW)
def test_if_and_while_run_in_the_device_runtime(name):
    # the runtime jumps on the condition bytes: the branch taken and the loop's iterations are
    # the host's, their operators' costs are the IF's or WHILE's subgraph costs
    core = "cortex-m33" if "if_" in name else "cortex-m0plus"
    mcu, host = _interpreter(MODELS / name, core), _interpreter(MODELS / name, core, emulate=False)
    for seed in range(4):
        inputs = random_inputs(host, seed)
        _assert_outputs_equal(_run(host, inputs), _run(mcu, inputs), seed)
        _assert_records_like_the_host(mcu, host)
        for r in mcu.last_run:
            if r.op in ("IF", "WHILE"):
                assert r.subgraph_instructions > 0, (r.index, r.op)
        _assert_runtime_small(mcu)
    mcu.close()
    host.close()


def test_every_invoke_boots_the_image_from_its_reset_vector():
    it = _interpreter(MODELS / "inception_block_int8.tflite", "cortex-m4")
    _run(it, random_inputs(it, 0))
    engine = it.executor.mcu.engine
    starts = []
    real = engine.uc.emu_start

    def counting(*args, **kwargs):
        starts.append(args[0])
        return real(*args, **kwargs)

    engine.uc.emu_start = counting
    for seed in range(3):
        _run(it, random_inputs(it, seed))
    # each invoke starts the image at its reset vector, the runtime's mrt_start, and is
    # measured over mrt_invoke's call: the engine stops as it is entered and as it returns
    mcu = it.executor.mcu
    reset = int.from_bytes(mcu.read(0x0800_0004, 4), "little")
    assert reset == mcu.symbol("mrt_start") | 1
    assert len(starts) == 9 and starts[0::3] == [reset] * 3 and starts[1::3] == [mcu.symbol("mrt_invoke") | 1] * 3
    start = mcu.elf.symbols["mrt_start"]
    assert all(start.addr < (s & ~1) < start.addr + start.size for s in starts[2::3])    # back in mrt_start
    assert len(it.executor.firmware_plan.entries) >= len(it.nodes)
    it.close()


@pytest.mark.parametrize("core,wait_states,native", [("cortex-m0plus", 2, True), ("cortex-m4", 0, True),
                                                     ("cortex-m4", 5, True), ("cortex-m4", 5, False),
                                                     ("cortex-m7", 3, True), ("cortex-m33", 3, True)])
def test_the_clock_dwt_reads_advances_by_profile_s_cycles_over_the_invoke(core, wait_states, native, monkeypatch):
    # the machine keeps one running clock (what DWT->CYCCNT reads: system/clock.py) while the
    # operator windows price each entry from the edges between their boundaries: over
    # mrt_invoke's call the clock advances by exactly the invoke's cycles (the operators' and
    # the runtime's), on every invoke, the caches carried over from the one before; priced
    # natively or (native=False) by cycles.account, its Python twin
    if not native:
        from micro_rt.cortexm.native import HookSet
        monkeypatch.setattr(HookSet, "account", lambda *args, **kw: None)
    it = _interpreter(MODELS / "mobilenet_tiny_int8.tflite", core, flash_wait_states=wait_states)
    for seed in range(3):
        _run(it, random_inputs(it, seed))
        total = sum(r.cycles for r in it.last_run) + it.executor.last_runtime.cycles
        assert it.executor.last_cyccnt_cycles == total > 0
    it.close()


def test_runtime_overhead_is_positive_and_small():
    for core in ("cortex-m0plus", "cortex-m4"):
        it = _interpreter(MODELS / "mobilenet_tiny_int8.tflite", core)
        _run(it, random_inputs(it, 0))
        own = it.executor.last_runtime
        _assert_runtime_small(it)
        assert own.instructions < 0.01 * sum(r.instructions for r in it.last_run)
        assert 0 < own.cycles < 0.01 * sum(r.cycles for r in it.last_run)
        it.close()


def test_profile_reports_the_runtime_line_and_total(capsys):
    path = str(MODELS / "mobilenet_tiny_int8.tflite")
    assert main(["profile", path, "--target", "cortex-m4", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    own = report["runtime"]
    assert own["instructions"] > 0 and own["cycles"] > 0 and report["runtime_not_measured"] is None
    # the entry table in flash; the argument structs in RAM (no kernel keeps state here)
    assert own["plan_flash_bytes"] > 0 and own["plan_ram_bytes"] > 0
    assert report["total_cycles"] == sum(op["cycles"] for op in report["ops"]) + own["cycles"]
    assert report["total_instructions"] == sum(op["instructions"] for op in report["ops"]) + own["instructions"]
    assert main(["profile", path, "--target", "cortex-m4"]) == 0
    text = capsys.readouterr().out
    line = next(x for x in text.splitlines() if "runtime (between ops)" in x)
    assert f"{own['instructions']:,}" in line and f"{own['cycles']:,}" in line


def test_a_kernel_refusal_names_its_operator():
    b = ModelBuilder()
    x = b.add_tensor("x", [3, 4], "FLOAT32")
    idx = b.add_tensor("idx", [2], "INT32")
    y = b.add_tensor("y", [2, 4], "FLOAT32")
    z = b.add_tensor("z", [2, 4], "FLOAT32")
    b.add_operator("GATHER", [x, idx], [y], options={"axis": 0, "batch_dims": 0})
    b.add_operator("RELU", [y], [z])
    b.inputs, b.outputs = [x, idx], [z]
    it = _interpreter(b.build(), "cortex-m4")
    x_value = np.arange(12, dtype=np.float32).reshape(3, 4)
    got = _run(it, [x_value, np.array([2, 0], np.int32)])[0]
    assert np.array_equal(got, x_value[[2, 0]]) and all(r.on_mcu for r in it.last_run)
    with pytest.raises(KernelError, match=r"op 0 GATHER: a position is outside \[0, 3\).*mrt_gather returned"):
        _run(it, [x_value, np.array([0, 3], np.int32)])
    it.close()


def test_a_budget_stop_names_the_operator_running():
    it = _interpreter(MODELS / "mobilenet_tiny_int8.tflite", "cortex-m4", budget=20_000)
    with pytest.raises(EmulationError, match=r"the invoke exceeded its instruction budget of 200,000 \(the sum "
                                             r"of its operators' budgets[^)]*\): operator 0 CONV_2D was running "
                                             r"when it ran out"):
        _run(it, random_inputs(it, 0))
    it.close()
    # the first two operators fit (367,650 + 171,835 instructions), the third does not
    it = _interpreter(MODELS / "mobilenet_tiny_int8.tflite", "cortex-m4", invoke_budget=600_000)
    with pytest.raises(EmulationError, match=r"operator 2 CONV_2D was running"):
        _run(it, random_inputs(it, 0))
    it.close()


def _assert_stream_equal(data: bytes, core: str, frames, reset_at: int) -> int:
    """Over a stream of inputs, reset at frame `reset_at`: the host's outputs (and those of the
    kernels run alone), their counts; how many invokes ended early (kTfLiteAbort)."""
    mcu, host, alone = _interpreter(data, core), _interpreter(data, core, emulate=False), KernelByKernel(data, core)
    runs = mcu, host, alone
    ended = 0
    for n, frame in enumerate(frames):
        if n == reset_at:
            for it in runs:
                it.reset()
        expected, (by_kernel, results) = _run(host, frame), alone.run(frame)
        _assert_outputs_equal(expected, _run(mcu, frame), n)
        _assert_outputs_equal(expected, by_kernel, n)
        alone.assert_laid_out_as(mcu)
        assert [(r.index, r.ended_run) for r in mcu.last_run] == [(r.index, r.ended_run) for r in host.last_run]
        _assert_counts_equal(mcu.last_run, results)
        ended += mcu.last_run[-1].ended_run
    for it in runs:
        it.close()
    return ended


def test_signal_state_carries_over_and_resets():
    # the noise estimate lives in the plan's state region between invokes
    from devtools.op_models.signal import SPECTRAL, single_op
    data = single_op("SignalFilterBankSpectralSubtraction", [((16,), "UINT32")],
                     [((16,), "UINT32"), ((16,), "UINT32")], SPECTRAL)
    rng = np.random.default_rng(3)
    frames = [[rng.integers(0, 1 << 20, 16).astype(np.uint32)] for _ in range(12)]
    _assert_stream_equal(data, "cortex-m4", frames, reset_at=8)


def test_every_signal_operator_streams_as_on_the_host():
    # FIFOs, buffers and work memory of the streaming ops, through a reset halfway
    from devtools.op_models.signal import signal_cases
    for name, data, frames, _ in signal_cases(np.random.default_rng(21)):
        _assert_stream_equal(data, "cortex-m4", frames, reset_at=len(frames) // 2)


def test_variable_tensor_state_carries_over():
    # SVDF's state is a variable tensor in the arena
    from devtools.op_models.svdf import svdf_model
    data = svdf_model(2, 10, 12, 3, 4, "int16", "NONE", seed=1)
    rng = np.random.default_rng(0)
    frames = [[rng.integers(-128, 128, (2, 10)).astype(np.int8)] for _ in range(7)]
    _assert_stream_equal(data, "cortex-m0plus", frames, reset_at=5)


@pytest.mark.parametrize("core", ["cortex-m0plus", "cortex-m4"])
def test_a_circular_buffer_ends_the_invoke_on_the_host_s_invokes(core):
    """CIRCULAR_BUFFER returns kTfLiteAbort until its period comes round: the runtime ends the
    invoke there without an error (MRT_PLAN_ENDS_RUN), the record says so, the operators after
    it do not run; over a stream with a reset, on the same invokes as the host, with its outputs
    and the counts of the kernels run alone."""
    from devtools.op_models.circular_buffer import streaming_model
    rng = np.random.default_rng(5)
    frames = [[rng.integers(-128, 128, (1, 1, 2, 8), dtype=np.int8)] for _ in range(14)]
    ended = _assert_stream_equal(streaming_model(4, 8, 3, 2), core, frames, reset_at=9)
    assert ended >= 6, "the period never ended an invoke early"


def test_detection_postprocess_runs_in_the_plan():
    """TFLite_Detection_PostProcess (TFLM's eleven scratch buffers in the arena) in the device
    runtime: the host's outputs and the counts of the kernel run alone, on seeds with many ties."""
    from devtools.op_models.detection import ssd_head
    from test_detection_postprocess import seeded_inputs
    for regular in (False, True):
        data = ssd_head(40, 4, True, regular, 10, seed=7)
        _assert_stream_equal(data, "cortex-m4", [seeded_inputs(40, 5, seed) for seed in range(4)], reset_at=-1)


def test_the_plan_is_not_written_by_the_kernels():
    # the entry table is in flash, the argument structs in RAM after the state region: only
    # the state region may change during an invoke
    it = _interpreter(MODELS / "inception_block_f32.tflite", "cortex-m4")
    _run(it, random_inputs(it, 0))
    image, plan = it.executor.plan_image, it.executor.firmware_plan
    _run(it, random_inputs(it, 1))
    assert it.executor.mcu.read(image.flash_base, len(image.flash)) == image.flash
    structs = -(-len(plan.state_blob) // 16) * 16
    assert len(image.state) == structs + len(plan.plan_blob) and plan.plan_blob
    assert it.executor.mcu.read(image.state_base + structs, len(plan.plan_blob)) == image.state[structs:]
    it.close()


STATEFUL = [("control_flow/stream_state_int8.tflite", "cortex-m0plus"),
            ("control_flow/stream_state_int8.tflite", "cortex-m4"),
            ("control_flow/stream_state_f32.tflite", "cortex-m0plus"),
            ("control_flow/stream_state_f32.tflite", "cortex-m4"),
            ("ops/call_once_var_int8.tflite", "cortex-m4")]


@pytest.mark.parametrize("name,core", STATEFUL)
def test_call_once_and_resource_variables_run_in_the_plan(name, core):
    """CALL_ONCE (init subgraph behind a flag byte), VAR_HANDLE (a NOTE), READ_VARIABLE and
    ASSIGN_VARIABLE (copies to and from the variables' buffers) in the device runtime: over a
    stream with a reset, the host's outputs and operators."""
    mcu, host = _interpreter(MODELS / name, core), _interpreter(MODELS / name, core, emulate=False)
    for n in range(7):
        if n == 4:
            mcu.reset()
            host.reset()
        inputs = random_inputs(host, n)
        _assert_outputs_equal(_run(host, inputs), _run(mcu, inputs), n)
        _assert_records_like_the_host(mcu, host)
        for r in mcu.last_run:
            if r.op in ("READ_VARIABLE", "ASSIGN_VARIABLE"):
                assert r.instructions > 0, (r.subgraph, r.index, r.op)
        _assert_runtime_small(mcu)
    plan = mcu.executor.firmware_plan
    copies = {e.op_name for e in plan.entries if e.symbol == "mrt_copy"}
    assert {"READ_VARIABLE", "ASSIGN_VARIABLE"} <= copies, copies
    assert len(plan.flags) == 1 and sum(e.opcode == "store" for e in plan.entries) == 1
    mcu.close()
    host.close()


def test_the_init_subgraph_runs_on_the_first_invoke_only():
    # the first invoke runs subgraph 1 (the variables' initial values), later ones skip it, a
    # reset does not re-arm it (TFLM's kernel has no reset); the byte the runtime keeps
    # follows the host kernel's flag both ways
    it = _interpreter(MODELS / "control_flow" / "stream_state_int8.tflite", "cortex-m4")
    node = it.nodes[0]
    assert node.op_name == "CALL_ONCE"

    def flag_byte() -> int:
        whole = it.executor._whole
        return it.executor.mcu.read(whole.resolve_region("state", whole.plan.flags[0][0]), 1)[0]

    def invoke(seed: int):
        _run(it, random_inputs(it, seed))
        return it.last_run[0].subgraph_instructions, sorted({r.subgraph for r in it.last_run}), flag_byte()

    _run(it, random_inputs(it, 0))
    assert not it.executor.host_entries() and node.user_data.has_run and flag_byte() == 0
    first = it.last_run[0]
    assert first.op == "CALL_ONCE" and first.instructions == 0 and first.subgraph_instructions > 0
    assert {r.subgraph for r in it.last_run} == {0, 1}
    assert invoke(1) == (0, [0], 0)
    it.reset()
    assert invoke(2) == (0, [0], 0)
    node.user_data.has_run = False            # the host's flag re-armed: the plan runs init again
    again, subgraphs, byte = invoke(3)
    assert again == first.subgraph_instructions and subgraphs == [0, 1] and byte == 0
    assert node.user_data.has_run
    it.close()


def test_python_hooks_see_the_same_operator_boundaries(monkeypatch):
    """The boundaries are observed by the native block hook (mrt_set_observer) or, without the
    native library, by a Unicorn block hook of their own: the same records and runtime cost."""
    from micro_rt.cortexm import machine, native as native_module
    native = _interpreter(MODELS / "mobilenet_tiny_int8.tflite", "cortex-m4", flash_wait_states=2)
    python = _interpreter(MODELS / "mobilenet_tiny_int8.tflite", "cortex-m4", flash_wait_states=2)
    inputs = random_inputs(native, 0)
    expected = _run(native, inputs)
    with monkeypatch.context() as patch:          # the machine is made at the first invoke
        for module in (machine, native_module):
            patch.setattr(module, "load_native", lambda: None)
        got = _run(python, inputs)
    _assert_outputs_equal(expected, got)
    assert native.executor.mcu.hooks.native and not python.executor.mcu.hooks.native
    assert [(r.index, r.instructions, r.cycles, r.stack_bytes) for r in native.last_run] == \
        [(r.index, r.instructions, r.cycles, r.stack_bytes) for r in python.last_run]
    assert all(r.on_mcu and r.instructions > 0 for r in native.last_run)
    assert native.executor.last_runtime == python.executor.last_runtime
    native.close()
    python.close()


def test_an_error_in_the_boundary_observer_stops_the_invoke():
    it = _interpreter(MODELS / "mobilenet_tiny_int8.tflite", "cortex-m4")
    _run(it, random_inputs(it, 0))
    assert all(r.on_mcu for r in it.last_run)

    def fail(index):
        raise RuntimeError(f"observer failed at entry {index}")
    whole = it.executor._whole
    whole.windows.start(fail)
    with pytest.raises(RuntimeError, match="observer failed at entry 0"):
        it.executor.mcu.call("mrt_invoke", whole.image.plan_address, observer=whole.windows.observer)
    it.close()


def test_only_the_code_the_plan_reaches_keeps_its_code_hooks():
    """The alignment checks that need a code hook are installed for the functions the plan can
    reach alone (Unicorn walks every code hook at every hooked instruction: the firmware's 200-odd
    made float32 models emulate at about 9 M instructions/s): the fallback checks of every
    function the plan reaches, and of no other."""
    from micro_rt.cortexm.image import reference_graph
    from micro_rt.cortexm.static_alignment import static_checks
    it = _interpreter(MODELS / "residual_block_f32.tflite", "cortex-m4")
    _run(it, random_inputs(it, 0))
    mcu = it.executor.mcu
    by_pc = static_checks(mcu.elf)[1]
    kept = mcu.hooks.code_hook_pcs
    reached = reference_graph(mcu.elf.path).closure(
        {e.symbol for e in it.executor.firmware_plan.entries if e.symbol} | {"mrt_start", "mrt_invoke"}).names("code")
    assert kept and kept < set(by_pc)
    assert kept == {pc for pc in by_pc if mcu.elf.function_at(pc).name in reached}
    assert {mcu.elf.function_at(pc).name for pc in kept} >= {"mrt_conv_f32"}
    it.close()
