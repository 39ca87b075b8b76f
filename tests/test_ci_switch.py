"""MICRO_RT_REQUIRE_ALL=1 (set by .ci/run) turns every skip into a failure, so that a green CI run
means the whole suite ran; without it, a missing tool or model is a skip with its reason."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REQUIRE_ALL_VAR

SAMPLE = '''
import pytest
from conftest import missing, requires, shared_model

def test_missing_helper():
    missing("a tool this machine lacks")

@requires(False, "a model this machine lacks")
def test_requires_mark():
    pass

def test_shared_model_helper():
    shared_model("no_such_model.tflite")

def test_plain_skip():
    pytest.skip("a skip that bypasses the helpers")

def test_runs():
    assert True
'''
MODULE_SKIP = '''
import pytest
pytest.importorskip("no_such_module_for_micro_rt")

def test_never():
    pass
'''


def _run(tmp_path: Path, require_all: str) -> tuple[str, dict]:
    shutil.copy(Path(__file__).with_name("conftest.py"), tmp_path / "conftest.py")
    (tmp_path / "test_sample.py").write_text(SAMPLE)
    (tmp_path / "test_module_skip.py").write_text(MODULE_SKIP)
    env = dict(os.environ, MICRO_RT_SHARED_MODELS=str(tmp_path / "nowhere"))
    env[REQUIRE_ALL_VAR] = require_all
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider",
                        "--continue-on-collection-errors",
                        str(tmp_path)],
                       capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120)
    tail = r.stdout.strip().splitlines()[-1]
    counts = {word: int(n) for n, word in re.findall(r"(\d+) (\w+)", tail)}
    return r.stdout, counts


def test_without_the_switch_missing_things_skip_with_reasons(tmp_path):
    out, counts = _run(tmp_path, "")
    assert counts.get("passed") == 1 and counts.get("skipped") == 5, out
    assert "a tool this machine lacks" in out and "no_such_model.tflite" in out


def test_with_the_switch_every_skip_fails(tmp_path):
    out, counts = _run(tmp_path, "1")
    assert "skipped" not in counts, out
    assert counts.get("passed") == 1, out
    assert counts.get("failed", 0) + counts.get("error", 0) + counts.get("errors", 0) == 5, out


def test_ci_sets_the_switch():
    script = (Path(__file__).resolve().parents[1] / ".ci" / "run").read_text()
    assert f"export {REQUIRE_ALL_VAR}=1" in script


@pytest.mark.parametrize("var", ["", "0"])
def test_switch_off_values(monkeypatch, var):
    from conftest import require_all
    monkeypatch.setenv(REQUIRE_ALL_VAR, var)
    assert not require_all()
