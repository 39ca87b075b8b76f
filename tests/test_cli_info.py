"""`micro-rt info`: the model's inputs and outputs with their names and quantization (scale and
zero point, or per-channel and how many scales) in text, JSON and markdown."""
from __future__ import annotations

import json

from cli_runner import run_cli
from micro_rt.builder import ModelBuilder


def quantized_io(path) -> str:
    """int8 x (scale 0.5, zero point 3) -> RELU -> y per-channel (4 scales on dimension 1);
    float32 f -> RELU -> g."""
    b = ModelBuilder()
    x = b.add_tensor("serving_default_x:0", (1, 4), "INT8", scale=0.5, zero_point=3)
    y = b.add_tensor("y", (1, 4), "INT8", scale=[0.5, 0.25, 0.125, 1.0], zero_point=0,
                     quantized_dimension=1)
    f, g = b.add_tensor("f", (2,), "FLOAT32"), b.add_tensor("g", (2,), "FLOAT32")
    b.add_operator("RELU", [x], [y])
    b.add_operator("RELU", [f], [g])
    b.inputs, b.outputs = [x, f], [y, g]
    path.write_bytes(b.build())
    return str(path)


def test_info_text_gives_each_input_and_output_its_quantization(capsys, tmp_path):
    code, out, _ = run_cli(capsys, "info", quantized_io(tmp_path / "q.tflite"))
    lines = out.splitlines()
    assert code == 0 and lines[1:5] == [
        "input 0 'serving_default_x:0' int8[1, 4], scale 0.5, zero point 3",
        "input 1 'f' float32[2], not quantized",
        "output 0 'y' int8[1, 4], per-channel: 4 scales on dimension 1",
        "output 1 'g' float32[2], not quantized"]


def test_info_json_and_markdown_carry_the_quantization(capsys, tmp_path):
    model = quantized_io(tmp_path / "q.tflite")
    code, out, _ = run_cli(capsys, "info", model, "--json")
    info = json.loads(out)
    assert code == 0
    assert [(d["name"], d["quantization"]) for d in info["inputs"]] == [
        ("serving_default_x:0", {"scale": 0.5, "zero_point": 3}), ("f", None)]
    assert [(d["name"], d["quantization"]) for d in info["outputs"]] == [
        ("y", {"per_channel": True, "channels": 4, "quantized_dimension": 1}), ("g", None)]
    code, out, _ = run_cli(capsys, "info", model, "--format", "markdown")
    assert code == 0 and "### Inputs and outputs" in out
    assert "| input | 0 | serving_default_x:0 | int8 | [1,4] | 0.5 | 3 | per-tensor |" in out
    assert "| output | 0 | y | int8 | [1,4] | – | – | per-channel: 4 scales on dimension 1 |" in out
    assert "| output | 1 | g | float32 | [2] | – | – | none |" in out
