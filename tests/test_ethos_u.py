"""Vela's ethos-u custom operator: TFLM's kernel's arena accounting (op data, two scratch
buffers sized by the node's inputs + outputs, a temporary tensor for the command stream) with
the NPU not simulated: run refuses, profile cannot tell (exit 3), fit lists the NPU.

The tflite-micro oracle has no ethos-u kernel ("Failed to get registration from op code
CUSTOM"), so the figures follow TFLM's kernels/ethos_u/ethosu.cc, checked here as differences
against the same model without the kernel."""
from __future__ import annotations

import json

import pytest

from cli_runner import run_cli
from conftest import shared_model
from micro_rt import Interpreter, KernelError, MutableOpResolver
from micro_rt.builder import ModelBuilder
from micro_rt.errors import MicroRtError

ETHOSU_OPTIONS = bytes([0x01, 0x04, 0x01])      # flexbuffer root: int8 1 (CO_TYPE_ETHOSU)


def npu_model(extra_inputs: int = 0, options: bytes = ETHOSU_OPTIONS) -> bytes:
    """The shape Vela writes: command stream, weights, scratch, fast scratch, input -> output."""
    b = ModelBuilder()
    cms = b.add_tensor("cms", [40], "UINT8", data=bytes(range(40)))
    flash = b.add_tensor("flash", [64], "UINT8", data=bytes(64))
    scratch = b.add_tensor("scratch", [256], "UINT8")
    fast = b.add_tensor("scratch_fast", [256], "UINT8")
    x = b.add_tensor("x", [1, 32], "INT8")
    extra = [b.add_tensor(f"x{i}", [1, 8], "INT8") for i in range(extra_inputs)]
    y = b.add_tensor("y", [1, 4], "INT8")
    b.add_operator("ethos-u", [cms, flash, scratch, fast, x, *extra], [y], custom_options=options)
    b.inputs, b.outputs = [x, *extra], [y]
    return b.build()


def _plans(data: bytes, target: str):
    with_kernel = Interpreter.from_bytes(data, target=target, plan_only=True).plan
    bare = Interpreter.from_bytes(data, target=target, plan_only=True,
                                  op_resolver=MutableOpResolver()).plan
    return with_kernel, bare


@pytest.mark.parametrize("target, size_t", [("host64", 8), ("cortex-m4", 4)])
@pytest.mark.parametrize("extra_inputs", [0, 3])
def test_scratch_buffers_follow_the_node_size(target, size_t, extra_inputs):
    plan, bare = _plans(npu_model(extra_inputs), target)
    n = 5 + extra_inputs + 1
    scratch = sorted(b.size for b in plan.buffers if b.kind == "scratch")
    rounded = lambda nbytes: -(-nbytes // 16) * 16
    assert scratch == sorted([rounded(8 * n), rounded(size_t * n)])
    assert not any(b.kind == "scratch" for b in bare.buffers)
    # tail: one ScratchBufferHandle (a pointer) per request, and OpData (three ints) placed
    # 16-aligned below what is already there
    assert plan.tail_breakdown["scratch buffer handles"] == 2 * size_t
    grew = plan.tail_breakdown["Persistent buffer data"] - bare.tail_breakdown["Persistent buffer data"]
    assert 12 <= grew < 12 + 2 * 16


def test_plan_of_vela_model_counts_the_kernel(capsys):
    path = str(shared_model("person_detect_vela.tflite"))
    code, out, err = run_cli(capsys, "plan", path, "--json", "--target", "cortex-m4")
    plan = json.loads(out)
    assert code == 0 and not plan["unresolved_ops"] and "no kernel" not in err
    scratch = sorted(b["size"] for b in plan["buffers"] if b["kind"] == "scratch")
    assert scratch == [32, 48]      # 6 base addresses: 6 x 8 and 6 x 4 rounded to 16
    names = {b["name"] for b in plan["buffers"]}
    assert {"_split_1_scratch", "_split_1_scratch_fast"} <= names


def test_run_refuses_and_says_the_npu_is_not_simulated():
    with Interpreter.from_bytes(npu_model()) as it:
        with pytest.raises(KernelError, match="ethos-u.*NPU.*not simulate"):
            it.invoke()


@pytest.mark.parametrize("options, message", [(b"", "no custom options")])
def test_bad_node_is_refused_in_prepare(options, message):
    with pytest.raises(MicroRtError, match=message):
        Interpreter.from_bytes(npu_model(options=options))


def test_co_processor_type_is_read_from_the_flexbuffer_root():
    from micro_rt.kernels.ethos_u import co_processor_type
    for options, expected in ((ETHOSU_OPTIONS, 1), (bytes([0x02, 0x04, 0x01]), 2)):
        with Interpreter.from_bytes(npu_model(options=options), plan_only=True) as it:
            assert co_processor_type(it.nodes[0]) == expected
    with Interpreter.from_bytes(npu_model(options=bytes([0x01, 0x01])), plan_only=True) as it:
        with pytest.raises(MicroRtError, match="malformed flexbuffer"):
            co_processor_type(it.nodes[0])


def test_profile_cannot_tell(capsys, tmp_path):
    path = tmp_path / "npu.tflite"
    path.write_bytes(npu_model())
    code, out, _ = run_cli(capsys, "profile", str(path), "--json")
    report = json.loads(out)
    assert code == 3 and report["total_cycles"] is None and not report["complete"]
    [entry] = report["ops_not_counted"]
    assert entry["op"] == "ethos-u" and entry["index"] == 0 and "not simulate" in entry["reason"]
    code, out, _ = run_cli(capsys, "profile", str(path))
    assert code == 3 and "cannot profile" in out and "NPU" in out and "no total" in out


def test_fit_counts_ram_and_lists_the_npu(capsys, tmp_path):
    path = tmp_path / "npu.tflite"
    path.write_bytes(npu_model())
    plan = Interpreter.from_bytes(npu_model(), target="cortex-m4", plan_only=True).plan
    code, out, _ = run_cli(capsys, "fit", str(path), "--ram", "1M", "--no-emulate", "--json")
    verdict = json.loads(out)
    assert code == 0 and verdict["fits"] is True
    assert verdict["ram"]["used"] == plan.required_bytes
    code, out, _ = run_cli(capsys, "fit", str(path), "--ram", "1M", "--kernels", "cmsis-nn", "--json")
    verdict = json.loads(out)
    assert code == 3 and verdict["fits"] is None
    assert any("ethos-u" in item and "NPU" in item for item in verdict["not_accounted"])
    code, _, _ = run_cli(capsys, "fit", str(path), "--ram", "64", "--kernels", "cmsis-nn")
    assert code == 1


def test_info_says_the_npu_is_not_simulated(capsys, tmp_path):
    path = tmp_path / "npu.tflite"
    path.write_bytes(npu_model())
    code, out, _ = run_cli(capsys, "info", str(path))
    assert code == 0 and "computation not simulated (NPU): ethos-u" in out
    code, out, _ = run_cli(capsys, "info", str(path), "--json")
    info = json.loads(out)
    assert info["not_simulated_ops"] == ["ethos-u"] and info["unsupported_ops"] == []
