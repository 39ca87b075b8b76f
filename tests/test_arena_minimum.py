"""The reported minimum arena is tflite-micro's true minimum: TFLM allocates the model in
`arena_required_bytes()` and fails 16 bytes below it (probed in child processes, see
oracle_minimum.py), and a too-small arena's error names that same size."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import (PROJECT_MODELS, SHARED_MODELS, has_custom_ops, missing, oracle_models,
                      shared_model, shared_models)
from kernel_cases import op_submodel
from micro_rt import AllocationError, Interpreter
from micro_rt.builder import ModelBuilder
from micro_rt.model import read_model
from oracle_minimum import minimum_mismatches

SHARED_BUILTIN_ONLY = ["hello_world_int8.tflite", "hello_world_float.tflite",
                       "micro_speech_quantized.tflite", "micro_speech_lstm.tflite",
                       "network_tester_model.tflite", "test_conv_model.tflite",
                       "simple_add_model.tflite", "person_detect.tflite",
                       "mobilenet_v2_quantized_1x3x224x224.tflite", "keyword_scrambled.tflite",
                       "keyword_scrambled_8bit.tflite", "trained_lstm.tflite",
                       "trained_lstm_int8.tflite", "dtln_noise_suppression.tflite"]


def _minimum(data: bytes) -> int:
    it = Interpreter.from_bytes(data, target="host64", plan_only=True)
    assert not it.unresolved, it.unresolved
    return it.arena_required_bytes()


def _check(named_models: dict) -> None:
    cases = [(name, data, _minimum(data)) for name, data in named_models.items()]
    assert minimum_mismatches(cases) == []


# ---- whole models -----------------------------------------------------------------------------

def _available_models() -> dict:
    """Project and shared models with builtin operators only (a custom operator's op data is
    its kernel's, unknown to micro_rt; the oracle cannot run one either)."""
    paths = oracle_models("*.tflite")
    paths += [p for p in (SHARED_MODELS / n for n in SHARED_BUILTIN_ONLY) if p.exists()]
    return {p.name: p.read_bytes() for p in paths if not has_custom_ops(p)}


def test_every_model_minimum_is_tflite_micros(oracle):
    models = _available_models()
    assert len(models) >= len(oracle_models("*.tflite"))
    _check(models)


def test_every_operator_alone_minimum_is_tflite_micros(oracle):
    """Each distinct operator of every model, alone in a model that keeps all the original
    tensors (most untouched by the one operator), for every operator micro_rt has a kernel
    for: temp tensors in prepare, builtin params, op data, scratch and untouched tensors."""
    cases, seen = {}, set()
    for name, data in _available_models().items():
        sg = read_model(data).main
        for op in sg.operators:
            t = sg.tensors
            key = (op.op_name, tuple((t[i].type_name, t[i].quantization is not None)
                                     if i >= 0 else None for i in (*op.inputs, *op.outputs)))
            if key not in seen:
                seen.add(key)
                cases[f"{name} op {op.index} {op.op_name}"] = op_submodel(data, op.index)
    assert len(cases) > 60
    _check(cases)


# ---- issue 9, item 1: the too-small error names the real minimum ----------------------------

@pytest.mark.parametrize("path", [PROJECT_MODELS / "mobilenet_tiny_int8.tflite",
                                  SHARED_MODELS / "person_detect.tflite"], ids=lambda p: p.name)
def test_too_small_arena_names_the_real_minimum(path):
    """A MobileNet-like model with a small arena used to name the bytes needed when the first
    allocation failed (below the minimum); following that advice failed again, up to 8 times."""
    if not path.exists():
        missing(f"shared model {path.name} not available (needs ../shared/models)")
    data = path.read_bytes()
    for target in ("host64", "cortex-m4"):
        smallest = Interpreter.from_bytes(data, target=target).arena_required_bytes()
        for size in (0, 1000, smallest // 3, smallest // 2, smallest - 100, smallest - 16):
            with pytest.raises(AllocationError) as info:
                Interpreter.from_bytes(data, target=target, arena_size=size)
            message = str(info.value)
            assert f"Give at least {smallest} bytes" in message, (size, message)
            assert "head" in message and "tail" in message
        Interpreter.from_bytes(data, target=target, arena_size=smallest)   # the advice works


def test_too_small_error_shows_the_temp_peak():
    """hello_world's peak is the planner's temporary memory, above head + tail."""
    data = shared_model("hello_world_int8.tflite").read_bytes()
    smallest = Interpreter.from_bytes(data, target="host64").arena_required_bytes()
    with pytest.raises(AllocationError, match=r"\+ temp \d+ \+ tail") as info:
        Interpreter.from_bytes(data, target="host64", arena_size=smallest - 16)
    assert f"at least {smallest}" in str(info.value)


def test_named_minimum_is_tflite_micros(oracle):
    data = (PROJECT_MODELS / "mobilenet_tiny_int8.tflite").read_bytes()
    with pytest.raises(AllocationError, match=r"Give at least (\d+)") as info:
        Interpreter.from_bytes(data, target="host64", arena_size=5000)
    named = int(str(info.value).split("Give at least ")[1].split()[0])
    assert minimum_mismatches([("mobilenet_tiny_int8", data, named)]) == []


# ---- issue 9, item 2: temporary TfLiteTensors while preparing ----------------------------------

def _binary(op: str, same: bool, type_name: str, shape=(1, 16)) -> bytes:
    b = ModelBuilder()
    q = dict(scale=0.1, zero_point=3) if type_name == "INT8" else {}
    x = b.add_tensor("x", shape, type_name, **q)
    y = x if same else b.add_tensor("y", shape, type_name, **q)
    out = b.add_tensor("out", shape, type_name, **q)
    b.add_operator(op, [x, y], [out])
    b.inputs, b.outputs = ([x] if same else [x, y]), [out]
    return b.build()


def test_one_tensor_feeding_both_inputs(oracle):
    """ADD(x, x): TFLM's prepare makes a temporary TfLiteTensor per input it reads, so the same
    tensor twice costs twice (1152 bytes here, not 1024)."""
    models = {f"{op}({'x, x' if same else 'x, y'}) {t}": _binary(op, same, t)
              for op in ("ADD", "MUL", "SUB") for same in (True, False)
              for t in ("INT8", "FLOAT32")}
    assert _minimum(models["ADD(x, x) INT8"]) == 1152
    _check(models)


def test_per_channel_temp_tensors(oracle):
    """A conv's prepare reads its per-channel filter and bias (CalculateOpDataConv reads them
    again): each temporary copy carries a zero point per channel, and with 256 channels on a
    1x1 image those copies are the arena's peak."""
    b = ModelBuilder()
    rng = np.random.default_rng(0)
    channels = 256
    x = b.add_tensor("x", [1, 1, 1, 8], "INT8", scale=0.05, zero_point=-2)
    w = b.add_tensor("w", [channels, 1, 1, 8], "INT8", data=rng.integers(-20, 20, (channels, 1, 1, 8)),
                     scale=list(np.linspace(0.01, 0.03, channels)), zero_point=[0] * channels)
    bias = b.add_tensor("b", [channels], "INT32", data=rng.integers(-50, 50, channels),
                        scale=list(np.linspace(0.0005, 0.0015, channels)), zero_point=[0] * channels)
    y = b.add_tensor("y", [1, 1, 1, channels], "INT8", scale=0.1, zero_point=1)
    b.add_operator("CONV_2D", [x, w, bias], [y], options={"padding": "SAME", "stride_w": 1,
                                                         "stride_h": 1})
    b.inputs, b.outputs = [x], [y]
    data = b.build()
    plan = Interpreter.from_bytes(data, target="host64").plan
    assert plan.required_bytes > plan.total_bytes + 2000       # the temp copies' peak
    _check({f"conv {channels} channels": data})


# ---- issue 9, item 3: tensors no operator touches ---------------------------------------------

def _with_untouched(data: bytes, *shapes) -> bytes:
    b = ModelBuilder.from_model(read_model(data))
    for k, shape in enumerate(shapes):
        b.add_tensor(f"untouched_{k}", shape, "INT8", scale=0.5, zero_point=0)
    return b.build()


def _chain() -> bytes:
    b = ModelBuilder()
    t = [b.add_tensor(f"t{i}", [1, 64], "FLOAT32") for i in range(4)]
    for i in range(3):
        b.add_operator("RELU", [t[i]], [t[i + 1]])
    b.inputs, b.outputs = [t[0]], [t[3]]
    return b.build()


def test_untouched_tensors_are_planned_like_tflm(oracle):
    plain = _chain()
    models = {"chain": plain, "chain + 1 untouched": _with_untouched(plain, [1, 4000]),
              "chain + 2 untouched": _with_untouched(plain, [1, 300], [1, 200]),
              "chain + small untouched": _with_untouched(plain, [1, 16])}
    for name, data in models.items():
        plan = Interpreter.from_bytes(data, target="host64").plan
        assert plan.head_bytes == oracle.allocations(data, 1 << 16)["head"], name
    # two untouched tensors live "together" (TFLM's lifetime -1..-1) but with nothing else
    assert Interpreter.from_bytes(models["chain + 2 untouched"], target="host64").plan.head_bytes == 512
    _check(models)


@pytest.mark.parametrize("name", shared_models(["micro_speech_quantized.tflite"]))
def test_edited_micro_speech_with_an_untouched_tensor(name, oracle):
    """micro_speech with one extra tensor no operator reads or writes: TFLM's head grows from
    5968 to the tensor's 8192 bytes (it shares memory with nothing that is ever live)."""
    data = _with_untouched((SHARED_MODELS / name).read_bytes(), [1, 8192])
    plan = Interpreter.from_bytes(data, target="host64").plan
    assert plan.head_bytes == 8192 == oracle.allocations(data, 1 << 17)["head"]
    _check({"micro_speech + untouched": data})
