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


def two_outputs(path) -> str:
    """float32 x [1, 10, 4] -> RELU -> boxes [1, 10, 4] and int8 q [1, 4] -> RELU -> score."""
    b = ModelBuilder()
    x = b.add_tensor("x", (1, 10, 4), "FLOAT32")
    boxes = b.add_tensor("detection_boxes/a_very_long_converter_name;StatefulPartitionedCall:0",
                         (1, 10, 4), "FLOAT32")
    q = b.add_tensor("q", (1, 4), "INT8", scale=0.25, zero_point=-3)
    score = b.add_tensor("score", (1, 4), "INT8", scale=0.25, zero_point=-3)
    b.add_operator("RELU", [x], [boxes])
    b.add_operator("RELU", [q], [score])
    b.inputs, b.outputs = [x, q], [boxes, score]
    path.write_bytes(b.build())
    return str(path)


def test_run_summarises_large_outputs_and_shows_small_ones_whole(capsys, tmp_path):
    model = two_outputs(tmp_path / "two.tflite")
    code, out, _ = run_cli(capsys, "run", model, "--json")
    boxes, score = (np.array(o["raw"]) for o in json.loads(out)["outputs"])
    code, text, _ = run_cli(capsys, "run", model)
    assert code == 0 and len(text.splitlines()) <= 9, text
    ran, *lines = text.splitlines()              # first: where it ran and whose arena
    assert ran.startswith("ran on the host's kernels")
    assert lines[0] == ("output 0 'detection_boxes/a_very_long_converter_name;"
                        "StatefulPartitionedCall:0' float32[1, 10, 4], not quantized")
    assert lines[1] == f"  40 values, min {boxes.min():.6g}, max {boxes.max():.6g}"
    assert lines[2].startswith("  first 8: [") and lines[2].endswith("] ...")
    assert lines[3] == "output 1 'score' int8[1, 4], scale 0.25, zero point -3"
    assert lines[4] == f"  values: [[{' '.join(str(v) for v in score[0])}]]"
    assert lines[5].startswith("  dequantized: [[") and lines[5].endswith("]]")
    shown = [float(v) for v in lines[5].split(":", 1)[1].strip(" []").split()]
    assert shown == ((score[0] + 3) * 0.25).tolist()
    assert "--output DIR saves each output as .npy" in lines[-1]


def test_run_output_dir_saves_every_output_and_json_keeps_every_value(capsys, tmp_path):
    model = two_outputs(tmp_path / "two.tflite")
    out_dir = tmp_path / "outs"
    code, out, _ = run_cli(capsys, "run", model, "--output", str(out_dir), "--json")
    result = json.loads(out)["outputs"]
    assert code == 0 and sorted(p.name for p in out_dir.iterdir()) == ["output_0.npy", "output_1.npy"]
    for i, entry in enumerate(result):
        saved = np.load(out_dir / f"output_{i}.npy")
        assert entry["file"] == str(out_dir / f"output_{i}.npy")
        assert saved.dtype.name == entry["dtype"] and saved.tolist() == entry["raw"]
    assert np.array(result[0]["raw"]).shape == (1, 10, 4)          # every value, not a summary
    assert result[1]["quantization"] == {"scale": 0.25, "zero_point": -3}
    assert result[0]["quantization"] is None
    code, text, _ = run_cli(capsys, "run", model, "-o", str(out_dir))
    assert code == 0 and f"-> {out_dir / 'output_0.npy'}" in text
    assert "--output DIR saves" not in text


def test_run_output_must_be_a_directory(capsys, tmp_path):
    model = two_outputs(tmp_path / "two.tflite")
    (tmp_path / "file").write_text("")
    code, out, err = run_cli(capsys, "run", model, "--output", str(tmp_path / "file"))
    assert code == 2 and out == "" and err.count("\n") == 1 and "is a file; give a directory" in err
