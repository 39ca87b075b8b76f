"""The firmware plan's IR (cortexm/firmware_plan.py): every bundled model the interpreter takes
plans, every operator a kernel call, every pointer word carrying a relocation; the plan's
words, resolved on a real machine, are the words the runners describe for that machine."""
from __future__ import annotations

import re
import struct
from pathlib import Path

import pytest

from micro_rt import Interpreter
from micro_rt.cortexm import firmware_plan as fp
from micro_rt.cortexm import firmware_plan_binary as fpb
from micro_rt.cortexm.firmware_plan_ir import ENTRY_WORDS
from micro_rt.cortexm import ops
from micro_rt.errors import MicroRtError

MODELS = Path(__file__).resolve().parents[1] / "models"
ALL_MODELS = sorted([*MODELS.glob("*.tflite"), *MODELS.glob("ops/*.tflite"), *MODELS.glob("control_flow/*.tflite")])
# Why the interpreter refuses a bundled model (nothing to plan): the refuse_* models and a
# custom operator without its registration.
KNOWN_REFUSALS = ("not supported", "custom op not registered", "Only int32_t are supported")


def _executor(path_or_data, core: str = "cortex-m4"):
    if isinstance(path_or_data, Path):
        it = Interpreter.from_file(str(path_or_data), target=core, kernels="cmsis-nn", emulate=True)
    else:
        it = Interpreter.from_bytes(path_or_data, target=core, kernels="cmsis-nn", emulate=True)
    return it, it._mcu()


def _plan(it, ex):
    return fp.build_plan(fp.plan_nodes(it), it.target.name, ex.mcu.arena_misalign, ex.mcu.arena_bytes)


def _resolved_against_machine(it, ex, plan):
    """Each entry's words resolved for ex's machine next to the words the runners describe for
    it (structs in ARGS); asserts they agree."""
    mcu = ex.mcu
    flash_base, state_base = 0x0900_0000, 0x0A00_0000
    resolve = fpb.resolver(plan, mcu.arena_base, flash_base, state_base, mcu.place_constant)
    calls = []
    for pn in plan.nodes:
        if isinstance(pn, fp.PlanNode):
            calls += ops.describe(mcu, pn.node, pn.tensors, pn.offsets, pn.scratch, pn.kernels, pn.persistent)
    entries = [e for e in plan.entries if e.opcode == fp.CALL]
    assert [c.symbol for c in calls] == [e.symbol for e in entries]
    blobs = {"plan": (flash_base, plan.plan_blob, dict(plan.plan_relocs)),
             "state": (state_base, plan.state_blob, dict(plan.state_relocs))}
    for entry, call in zip(entries, calls):
        args_base = mcu.args_base
        assert len(entry.args) == len(call.args)
        structs = {}
        for (region, offset, n), (addr, data) in zip(entry.blocks, call.blocks):
            assert len(data) == n
            structs[(region, offset)] = addr
            base, blob, relocs = blobs[region]
            for k in range(0, n - n % 4, 4):
                word = struct.unpack_from("<I", data, k)[0]
                reloc = relocs.get(offset + k)
                if reloc is None:
                    assert blob[offset + k:offset + k + 4] == data[k:k + 4], (entry.symbol, k)
                elif reloc.region in ("arena", "constants"):
                    assert resolve(reloc) == word, (entry.symbol, k, reloc)
                else:        # a struct pointing at another struct of the call
                    assert args_base <= word < mcu.args_end
            assert blob[offset + n - n % 4:offset + n] == data[n - n % 4:]
        for k, (w, real) in enumerate(zip(entry.args, call.args)):
            if isinstance(w, fp.Reloc) and w.region in ("plan", "state"):
                assert args_base <= real < mcu.args_end
            elif isinstance(w, fp.Reloc):
                assert resolve(w) == real & 0xFFFFFFFF, (entry.symbol, k, w)
            else:
                assert w == real & 0xFFFFFFFF, (entry.symbol, k)


@pytest.mark.parametrize("path", ALL_MODELS, ids=lambda p: p.name)
def test_every_bundled_model_plans(path):
    try:
        it, ex = _executor(path)
    except MicroRtError as e:          # a model the interpreter refuses: nothing to plan
        assert path.name.startswith("refuse_") or path.name == "custom_atan.tflite", e
        assert any(k in str(e) for k in KNOWN_REFUSALS), e
        return
    plan = _plan(it, ex)
    assert plan.entries
    assert [(e.node_index, e.host_reason) for e in plan.entries if e.on_host] == []
    assert all(len(e.args) <= fp.MAX_ARGS for e in plan.entries)
    assert all(0 <= e.target <= len(plan.entries) for e in plan.entries)
    # pointer words lie inside their regions (the arena: its planned bytes; one past the end
    # is a valid C pointer)
    for e in plan.entries:
        for w in e.args:
            if isinstance(w, fp.Reloc):
                assert 0 <= w.offset <= plan.region_size(w.region), (e.symbol, w)
    _resolved_against_machine(it, ex, plan)
    it.close()


@pytest.mark.parametrize("core", ["cortex-m0plus", "cortex-m7"])
def test_plans_agree_with_the_machine_on_other_cores(core):
    for name in ("mobilenet_tiny_int8.tflite", "residual_block_f32.tflite", "inception_block_int8.tflite"):
        it, ex = _executor(MODELS / name, core)
        _resolved_against_machine(it, ex, _plan(it, ex))
        it.close()


def test_a_misaligned_arena_keeps_its_offsets():
    it = Interpreter.from_file(str(MODELS / "conv_variants_int8.tflite"), target="cortex-m4", kernels="cmsis-nn",
                               emulate=True, mcu_options={"arena_misalign": 2})
    ex = it._mcu()
    plan = _plan(it, ex)
    _resolved_against_machine(it, ex, plan)
    first = plan.nodes[0]
    arena = [w for w in plan.entries[0].args if isinstance(w, fp.Reloc) and w.region == "arena"]
    offsets = set(first.offsets.values())
    assert arena and all(w.offset in offsets or w.region != "arena" for w in arena[:1])
    it.close()


def test_binary_image_lays_out_the_entry_table():
    it, ex = _executor(MODELS / "fully_connected_int8.tflite")
    plan = _plan(it, ex)
    mcu = ex.mcu
    resolve = fpb.resolver(plan, mcu.arena_base, 0x0900_0000, 0x0A00_0000, mcu.place_constant)
    image = fpb.binary_image(plan, resolve, mcu.symbol, 0x0900_0000, 0x0A00_0000)
    n, table = struct.unpack_from("<II", image.flash, image.plan_address - image.flash_base)
    assert n == len(plan.entries)
    assert table == image.flash_base + len(plan.plan_blob)
    for i, e in enumerate(plan.entries):
        words = struct.unpack_from("<%dI" % ENTRY_WORDS, image.flash,
                                   table - image.flash_base + 4 * ENTRY_WORDS * i)
        assert words[0] == mcu.symbol(e.symbol) | 1
        assert words[1] == fp.OPCODES[fp.CALL] << 8 | int(bool(e.refusal))
        assert len(words) == 2 + fp.MAX_ARGS
    it.close()


def test_a_runner_reading_run_time_values_is_named(monkeypatch):
    # no runner does now (the checks of run-time values are firmware calls: mrt_data_checks.c);
    # one that read a non-constant tensor's values while describing its calls becomes a host
    # entry, named
    it, ex = _executor(MODELS / "mobilenet_tiny_int8.tflite")
    describe = fp.ops.describe

    def reads_values(mcu, node, tensors, *args):
        for i in node.inputs:
            if i >= 0 and not tensors[i].is_constant:
                tensors[i].data
        return describe(mcu, node, tensors, *args)

    monkeypatch.setattr(fp.ops, "describe", reads_values)
    plan = _plan(it, ex)
    assert all(e.on_host and e.symbol == fp.HOST_SYMBOL for e in plan.entries)
    assert re.fullmatch(r"reads the values of tensor '.+' when its kernel call is set up .*", plan.entries[0].host_reason)
    assert not plan.plan_blob.strip(b"\0") and not plan.plan_relocs   # nothing kept of the failed descriptions
    it.close()


def test_kernel_written_structs_go_to_the_state_region():
    # Signal kernels keep state between invokes in their argument structs: RAM, not the plan
    from devtools.op_models.signal import SPECTRAL, single_op
    data = single_op("SignalFilterBankSpectralSubtraction", [((16,), "UINT32")],
                     [((16,), "UINT32"), ((16,), "UINT32")], SPECTRAL)
    it, ex = _executor(data)
    plan = _plan(it, ex)
    assert plan.state_blob and plan.entries[0].after is not None
    assert any(region == "state" for region, _, _ in plan.entries[0].blocks)
    _resolved_against_machine(it, ex, plan)
    it.close()


def test_control_flow_is_unrolled_into_copies_and_jumps():
    it, ex = _executor(MODELS / "control_flow" / "while_flags_int8.tflite")
    plan = _plan(it, ex)
    opcodes = [e.opcode for e in plan.entries]
    assert opcodes.count(fp.ENTER) == opcodes.count(fp.LEAVE) >= 1
    assert fp.JUMP_IF_FALSE in opcodes and fp.JUMP in opcodes
    loop = next(e for e in plan.entries if e.opcode == fp.JUMP and e.op_name == "WHILE")
    assert loop.target < plan.entries.index(loop)                   # WHILE jumps back to its cond
    exit_ = next(e for e in plan.entries if e.opcode == fp.JUMP_IF_FALSE and e.op_name == "WHILE")
    assert exit_.target > plan.entries.index(loop)                  # and leaves past the body
    assert isinstance(exit_.args[0], fp.Reloc) and exit_.args[0].region == "arena"
    assert any(e.symbol == "mrt_copy" and e.op_name == "WHILE" for e in plan.entries)
    _resolved_against_machine(it, ex, plan)
    it.close()
