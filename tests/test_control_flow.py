"""IF, WHILE, CALL_ONCE and resource variables (VAR_HANDLE, READ_VARIABLE, ASSIGN_VARIABLE)
against the tflite-micro oracle: outputs over seeded input streams (state carried across
invokes, cleared by reset()), head and tail as TFLM prints them, the true minimum arena;
the plan naming subgraphs (bad graphs: test_subgraph_checks.py; the MCU: test_vmcu_control_flow.py)."""
from __future__ import annotations

import json

import numpy as np
import pytest

from conftest import PROJECT_MODELS
from micro_rt import Interpreter
from micro_rt.cli import main
from micro_rt.model import read_model
from micro_rt.subgraphs import model_lifetimes
from oracle_minimum import minimum_mismatches
from test_subgraph_checks import while_model

CONTROL = PROJECT_MODELS / "control_flow"
# and models/ops' (make_models_ops.py): IF on a computed predicate, WHILE counting to an input
MODELS = sorted(CONTROL.glob("*.tflite")) + [
    PROJECT_MODELS / "ops" / f"{name}_{v}.tflite" for name in ("call_once_var", "control_if",
                                                               "control_while", "stream_buffer")
    for v in ("f32", "int8")]
STATEFUL = [p for p in MODELS if "stream" in p.name or "call_once" in p.name]


def control_inputs(it: Interpreter, rng: np.random.Generator) -> list[np.ndarray]:
    """Bool inputs half True (a loop's trip count varies), int8 over the whole range, floats
    in [-2, 2]."""
    found = []
    for i in range(it.num_inputs):
        d = it.get_input_details(i)
        shape, dtype = tuple(d["shape"]), np.dtype(d["dtype"])
        if dtype == np.bool_:
            found.append(rng.random(shape) < 0.7)
        elif dtype == np.int8:
            found.append(rng.integers(-128, 128, shape).astype(np.int8))
        else:
            found.append(rng.uniform(-2, 2, shape).astype(dtype))
    return found


def _run_both(path, oracle, seeds=range(12), invokes=4, reset_at=None):
    data = path.read_bytes()
    ours = Interpreter.from_bytes(data, target="host64")
    theirs = oracle.interpreter(data, 1 << 16)
    ran = 0
    for seed in seeds:
        rng = np.random.default_rng(seed)
        for step in range(invokes):
            if step == reset_at:
                ours.reset()
                theirs.reset()
            inputs = control_inputs(ours, rng)
            for i, x in enumerate(inputs):
                ours.set_input(x, i)
            ours.invoke()
            oracle.invoke(theirs, inputs)
            for k in range(ours.num_outputs):
                a, b = ours.get_output(k), np.array(theirs.get_output(k))
                assert a.dtype == b.dtype and np.array_equal(a, b), \
                    f"{path.name} seed {seed} invoke {step} output {k}: {a} vs {b}"
            ran += 1
    return ran


@pytest.mark.parametrize("path", MODELS, ids=lambda p: p.name)
def test_outputs_bit_exact_with_oracle_over_invoke_streams(path, oracle):
    assert _run_both(path, oracle) == 48


@pytest.mark.parametrize("path", STATEFUL, ids=lambda p: p.name)
def test_reset_clears_resource_variables_as_tflm(path, oracle):
    """reset() puts every variable back to its default byte (TFLM's ResetAll); CALL_ONCE does
    not run its initializer again, so the initial value is gone, as in TFLM."""
    _run_both(path, oracle, seeds=range(3), invokes=5, reset_at=2)


def test_state_is_carried_across_invokes():
    """The streaming model's outputs depend on the frames of earlier invokes: output 1 (the
    converter puts the running sum first) from the 4-frame window, output 0 from every frame."""
    it = Interpreter.from_file(CONTROL / "stream_state_f32.tflite", target="host64")
    frame = np.ones((1, 1, 3), np.float32)
    window, total = [], []
    for _ in range(6):
        it.set_input(frame, 0)
        it.invoke()
        total.append(it.get_output(0))
        window.append(it.get_output(1))
    assert not np.array_equal(window[0], window[3])      # the window fills up
    assert np.array_equal(window[3], window[5])          # then holds four equal frames
    assert not np.array_equal(total[4], total[5])        # the sum still moves


@pytest.mark.parametrize("path", MODELS, ids=lambda p: p.name)
def test_head_and_tail_equal_oracle(path, oracle):
    plan = Interpreter.from_file(path, target="host64", plan_only=True).plan
    theirs = oracle.allocations(path.read_bytes(), 1 << 16)
    assert (plan.head_bytes, plan.tail_bytes) == (theirs["head"], theirs["tail"])


def test_minimum_arena_is_tflite_micros(oracle):
    cases = []
    for path in MODELS:
        it = Interpreter.from_file(path, target="host64", plan_only=True)
        cases.append((path.name, path.read_bytes(), it.arena_required_bytes()))
    assert minimum_mismatches(cases) == []


def test_resource_variables_live_in_the_tail():
    """Two float variables of 48 and 20 bytes: their buffers (16-aligned) and the
    MicroResourceVariables records are persistent, so the tail grows by them, not the head."""
    path = CONTROL / "stream_state_f32.tflite"
    it = Interpreter.from_file(path, target="host64", plan_only=True)
    variables = it.resource_variables
    assert sorted((v.shared_name, v.nbytes) for v in variables.variables) == [("frames", 48), ("total", 20)]
    assert not any(b.name in ("frames", "total") for b in it.plan.buffers)


# ---- the plan across subgraphs -----------------------------------------------------------------

def test_loop_body_tensors_stay_live_across_the_whole_loop():
    """TFLM marks a WHILE's own inputs and outputs used after walking its subgraphs, so they
    overlap every tensor of cond and body (nested IF branches included)."""
    model = read_model((CONTROL / "while_flags_f32.tflite").read_bytes())
    life = model_lifetimes(model)
    while_op = next(op for op in model.main.operators if op.op_name == "WHILE")
    for t in while_op.outputs:
        lo, hi = life.first[0][t], life.last[0][t]
        for sg in model.subgraphs[1:]:
            used = [life.last[sg.index][k] for k in range(len(sg.tensors)) if life.last[sg.index][k] >= 0]
            assert used and lo <= min(used) and max(used) <= hi


def test_plan_names_subgraphs(capsys):
    path = str(CONTROL / "while_flags_int8.tflite")
    assert main(["plan", path]) == 0
    out = capsys.readouterr().out
    assert "5 subgraphs planned together" in out and "   4:9  tensor" in out
    assert "3 'while_cond', 4 'while_body'" in out
    assert main(["plan", path, "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert {b["subgraph"] for b in plan["buffers"]} == {0, 1, 2, 3, 4}
    assert plan["subgraphs"][0] == "main" and len(plan["subgraphs"]) == 5


def test_well_formed_while_runs_zero_iterations():
    it = Interpreter.from_bytes(while_model(1, 2), target="host64")
    x = np.arange(4, dtype=np.float32).reshape(1, 4)
    it.set_input(x, 0)
    it.invoke()
    assert np.array_equal(it.get_output(0), x)


# ---- reports ----------------------------------------------------------------------------------

def test_report_facts_put_subgraph_buffers_in_the_control_flow_operators_column():
    """The report's columns are subgraph 0's operators: a buffer of the loop's subgraphs lives
    within the WHILE's column, named by its own subgraph's tensors and operators."""
    from micro_rt.reports.facts import buffer_facts, live_per_op
    model = read_model((CONTROL / "while_flags_f32.tflite").read_bytes())
    plan = Interpreter.from_file(CONTROL / "while_flags_f32.tflite", target="host64", plan_only=True).plan
    loop = next(op.index for op in model.main.operators if op.op_name == "WHILE")
    facts = buffer_facts(model.main, plan, model.subgraphs)
    inner = [f for f in facts if f.subgraph]
    assert inner and all(f.first_op == f.last_op == loop for f in inner)
    assert any(f.number.startswith("3:") for f in inner)
    assert any("op 3:0 STRIDED_SLICE" in f.consumers for f in inner)
    live = live_per_op(plan, model.subgraphs)
    assert set(live) <= {-1, *range(len(model.main.operators))}
    assert max(live.values()) == plan.lower_bound and live[loop] <= plan.head_bytes


@pytest.mark.parametrize("command", [["report", "-o", "{tmp}/r.html"], ["boards"],
                                     ["compare", str(CONTROL / "while_flags_f32.tflite")]])
def test_report_commands_take_models_with_subgraphs(command, tmp_path, capsys):
    path = str(CONTROL / "while_flags_int8.tflite")
    args = [command[0], path] + [a.replace("{tmp}", str(tmp_path)) for a in command[1:]]
    assert main(args) in (0, 3)      # 3: the loop counter's int32 ADD has no C kernel
    out = capsys.readouterr().out
    assert "internal error" not in out
    if command[0] == "report":
        page = (tmp_path / "r.html").read_text()
        assert "tensor 4:1" in page and "op 3:0 STRIDED_SLICE" in page


def test_run_check_on_a_stateful_model_starts_both_fresh(capsys, oracle):
    """`run --check` compares a fresh interpreter with the fresh oracle: the run's own invoke
    has already moved the variables (and a reset would not rerun CALL_ONCE, as in TFLM)."""
    assert main(["run", str(CONTROL / "stream_state_int8.tflite"), "--check", "--seeds", "6"]) == 0
    assert "DIFFERS" not in capsys.readouterr().out
