"""The builder-made models shipped in models/: reproducible, and doing what they are for."""
from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from conftest import PROJECT_MODELS
from micro_rt import Interpreter, UnsupportedOpError, builtin_op_resolver
from test_custom_ops import atan_registration

spec = importlib.util.spec_from_file_location("make_builder_models", PROJECT_MODELS / "make_builder_models.py")
make = importlib.util.module_from_spec(spec)
spec.loader.exec_module(make)


@pytest.mark.parametrize("name", sorted(make.MODELS))
def test_shipped_file_is_what_the_script_builds(name):
    assert (PROJECT_MODELS / name).read_bytes() == make.MODELS[name]()


def test_custom_atan_file():
    path = PROJECT_MODELS / "custom_atan.tflite"
    with pytest.raises(UnsupportedOpError, match="Encountered unresolved custom op: ATAN."):
        Interpreter.from_file(path)
    seen: dict = {}
    resolver = builtin_op_resolver()
    resolver.add_custom("ATAN", atan_registration(seen))
    it = Interpreter.from_file(path, op_resolver=resolver)
    assert seen["options"] == {"offset": 0.5, "taps": [1, 2, 3]}
    x = np.linspace(-2, 2, 8, dtype=np.float32).reshape(1, 8)
    it.set_input(x, 0)
    it.invoke()
    np.testing.assert_allclose(it.get_output(0), np.maximum(np.arctan(x + 0.5), 0), rtol=1e-6)


def test_offline_plan_file(oracle):
    data = (PROJECT_MODELS / "offline_plan_chain.tflite").read_bytes()
    plan = Interpreter.from_bytes(data, target="host64").plan
    assert [b.offset for b in plan.buffers] == [0, 256, 512, 768]
    assert oracle.allocations(data, 1 << 16)["head"] == plan.head_bytes == 1024


def test_odd_lifetimes_file(oracle):
    data = (PROJECT_MODELS / "odd_lifetimes_int8.tflite").read_bytes()
    plan = Interpreter.from_bytes(data, target="host64").plan
    a = next(b for b in plan.buffers if b.name == "a")
    assert (a.first_use, a.last_use) == (1, 5)
    theirs = oracle.allocations(data, 1 << 16)
    assert (theirs["head"], theirs["tail"]) == (plan.head_bytes, plan.tail_bytes)
    assert not oracle.check_model(data, seeds=range(5))["failures"]
