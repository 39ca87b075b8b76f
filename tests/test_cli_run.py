"""`micro-rt run`: --input files are one per model input, --seeds only with --check, and the
outputs summarised for a person (whole arrays in --json and in the --output files)."""
from __future__ import annotations

import json

import numpy as np
import pytest

from cli_runner import run_cli
from micro_rt.builder import ModelBuilder


def two_inputs(path) -> str:
    """int8 a + b -> c, each [1, 4]."""
    b = ModelBuilder()
    a, x, c = (b.add_tensor(name, (1, 4), "INT8", scale=0.5, zero_point=1)
               for name in ("input_a", "input_b", "sum"))
    b.add_operator("ADD", [a, x], [c])
    b.inputs, b.outputs = [a, x], [c]
    path.write_bytes(b.build())
    return str(path)


@pytest.fixture
def model_and_input(tmp_path):
    model = two_inputs(tmp_path / "add.tflite")
    array = tmp_path / "a.npy"
    np.save(array, np.arange(4, dtype=np.int8).reshape(1, 4))
    return model, str(array)


@pytest.mark.parametrize("count", [1, 3])
def test_run_refuses_a_wrong_number_of_input_files(capsys, model_and_input, count):
    model, array = model_and_input
    code, out, err = run_cli(capsys, "run", model, *["--input", array] * count)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert (f"the model has 2 inputs (0 'input_a', 1 'input_b') but {count} --input "
            f"file{'s were' if count > 1 else ' was'} given") in err


def test_run_takes_one_input_file_per_input(capsys, model_and_input):
    model, array = model_and_input
    code, out, _ = run_cli(capsys, "run", model, "--input", array, "--input", array, "--json")
    # (x - 1) * 0.5 twice, requantized: 2x - 1 with the same scale and zero point
    assert code == 0 and json.loads(out)["outputs"][0]["raw"] == [[-1, 1, 3, 5]]


def test_run_seeds_needs_check(capsys, model_and_input):
    model, _ = model_and_input
    code, out, err = run_cli(capsys, "run", model, "--seeds", "5")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "--seeds 5 goes with --check" in err
