"""The README's promise: switching from tflite_micro.runtime is one line. One script, the same
source text, runs against both runtimes; micro_rt must do what tflite-micro does (details,
outputs, the printout's format) and raise errors that the same `except` clauses catch."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import PROJECT_MODELS, ROOT

SCRIPT = ROOT / "tests" / "drop_in_script.py"
ERROR_CASES = ("missing file", "too small arena", "unregistered custom op", "details index 3",
               "output details index 3", "wrong dtype", "wrong shape", "wrong rank",
               "input index 5", "input index -1", "None input", "output index 3")


def _run(runtime: str, model: str) -> dict:
    done = subprocess.run([sys.executable, str(SCRIPT), runtime, str(PROJECT_MODELS / model),
                           str(PROJECT_MODELS / "custom_atan.tflite")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{runtime}: {done.stderr[-2000:]}"
    return json.loads(done.stdout)


@pytest.mark.parametrize("model", ["residual_block_int8.tflite", "conv_variants_int8.tflite"])
def test_one_script_runs_on_both_runtimes(model, oracle):
    theirs, ours = _run("tflite_micro", model), _run("micro_rt", model)
    for case in ERROR_CASES:
        assert theirs[case] != "no error", case
        # Every except clause that catches tflite-micro's error catches micro_rt's.
        assert set(theirs[case]) <= set(ours[case]), (case, theirs[case], ours[case])
    for key in set(theirs) - set(ERROR_CASES):
        assert ours[key] == theirs[key], key
    assert theirs["print_allocations"][0] == "[RecordingMicroAllocator] Arena allocation total N bytes"
