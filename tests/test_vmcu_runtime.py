"""The whole inference on the virtual MCU (issue 14): the firmware's runtime (mrt_runtime.c)
walks the model's plan in ONE emulator entry per invoke, calling the same kernels as the
call-by-call mode. Outputs and per-operator counts equal that mode's; the runtime's own cost is
a line of `profile` and part of its total; refusals and budget stops name the operator; state
carries over between invokes."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from micro_rt import EmulationError, Interpreter, KernelError
from micro_rt.builder import ModelBuilder
from micro_rt.cli import main
from micro_rt.inputs import random_inputs

from test_vmcu_batch_matmul import bmm_transposes_model

MODELS = Path(__file__).resolve().parents[1] / "models"


def _interpreter(data_or_path, core: str, whole: bool, kernels: str = "cmsis-nn", **options) -> Interpreter:
    options = {"whole_invoke": whole, **options}
    if isinstance(data_or_path, Path):
        return Interpreter.from_file(str(data_or_path), target=core, kernels=kernels, emulate=True,
                                     mcu_options=options)
    return Interpreter.from_bytes(data_or_path, target=core, kernels=kernels, emulate=True, mcu_options=options)


def _run(it: Interpreter, inputs) -> list[np.ndarray]:
    for i, x in enumerate(inputs):
        it.set_input(x, i)
    it.invoke()
    return [it.get_output(i).copy() for i in range(it.num_outputs)]


CASES = [("mobilenet_tiny_int8.tflite", "cortex-m4"), ("mobilenet_tiny_int8.tflite", "cortex-m0plus"),
         ("residual_block_f32.tflite", "cortex-m7"), ("inception_block_int8.tflite", "cortex-m33"),
         ("ops/transpose_conv_int8.tflite", "cortex-m7"), ("ops/slicing_int16x8.tflite", "cortex-m0plus"),
         ("quant_dequant_int8_floatio.tflite", "cortex-m4"), ("shape_ops_int8.tflite", "cortex-m33")]


@pytest.mark.parametrize("name,core", CASES)
def test_whole_invoke_equals_call_by_call(name, core):
    per_call, whole = _interpreter(MODELS / name, core, False), _interpreter(MODELS / name, core, True)
    for seed in range(2):
        inputs = random_inputs(per_call, seed)
        expected, got = _run(per_call, inputs), _run(whole, inputs)
        assert whole.executor.runs_whole(), whole.executor.whole_invoke_unavailable
        for a, b in zip(expected, got):
            assert np.array_equal(a, b)
        assert [(r.index, r.op) for r in per_call.last_run] == [(r.index, r.op) for r in whole.last_run]
        for a, b in zip(per_call.last_run, whole.last_run):
            assert b.on_mcu
            assert (a.instructions, a.cycles, a.stack_bytes) == (b.instructions, b.cycles, b.stack_bytes), \
                (a.index, a.op)
            assert [str(x) for x in a.alignment] == [str(x) for x in b.alignment]
    per_call.close()
    whole.close()


@pytest.mark.parametrize("options", [{"arena_misalign": 2, "strict_alignment": True},
                                     {"arena_misalign": 1, "strict_alignment": True}])
def test_unaligned_accesses_are_named_per_operator_as_call_by_call(options):
    # the same kernel (so the same pcs) runs in several operators: each names its own tensors
    path = MODELS / "mobilenet_tiny_int8.tflite"
    per_call = _interpreter(path, "cortex-m4", False, **options)
    whole = _interpreter(path, "cortex-m4", True, **options)
    inputs = random_inputs(per_call, 0)
    _run(per_call, inputs)
    _run(whole, inputs)
    assert whole.executor.runs_whole()
    events = [[str(a) for a in r.alignment] for r in per_call.last_run]
    assert sum(map(len, events)) > 0
    assert events == [[str(a) for a in r.alignment] for r in whole.last_run]
    per_call.close()
    whole.close()


@pytest.mark.parametrize("core", ["cortex-m4", "cortex-m7", "cortex-m33"])
def test_with_flash_wait_states_the_memory_model_carries_across_operators(core):
    # The flash interface is simulated as the code runs, in both modes, its caches carrying
    # from operator to operator (and across invokes); the argument structs lie in RAM as call
    # by call (and as TFLM's on the stack). Instructions are equal; cycles differ only by what
    # the caches hold when an operator starts: in the whole invoke the runtime's own code and
    # its reads of the entry table go through the same caches between operators, as on a
    # board, and call by call the runners' constants grow the emulated flash during the first
    # invoke, which empties the caches. Each moves an operator's cycles by well under 1%.
    path = MODELS / "mobilenet_tiny_int8.tflite"
    per_call = _interpreter(path, core, False, flash_wait_states=5)
    whole = _interpreter(path, core, True, flash_wait_states=5)
    for seed in range(3):
        inputs = random_inputs(per_call, seed)
        assert all(np.array_equal(a, b) for a, b in zip(_run(per_call, inputs), _run(whole, inputs)))
        assert whole.executor.runs_whole() and whole.executor.mcu.flash_port
        for a, b in zip(per_call.last_run, whole.last_run):
            assert a.instructions == b.instructions
            assert abs(a.cycles - b.cycles) <= 0.01 * a.cycles, (core, seed, a.index, a.cycles, b.cycles)
    per_call.close()
    whole.close()


@pytest.mark.parametrize("case", [("bmm", "FLOAT32", "cmsis-nn"), ("bmm", "INT8", "cmsis-nn"),
                                  ("bmm", "INT8", "reference"), ("mobilenet_tiny_int8", None, "reference"),
                                  ("ops/transpose_conv_int8", None, "reference")])
@pytest.mark.parametrize("core", ["cortex-m0plus", "cortex-m4"])
def test_persistent_buffers_and_reference_kernels_run_in_the_plan(case, core):
    # BATCH_MATMUL's per-invoke transposes write TFLM's persistent buffers (after the variable
    # tensors); the reference flavour's kernels are other symbols: both in the plan, outputs and
    # per-operator counts equal call by call's over several invokes
    name, dtype, kernels = case
    model = bmm_transposes_model(dtype) if name == "bmm" else MODELS / f"{name}.tflite"
    per_call = _interpreter(model, core, False, kernels)
    whole = _interpreter(model, core, True, kernels)
    for seed in range(3):
        inputs = random_inputs(per_call, seed)
        for a, b in zip(_run(per_call, inputs), _run(whole, inputs)):
            assert np.array_equal(a, b)
        assert whole.executor.runs_whole(), whole.executor.whole_invoke_unavailable
        assert [(r.index, r.instructions, r.cycles, r.stack_bytes) for r in per_call.last_run] == \
            [(r.index, r.instructions, r.cycles, r.stack_bytes) for r in whole.last_run]
    symbols = {e.symbol for e in whole.executor.firmware_plan.entries}
    if name == "bmm":
        assert "mrt_strided_copy" in symbols, symbols
    if kernels == "reference":
        assert any(s.startswith("mrt_ref_") or s.startswith("mrt_batch_matmul") for s in symbols), symbols
    per_call.close()
    whole.close()


CONTROL_FLOW = ["control_flow/if_flag_int8.tflite", "control_flow/while_flags_f32.tflite",
                "ops/control_if_f32.tflite", "ops/control_while_int8.tflite"]


@pytest.mark.parametrize("name", CONTROL_FLOW)
def test_if_and_while_run_in_the_device_runtime(name):
    # the runtime jumps on the condition bytes; records (runs, subgraph costs) as call by call
    core = "cortex-m33" if "if_" in name else "cortex-m0plus"
    per_call, whole = _interpreter(MODELS / name, core, False), _interpreter(MODELS / name, core, True)
    for seed in range(4):
        inputs = random_inputs(per_call, seed)
        for a, b in zip(_run(per_call, inputs), _run(whole, inputs)):
            assert np.array_equal(a, b)
        assert whole.executor.runs_whole(), whole.executor.whole_invoke_unavailable
        assert [r.as_dict(True) for r in per_call.last_run] == [r.as_dict(True) for r in whole.last_run]
        assert whole.executor.last_runtime.instructions > 0
    per_call.close()
    whole.close()


def test_int8_outputs_equal_the_host_kernels():
    path = MODELS / "mobilenet_tiny_int8.tflite"
    host = Interpreter.from_file(str(path))
    whole = _interpreter(path, "cortex-m4", True)
    for seed in range(3):
        inputs = random_inputs(host, seed)
        for a, b in zip(_run(host, inputs), _run(whole, inputs)):
            assert np.array_equal(a, b)
    whole.close()


def test_one_emulator_entry_per_invoke():
    it = _interpreter(MODELS / "inception_block_int8.tflite", "cortex-m4", True)
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
    assert starts == [it.executor.mcu.symbol("mrt_invoke") | 1] * 3
    assert len(it.executor.firmware_plan.entries) >= len(it.nodes)
    it.close()


def test_runtime_overhead_is_positive_and_small():
    for core in ("cortex-m0plus", "cortex-m4"):
        it = _interpreter(MODELS / "mobilenet_tiny_int8.tflite", core, True)
        _run(it, random_inputs(it, 0))
        own = it.executor.last_runtime
        ops_instructions = sum(r.instructions for r in it.last_run)
        entries = len(it.executor.firmware_plan.entries)
        assert 0 < own.instructions < 200 * entries
        assert own.instructions < 0.01 * ops_instructions
        assert 0 < own.cycles < 0.01 * sum(r.cycles for r in it.last_run)
        assert own.frame_bytes > 0
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


def runtime_handle_model() -> bytes:
    """An ASSIGN_VARIABLE whose handle (INT32) an ADD computes at run time (0 + 0: variable 0)."""
    b = ModelBuilder()
    zero = b.add_tensor("zero", [1], "INT32", data=np.zeros(1, np.int32))
    h = b.add_tensor("h", [1], "INT32")
    x = b.add_tensor("x", [1, 4], "FLOAT32")
    hv = b.add_tensor("hv", [], "RESOURCE")
    y = b.add_tensor("y", [1, 4], "FLOAT32")
    b.add_operator("VAR_HANDLE", [], [hv], options={"shared_name": "v"})
    b.add_operator("ASSIGN_VARIABLE", [hv, x], [])
    b.add_operator("ADD", [zero, zero], [h])
    b.add_operator("ASSIGN_VARIABLE", [h, x], [])
    b.add_operator("READ_VARIABLE", [hv], [y])
    b.inputs, b.outputs = [x], [y]
    return b.build()


def test_profile_says_when_the_runtime_is_not_measured(capsys, tmp_path):
    # which variable a handle known only at run time reaches cannot be planned: call by call
    path = tmp_path / "runtime_handle.tflite"
    path.write_bytes(runtime_handle_model())
    assert main(["profile", str(path), "--target", "cortex-m4", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["runtime"] is None
    assert "op 3 ASSIGN_VARIABLE runs call by call: its handle (tensor 'h') is known only at run time" \
        in report["runtime_not_measured"]
    assert report["total_cycles"] == sum(op["cycles"] for op in report["ops"])
    main(["profile", str(path), "--target", "cortex-m4"])
    assert "runtime overhead not measured" in capsys.readouterr().out


def test_a_kernel_refusal_names_its_operator():
    b = ModelBuilder()
    x = b.add_tensor("x", [3, 4], "FLOAT32")
    idx = b.add_tensor("idx", [2], "INT32")
    y = b.add_tensor("y", [2, 4], "FLOAT32")
    z = b.add_tensor("z", [2, 4], "FLOAT32")
    b.add_operator("GATHER", [x, idx], [y], options={"axis": 0, "batch_dims": 0})
    b.add_operator("RELU", [y], [z])
    b.inputs, b.outputs = [x, idx], [z]
    it = _interpreter(b.build(), "cortex-m4", True)
    x_value = np.arange(12, dtype=np.float32).reshape(3, 4)
    got = _run(it, [x_value, np.array([2, 0], np.int32)])[0]
    assert it.executor.runs_whole()
    assert np.array_equal(got, x_value[[2, 0]])
    with pytest.raises(KernelError, match=r"op 0 GATHER: a position is outside \[0, 3\).*mrt_gather returned"):
        _run(it, [x_value, np.array([0, 3], np.int32)])
    it.close()


def test_a_budget_stop_names_the_operator_running():
    it = _interpreter(MODELS / "mobilenet_tiny_int8.tflite", "cortex-m4", True, budget=20_000)
    with pytest.raises(EmulationError, match=r"the invoke exceeded its instruction budget of 200,000 \(the sum "
                                             r"of its operators' budgets\): operator 0 CONV_2D was running when it "
                                             r"ran out"):
        _run(it, random_inputs(it, 0))
    it.close()
    # the first two operators fit (367,650 + 171,835 instructions), the third does not
    it = _interpreter(MODELS / "mobilenet_tiny_int8.tflite", "cortex-m4", True, invoke_budget=600_000)
    with pytest.raises(EmulationError, match=r"operator 2 CONV_2D was running"):
        _run(it, random_inputs(it, 0))
    it.close()


def _assert_stream_equal(data: bytes, core: str, frames, reset_at: int) -> None:
    """Both modes over a stream of inputs, reset at frame `reset_at`: equal outputs and counts."""
    per_call, whole = _interpreter(data, core, False), _interpreter(data, core, True)
    for n, frame in enumerate(frames):
        if n == reset_at:
            per_call.reset()
            whole.reset()
        for a, b in zip(_run(per_call, frame), _run(whole, frame)):
            assert np.array_equal(a, b), n
        assert whole.executor.runs_whole()
        assert [r.instructions for r in per_call.last_run] == [r.instructions for r in whole.last_run]
    per_call.close()
    whole.close()


def test_signal_state_carries_over_and_resets():
    # the noise estimate lives in the plan's state region between invokes
    from test_kernels_signal import SPECTRAL, single_op
    data = single_op("SignalFilterBankSpectralSubtraction", [((16,), "UINT32")],
                     [((16,), "UINT32"), ((16,), "UINT32")], SPECTRAL)
    rng = np.random.default_rng(3)
    frames = [[rng.integers(0, 1 << 20, 16).astype(np.uint32)] for _ in range(12)]
    _assert_stream_equal(data, "cortex-m4", frames, reset_at=8)


def test_every_signal_operator_streams_alike_in_both_modes():
    # FIFOs, buffers and work memory of the streaming ops, through a reset halfway
    from test_vmcu_signal import signal_cases
    for name, data, frames, _ in signal_cases(np.random.default_rng(21)):
        _assert_stream_equal(data, "cortex-m4", frames, reset_at=len(frames) // 2)


def test_variable_tensor_state_carries_over():
    # SVDF's state is a variable tensor in the arena
    from test_kernels_svdf import svdf_model
    data = svdf_model(2, 10, 12, 3, 4, "int16", "NONE", seed=1)
    rng = np.random.default_rng(0)
    frames = [[rng.integers(-128, 128, (2, 10)).astype(np.int8)] for _ in range(7)]
    _assert_stream_equal(data, "cortex-m0plus", frames, reset_at=5)


def test_the_plan_is_not_written_by_the_kernels():
    # the entry table is in flash, the argument structs in RAM after the state region: only
    # the state region may change during an invoke
    it = _interpreter(MODELS / "inception_block_f32.tflite", "cortex-m4", True)
    _run(it, random_inputs(it, 0))
    image, plan = it.executor.plan_image, it.executor.firmware_plan
    _run(it, random_inputs(it, 1))
    assert it.executor.mcu.read(image.flash_base, len(image.flash)) == image.flash
    structs = -(-len(plan.state_blob) // 16) * 16
    assert len(image.state) == structs + len(plan.plan_blob) and plan.plan_blob
    assert it.executor.mcu.read(image.state_base + structs, len(plan.plan_blob)) == image.state[structs:]
    it.close()


@pytest.mark.parametrize("core", ["cortex-m0plus", "cortex-m4"])
def test_a_circular_buffer_ends_the_whole_invoke_as_call_by_call(core):
    """CIRCULAR_BUFFER returns kTfLiteAbort until its period comes round: the runtime ends the
    invoke there without an error (MRT_PLAN_ENDS_RUN), the record says so, the operators after
    it do not run; over a stream with a reset, both modes agree in outputs, records and counts."""
    from test_circular_buffer import streaming_model
    data = streaming_model(4, 8, 3, 2)
    per_call, whole = _interpreter(data, core, False), _interpreter(data, core, True)
    rng = np.random.default_rng(5)
    ended = 0
    for n in range(14):
        if n == 9:
            per_call.reset()
            whole.reset()
        frame = [rng.integers(-128, 128, (1, 1, 2, 8), dtype=np.int8)]
        for a, b in zip(_run(per_call, frame), _run(whole, frame)):
            assert np.array_equal(a, b), n
        assert whole.executor.runs_whole(), whole.executor.whole_invoke_unavailable
        assert [(r.index, r.ended_run, r.instructions, r.cycles) for r in per_call.last_run] == \
            [(r.index, r.ended_run, r.instructions, r.cycles) for r in whole.last_run], n
        ended += whole.last_run[-1].ended_run
    assert ended >= 6, "the period never ended an invoke early"
    per_call.close()
    whole.close()


def test_detection_postprocess_runs_in_the_plan():
    """TFLite_Detection_PostProcess (TFLM's eleven scratch buffers in the arena) in the device
    runtime: the outputs and counts of call by call, on seeds with many ties."""
    from test_detection_postprocess import seeded_inputs, ssd_head
    for regular in (False, True):
        data = ssd_head(40, 4, True, regular, 10, seed=7)
        per_call, whole = _interpreter(data, "cortex-m4", False), _interpreter(data, "cortex-m4", True)
        for seed in range(4):
            inputs = seeded_inputs(40, 5, seed)
            for a, b in zip(_run(per_call, inputs), _run(whole, inputs)):
                assert np.array_equal(a, b), (regular, seed)
            assert whole.executor.runs_whole(), whole.executor.whole_invoke_unavailable
            assert [r.instructions for r in per_call.last_run] == [r.instructions for r in whole.last_run]
        per_call.close()
        whole.close()


STATEFUL = [("control_flow/stream_state_int8.tflite", "cortex-m0plus"),
            ("control_flow/stream_state_int8.tflite", "cortex-m4"),
            ("control_flow/stream_state_f32.tflite", "cortex-m0plus"),
            ("control_flow/stream_state_f32.tflite", "cortex-m4"),
            ("ops/call_once_var_int8.tflite", "cortex-m4")]


@pytest.mark.parametrize("name,core", STATEFUL)
def test_call_once_and_resource_variables_run_in_the_plan(name, core):
    """CALL_ONCE (init subgraph behind a flag byte), VAR_HANDLE (a NOTE), READ_VARIABLE and
    ASSIGN_VARIABLE (copies to and from the variables' buffers) in the device runtime: over a
    stream with a reset, the outputs, records and counts of call by call."""
    per_call, whole = _interpreter(MODELS / name, core, False), _interpreter(MODELS / name, core, True)
    for n in range(7):
        if n == 4:
            per_call.reset()
            whole.reset()
        inputs = random_inputs(per_call, n)
        for a, b in zip(_run(per_call, inputs), _run(whole, inputs)):
            assert np.array_equal(a, b), n
        assert whole.executor.runs_whole(), whole.executor.whole_invoke_unavailable
        assert [r.as_dict(True) for r in per_call.last_run] == [r.as_dict(True) for r in whole.last_run], n
        assert whole.executor.last_runtime.instructions > 0
    plan = whole.executor.firmware_plan
    copies = {e.op_name for e in plan.entries if e.symbol == "mrt_copy"}
    assert {"READ_VARIABLE", "ASSIGN_VARIABLE"} <= copies, copies
    assert len(plan.flags) == 1 and sum(e.opcode == "store" for e in plan.entries) == 1
    per_call.close()
    whole.close()


def test_the_init_subgraph_runs_on_the_first_invoke_only():
    # the first invoke runs subgraph 1 (the variables' initial values), later ones skip it, a
    # reset does not re-arm it (TFLM's kernel has no reset); the byte the runtime keeps
    # follows the host kernel's flag both ways
    it = _interpreter(MODELS / "control_flow" / "stream_state_int8.tflite", "cortex-m4", True)
    node = it.nodes[0]
    assert node.op_name == "CALL_ONCE"

    def flag_byte() -> int:
        whole = it.executor._whole
        return it.executor.mcu.read(whole.resolve_region("state", whole.plan.flags[0][0]), 1)[0]

    def invoke(seed: int):
        _run(it, random_inputs(it, seed))
        return it.last_run[0].subgraph_instructions, sorted({r.subgraph for r in it.last_run}), flag_byte()

    _run(it, random_inputs(it, 0))
    assert it.executor.runs_whole() and node.user_data.has_run and flag_byte() == 0
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


def test_a_handle_known_only_at_run_time_runs_call_by_call():
    data = runtime_handle_model()
    per_call, whole = _interpreter(data, "cortex-m4", False), _interpreter(data, "cortex-m4", True)
    x = np.arange(4, dtype=np.float32).reshape(1, 4)
    for a, b in zip(_run(per_call, [x]), _run(whole, [x])):
        assert np.array_equal(a, b)
    assert not whole.executor.runs_whole()
    assert "known only at run time" in whole.executor.whole_invoke_unavailable
    assert [r.as_dict() for r in per_call.last_run] == [r.as_dict() for r in whole.last_run]
    per_call.close()
    whole.close()


def test_python_hooks_see_the_same_operator_boundaries(monkeypatch):
    """The boundaries are observed by the native block hook (mrt_set_observer) or, without the
    native library, by a Unicorn block hook of their own: the same records and runtime cost."""
    from micro_rt.cortexm import machine, native as native_module
    native = _interpreter(MODELS / "mobilenet_tiny_int8.tflite", "cortex-m4", True, flash_wait_states=2)
    python = _interpreter(MODELS / "mobilenet_tiny_int8.tflite", "cortex-m4", True, flash_wait_states=2)
    inputs = random_inputs(native, 0)
    expected = _run(native, inputs)
    with monkeypatch.context() as patch:          # the machine is made at the first invoke
        for module in (machine, native_module):
            patch.setattr(module, "load_native", lambda: None)
        got = _run(python, inputs)
    for a, b in zip(expected, got):
        assert np.array_equal(a, b)
    assert native.executor.mcu.hooks.native and not python.executor.mcu.hooks.native
    assert [(r.index, r.instructions, r.cycles, r.stack_bytes) for r in native.last_run] == \
        [(r.index, r.instructions, r.cycles, r.stack_bytes) for r in python.last_run]
    assert native.executor.last_runtime == python.executor.last_runtime
    native.close()
    python.close()


def test_an_error_in_the_boundary_observer_stops_the_invoke():
    it = _interpreter(MODELS / "mobilenet_tiny_int8.tflite", "cortex-m4", True)
    _run(it, random_inputs(it, 0))
    assert it.executor.runs_whole()

    def fail(index):
        raise RuntimeError(f"observer failed at entry {index}")
    whole = it.executor._whole
    whole.windows.start(fail)
    with pytest.raises(RuntimeError, match="observer failed at entry 0"):
        it.executor.mcu.call("mrt_invoke", whole.image.plan_address, observer=whole.windows.observer)
    it.close()
