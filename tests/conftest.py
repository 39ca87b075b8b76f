"""Shared test fixtures: where the models are, whether the oracle and the tools are installed.

Every test that cannot run without something outside the repository (the tflite-micro oracle,
the shared real models, the Arm cross compiler, a browser) gives up through `missing()` or a
`requires()` mark. Locally that is a skip, with its reason printed (`-rs`). With
MICRO_RT_REQUIRE_ALL=1 (set by .ci/run) it is a failure: a green CI run means every test ran.
The hooks at the end hold the same rule for any skip that bypasses these helpers.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import NoReturn, Optional

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))      # devtools/: the fuzzers, dev-only (not in the wheel)
PROJECT_MODELS = ROOT / "models"
REQUIRE_ALL_VAR = "MICRO_RT_REQUIRE_ALL"


def _shared_models_dir() -> Path:
    """MICRO_RT_SHARED_MODELS, else ../shared/models beside this checkout, else beside the local
    repository this checkout was cloned from (a CI job's fresh clone in a temporary directory)."""
    env = os.environ.get("MICRO_RT_SHARED_MODELS")
    if env:
        return Path(env)
    beside = ROOT.parent / "shared" / "models"
    if beside.exists():
        return beside
    try:
        origin = subprocess.run(["git", "-C", str(ROOT), "config", "--get", "remote.origin.url"],
                                capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        origin = ""
    if origin and Path(origin).is_dir():
        cloned_from = Path(origin).resolve().parent / "shared" / "models"
        if cloned_from.exists():
            return cloned_from
    return beside


SHARED_MODELS = _shared_models_dir() / "tflm"


def require_all() -> bool:
    """True when a missing tool or model must fail the run (CI), not skip."""
    return os.environ.get(REQUIRE_ALL_VAR, "") not in ("", "0")


def missing(what: str) -> NoReturn:
    """Give up on this test because `what` is not available: skip, or fail under the switch."""
    if require_all():
        pytest.fail(f"{what} ({REQUIRE_ALL_VAR}=1: everything must run)", pytrace=False)
    pytest.skip(what)


def requires(available: bool, what: str) -> pytest.MarkDecorator:
    """A mark (pytestmark, parametrize marks) for the same rule: skipped when not `available`;
    the hooks below turn that skip into a failure under the switch."""
    return pytest.mark.skipif(not available, reason=what)


# ---- models ---------------------------------------------------------------------------------
def shared_model(name: str) -> Path:
    path = SHARED_MODELS / name
    if not path.exists():
        missing(f"shared model {name} not available (needs ../shared/models)")
    return path


def shared_models(names) -> list:
    """Parametrize helper: one param per shared model, each requiring its file."""
    return [pytest.param(n, marks=requires((SHARED_MODELS / n).exists(),
                                           f"shared model {n} not available (needs ../shared/models)"))
            for n in names]


def project_models(pattern: str = "*.tflite") -> list[Path]:
    return sorted(PROJECT_MODELS.glob(pattern))


def has_custom_ops(path: Path) -> bool:
    from micro_rt.model import read_model
    return any(op.is_custom for op in read_model(path.read_bytes()).main.operators)


def oracle_models(pattern: str = "*.tflite") -> list[Path]:
    """Project models the oracle can run: every operator builtin. A custom operator needs the
    user's kernel, which tflite-micro's pip runtime cannot be given (see custom_op_models)."""
    return [p for p in project_models(pattern) if not has_custom_ops(p)]


def custom_op_models(pattern: str = "*.tflite") -> list[Path]:
    return [p for p in project_models(pattern) if has_custom_ops(p)]


# ---- tools ----------------------------------------------------------------------------------
def tool(*names: str) -> Optional[str]:
    for name in names:
        found = shutil.which(name)
        if found:
            return found
    return None


def require_tool(*names: str) -> str:
    found = tool(*names)
    if found is None:
        missing(f"{' / '.join(names)} not installed")
    return found


ARM_GCC = tool("arm-none-eabi-gcc")
CHROMIUM = tool("chromium", "chromium-browser", "google-chrome")
requires_arm_gcc = requires(ARM_GCC is not None, "arm-none-eabi-gcc not installed")
requires_chromium = requires(CHROMIUM is not None, "chromium not installed")


def oracle_available() -> bool:
    try:
        import tflite_micro  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.fixture
def oracle():
    if not oracle_available():
        missing("tflite-micro oracle not installed (pip install -e '.[test]')")
    from micro_rt import oracle as o
    return o


# ---- the switch, for every skip ---------------------------------------------------------------
def _as_failure(report) -> None:
    reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
    report.outcome = "failed"
    report.longrepr = f"skipped, and {REQUIRE_ALL_VAR}=1 forbids skips: {reason}"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if require_all() and report.skipped and not hasattr(report, "wasxfail"):
        _as_failure(report)


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    outcome = yield
    report = outcome.get_result()
    if require_all() and report.skipped:
        _as_failure(report)


def host_kernel_model(path: Path) -> Path:
    """Writes to `path` and returns it: a model whose first operator has only a host kernel
    on the MCU (a 2048-point int16 SignalRfft, TFLM's custom op: its 4 KiB FFT work buffer
    exceeds the ARGS area its C kernel's glue uses, so it runs on the numpy twin) and whose
    others (RESHAPE, SOFTMAX, int16) run C kernels: what profile and report say of a total that
    leaves an operator out."""
    import numpy as np
    from flatbuffers import flexbuffers

    from micro_rt.builder import ModelBuilder
    b = ModelBuilder("host kernel model")
    x = b.add_tensor("x", [2048], "INT16")
    spectrum = b.add_tensor("spectrum", [2050], "INT16")
    shape = b.add_tensor("shape", [2], "INT32", data=np.array([1, 2050], np.int32))
    flat = b.add_tensor("flat", [1, 2050], "INT16", scale=0.05, zero_point=0)
    y = b.add_tensor("y", [1, 2050], "INT16", scale=1 / 32768, zero_point=0)
    b.add_operator("SignalRfft", [x], [spectrum], custom_options=flexbuffers.Dumps({"T": 7, "fft_length": 2048}))
    b.add_operator("RESHAPE", [spectrum, shape], [flat])
    b.add_operator("SOFTMAX", [flat], [y], options={"beta": 1.0})
    b.inputs, b.outputs = [x], [y]
    path.write_bytes(b.build())
    return path
