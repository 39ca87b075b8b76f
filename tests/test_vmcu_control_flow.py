"""Control flow and resource variables on the virtual MCU: outputs equal the host's, the
control-flow operators' copies are their cycles, and every loop iteration is counted."""
from __future__ import annotations

import json

import numpy as np
import pytest

from conftest import PROJECT_MODELS
from micro_rt import Interpreter
from micro_rt.cli import main
from test_control_flow import control_inputs

CONTROL = PROJECT_MODELS / "control_flow"


@pytest.mark.parametrize("name", ["if_flag_int8.tflite", "stream_state_int8.tflite"])
def test_mcu_outputs_equal_host_and_control_ops_cost_cycles(name):
    data = (CONTROL / name).read_bytes()
    host = Interpreter.from_bytes(data, target="cortex-m4")
    mcu = Interpreter.from_bytes(data, target="cortex-m4", kernels="cmsis-nn", emulate=True)
    rng = np.random.default_rng(3)
    for _ in range(4):
        inputs = control_inputs(host, rng)
        for it in (host, mcu):
            for i, x in enumerate(inputs):
                it.set_input(x, i)
            it.invoke()
        for k in range(host.num_outputs):
            assert np.array_equal(host.get_output(k), mcu.get_output(k))
    records = mcu.last_run
    assert all(r.on_mcu for r in records), [(r.subgraph, r.index, r.op) for r in records if not r.on_mcu]
    control = [r for r in records if r.op in ("IF", "READ_VARIABLE", "ASSIGN_VARIABLE")]
    assert control and all(r.cycles > 0 for r in control)
    assert any(r.subgraph > 0 for r in records) or name.startswith("stream")


def test_profile_counts_each_loop_iteration(capsys):
    """Every iteration's body operators are counted: the loop runs as many times as the flags
    have leading Trues, and the body's records say so."""
    path = str(CONTROL / "while_flags_int8.tflite")
    it = Interpreter.from_file(path, target="cortex-m4", kernels="cmsis-nn", emulate=True)
    for leading in (0, 3):
        flags = np.array([True] * leading + [False] * (6 - leading))
        it.set_input(flags, 0)
        it.set_input(np.zeros((1, 8), np.int8), 1)
        it.invoke()
        model = it.model
        body = next(op for op in model.main.operators if op.op_name == "WHILE").options["body_subgraph_index"]
        runs = {r.runs for r in it.last_run if r.subgraph == body}
        assert runs == ({leading} if leading else set())
    assert main(["profile", path, "--json"]) in (0, 3)
    report = json.loads(capsys.readouterr().out)
    assert any(op.get("subgraph") for op in report["ops"])
    loop = next(op for op in report["ops"] if op["op"] == "WHILE")
    inside = [op for op in report["ops"] if op["subgraph"]]       # every other subgraph runs in it
    assert loop["cycles"] > 0
    assert loop["cycles_with_subgraphs"] == loop["cycles"] + sum(op["cycles"] for op in inside)
    runtime = report["runtime"]["cycles"]                 # the device runtime between the operators
    assert report["total_cycles"] == sum(op["cycles"] for op in report["ops"]) + runtime   # counted once
