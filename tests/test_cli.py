"""The `micro-rt` command: info, plan, fit and run, their JSON and exit codes."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys

import numpy as np
import pytest

from cli_runner import chain_with, run_cli
from conftest import PROJECT_MODELS, shared_model
from micro_rt.cli import COMMANDS, build_parser, parse_size

MODEL = str(PROJECT_MODELS / "mobilenet_tiny_int8.tflite")


def test_parse_size():
    assert parse_size("256K") == 262144
    assert parse_size("1M") == 1048576
    assert parse_size("1.5MiB") == 1572864
    assert parse_size("8192") == 8192


def test_info_lists_ops_with_macs(capsys):
    code, out, _ = run_cli(capsys, "info", MODEL, "--json")
    assert code == 0
    info = json.loads(out)
    assert info["total_macs"] > 0
    conv = next(o for o in info["ops"] if o["op"] == "CONV_2D")
    out_shape, w_shape = conv["outputs"][0]["shape"], conv["inputs"][1]["shape"]
    assert conv["macs"] == np.prod(out_shape) * np.prod(w_shape[1:])
    assert info["unsupported_ops"] == []


def test_info_names_unsupported_ops(capsys, tmp_path):
    path = tmp_path / "my_op.tflite"
    path.write_bytes(chain_with("MY_OP", custom=True))
    code, out, _ = run_cli(capsys, "info", str(path))
    assert code == 0 and "MY_OP" in out and "not supported" in out


def test_plan_json_keys(capsys):
    code, out, _ = run_cli(capsys, "plan", MODEL, "--target", "cortex-m4", "--json")
    assert code == 0
    plan = json.loads(out)
    for key in ("target", "planner", "head_bytes", "tail_bytes", "total_bytes", "buffers"):
        assert key in plan
    assert plan["total_bytes"] == plan["head_bytes"] + plan["tail_bytes"]
    assert set(plan["buffers"][0]) == {"tensor", "name", "kind", "offset", "size", "first_use", "last_use"}
    assert max(b["offset"] + b["size"] for b in plan["buffers"]) == plan["head_bytes"]


def test_plan_planners_differ(capsys):
    heads = {}
    for planner in ("greedy", "linear"):
        _, out, _ = run_cli(capsys, "plan", MODEL, "--planner", planner, "--json")
        heads[planner] = json.loads(out)["head_bytes"]
    assert heads["greedy"] < heads["linear"]


def test_plan_offline_on_vela_model(capsys):
    code, out, _ = run_cli(capsys, "plan", str(shared_model("person_detect_vela.tflite")),
                           "--planner", "offline", "--json")
    assert code == 0
    plan = json.loads(out)
    assert plan["planner"] == "offline" and not plan["unresolved_ops"]   # ethos-u is registered


def test_plan_offline_without_metadata_is_an_error(capsys):
    code, _, err = run_cli(capsys, "plan", MODEL, "--planner", "offline")
    assert code == 2 and "OfflineMemoryAllocation" in err and "Traceback" not in err


def test_fit_verdicts_and_exit_codes(capsys):
    code, out, _ = run_cli(capsys, "fit", MODEL, "--ram", "256K", "--flash", "1M",
                           "--kernels", "cmsis-nn", "--json")
    verdict = json.loads(out)
    assert code == 0 and verdict["fits"] is True
    assert verdict["ram"]["margin"] == 262144 - verdict["ram"]["used"]
    assert set(verdict["arena"]) >= {"head_bytes", "tail_bytes", "total_bytes"}
    arena = verdict["arena"]["total_bytes"]
    code, out, _ = run_cli(capsys, "fit", MODEL, "--ram", str(arena // 2))
    assert code == 1 and "DOES NOT FIT" in out
    code, out, _ = run_cli(capsys, "fit", MODEL, "--ram", "1M", "--flash", "1K", "--json")
    assert code == 1 and json.loads(out)["flash"]["fits"] is False


@pytest.mark.parametrize("extra", [["--no-emulate"], ["--kernels", "cmsis-nn"]])
def test_fit_margin_is_exact_at_the_boundary(capsys, extra):
    _, out, _ = run_cli(capsys, "fit", MODEL, "--ram", "1M", "--json", *extra)
    needed = json.loads(out)["ram"]["used"]
    assert run_cli(capsys, "fit", MODEL, "--ram", str(needed), *extra)[0] == 0
    assert run_cli(capsys, "fit", MODEL, "--ram", str(needed - 1), *extra)[0] == 1


def test_bad_model_is_one_line_exit_2(capsys, tmp_path):
    bad = tmp_path / "bad.tflite"
    bad.write_bytes(b"\x00" * 64)
    code, _, err = run_cli(capsys, "plan", str(bad))
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("micro-rt: error:")
    code, _, err = run_cli(capsys, "info", str(tmp_path / "missing.tflite"))
    assert code == 2 and "cannot read model" in err


def test_run_prints_outputs_and_checks_oracle(capsys, oracle):
    code, out, _ = run_cli(capsys, "run", MODEL, "--seed", "3", "--check", "--json")
    result = json.loads(out)
    assert code == 0
    assert result["check"]["equal"] and all(c["equal"] for c in result["check"]["outputs"])
    assert result["outputs"][0]["dequantized"] is not None


def test_run_with_npy_input(capsys, tmp_path):
    x = np.random.default_rng(0).integers(-128, 128, (1, 32, 32, 3)).astype(np.int8)
    path = tmp_path / "x.npy"
    np.save(path, x)
    code, out, _ = run_cli(capsys, "run", MODEL, "--input", str(path), "--json")
    assert code == 0 and len(json.loads(out)["outputs"][0]["raw"][0]) == 10


def test_console_script_is_installed():
    exe = shutil.which("micro-rt", path=str(__import__("pathlib").Path(sys.executable).parent))
    assert exe is not None
    result = subprocess.run([exe, "fit", MODEL, "--ram", "64K", "--kernels", "cmsis-nn"],
                            capture_output=True, text=True)
    assert result.returncode in (0, 1) and "arena" in result.stdout


# the least each command needs to parse
_ARGV = {"optimize": ["-o", "out.tflite"], "export": ["--board", "b", "-o", "dir"],
         "compare": ["model_b.tflite"]}


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("flag", ["--quiet", "--debug"])
def test_quiet_and_debug_go_before_or_after_the_command(command, flag):
    parser = build_parser()
    rest = [command, "m.tflite", *_ARGV.get(command, [])]
    for argv in ([flag, *rest], [*rest, flag]):
        args = parser.parse_args(argv)
        assert getattr(args, flag[2:]) is True, argv
    args = parser.parse_args(rest)
    assert (args.quiet, args.debug) == (False, False)


def test_quiet_before_the_command_silences_warnings(capsys, tmp_path):
    path = tmp_path / "my_op.tflite"
    path.write_bytes(chain_with("MY_OP", custom=True))
    code, _, err = run_cli(capsys, "plan", str(path))
    assert code == 0 and "warning: no kernel for" in err
    for argv in (["--quiet", "plan", str(path)], ["plan", str(path), "--quiet"]):
        code, out, err = run_cli(capsys, *argv)
        assert code == 0 and err == "" and "head" in out
