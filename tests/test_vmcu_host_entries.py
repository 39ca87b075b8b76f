"""Host entries of the firmware plan: an operator the plan has no C kernel call for (a custom
operator registered in Python, a resource variable whose handle is known only at run time) runs
on its host kernel from inside the device runtime's walk (mrt_host_op's BKPT #3), in the main
subgraph or in IF / WHILE subgraphs; its record says so and why, `profile` leaves it out of the
total and says so, and the outputs equal the host's."""
from __future__ import annotations

import json

import numpy as np
import pytest

from micro_rt import Interpreter, builtin_op_resolver
from micro_rt.builder import ModelBuilder
from micro_rt.cli import main
from micro_rt.errors import InputError
from micro_rt.inputs import random_inputs
from micro_rt.profile import profile_report, runtime_fields

from test_custom_ops import atan_model, atan_registration
from test_vmcu_runtime import MODELS, _assert_outputs_equal, _interpreter, _run

def test_the_deleted_whole_invoke_option_is_refused():
    # every invoke runs in the device runtime: the option that chose it is gone, and named
    with pytest.raises(InputError, match=r"mcu_options: unknown option 'whole_invoke'; the virtual MCU takes "):
        _interpreter(MODELS / "mobilenet_tiny_int8.tflite", "cortex-m4", whole_invoke=True)


def runtime_handle_model() -> bytes:
    """An ASSIGN_VARIABLE (op 3) of input 'w' whose handle (INT32) an ADD computes at run time
    (0 + 0: variable 0, which op 1 set to input 'x'): READ_VARIABLE gives w."""
    b = ModelBuilder()
    zero = b.add_tensor("zero", [1], "INT32", data=np.zeros(1, np.int32))
    h = b.add_tensor("h", [1], "INT32")
    x = b.add_tensor("x", [1, 4], "FLOAT32")
    w = b.add_tensor("w", [1, 4], "FLOAT32")
    hv = b.add_tensor("hv", [], "RESOURCE")
    y = b.add_tensor("y", [1, 4], "FLOAT32")
    b.add_operator("VAR_HANDLE", [], [hv], options={"shared_name": "v"})
    b.add_operator("ASSIGN_VARIABLE", [hv, x], [])
    b.add_operator("ADD", [zero, zero], [h])
    b.add_operator("ASSIGN_VARIABLE", [h, w], [])
    b.add_operator("READ_VARIABLE", [hv], [y])
    b.inputs, b.outputs = [x, w], [y]
    return b.build()


def _assert_host_entries(mcu, planned: set, ran: set, reason: str) -> None:
    """The plan's host entries are the operators at `planned` ((subgraph, index)); those at
    `ran` ran on the host for `reason`, uncounted, all others on the MCU; the runtime measured."""
    assert {(e.subgraph, e.node_index) for e in mcu.executor.host_entries()} == planned
    assert all(reason in e.host_reason for e in mcu.executor.host_entries())
    for r in mcu.last_run:
        on_host = (r.subgraph, r.index) in ran
        assert r.on_mcu is not on_host and (reason in r.host_reason) is on_host, r.as_dict(True)
        assert not on_host or (r.instructions, r.cycles, r.stack_bytes) == (0, 0, 0)
    assert ran <= {(r.subgraph, r.index) for r in mcu.last_run}
    assert mcu.executor.last_runtime.instructions > 0


def test_a_handle_known_only_at_run_time_runs_on_the_host(capsys, tmp_path):
    # which variable it reaches cannot be planned: the runtime traps to the host kernel, which
    # writes the variable in the MCU's memory, where READ_VARIABLE's copy reads it
    data = runtime_handle_model()
    mcu, host = _interpreter(data, "cortex-m4"), _interpreter(data, "cortex-m4", emulate=False)
    for seed in range(3):
        inputs = random_inputs(host, seed)
        expected = _run(host, inputs)
        assert np.array_equal(expected[0], inputs[1])
        _assert_outputs_equal(expected, _run(mcu, inputs), seed)
        _assert_host_entries(mcu, {(0, 3)}, {(0, 3)}, "its handle (tensor 'h') is known only at run time")
    path = tmp_path / "runtime_handle.tflite"
    path.write_bytes(data)
    assert main(["profile", str(path), "--target", "cortex-m4", "--json"]) == 3      # cannot tell
    report = json.loads(capsys.readouterr().out)
    assert report["complete"] is False and [(op["index"], op["op"]) for op in report["ops_not_counted"]] == \
        [(3, "ASSIGN_VARIABLE")]
    assert "its handle (tensor 'h') is known only at run time" in report["ops_not_counted"][0]["reason"]
    assert report["runtime"]["instructions"] > 0 and report["runtime_not_measured"] is None
    assert report["total_instructions"] == sum(op["instructions"] for op in report["ops"]) + \
        report["runtime"]["instructions"]
    assert main(["profile", str(path), "--target", "cortex-m4"]) == 3
    assert "INCOMPLETE: the total leaves out 3 ASSIGN_VARIABLE" in capsys.readouterr().out
    mcu.close()
    host.close()


def _with_atan(model: bytes, core: str, emulate: bool) -> Interpreter:
    resolver = builtin_op_resolver()
    resolver.add_custom("ATAN", atan_registration({}))
    return Interpreter.from_bytes(model, target=core, emulate=emulate, op_resolver=resolver)


def test_a_custom_python_operator_runs_on_the_host_inside_the_plan():
    # no C kernel for it: a host entry; RELU after it reads what ATAN's host kernel wrote
    mcu, host = _with_atan(atan_model(), "cortex-m4", True), _with_atan(atan_model(), "cortex-m4", False)
    for seed in range(3):
        inputs = random_inputs(host, seed)
        _assert_outputs_equal(_run(host, inputs), _run(mcu, inputs), seed)
        _assert_host_entries(mcu, {(0, 0)}, {(0, 0)}, "no cmsis-nn C kernel")
        assert mcu.last_run[1].op == "RELU" and mcu.last_run[1].instructions > 0
    report = profile_report(mcu, mcu.last_run, 100_000_000, mcu.executor.emulation_seconds,
                            runtime=runtime_fields(mcu.executor))
    assert report["complete"] is False
    assert report["ops_not_counted"] == [{"index": 0, "op": "ATAN", "reason": "ran on a host kernel (no cmsis-nn "
                                                                            "C kernel for float32)"}]
    assert report["runtime"]["instructions"] == mcu.executor.last_runtime.instructions > 0
    assert report["total_instructions"] == mcu.last_run[1].instructions + report["runtime"]["instructions"]
    mcu.close()
    host.close()


def atan_in_a_subgraph(op: str) -> bytes:
    """The custom ATAN in a subgraph: IF's then branch (else RELU), or WHILE's body, run three
    times (a counter from 0 while below 3)."""
    b = ModelBuilder()
    x = b.add_tensor("x", [1, 8], "FLOAT32")
    y = b.add_tensor("y", [1, 8], "FLOAT32")
    if op == "IF":
        cond = b.add_tensor("cond", [1], "BOOL")
        for body in ("ATAN", "RELU"):
            sg = b.add_subgraph(body.lower())
            a, c = (b.add_tensor(n, [1, 8], "FLOAT32", subgraph=sg) for n in ("a", "c"))
            b.add_operator(body, [a], [c], subgraph=sg)
            b.subgraphs[sg - 1].inputs, b.subgraphs[sg - 1].outputs = [a], [c]
        b.add_operator("IF", [cond, x], [y], options={"then_subgraph_index": 1, "else_subgraph_index": 2})
        b.inputs, b.outputs = [cond, x], [y]
        return b.build()
    start = b.add_tensor("start", [1], "INT32", data=np.zeros(1, np.int32))
    count = b.add_tensor("count", [1], "INT32")
    cond = b.add_subgraph("cond")
    i, a = b.add_tensor("i", [1], "INT32", subgraph=cond), b.add_tensor("a", [1, 8], "FLOAT32", subgraph=cond)
    limit = b.add_tensor("limit", [1], "INT32", data=np.full(1, 3, np.int32), subgraph=cond)
    flag = b.add_tensor("flag", [1], "BOOL", subgraph=cond)
    b.add_operator("LESS", [i, limit], [flag], subgraph=cond)
    b.subgraphs[cond - 1].inputs, b.subgraphs[cond - 1].outputs = [i, a], [flag]
    body = b.add_subgraph("body")
    i, a = b.add_tensor("i", [1], "INT32", subgraph=body), b.add_tensor("a", [1, 8], "FLOAT32", subgraph=body)
    one = b.add_tensor("one", [1], "INT32", data=np.ones(1, np.int32), subgraph=body)
    i2, a2 = b.add_tensor("i2", [1], "INT32", subgraph=body), b.add_tensor("a2", [1, 8], "FLOAT32", subgraph=body)
    b.add_operator("ADD", [i, one], [i2], subgraph=body)
    b.add_operator("ATAN", [a], [a2], subgraph=body)
    b.subgraphs[body - 1].inputs, b.subgraphs[body - 1].outputs = [i, a], [i2, a2]
    b.add_operator("WHILE", [start, x], [count, y], options={"cond_subgraph_index": cond, "body_subgraph_index": body})
    b.inputs, b.outputs = [x], [y, count]
    return b.build()


@pytest.mark.parametrize("op", ["IF", "WHILE"])
def test_a_host_entry_inside_a_subgraph_runs_where_the_host_would(op):
    # the runtime traps from inside the branch or the loop body (three times), the operators
    # after it read what the host kernel wrote; the record and the profile name it by subgraph
    data = atan_in_a_subgraph(op)
    mcu, host = _with_atan(data, "cortex-m4", True), _with_atan(data, "cortex-m4", False)
    planned = {(1, 0)} if op == "IF" else {(2, 1)}
    rng = np.random.default_rng(4)
    for taken in (True, False, True):
        x = rng.uniform(-2, 2, (1, 8)).astype(np.float32)
        inputs = [np.array([taken]), x] if op == "IF" else [x]
        expected = _run(host, inputs)
        _assert_outputs_equal(expected, _run(mcu, inputs), taken)
        ran = planned if taken or op == "WHILE" else set()
        _assert_host_entries(mcu, planned, ran, "no cmsis-nn C kernel")
        assert [(r.subgraph, r.index, r.op, r.runs) for r in mcu.last_run] == \
            [(r.subgraph, r.index, r.op, r.runs) for r in host.last_run]
        if op == "WHILE":
            assert expected[1][0] == 3 and np.array_equal(expected[0], np.arctan(np.arctan(np.arctan(x))))
            assert next(r for r in mcu.last_run if r.op == "ATAN").runs == 3
        report = profile_report(mcu, mcu.last_run, 100_000_000, 0.0, runtime=runtime_fields(mcu.executor))
        assert [(op["subgraph"], op["index"], op["op"]) for op in report["ops_not_counted"]] == \
            [(*where, "ATAN") for where in ran]
        assert report["complete"] is (not ran)
    mcu.close()
    host.close()
