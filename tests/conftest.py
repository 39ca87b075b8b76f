"""Shared test fixtures: where the models are, and whether the oracle is installed."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PROJECT_MODELS = ROOT / "models"
SHARED_MODELS = Path(os.environ.get("MICRO_RT_SHARED_MODELS", ROOT.parent / "shared" / "models")) / "tflm"


def shared_model(name: str) -> Path:
    path = SHARED_MODELS / name
    if not path.exists():
        pytest.skip(f"shared model {name} not available (needs ../shared/models)")
    return path


def project_models(pattern: str = "*.tflite") -> list[Path]:
    return sorted(PROJECT_MODELS.glob(pattern))


def builtin_only(data: bytes) -> bool:
    """No custom operators: micro_rt cannot know a custom kernel's op data (custom_atan's kernel
    is a test's, the ethos-u op is the NPU's)."""
    from micro_rt.model import read_model
    return not any(op.is_custom for op in read_model(data).main.operators)


def shared_models(names) -> list:
    """Parametrize helper: one param per shared model, skipped when shared/ is absent."""
    return [pytest.param(n, marks=pytest.mark.skipif(not (SHARED_MODELS / n).exists(),
                                                     reason="../shared/models not available"))
            for n in names]


@pytest.fixture
def oracle():
    pytest.importorskip("tflite_micro", reason="tflite-micro oracle not installed")
    from micro_rt import oracle as o
    return o
