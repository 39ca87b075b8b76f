"""A kernel is one registration (issue 23): the host kernel's Registration says what its Prepare
costs the arena beyond its requests (its temporary tensors), TFLM's CMSIS-NN glue is a
registration of its own made from the reference one (micro_rt/flavours.py), and the virtual
MCU's kernel table is the families' own tables put together (cortexm/ops/registry.py)."""
from __future__ import annotations

import importlib

import pytest

from micro_rt import Interpreter
from micro_rt.flavours import CMSIS_NN_GLUE, FlavourRegistrations
from micro_rt.kernel_api import OpDataInit, Registration
from micro_rt.kernel_temps import prepare_accesses
from micro_rt.kernels import conv
from micro_rt.resolver import KERNEL_MODULES, builtin_op_resolver


def _shipped() -> list[tuple[str, Registration]]:
    rows = []
    for name in KERNEL_MODULES:
        module = importlib.import_module(f"micro_rt.kernels.{name}")
        rows += [(op, reg) for op, reg, _ in getattr(module, "BUILTINS", ())]
        rows += [(op, reg) for op, reg, _ in getattr(module, "CUSTOMS", ())]
    return rows


def test_every_shipped_kernel_says_its_prepares_temporary_tensors():
    """A kernel whose registration left `temps` out would count no temporary tensors at all,
    silently: every kernel micro_rt ships states them (an empty string for a Prepare that makes
    none), each word a valid slot."""
    rows = _shipped()
    assert len(rows) > 100
    for op, reg in rows:
        assert reg.temps is not None, op
        if isinstance(reg.temps, str):
            for word in reg.temps.replace("|", " ").split():
                assert word[0] in "io" and (word[1:] == "*" or word[1:].isdigit()), (op, word)


def test_a_rule_is_read_in_call_order_and_skips_absent_tensors():
    class Op:
        inputs, outputs = (4, -1, 6), (9,)
    assert prepare_accesses(Op(), [], "o0 i0 i1 | i2 i* i5") == [9, 4, 6, 4, 6]
    assert prepare_accesses(Op(), [], None) is None
    assert prepare_accesses(Op(), [], lambda op, tensors: "i2 o0") == [6, 9]


def test_the_cmsis_nn_glue_is_a_registration_of_its_own():
    flavour = FlavourRegistrations("cmsis-nn")
    reference = builtin_op_resolver().find("CONV_2D", False, 1)
    assert reference is conv.CONV_2D
    glue = flavour.of(reference, is_custom=False)
    assert glue is not reference and glue.invoke is reference.invoke
    assert isinstance(glue.init, OpDataInit) and glue.init.struct == "OpDataConvCmsis"
    assert isinstance(reference.init, OpDataInit) and reference.init.struct == "OpDataConv"
    assert glue.temps == CMSIS_NN_GLUE["CONV_2D"].temps != reference.temps
    # the reference flavour, and a custom operator, keep what the resolver found
    assert FlavourRegistrations("reference").of(reference, is_custom=False) is reference
    assert flavour.of(reference, is_custom=True) is reference
    for op in CMSIS_NN_GLUE:      # every row wraps a shipped kernel (made at construction)
        assert flavour.of(builtin_op_resolver().find(op, False, 1), False).name == op


def _conv_model() -> bytes:
    from devtools.op_models.type_cases import _layer
    return _layer("CONV_2D", "INT8", "INT8", "INT32")


def test_a_kernel_a_user_registers_is_theirs_under_either_flavour():
    """TFLM runs the registration the resolver holds: the CMSIS-NN glue's op data and scratch
    are the glue's, not added to a kernel a user registered for CONV_2D."""
    data = _conv_model()
    shipped = Interpreter.from_bytes(data, target="cortex-m4", kernels="cmsis-nn")
    reference = Interpreter.from_bytes(data, target="cortex-m4", kernels="reference")
    assert shipped.arena_used_bytes() > reference.arena_used_bytes()     # the glue's struct and im2col
    mine = builtin_op_resolver()
    mine.add_builtin("CONV_2D", Registration(invoke=conv.CONV_2D.invoke, prepare=conv.CONV_2D.prepare,
                                             init=conv.CONV_2D.init, temps=conv.CONV_2D.temps), 1, 8)
    users = Interpreter.from_bytes(data, target="cortex-m4", kernels="cmsis-nn", op_resolver=mine)
    assert users.arena_used_bytes() == reference.arena_used_bytes()


def test_the_mcu_kernel_table_is_the_families_tables():
    from micro_rt.cortexm import ops
    from micro_rt.cortexm.ops import nn, registry, reference
    assert ops.KERNELS[("CONV_2D", "int8")] is nn.KERNELS[("CONV_2D", "int8")]
    assert ops.REFERENCE_KERNELS is reference.REFERENCE_KERNELS
    assert len(ops.KERNELS) > 200
    kernel = registry.OpKernel(runner=lambda c: [])
    with pytest.raises(ValueError, match=r"CONV_2D \(int8\) is registered by two families"):
        registry.merge({("CONV_2D", "int8"): kernel}, {("CONV_2D", "int8"): kernel})
