"""The custom-operator story: unresolved without registration, correct once registered,
flexbuffer options reaching init intact."""
from __future__ import annotations

import numpy as np
import pytest
from flatbuffers import flexbuffers

from micro_rt import Interpreter, KernelError, MutableOpResolver, Registration, UnsupportedOpError
from micro_rt import builtin_op_resolver
from micro_rt.builder import ModelBuilder


def atan_model(options: dict | None = None) -> bytes:
    b = ModelBuilder()
    x = b.add_tensor("x", [1, 8], "FLOAT32")
    y = b.add_tensor("y", [1, 8], "FLOAT32")
    z = b.add_tensor("z", [1, 8], "FLOAT32")
    b.add_operator("ATAN", [x], [y],
                   custom_options=flexbuffers.Dumps(options) if options is not None else b"")
    b.add_operator("RELU", [y], [z])
    b.inputs, b.outputs = [x], [z]
    return b.build()


def atan_registration(seen: dict) -> Registration:
    def init(ctx, buffer):
        options = flexbuffers.Loads(buffer) if buffer else {}
        seen["options"] = options
        ctx.allocate_persistent(16)          # op data, as a C kernel would keep it
        return {"offset": float(options.get("offset", 0.0))}

    def prepare(ctx, node):
        x, y = ctx.input(node, 0), ctx.output(node, 0)
        if x.dtype != np.float32 or y.shape != x.shape:
            raise KernelError(f"op {node.index} ATAN: needs float32 in and out of equal shape")
        seen["prepared"] = True

    def invoke(ctx, node):
        x = ctx.input(node, 0).data
        ctx.output(node, 0).data[...] = np.arctan(x + node.user_data["offset"])

    def free(ctx, user_data):
        seen["freed"] = user_data

    return Registration(init=init, prepare=prepare, invoke=invoke, free=free, name="ATAN")


def test_unregistered_custom_op_fails_with_tflite_wording():
    with pytest.raises(UnsupportedOpError) as info:
        Interpreter.from_bytes(atan_model())
    message = str(info.value)
    assert "Encountered unresolved custom op: ATAN." in message
    assert "RELU" in message                 # lists what is registered


def test_registered_custom_op_runs_with_options():
    seen: dict = {}
    resolver = builtin_op_resolver()
    resolver.add_custom("ATAN", atan_registration(seen))
    with Interpreter.from_bytes(atan_model({"offset": 0.5, "mode": "fast", "taps": [1, 2, 3]}),
                                op_resolver=resolver) as it:
        assert seen["options"] == {"offset": 0.5, "mode": "fast", "taps": [1, 2, 3]}
        assert seen["prepared"]
        x = np.linspace(-3, 3, 8, dtype=np.float32).reshape(1, 8)
        it.set_input(x, 0)
        it.invoke()
        np.testing.assert_allclose(it.get_output(0), np.maximum(np.arctan(x + 0.5), 0), rtol=1e-6)
        assert "freed" not in seen
    assert seen["freed"] == {"offset": 0.5}      # free got init's user data, at close


def test_custom_op_persistent_bytes_are_accounted():
    resolver = builtin_op_resolver()
    resolver.add_custom("ATAN", atan_registration({}))
    with_op_data = Interpreter.from_bytes(atan_model(), op_resolver=resolver, target="host64").plan
    resolver.add_custom("ATAN", Registration(invoke=lambda ctx, node: None))
    without = Interpreter.from_bytes(atan_model(), op_resolver=resolver, target="host64").plan
    assert with_op_data.tail_bytes - without.tail_bytes == 16


def test_only_explicitly_registered_ops_resolve():
    resolver = MutableOpResolver()
    resolver.add_custom("ATAN", atan_registration({}))
    with pytest.raises(UnsupportedOpError, match="RELU"):
        Interpreter.from_bytes(atan_model(), op_resolver=resolver)


def test_custom_op_version_range():
    resolver = builtin_op_resolver()
    resolver.add_custom("ATAN", atan_registration({}), version=1)
    b = ModelBuilder()
    x = b.add_tensor("x", [4], "FLOAT32")
    y = b.add_tensor("y", [4], "FLOAT32")
    b.add_operator("ATAN", [x], [y], custom_options=b"", version=3)
    b.inputs, b.outputs = [x], [y]
    with pytest.raises(UnsupportedOpError, match="version 3"):
        Interpreter.from_bytes(b.build(), op_resolver=resolver)


def test_kernel_prepare_error_names_the_op():
    resolver = builtin_op_resolver()
    resolver.add_custom("ATAN", atan_registration({}))
    b = ModelBuilder()
    x = b.add_tensor("x", [4], "INT8", scale=1.0)
    y = b.add_tensor("y", [4], "INT8", scale=1.0)
    b.add_operator("ATAN", [x], [y], custom_options=b"")
    b.inputs, b.outputs = [x], [y]
    with pytest.raises(KernelError, match="op 0 ATAN"):
        Interpreter.from_bytes(b.build(), op_resolver=resolver)


def test_custom_op_in_tflm_oracle_is_also_unresolved(oracle):
    """The oracle agrees: the same file does not load in TFLM without the op."""
    with pytest.raises(RuntimeError):
        oracle.interpreter(atan_model())
