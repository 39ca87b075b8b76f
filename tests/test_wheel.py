"""The wheel a user installs, built from this tree: it holds the runtime with its data (the
prebuilt firmware and the facts shipped beside it, the board catalog and its measurements, the
native hook) and none of the development tools; installed on its own, it runs a profile."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# what a checkout holds that a build must not see: a stale build/ would leak into the wheel
NOT_SOURCES = shutil.ignore_patterns(".git", ".venv", "build", "*.egg-info", "__pycache__", ".pytest_cache",
                                     ".hypothesis", "out", "_mrt_hook*.so", "_mrt_scratch*.so")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    tree = tmp_path_factory.mktemp("tree") / "micro_rt"
    shutil.copytree(ROOT, tree, ignore=NOT_SOURCES)
    out = tmp_path_factory.mktemp("wheel")
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(tree)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    (path,) = out.glob("micro_rt-*.whl")
    return path


def test_the_wheel_holds_the_runtime_and_its_data_and_no_dev_tools(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    for core in ("cortex-m0plus", "cortex-m4", "cortex-m7", "cortex-m33"):
        for suffix in (".elf", ".alignment.json", ".references.json"):
            assert f"micro_rt/cortexm/firmware/{core}{suffix}" in names, (core, suffix)
    boards = {n for n in names if n.startswith("micro_rt/cortexm/board_data/") and n.endswith(".json")}
    assert len(boards) == len(list((ROOT / "cortexm" / "board_data").glob("*.json"))) + \
        len(list((ROOT / "cortexm" / "board_data" / "measurements").glob("*.json")))
    assert "micro_rt/cortexm/board_data/measurements/tflm_runtime.json" in names
    assert any(n.startswith("micro_rt/cortexm/_mrt_hook") for n in names), "native hook not built into the wheel"
    for lib in ("_mrt_scratch_dsp", "_mrt_scratch"):          # the CMSIS-NN sizes' host builds
        assert any(n.startswith(f"micro_rt/{lib}.") for n in names), f"{lib} not built into the wheel"
    assert {"micro_rt/scratch_sizes.c", "micro_rt/cortexm/src/mrt_buffer_sizes.h"} <= names
    assert {"micro_rt/oracle.py", "micro_rt/cli.py", "micro_rt/kernels/__init__.py", "micro_rt/cortexm/src/Makefile"} <= names
    leaked = sorted(n for n in names if n.split("/")[0] in ("devtools", "tests", "benchmarks", "models")
                    or n.startswith("micro_rt/tools/"))
    assert not leaked, leaked


def test_the_installed_wheel_runs_on_its_own(wheel, tmp_path):
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site), str(wheel)],
                   check=True, capture_output=True, text=True)
    env = {**os.environ, "PYTHONPATH": str(site), "MICRO_RT_CACHE": str(tmp_path / "cache")}
    where = subprocess.run([sys.executable, "-c", "import micro_rt.cortexm.native as n; "
                            "print(n.__file__); print(n.installed_library())"],
                           capture_output=True, text=True, env=env, cwd=tmp_path, check=True).stdout.split()
    assert all(Path(p).is_relative_to(site) for p in where), where      # the wheel's, not this tree's
    run = subprocess.run([sys.executable, "-m", "micro_rt.cli", "profile", str(ROOT / "models" / "mobilenet_tiny_int8.tflite"),
                          "--target", "cortex-m4", "--json"], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-2000:]
    report = json.loads(run.stdout)
    assert report["total_cycles"] > 0 and report["complete"]
