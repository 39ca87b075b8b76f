"""The lane chart: a self-contained page with one box per buffer, rendered by a real browser."""
from __future__ import annotations

import re
import subprocess

import pytest

from conftest import CHROMIUM, PROJECT_MODELS, requires_chromium
from micro_rt.cli import main

MODEL = str(PROJECT_MODELS / "inception_block_int8.tflite")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@pytest.fixture
def page(tmp_path, capsys):
    path = tmp_path / "plan.html"
    assert main(["plan", MODEL, "--html", str(path)]) == 0
    capsys.readouterr()
    return path


def test_page_is_self_contained_with_a_box_per_buffer(page, capsys):
    html = page.read_text()
    assert "src=" not in html and "href=" not in html and "@import" not in html
    main(["plan", MODEL, "--json"])
    import json
    buffers = json.loads(capsys.readouterr().out)["buffers"]
    assert len(re.findall(r'<rect class="buf"', html)) == len(buffers)
    assert all(f"{b['name']}" in html for b in buffers if b["kind"] == "tensor")


@requires_chromium
def test_renders_in_headless_chromium(page, tmp_path):
    shot = tmp_path / "shot.png"
    profile = tmp_path / "profile"
    common = FLAGS + [f"--user-data-dir={profile}"]
    dom = subprocess.run([CHROMIUM, *common, "--dump-dom", page.as_uri()],
                         capture_output=True, text=True, timeout=90)
    assert dom.returncode == 0, dom.stderr[-500:]
    assert dom.stdout.count('class="buf"') > 5
    result = subprocess.run([CHROMIUM, *common, f"--screenshot={shot}", "--window-size=1200,700",
                             page.as_uri()], capture_output=True, text=True, timeout=90)
    assert result.returncode == 0 and shot.exists()
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000    # a drawn chart, not a blank page
