"""`run --check` against tflite-micro on several input sets, not only saturated ones, with the
tolerance it applied stated; a model the oracle refuses is a one-line error with TFLM's reason."""
from __future__ import annotations

import json

import numpy as np
import pytest

from cli_runner import cast_from_uint8, run_cli
from conftest import PROJECT_MODELS
from micro_rt import Interpreter
from micro_rt.errors import MicroRtError, OracleError
from micro_rt.inputs import random_inputs

INT8 = str(PROJECT_MODELS / "mobilenet_tiny_int8.tflite")
F32 = str(PROJECT_MODELS / "activations_f32.tflite")


def test_check_uses_several_input_sets_of_two_kinds(capsys, oracle):
    code, out, _ = run_cli(capsys, "run", INT8, "--seed", "7", "--check", "--json")
    check = json.loads(out)["check"]
    assert code == 0 and check["equal"] is True
    assert [s["seed"] for s in check["input_sets"]] == [7, 8, 9, 10, 11]
    assert {s["distribution"] for s in check["input_sets"]} == {"uniform", "normal"}
    (output,) = check["outputs"]
    assert output["tolerance"] == "exact" and output["input_sets"] == 5 and output["bit_exact"]
    code, out, _ = run_cli(capsys, "run", INT8, "--check", "--seeds", "2", "--json")
    assert len(json.loads(out)["check"]["input_sets"]) == 2


def test_check_text_states_the_tolerance(capsys, oracle):
    code, out, _ = run_cli(capsys, "run", INT8, "--check")
    assert code == 0 and "5 input sets" in out
    assert "check output 0 (int8, required: exact): bit-exact with tflite-micro on 5 input sets" in out
    code, out, _ = run_cli(capsys, "run", F32, "--check", "--seeds", "3")
    assert code == 0 and f"required: max {oracle.FLOAT_ULP_BOUND} ulp" in out


def test_check_states_the_float_bound_and_what_was_seen(capsys, oracle):
    code, out, _ = run_cli(capsys, "run", F32, "--check", "--seeds", "4", "--kernels", "cmsis-nn", "--json")
    check = json.loads(out)["check"]
    assert code == 0 and check["equal"]
    for o in check["outputs"]:
        assert o["tolerance"] == f"max {oracle.FLOAT_ULP_BOUND} ulp"
        assert o["max_ulp"] is not None and o["max_ulp"] <= oracle.FLOAT_ULP_BOUND
        assert o["bit_exact"] == (o["max_ulp"] == 0 and o["differing_elements"] == 0)


def test_a_difference_in_a_later_input_set_is_caught(capsys, oracle, monkeypatch):
    """One seed would not see it: micro_rt made wrong from the third invoke on."""
    calls = {"n": 0}
    original = Interpreter.get_output

    def off_by_one_later(self, index=0):
        value = original(self, index)
        return value + 1 if calls["n"] >= 3 else value
    original_invoke = Interpreter.invoke

    def counting_invoke(self, *args, **kwargs):
        calls["n"] += 1
        return original_invoke(self, *args, **kwargs)
    monkeypatch.setattr(Interpreter, "get_output", off_by_one_later)
    monkeypatch.setattr(Interpreter, "invoke", counting_invoke)
    code, out, _ = run_cli(capsys, "run", INT8, "--check", "--json")
    (output,) = json.loads(out)["check"]["outputs"]
    assert code == 1 and output["equal"] is False and output["first_failing_set"] is not None
    assert "DIFFERS" in output["verdict"] and "exact" in output["verdict"]


def test_normal_inputs_are_mostly_not_saturated(oracle):
    # zero points -128 (an input in [0, 1], at the edge of the range), -3 and 0
    for name in ("mobilenet_tiny_int8.tflite", "odd_lifetimes_int8.tflite", "fully_connected_int8.tflite"):
        it = Interpreter.from_bytes((PROJECT_MODELS / name).read_bytes())
        zero_point = int(it.get_input_details(0)["quantization_parameters"]["zero_points"][0])
        for seed in range(5):
            (x,) = random_inputs(it, seed, "normal")
            assert x.dtype == np.int8
            at_a_limit = (x == -128) | (x == 127)
            saturated = np.count_nonzero(at_a_limit & (x != zero_point)) / x.size
            near = np.count_nonzero(np.abs(x.astype(int) - zero_point) <= 64) / x.size
            assert saturated < 0.01 and near > 0.9, (name, saturated, near)
            (u,) = random_inputs(it, seed, "uniform")
            assert u.min() < -100 and u.max() > 100      # spread over the whole range
    with pytest.raises(MicroRtError, match="distribution"):
        random_inputs(it, 0, "binary")


def test_agreement_tolerance(oracle):
    one = np.float32(1.0)
    ulps = [np.float32(np.nextafter(one, np.float32(2), dtype=np.float32))]
    for _ in range(5):
        ulps.append(np.nextafter(ulps[-1], np.float32(2), dtype=np.float32))
    assert oracle.within_tolerance(np.array([one]), np.array([ulps[3]]))       # 4 ulp
    assert not oracle.within_tolerance(np.array([one]), np.array([ulps[4]]))   # 5 ulp
    assert oracle.within_tolerance(np.array([np.nan], np.float32), np.array([np.nan], np.float32))
    assert not oracle.within_tolerance(np.array([np.nan], np.float32), np.array([one]))
    assert not oracle.within_tolerance(np.array([3], np.int8), np.array([4], np.int8))
    assert not oracle.within_tolerance(np.zeros(3, np.int8), np.zeros(4, np.int8))
    a = oracle.Agreement(0, "float32")
    a.add(np.array([one, one]), np.array([one, ulps[1]]))
    assert a.equal and not a.bit_exact and a.max_ulp == 2 and a.differing_elements == 1


@pytest.fixture
def refused_model(tmp_path, monkeypatch) -> str:
    """A CAST from uint8: tflite-micro refuses it. micro_rt refuses it too, as it should; here
    its CAST is widened to take uint8, standing for any model micro_rt runs and the oracle
    refuses (the case run --check and optimize must report in one line)."""
    import micro_rt.kernels.shape_ops as shape_ops
    monkeypatch.setattr(shape_ops, "_CAST_INPUT_TYPES",
                        shape_ops._CAST_INPUT_TYPES + (np.dtype(np.uint8),))
    path = tmp_path / "cast_u8.tflite"
    path.write_bytes(cast_from_uint8())
    return str(path)


def test_oracle_refusal_is_an_error_with_tflms_reason(oracle, refused_model):
    data = open(refused_model, "rb").read()
    with pytest.raises(OracleError, match=r"UINT8 \(3\) not supported") as info:
        oracle.run(data, [np.zeros((1, 8), np.uint8)], 1)
    assert isinstance(info.value, RuntimeError) and "\n" not in str(info.value)


def test_run_check_on_a_model_the_oracle_refuses(capsys, oracle, refused_model):
    code, out, err = run_cli(capsys, "run", refused_model)
    assert code == 0                                    # micro_rt itself runs it
    code, out, err = run_cli(capsys, "run", refused_model, "--check")
    assert code == 2 and err.count("\n") == 1
    assert "tflite-micro refused the model" in err and "UINT8 (3) not supported" in err
    assert "internal error" not in err


def test_optimize_on_a_model_the_oracle_refuses(capsys, oracle, refused_model, tmp_path):
    code, _, err = run_cli(capsys, "optimize", refused_model, "-o", str(tmp_path / "o.tflite"))
    assert code == 2 and err.count("\n") == 1
    assert "tflite-micro refused the model" in err and "UINT8 (3) not supported" in err
