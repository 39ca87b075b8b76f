"""Issue 3's acceptance: outputs bit-exact with the tflite-micro oracle on 20 seeded inputs per
model (float32 to 1e-5 relative), on the shared real models and on every project model."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import SHARED_MODELS, custom_op_models, oracle_models, project_models, shared_model, shared_models

SHARED = ["hello_world_int8.tflite", "hello_world_float.tflite", "micro_speech_quantized.tflite",
          "person_detect.tflite", "simple_add_model.tflite", "network_tester_model.tflite",
          "test_conv_model.tflite",
          # stateful (SVDF): check_model runs the seeds in sequence on both sides, the
          # states carry over identically (test_kernels_svdf compares every tensor)
          "keyword_scrambled.tflite", "keyword_scrambled_8bit.tflite",
          # LSTMs, stateful the same way (test_kernels_lstm compares every tensor, states too)
          "trained_lstm.tflite", "trained_lstm_int8.tflite", "micro_speech_lstm.tflite",
          "dtln_noise_suppression.tflite"]


def _assert_agrees(path, oracle, seeds=range(20)):
    report = oracle.check_model(path.read_bytes(), seeds=seeds)
    assert not report["failures"], f"{path.name}: {report['failures'][0]}"


@pytest.mark.parametrize("name", shared_models(SHARED))
def test_shared_models_match_oracle(name, oracle):
    _assert_agrees(SHARED_MODELS / name, oracle)


@pytest.mark.parametrize("path", oracle_models(), ids=lambda p: p.name)
def test_project_models_match_oracle(path, oracle):
    _assert_agrees(path, oracle)


@pytest.mark.parametrize("path", custom_op_models(), ids=lambda p: p.name)
def test_custom_op_models_need_the_users_kernel(path, oracle):
    """Neither runtime has a kernel for a custom operator (test_builder_models runs one with a
    registered kernel): micro_rt names the op and how to register it, the oracle refuses."""
    from micro_rt import Interpreter, UnsupportedOpError
    with pytest.raises(UnsupportedOpError, match="custom op.*add_custom"):
        Interpreter.from_file(path)
    with pytest.raises(RuntimeError):
        oracle.interpreter(path.read_bytes(), 1 << 16)


def test_mobilenet_v2_matches_oracle(oracle):
    # 2.4 MB of activations and 300 MMACs: three seeds keep the suite fast.
    _assert_agrees(shared_model("mobilenet_v2_quantized_1x3x224x224.tflite"), oracle, seeds=range(3))


def test_network_tester_golden_output():
    from micro_rt import Interpreter
    path = shared_model("network_tester_model.tflite")
    x = np.load(SHARED_MODELS / "testdata" / "network_tester_input_data.npy")
    expected = np.load(SHARED_MODELS / "testdata" / "network_tester_expected_output_data.npy")
    it = Interpreter.from_file(path)
    d = it.get_input_details(0)
    # The golden files hold the int8 tensors' raw bytes as uint8.
    it.set_input(x.view(d["dtype"]).reshape(d["shape"]), 0)
    it.invoke()
    np.testing.assert_array_equal(it.get_output(0).view(np.uint8).ravel(), expected.ravel())


def test_dtln_golden_output():
    from micro_rt import Interpreter
    it = Interpreter.from_file(shared_model("dtln_noise_suppression.tflite"))
    x = np.load(SHARED_MODELS / "testdata" / "dtln_feature_data.npy")
    expected = np.load(SHARED_MODELS / "testdata" / "dtln_golden_ref.npy")
    it.set_input(x.reshape(1, 1, 257), 0)
    it.invoke()
    np.testing.assert_array_equal(it.get_output(0).ravel(), expected.ravel())


def _bmp_gray(path) -> np.ndarray:
    """A minimal reader for the 8-bit grayscale BMPs in TFLM's testdata."""
    data = path.read_bytes()
    offset = int.from_bytes(data[10:14], "little")
    width = int.from_bytes(data[18:22], "little", signed=True)
    height = int.from_bytes(data[22:26], "little", signed=True)
    bpp = int.from_bytes(data[28:30], "little")
    row = (width * bpp // 8 + 3) & ~3
    rows = [np.frombuffer(data, np.uint8, width * bpp // 8, offset + r * row) for r in range(abs(height))]
    image = np.stack(rows)
    if bpp == 24:
        image = image.reshape(abs(height), width, 3).mean(axis=2).astype(np.uint8)
    return image[::-1] if height > 0 else image


@pytest.mark.parametrize("image,person_wins", [("person.bmp", True), ("no_person.bmp", False)])
def test_person_detect_on_test_images(image, person_wins):
    from micro_rt import Interpreter
    it = Interpreter.from_file(shared_model("person_detect.tflite"))
    pixels = _bmp_gray(SHARED_MODELS / "testdata" / image)
    assert pixels.shape == (96, 96)
    # TFLM's test data is the image's bytes (top row first) reinterpreted as int8.
    it.set_input(pixels.view(np.int8).reshape(1, 96, 96, 1), 0)
    it.invoke()
    no_person, person = it.get_output(0)[0]
    assert (person > no_person) == person_wins


def test_first_differing_op_is_named(oracle):
    """The harness names the operator whose output first departs from the oracle."""
    from micro_rt import builtin_op_resolver, Registration
    from micro_rt.resolver import KERNEL_MODULES  # noqa: F401  (the real kernels stay registered)
    path = project_models("residual_block_int8.tflite")[0]
    resolver = builtin_op_resolver()
    real = resolver.find("ADD", False, 1)

    def broken_invoke(ctx, node):
        real.invoke(ctx, node)
        ctx.output(node, 0).data.flat[0] ^= 1      # one flipped bit

    resolver.add_builtin("ADD", Registration(invoke=broken_invoke, prepare=real.prepare,
                                             init=real.init), 1, 5)
    report = oracle.check_model(path.read_bytes(), seeds=range(2), op_resolver=resolver)
    assert report["failures"]
    assert "ADD" in report["failures"][0]["first_bad_op"]
