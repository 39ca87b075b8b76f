"""Issue 12's "done means": every builtin operator tflite-micro's resolver registers runs in
micro_rt on the host and, for every tensor type micro_rt's host kernel accepts, as a C kernel on
the virtual MCU (the profile never falls back to the host). Only the operators of the control
flow / resource variable issue are left out, named in LATER.

Which builtins the oracle registers is asked of the oracle itself, not written down: a model of
two operators, the one asked about and then one the oracle is known not to register, fails
allocation naming the first operator it has no kernel for, before any kernel's Prepare runs.
"""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from conftest import missing, oracle_available
from devtools.op_models.type_cases import type_cases
from micro_rt import Interpreter, schema
from micro_rt.builder import ModelBuilder
from micro_rt.errors import KernelError, UnsupportedOpError
from micro_rt.resolver import builtin_op_resolver

# Operators issue 13 adds (control flow, resource variables).
LATER = {"IF", "WHILE", "CALL_ONCE", "VAR_HANDLE", "READ_VARIABLE", "ASSIGN_VARIABLE"}
SENTINEL = "LSH_PROJECTION"          # a builtin tflite-micro does not register

_PROBE = r"""
import json, os, sys, tempfile
from tflite_micro import runtime
found = {}
log = tempfile.TemporaryFile()
saved = os.dup(2)
for name, data in json.load(sys.stdin):
    log.seek(0); log.truncate()
    os.dup2(log.fileno(), 2)                  # MicroPrintf writes the reason to fd 2
    try:
        runtime.Interpreter.from_bytes(bytes.fromhex(data), arena_size=1 << 20)
        verdict = "allocated"
    except Exception as e:
        verdict = str(e)
    os.dup2(saved, 2)
    log.seek(0)
    found[name] = log.read().decode(errors="replace") + verdict
print(json.dumps(found))
"""


def _two_op_model(op: str) -> bytes:
    b = ModelBuilder()
    x, y, z = (b.add_tensor(n, (1, 4), "FLOAT32") for n in "xyz")
    b.add_operator(op, [x], [y])
    b.add_operator(SENTINEL, [y], [z])
    b.inputs, b.outputs = [x], [z]
    return b.build()


@pytest.fixture(scope="module")
def oracle_registered() -> set[str]:
    if not oracle_available():
        missing("tflite-micro oracle not installed (pip install -e '.[test]')")
    builtins = [n for n in schema.BUILTIN_OPS if n not in ("CUSTOM", "PLACEHOLDER_FOR_GREATER_OP_CODES")]
    probes = [(n, _two_op_model(n).hex()) for n in builtins]
    done = subprocess.run([sys.executable, "-c", _PROBE], input=json.dumps(probes),
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    verdicts = json.loads(done.stdout)
    registered = set()
    for name, verdict in verdicts.items():
        if name == SENTINEL or name in LATER:
            continue
        # Registered: the oracle went past it and stopped at the sentinel.
        if f"opcode '{SENTINEL}'" in verdict:
            registered.add(name)
        else:
            assert f"opcode '{name}'" in verdict, f"{name}: unexpected oracle answer {verdict!r}"
    assert {"CONV_2D", "FULLY_CONNECTED", "SOFTMAX"} <= registered      # the probe works
    return registered


def test_every_builtin_the_oracle_registers_has_a_host_kernel(oracle_registered):
    resolver = builtin_op_resolver()
    missing = []
    for name in sorted(oracle_registered - LATER):
        try:
            resolver.find(name, False, 1, 0)
        except UnsupportedOpError:
            missing.append(name)
    assert missing == [], f"tflite-micro registers {len(missing)} builtins micro_rt has no kernel for: {missing}"


def _refusal(data: bytes) -> str:
    """Why the host refuses the model at prepare, as TFLM does ("" when it accepts it)."""
    try:
        Interpreter.from_bytes(data, target="cortex-m4", kernels="cmsis-nn", plan_only=True).close()
    except (KernelError, UnsupportedOpError) as e:
        return str(e)
    return ""


# Types that still run on a host kernel on the MCU (issue 12 is open for them): strict, so the
# test fails once a C kernel lands and the line must go.
KNOWN_GAPS: dict[str, str] = {}


def _split_cases() -> tuple[list, list]:
    """The type cases, split at collection into those the host prepares (run on the MCU) and
    those it refuses (checked as refusals): no case passes by returning early."""
    accepted, refused = [], []
    for label, op, data in type_cases():
        if op in LATER:
            continue
        why = _refusal(data)
        if why:
            refused.append(pytest.param(label, op, why, id=label))
        else:
            accepted.append(pytest.param(label, op, data, id=label,
                                         marks=[pytest.mark.xfail(strict=True, reason=KNOWN_GAPS[label])]
                                         if label in KNOWN_GAPS else []))
    return accepted, refused


ACCEPTED_CASES, REFUSED_CASES = _split_cases()


def run_on_mcu(data: bytes, kernels: str):
    """Invoke the model once on the virtual MCU with seeded inputs: its run records, or None
    when the kernel refused the data at invoke, after checking the host kernel refuses the
    same inputs with the same error (as TFLM's one kernel would)."""
    from micro_rt.inputs import random_inputs
    with Interpreter.from_bytes(data, target="cortex-m4", kernels=kernels, emulate=True) as it:
        inputs = [np.asarray(x) for x in random_inputs(it, 0)]
        for i, x in enumerate(inputs):
            it.set_input(x, i)
        try:
            it.invoke()
        except KernelError as on_mcu:
            with Interpreter.from_bytes(data, target="cortex-m4", kernels=kernels) as host:
                for i, x in enumerate(inputs):
                    host.set_input(x, i)
                with pytest.raises(KernelError) as on_host:
                    host.invoke()
            assert str(on_host.value) == str(on_mcu)
            return None
        return it.last_run, set(it.executor.functions_used) if it.executor else set()


@pytest.mark.parametrize("label,op,data", ACCEPTED_CASES)
def test_every_type_the_host_runs_runs_as_a_c_kernel(label, op, data):
    """A single-op model of each type combination micro_rt's host kernel accepts runs every
    operator on the virtual MCU (M4, micro_rt's CMSIS-NN-style C kernels)."""
    ran = run_on_mcu(data, "cmsis-nn")
    if ran is not None:
        on_host = [f"{r.index} {r.op}" for r in ran[0] if not r.on_mcu]
        assert on_host == [], f"{label}: ran on a host kernel (no C kernel): {on_host}"


@pytest.mark.parametrize("label,op,why", REFUSED_CASES)
def test_every_type_the_host_refuses_is_refused_naming_the_operator(label, op, why):
    """The type combinations the host kernel refuses at prepare (as TFLM's Prepare does) are
    refused with an error that names the operator."""
    assert op in why, f"{label}: the refusal does not name {op}: {why}"


# TFLM's own custom operators (the resolver registers them by name) and the element types of
# their inputs that TFLM's kernels run; `ethos-u` is left out: micro_rt accounts its arena but
# does not simulate the NPU (profile answers "cannot tell"). Running them is tested per family
# (test_vmcu_signal.py, test_vmcu_custom.py); this holds the list of C kernels complete.
CUSTOM_TYPES = {
    "SignalWindow": ["int16"], "SignalFftAutoScale": ["int16"], "SignalEnergy": ["int16"],
    "SignalRfft": ["int16", "int32", "float32"], "SignalIrfft": ["int16", "int32", "float32"],
    "SignalFilterBank": ["uint32"], "SignalFilterBankSquareRoot": ["uint64"],
    "SignalFilterBankSpectralSubtraction": ["uint32"], "SignalPCAN": ["uint32"],
    "SignalFilterBankLog": ["uint32"], "SignalDelay": ["int16"], "SignalFramer": ["int16"],
    "SignalStacker": ["int16"], "SignalOverlapAdd": ["int16", "float32"],
    "TFLite_Detection_PostProcess": ["float32"], "CIRCULAR_BUFFER": ["int8"],
}


def test_every_custom_op_tflm_registers_has_c_kernels():
    import importlib

    from micro_rt.cortexm import ops
    from micro_rt.resolver import KERNEL_MODULES
    registered = {name for module in KERNEL_MODULES
                  for name, _, _ in getattr(importlib.import_module(f"micro_rt.kernels.{module}"), "CUSTOMS", [])}
    assert registered - {"ethos-u"} == set(CUSTOM_TYPES)
    holes = [f"{op} {t}" for op, types in CUSTOM_TYPES.items() for t in types if not ops.supported(op, t)]
    assert holes == [], f"custom operators that would run on a host kernel on the MCU: {holes}"
