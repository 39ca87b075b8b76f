"""Progress is for people at a terminal: a tqdm bar on stderr only when stderr is a TTY, never
with --json or --quiet, and never `\\r` frames in a redirected log."""
from __future__ import annotations

import fcntl
import json
import os
import pty
import struct
import subprocess
import sys
import re
import termios

import pytest

from conftest import PROJECT_MODELS, ROOT, shared_model

MODEL = str(PROJECT_MODELS / "mobilenet_tiny_int8.tflite")


def _cli(*argv) -> list[str]:
    return [sys.executable, "-m", "micro_rt.cli", *argv]


def _run_with_terminal_stderr(*argv) -> tuple[int, str, str]:
    """stderr on a pseudo-terminal 100 columns wide, stdout a pipe."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    proc = subprocess.Popen(_cli(*argv), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=slave, cwd=ROOT)
    os.close(slave)
    seen = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:          # EIO: the child closed its end
            break
        if not chunk:
            break
        seen.append(chunk)
    os.close(master)
    out = proc.stdout.read().decode()
    proc.stdout.close()
    return proc.wait(), out, b"".join(seen).decode(errors="replace")


def test_redirected_stderr_gets_no_progress_frames():
    """A run long enough (> 1 s) that the old bar drew itself into logs."""
    path = str(shared_model("person_detect.tflite"))
    result = subprocess.run(_cli("profile", path, "--flash-wait-states", "7"), cwd=ROOT,
                            capture_output=True, text=True)
    assert result.returncode == 0 and "total on cortex-m4" in result.stdout
    assert "\r" not in result.stderr and result.stderr == ""


def test_in_process_capture_gets_no_progress(capsys):
    from micro_rt.cli import main
    assert main(["fit", MODEL, "--ram", "1M", "--kernels", "cmsis-nn"]) == 0
    assert main(["run", MODEL, "--kernels", "cmsis-nn"]) == 0
    assert "\r" not in capsys.readouterr().err


def test_terminal_gets_a_progress_bar():
    code, out, err = _run_with_terminal_stderr("profile", MODEL)
    assert code == 0
    assert "\r" in err and "emulating mobilenet_tiny_int8.tflite on cortex-m4" in err and "/10" in err
    lines = out.splitlines()          # the flash interface, then the table
    assert "\r" not in out and lines[0].startswith("flash: ") and lines[1].lstrip().startswith("#")


@pytest.mark.parametrize("flag", ["--json", "--quiet"])
def test_terminal_gets_no_progress_with_json_or_quiet(flag):
    code, out, err = _run_with_terminal_stderr("profile", MODEL, flag)
    assert code == 0 and err == ""
    if flag == "--json":
        assert json.loads(out)["complete"] is True


@pytest.mark.parametrize("command", ["info", "plan", "fit", "run", "profile", "optimize"])
def test_every_command_accepts_quiet(capsys, command, tmp_path):
    from micro_rt.cli import main
    extra = {"fit": ["--ram", "1M", "--no-emulate"], "optimize": ["-o", str(tmp_path / "o.tflite"),
                                                                   "--time-limit", "1", "--no-check"]}
    assert main([command, MODEL, "--quiet", *extra.get(command, [])]) == 0
    assert capsys.readouterr().err == ""


def test_tqdm_is_a_runtime_dependency():
    text = (ROOT / "pyproject.toml").read_text()
    dependencies = re.search(r"^dependencies = \[(.*?)\]", text, re.S | re.M).group(1)
    assert re.search(r'"tqdm[>=~ ]', dependencies)
