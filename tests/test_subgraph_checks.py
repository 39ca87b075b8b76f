"""Control-flow graphs micro_rt refuses when it reads the model (TFLM would recurse forever or
copy between tensor lists of different lengths)."""
from __future__ import annotations

import numpy as np
import pytest

from micro_rt.builder import ModelBuilder
from micro_rt.errors import ModelError
from micro_rt.model import read_model


def while_model(cond: int, body: int, extra_subgraphs: int = 2) -> bytes:
    b = ModelBuilder()
    x = b.add_tensor("x", (1, 4), "FLOAT32")
    y = b.add_tensor("y", (1, 4), "FLOAT32")
    b.inputs, b.outputs = [x], [y]
    for n in range(extra_subgraphs):
        sg = b.add_subgraph(f"sg{n + 1}")
        t = b.add_tensor("a", (1, 4), "FLOAT32", subgraph=sg)
        flag = b.add_tensor("flag", (), "BOOL", data=np.array(False), subgraph=sg)
        b.subgraphs[sg - 1].inputs = [t]
        b.subgraphs[sg - 1].outputs = [flag] if n == 0 else [t]
    b.add_operator("WHILE", [x], [y], options={"cond_subgraph_index": cond, "body_subgraph_index": body})
    return b.build()


@pytest.mark.parametrize("cond, body, words", [
    (1, 5, "body_subgraph_index 5 is out of range (the model has 3 subgraphs)"),
    (0, 2, "cond_subgraph_index 0 is its own subgraph"),
    (1, -1, "body_subgraph_index -1 is out of range"),
    (1, 0, "body_subgraph_index 0 is its own subgraph: it would run itself forever"),
])
def test_while_with_bad_subgraph_index_is_refused(cond, body, words):
    with pytest.raises(ModelError, match=words.replace("(", r"\(").replace(")", r"\)")):
        read_model(while_model(cond, body))


def test_cycle_of_call_once_is_refused():
    b = ModelBuilder()
    x = b.add_tensor("x", (1,), "FLOAT32")
    b.inputs, b.outputs = [x], [x]
    one, two = b.add_subgraph("one"), b.add_subgraph("two")
    b.add_operator("CALL_ONCE", [], [], options={"init_subgraph_index": one})
    b.add_operator("CALL_ONCE", [], [], options={"init_subgraph_index": two}, subgraph=one)
    b.add_operator("CALL_ONCE", [], [], options={"init_subgraph_index": one}, subgraph=two)
    with pytest.raises(ModelError, match="cycle") as e:
        read_model(b.build())
    assert "subgraph 1 operator 0 (CALL_ONCE) runs subgraph 2" in str(e.value)
    assert "subgraph 2 operator 0 (CALL_ONCE) runs subgraph 1" in str(e.value)


def test_while_whose_lists_do_not_pair_up_is_refused():
    b = ModelBuilder()
    x = b.add_tensor("x", (1, 4), "FLOAT32")
    y = b.add_tensor("y", (1, 4), "FLOAT32")
    b.inputs, b.outputs = [x], [y]
    cond = b.add_subgraph("cond")
    a = b.add_tensor("a", (1, 4), "FLOAT32", subgraph=cond)
    c = b.add_tensor("c", (1, 4), "FLOAT32", subgraph=cond)
    b.subgraphs[0].inputs, b.subgraphs[0].outputs = [a, c], [a]
    b.add_operator("WHILE", [x], [y], options={"cond_subgraph_index": 1, "body_subgraph_index": 1})
    with pytest.raises(ModelError, match="input count is 1, but subgraph 1 .* has 2 inputs"):
        read_model(b.build())


def test_if_copying_between_tensors_of_different_sizes_fails_the_invoke(oracle):
    """TFLM copies whole tensors between an IF and its branch and fails the invoke when the
    byte sizes differ; micro_rt too, naming both tensors."""
    from micro_rt import Interpreter
    from micro_rt.errors import KernelError
    b = ModelBuilder()
    cond = b.add_tensor("cond", (1,), "BOOL")
    x = b.add_tensor("x", (1, 8), "FLOAT32")
    y = b.add_tensor("y", (1, 8), "FLOAT32")
    b.inputs, b.outputs = [cond, x], [y]
    branch = b.add_subgraph("branch")
    a = b.add_tensor("a", (1, 4), "FLOAT32", subgraph=branch)
    b.subgraphs[0].inputs = b.subgraphs[0].outputs = [a]
    b.add_operator("IF", [cond, x], [y], options={"then_subgraph_index": 1, "else_subgraph_index": 1})
    data = b.build()
    inputs = [np.array([True]), np.zeros((1, 8), np.float32)]
    theirs = oracle.interpreter(data, 1 << 16)            # TFLM allocates it ...
    with pytest.raises(RuntimeError, match="Node IF .* failed to invoke"):
        oracle.invoke(theirs, inputs)                    # ... and fails the invoke
    it = Interpreter.from_bytes(data, target="host64")
    for i, value in enumerate(inputs):
        it.set_input(value, i)
    with pytest.raises(KernelError, match=r"cannot copy tensor 1 \('x'\) \(32 bytes\) to tensor 0 \('a'\) "
                                          r"\(16 bytes\)"):
        it.invoke()
