"""Hostile command-line values get one line naming the option, the value and the accepted range,
and exit 2; first contact (--version, defaults in --help, --debug anywhere); exit codes."""
from __future__ import annotations

import re

import pytest

import micro_rt
from cli_runner import run_cli
from conftest import PROJECT_MODELS
from micro_rt.cli import parse_size
from micro_rt.cli_values import parse_frequency

MODEL = str(PROJECT_MODELS / "mobilenet_tiny_int8.tflite")
HUGE = "9" * 400


def _refused(capsys, argv, option, shown):
    code, out, err = run_cli(capsys, *argv)
    assert code == 2, (argv, err)
    assert out == "" and err.count("\n") == 1, err          # one line, no usage block
    assert option in err and shown in err and "give " in err, err
    assert "Traceback" not in err and "internal error" not in err
    return err


@pytest.mark.parametrize("argv, option, shown", [
    (["fit", MODEL, "--ram", "0"], "--ram", "'0'"),
    (["fit", MODEL, "--ram", HUGE], "--ram", "99999999"),
    (["fit", MODEL, "--ram", "1M", "--flash", HUGE], "--flash", "99999999"),
    (["fit", MODEL, "--ram", "99999999999999999999K"], "--ram", "'99999999999999999999K'"),
    (["fit", MODEL, "--ram", "5G"], "--ram", "'5G'"),                  # above the 4 GiB bound
    (["fit", MODEL, "--ram", "1M", "--flash", "65G"], "--flash", "'65G'"),
    (["fit", MODEL, "--ram", "-1K"], "--ram", "'-1K'"),
    (["fit", MODEL, "--ram", "12Q"], "--ram", "'12Q'"),
    (["fit", MODEL, "--ram", "0.5"], "--ram", "'0.5'"),
    (["run", MODEL, "--seed", "-1"], "--seed", "'-1'"),
    (["run", MODEL, "--seed", HUGE], "--seed", "99999999"),
    (["run", MODEL, "--check", "--seeds", "0"], "--seeds", "'0'"),
    (["profile", MODEL, "--clock", "0Hz"], "--clock", "'0Hz'"),
    (["profile", MODEL, "--clock", "0MHz"], "--clock", "'0MHz'"),
    (["profile", MODEL, "--clock", "-5MHz"], "--clock", "'-5MHz'"),
    (["profile", MODEL, "--clock", "3GHz"], "--clock", "'3GHz'"),
    (["profile", MODEL, "--clock", HUGE + "Hz"], "--clock", "99999999"),
    (["profile", MODEL, "--clock", "120"], "--clock", "'120'"),        # no unit: not 120 Hz
    (["profile", MODEL, "--clock", "64M"], "--clock", "'64M'"),
    (["profile", MODEL, "--flash-wait-states", "-1"], "--flash-wait-states", "'-1'"),
    (["profile", MODEL, "--flash-wait-states", "1024"], "--flash-wait-states", "'1024'"),
    (["profile", MODEL, "--seed", "-1"], "--seed", "'-1'"),
    (["optimize", MODEL, "-o", "{tmp}/x.tflite", "--time-limit", "nan"], "--time-limit", "'nan'"),
    (["optimize", MODEL, "-o", "{tmp}/x.tflite", "--time-limit", "-1"], "--time-limit", "'-1'"),
    (["optimize", MODEL, "-o", "{tmp}/x.tflite", "--seeds", "0"], "--seeds", "'0'"),
])
def test_hostile_values_are_one_line_exit_2(capsys, tmp_path, argv, option, shown):
    _refused(capsys, [a.format(tmp=tmp_path) for a in argv], option, shown)


def test_clock_without_unit_says_so(capsys):
    err = _refused(capsys, ["profile", MODEL, "--clock", "120"], "--clock", "'120'")
    assert "no unit" in err and "MHz" in err


def test_sizes_state_their_bounds(capsys):
    assert "4 GiB" in _refused(capsys, ["fit", MODEL, "--ram", "0"], "--ram", "'0'")
    assert "64 GiB" in _refused(capsys, ["fit", MODEL, "--ram", "1M", "--flash", "0"], "--flash", "'0'")


def test_parse_size_bounds():
    assert parse_size("4G", 4 << 30) == 4 << 30
    assert parse_size("256KiB") == 262144 and parse_size("2MB") == 2 << 20
    for bad in ("0", "-1", "1.5", HUGE, "1e3", ""):
        with pytest.raises(Exception, match="give 1 B to"):
            parse_size(bad)


def test_parse_frequency_needs_a_unit_and_a_sane_value():
    assert parse_frequency("120MHz") == 120_000_000 and parse_frequency("1GHZ") == 10 ** 9
    assert parse_frequency("2GHz") == 2 * 10 ** 9 and parse_frequency("1kHz") == 1000
    for bad in ("120", "0Hz", "999Hz", "2.1GHz", "-1MHz", "fastHz", HUGE + "MHz"):
        with pytest.raises(Exception, match="give 1 kHz to 2 GHz"):
            parse_frequency(bad)


@pytest.mark.parametrize("option", ["--html"])
def test_optimize_html_to_a_directory_is_an_error(capsys, tmp_path, option):
    out_model = str(tmp_path / "out.tflite")
    code, _, err = run_cli(capsys, "optimize", MODEL, "-o", out_model, option, str(tmp_path))
    assert code == 2 and err.count("\n") == 1 and "is a directory" in err and str(tmp_path) in err
    code, _, err = run_cli(capsys, "optimize", MODEL, "-o", str(tmp_path))
    assert code == 2 and "is a directory" in err


def test_plan_html_to_a_directory_is_an_error(capsys, tmp_path):
    code, _, err = run_cli(capsys, "plan", MODEL, "--html", str(tmp_path))
    assert code == 2 and err.count("\n") == 1 and str(tmp_path) in err


def test_version(capsys):
    code, out, _ = run_cli(capsys, "--version")
    assert code == 0 and out.strip() == f"micro-rt {micro_rt.__version__}"


COMMANDS = ["info", "plan", "fit", "run", "profile", "optimize"]


@pytest.mark.parametrize("command", COMMANDS)
def test_help_shows_every_default_and_the_exit_codes(capsys, command):
    code, out, _ = run_cli(capsys, command, "--help")
    assert code == 0
    assert "exit codes" in out.lower() and "4  internal error" in out and "3  cannot tell" in out
    options = out[out.index("options:"):out.index("Exit codes")]
    blocks = re.split(r"\n(?=  -)", options)[1:]
    with_value = [b for b in blocks if re.match(r"\s*-[\w-]+ [A-Z{]", b)]   # not a flag
    assert with_value or command == "info"
    for block in with_value:
        assert "default" in block or "required" in block, block


def test_kernels_help_says_they_are_micro_rts_own(capsys):
    for command in ("fit", "plan", "run"):
        _, out, _ = run_cli(capsys, command, "--help")
        flat = " ".join(out.split())
        assert "not Arm's CMSIS-NN library" in flat


def test_debug_is_accepted_after_the_command(capsys, tmp_path):
    bad = tmp_path / "bad.tflite"
    bad.write_bytes(b"\x00" * 64)
    for argv in (["plan", str(bad), "--debug"], ["--debug", "plan", str(bad)]):
        code, _, err = run_cli(capsys, *argv)
        assert code == 2 and "Traceback" in err, argv
    code, _, err = run_cli(capsys, "plan", str(bad))
    assert code == 2 and "Traceback" not in err
    code, out, _ = run_cli(capsys, "plan", MODEL, "--debug")
    assert code == 0 and "head" in out


def test_internal_error_exit_code_is_4_not_cannot_tell(capsys, monkeypatch):
    import micro_rt.cli as cli

    def broken(*_):
        raise ValueError("a bug")
    monkeypatch.setattr(cli, "op_macs", broken)
    code, _, err = run_cli(capsys, "info", MODEL)
    assert code == 4 and err.count("\n") == 1 and "internal error" in err and "a bug" in err


def test_plan_shows_the_kernels_for_what_they_are(capsys):
    code, out, _ = run_cli(capsys, "plan", MODEL, "--kernels", "cmsis-nn")
    assert code == 0 and "cmsis-nn (micro_rt's CMSIS-NN-style kernels)" in out
    code, out, _ = run_cli(capsys, "plan", MODEL, "--kernels", "cmsis-nn", "--json")
    assert "not Arm's CMSIS-NN library" in __import__("json").loads(out)["kernels_note"]


def test_plan_warning_goes_to_stderr_and_quiet_silences_it(capsys):
    path = str(PROJECT_MODELS / "custom_atan.tflite")
    code, out, err = run_cli(capsys, "plan", path)
    assert code == 0 and "warning" in err and "0 ATAN" in err and "warning" not in out
    code, out, err = run_cli(capsys, "plan", path, "--quiet")
    assert code == 0 and err == ""


def test_profile_on_a_host_target_is_a_usage_error(capsys):
    code, _, err = run_cli(capsys, "profile", MODEL, "--target", "host64")
    assert code == 2 and err.count("\n") == 1 and "--target host64" in err and "cortex-m4" in err
