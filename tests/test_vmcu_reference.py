"""The reference flavour on the virtual MCU (cortexm/src/mrt_ref_*.c, cortexm/ops/reference.py):
every reference C kernel bit-equal to its numpy twin on seeded inputs and edge values, the
registry never handing the reference flavour a CMSIS-NN-style kernel, bundled models whole on
the MCU with outputs equal to the host's, no SIMD instruction executed, and what the optimized
kernels buy (cycles per MAC) as a sanity fact.
"""
from __future__ import annotations

import numpy as np
import pytest

from vmcu_cases import (CONV_SHAPES, CORES_ALL, CORES_FAST, DW_SHAPES, ROOT, T, assert_model_whole_on_mcu,
                        assert_same, binary_case, conv_case, dw_case, fc_case, pool_case, q16_tensor, rand_i8,
                        rand_i16, run_both)
from vmcu_cases import called  # noqa: F401  (fixture)

REF = "reference"
MODELS = ROOT / "models"


def _edge_fills(shape, dtype, rng) -> list[np.ndarray]:
    """Inputs at the type's edges: all minimum, all maximum, and the two mixed at random."""
    info = np.iinfo(dtype)
    mixed = np.where(rng.random(shape) < 0.5, info.min, info.max).astype(dtype)
    return [np.full(shape, info.min, dtype), np.full(shape, info.max, dtype), mixed]


def _assert_reference_runs(core, case, rng, symbol: str, called, what: str) -> None:
    """The case on the reference kernel (`symbol` called, nothing else), equal to the twin on its
    seeded inputs and on edge inputs; the cmsis-nn flavour gives the MCU the same bits."""
    op, opts, ins, outs, seeds = case
    edges = {k: _edge_fills(ins[k].shape, ins[k].dtype, rng) for k in seeds}
    for fill in [seeds] + [{k: edges[k][j] for k in seeds} for j in range(3)]:
        called.clear()
        h, m, _ = run_both(core, op, opts, ins, outs, fill, kernels=REF)
        assert called == [symbol], f"{what}: called {called}"
        assert_same(h, m, what)
    _, c, _ = run_both(core, op, opts, ins, outs, seeds)
    _, m, _ = run_both(core, op, opts, ins, outs, seeds, kernels=REF)
    assert_same(m, c, f"{what}: the two flavours differ")


@pytest.mark.parametrize("core", CORES_ALL)
def test_conv_s8(core, called):
    rng = np.random.default_rng(101)
    for i, args in enumerate(CONV_SHAPES):
        n, ih, iw, ic, oc, fh, fw, st, pad, dil, pc, act, groups = args
        case = conv_case(rng, n, ih, iw, ic, oc, fh, fw, st, pad, dil, pc, act, groups, bias=(i != 2))
        _assert_reference_runs(core, case, rng, "mrt_ref_conv_s8", called, f"conv {args}")


@pytest.mark.parametrize("core", CORES_ALL)
def test_depthwise_s8(core, called):
    rng = np.random.default_rng(102)
    for args in DW_SHAPES:
        ih, iw, ic, mult, fh, fw, st, pad, dil, act, n = args
        case = dw_case(rng, ih, iw, ic, mult, fh, fw, st, pad, dil, act, n)
        _assert_reference_runs(core, case, rng, "mrt_ref_depthwise_conv_s8", called, f"dw {args}")


@pytest.mark.parametrize("core", CORES_FAST)
def test_fully_connected_s8(core, called):
    rng = np.random.default_rng(103)
    for batches, depth, out_depth, pc, act in [(1, 16, 10, False, "NONE"), (3, 37, 5, True, "RELU"),
                                               (2, 1, 7, False, "RELU6"), (1, 200, 3, True, "NONE")]:
        case = fc_case(rng, batches, depth, out_depth, pc, act)
        _assert_reference_runs(core, case, rng, "mrt_ref_fully_connected_s8", called,
                               f"fc {batches}x{depth}->{out_depth} per-channel {pc}")


def _pool16_case(rng, op, n, ih, iw, c, fh, fw, stride, pad, act="NONE"):
    op, opts, ins, outs, _ = pool_case(rng, op, n, ih, iw, c, fh, fw, stride, pad, act)
    x = q16_tensor(rng, 0, ins[0].shape)
    y = T(1, outs[0].shape, np.int16, scales=x.scales, zero_points=x.zero_points)
    return op, opts, [x], [y], {0: rand_i16(rng, x.shape)}


POOL_SHAPES = [(1, 8, 8, 5, 2, 2, 2, "VALID", "NONE"), (2, 7, 9, 3, 3, 3, 2, "SAME", "RELU6"),
               (1, 5, 5, 17, 5, 5, 1, "SAME", "NONE"), (1, 4, 6, 2, 3, 2, 3, "SAME", "RELU_N1_TO_1")]


@pytest.mark.parametrize("core", CORES_FAST)
@pytest.mark.parametrize("op", ["AVERAGE_POOL_2D", "MAX_POOL_2D"])
def test_pooling_s8_s16(core, op, called):
    rng = np.random.default_rng(104)
    kind = "avgpool" if op == "AVERAGE_POOL_2D" else "maxpool"
    for args in POOL_SHAPES:
        _assert_reference_runs(core, pool_case(rng, op, *args), rng, f"mrt_ref_{kind}_s8", called, f"{op} {args}")
        _assert_reference_runs(core, _pool16_case(rng, op, *args), rng, f"mrt_ref_{kind}_s16", called,
                               f"{op} int16 {args}")


def test_max_pool_s16_window_outside_the_image(called):
    """A window with no tap in the image: TFLM's reference gives the activation's minimum, as the
    twin does (the CMSIS-NN-style arm_max_pool_s16 leaves it unwritten, so that flavour runs the
    twin); the reference kernel runs it."""
    rng = np.random.default_rng(105)
    op, opts, ins, outs, seeds = _pool16_case(rng, "MAX_POOL_2D", 1, 2, 2, 3, 1, 1, 3, "SAME")
    opts.update(filter_width=1, filter_height=1)
    h, m, _ = run_both("cortex-m4", op, opts, ins, outs, seeds, kernels=REF)
    assert called == ["mrt_ref_maxpool_s16"]
    assert_same(h, m, "max pool int16, windows outside")


def _binary16_case(rng, op, shape1, shape2):
    op, opts, (a, b), (y,), _ = binary_case(rng, op, shape1, shape2)
    a16, b16 = q16_tensor(rng, 0, shape1), q16_tensor(rng, 1, shape2)
    y16 = T(2, y.shape, np.int16, scales=[rng.uniform(0.02, 0.2) / 64], zero_points=[0])
    return op, opts, [a16, b16], [y16], {0: rand_i16(rng, shape1), 1: rand_i16(rng, shape2)}


@pytest.mark.parametrize("core", CORES_FAST)
@pytest.mark.parametrize("op", ["ADD", "MUL"])
def test_add_mul_s8_s16(core, op, called):
    rng = np.random.default_rng(106)
    for shape in [(1, 4, 5, 3), (17,), (2, 3, 1, 8)]:
        _assert_reference_runs(core, binary_case(rng, op, shape, shape, "RELU" if op == "ADD" else "NONE"), rng,
                               "mrt_ref_binary_s8", called, f"{op} {shape}")
        _assert_reference_runs(core, _binary16_case(rng, op, shape, shape), rng, "mrt_ref_binary_s16", called,
                               f"{op} int16 {shape}")
    # broadcasting shapes: TFLM's reference runs its broadcasting loop, mrt_binary_s8 (shared)
    _assert_reference_runs(core, binary_case(rng, op, (2, 3, 1, 4), (1, 3, 5, 1)), rng, "mrt_binary_s8", called,
                           f"{op} broadcast")


@pytest.mark.parametrize("core", CORES_FAST)
def test_16x8_layers_run_the_reference_loop(core, called):
    """16x8 CONV_2D / DEPTHWISE_CONV_2D / FULLY_CONNECTED: mrt_conv_s16 (TFLM's reference loop),
    not the CMSIS-NN-style arm_*_s16 kernels the cmsis-nn flavour calls for the same layer."""
    rng = np.random.default_rng(107)
    x = q16_tensor(rng, 0, (1, 6, 6, 4))
    w = rand_i8(rng, (5, 3, 3, 4))
    ws = rng.uniform(0.002, 0.02, size=5)
    wt = T(1, w.shape, np.int8, data=w, scales=ws, zero_points=np.zeros(5, np.int64))
    b = T(2, (5,), np.int64, data=rng.integers(-200000, 200000, size=5))
    y = T(3, (1, 6, 6, 5), np.int16, scales=[0.03], zero_points=[0])
    opts = dict(padding="SAME", stride_w=1, stride_h=1, dilation_w_factor=1, dilation_h_factor=1,
                fused_activation_function="NONE")
    seeds = {0: rand_i16(rng, x.shape)}
    h, m, _ = run_both(core, "CONV_2D", opts, [x, wt, b], [y], seeds, kernels=REF)
    assert called == ["mrt_conv_s16"]
    assert_same(h, m, "conv 16x8")
    called.clear()
    run_both(core, "CONV_2D", opts, [x, wt, b], [y], seeds)
    assert called == ["arm_convolve_wrapper_s16"]


@pytest.mark.parametrize("core", CORES_FAST)
def test_batch_matmul_s8_runs_the_reference_loop(core, called):
    """BATCH_MATMUL int8 with contiguous rows: mrt_batch_matmul_s8 (TFLM's reference loop), where
    the cmsis-nn flavour calls arm_batch_matmul_s8; bit-equal to the twin either way."""
    from test_vmcu_batch_matmul import bmm_case
    rng = np.random.default_rng(108)
    for lhs, rhs in [((2, 3, 4), (2, 4, 5)), ((1, 5, 17), (17, 3))]:
        for adj_y, const_rhs in ((True, False), (False, True)):
            case = bmm_case(rng, "int8", lhs, rhs, False, adj_y, const_rhs)
            _assert_reference_runs(core, case, rng, "mrt_batch_matmul_s8", called, f"bmm {lhs} x {rhs}")
            called.clear()
            run_both(core, *case)
            assert called == ["arm_batch_matmul_s8"]


@pytest.mark.parametrize("core", CORES_FAST)
def test_transpose_conv_s8(core, called):
    from test_vmcu_transpose_conv import S8_SHAPES, transpose_conv_case
    rng = np.random.default_rng(109)
    for args in S8_SHAPES:
        *geom, padding, extra, bias, act = args
        case = transpose_conv_case(rng, "int8", *geom, padding, extra, bias, act)
        _assert_reference_runs(core, case, rng, "mrt_ref_transpose_conv_s8", called, f"transpose conv {args}")


@pytest.mark.parametrize("core", CORES_FAST)
@pytest.mark.parametrize("kind", ["int16", "int8"])
def test_svdf_s8(core, kind):
    """SVDF int8 input, int8 / int16 state: mrt_ref_svdf_* equal to the twin over invoke
    sequences (state carried over, reset midway), edge inputs, state zero points."""
    from devtools.op_models.svdf import svdf_model
    from test_kernels_svdf import INT_SHAPES
    from test_vmcu_svdf import _random_inputs, assert_mcu_matches_host
    from micro_rt import Interpreter
    for k, (batch, input_size, filters, rank, memory, act) in enumerate(INT_SHAPES):
        data = svdf_model(batch, input_size, filters, rank, memory, kind, act, seed=k,
                          state_zp=None if kind == "int16" else (127, -128, 0, 55, -37, 3)[k])
        run = _random_inputs(np.random.default_rng(k), (batch, input_size), memory + 3)
        assert_mcu_matches_host(data, core, run, reset_at=(memory + 1,), kernels=REF)
    with Interpreter.from_bytes(data, target=core, kernels=REF, emulate=True) as it:
        it.set_input(run[0], 0)
        it.invoke()
        suffix = "s8" if kind == "int8" else "state_s16_s8"
        assert f"mrt_ref_svdf_{suffix}" in it.executor.functions_used
        assert not any(name.startswith("mrt_svdf") for name in it.executor.functions_used)


def test_registry_never_gives_reference_a_cmsis_kernel():
    """Every reference entry replaces a KERNELS entry; the ones without a reference kernel yet
    give none (the op runs on its host kernel, reported as not counted); the others are shared."""
    from micro_rt.cortexm import ops
    assert set(ops.REFERENCE_KERNELS) <= set(ops.KERNELS)
    assert ("UNIDIRECTIONAL_SEQUENCE_LSTM", "int16") in ops.REFERENCE_KERNELS
    assert ops.WITHOUT_REFERENCE_KERNEL <= set(ops.KERNELS)
    assert not set(ops.REFERENCE_KERNELS) & ops.WITHOUT_REFERENCE_KERNEL
    dtypes = {"int8": np.int8, "int16": np.int16, "float32": np.float32}
    for (op, t) in ops.WITHOUT_REFERENCE_KERNEL:
        assert ops.kernel_for(op, dtypes[t], REF) is None and ops.kernel_for(op, dtypes[t]) is not None
    for (op, t), kernel in ops.REFERENCE_KERNELS.items():
        assert ops.kernel_for(op, dtypes[t], REF) is kernel is not ops.kernel_for(op, dtypes[t])
    assert ops.kernel_for("RESHAPE", np.int8, REF) is ops.kernel_for("RESHAPE", np.int8)


# --------------------------------------------------------------------------- whole models

REF_MODELS = ["mobilenet_tiny_int8", "residual_block_int8", "fully_connected_pt_int8", "elementwise_int8",
              "pooling_int8", "ops/transpose_conv_int8", "ops/batch_matmul_int8", "ops/binary_int16x8"]


@pytest.mark.parametrize("core", CORES_FAST)
@pytest.mark.parametrize("name", REF_MODELS)
def test_bundled_models_whole_on_mcu(core, name):
    assert_model_whole_on_mcu((MODELS / f"{name}.tflite").read_bytes(), name, core, kernels=REF)


# DSP-extension instructions (SIMD on halfwords / bytes, saturating, packing): what CMSIS-NN's
# kernels use and TFLM's reference kernels do not.
SIMD = ("smlad", "smladx", "smlald", "smlaldx", "smlsd", "smuad", "smusd", "sxtb16", "sxtab16", "uxtb16",
        "pkhbt", "pkhtb", "qadd16", "qsub16", "qadd8", "ssat16", "smulbb", "smultt", "smlabb", "sadd16")


def _simd_in(elf, name: str) -> list[str]:
    """The SIMD mnemonics in function `name` of the firmware image."""
    import capstone
    fn = elf.symbols[name]
    seg = next(g for g in elf.segments if g.executable and g.paddr <= fn.addr < g.paddr + len(g.data))
    code = seg.data[fn.addr - seg.paddr:fn.addr - seg.paddr + fn.size]
    md = capstone.Cs(capstone.CS_ARCH_ARM, capstone.CS_MODE_THUMB | capstone.CS_MODE_MCLASS)
    return [i.mnemonic for i in md.disasm(code, fn.addr) if i.mnemonic.split(".")[0] in SIMD]


def _executed(name: str, kernels: str) -> tuple[dict, object]:
    from micro_rt import Interpreter
    from micro_rt.inputs import random_inputs
    it = Interpreter.from_bytes((MODELS / f"{name}.tflite").read_bytes(), target="cortex-m4", kernels=kernels,
                                emulate=True)
    for i, x in enumerate(random_inputs(it, 0)):
        it.set_input(x, i)
    it.invoke()
    return dict(it.executor.functions_used), it


def test_reference_executes_no_simd_instruction():
    """The functions the reference flavour executed on the M4 hold no DSP SIMD instruction; the
    cmsis-nn flavour's do (so the check can see one)."""
    ref_simd, cmsis_simd = {}, {}
    for name in REF_MODELS:
        for kernels, found in ((REF, ref_simd), ("cmsis-nn", cmsis_simd)):
            functions, it = _executed(name, kernels)
            with it:
                elf = it.executor.mcu.elf
                for fn in functions:
                    simd = _simd_in(elf, fn)
                    if simd:
                        found[fn] = sorted(set(simd))
    assert ref_simd == {}, ref_simd
    assert any("smlad" in v for v in cmsis_simd.values()), cmsis_simd


def test_reference_conv_costs_more_cycles_per_mac_on_m4():
    """What the optimized kernels buy: more cycles per MAC for the reference CONV_2D on the M4
    (a sanity fact about the two flavours, not a timing threshold)."""
    from micro_rt.profile import emulated_profile
    data = (MODELS / "conv_variants_int8.tflite").read_bytes()
    per_mac = {}
    for kernels in (REF, "cmsis-nn"):
        report, it = emulated_profile(data, "cortex-m4", 100_000_000, kernels=kernels)
        it.close()
        assert report["complete"] and report["kernels"] == kernels
        conv = [op for op in report["ops"] if op["op"] == "CONV_2D"]
        per_mac[kernels] = sum(op["cycles"] for op in conv) / sum(op["macs"] for op in conv)
    assert per_mac[REF] > per_mac["cmsis-nn"], per_mac


# --------------------------------------------------------------------------- the commands

def test_profile_and_report_run_the_reference_kernels(capsys, tmp_path, monkeypatch):
    import json

    from cli_runner import run_cli
    from devtools.op_models.lstm import lstm_model
    model = str(MODELS / "mobilenet_tiny_int8.tflite")
    code, out, _ = run_cli(capsys, "profile", model, "--kernels", "reference", "--target", "cortex-m0plus", "--json")
    report = json.loads(out)
    assert code == 0 and report["kernels"] == REF and report["complete"] and report["total_cycles"] > 0
    assert "plain C loops" in report["kernels_note"]
    _, out, _ = run_cli(capsys, "profile", model, "--target", "cortex-m0plus", "--json")
    assert json.loads(out)["total_cycles"] != report["total_cycles"]
    code, out, _ = run_cli(capsys, "report", model, "--kernels", "reference", "--json")
    assert code == 0 and json.loads(out)["profile"]["kernels"] == REF
    # an op with a CMSIS-NN-style kernel and no reference one (the registry patched: every one
    # has one today): said, not counted
    from micro_rt.cortexm import ops
    monkeypatch.setattr(ops, "WITHOUT_REFERENCE_KERNEL", {("UNIDIRECTIONAL_SEQUENCE_LSTM", "int8")})
    path = tmp_path / "lstm.tflite"
    path.write_bytes(lstm_model("int8", 1, 3, 4, 4))
    code, out, _ = run_cli(capsys, "profile", str(path), "--kernels", "reference")
    assert code == 3 and "(ran on its host kernel, not counted)" in out
    assert "0 UNIDIRECTIONAL_SEQUENCE_LSTM: ran on a host kernel (no reference C kernel for int8)" in out
    assert "INCOMPLETE" in out


# --------------------------------------------------------------------------- every type case

def _type_cases():
    """test_op_coverage's cases of the operators the reference flavour runs differently (the
    others run the very kernel the cmsis-nn flavour does, which test_op_coverage runs)."""
    from micro_rt.cortexm.ops import REFERENCE_KERNELS
    from test_op_coverage import ACCEPTED_CASES
    ops = {op for op, _ in REFERENCE_KERNELS}
    return [p for p in ACCEPTED_CASES if p.values[1] in ops]


@pytest.mark.parametrize("label,op,data", _type_cases())
def test_every_type_case_runs_whole_with_reference_kernels(label, op, data):
    """test_op_coverage's single-op models of every type the host runs, for the operators the
    reference flavour replaces, with the reference flavour: every operator on a C kernel, none
    left on the host, none borrowed from the CMSIS-NN-style kernels it replaces."""
    from test_op_coverage import run_on_mcu
    ran = run_on_mcu(data, REF)
    if ran is None:
        return                  # the kernel refused the data at invoke, as the host kernel does (checked)
    records, executed = ran
    on_host = [f"{r.index} {r.op}" for r in records if not r.on_mcu]
    assert on_host == [], f"{label}: ran on a host kernel: {on_host}"
    replaced = {"arm_convolve_wrapper_s8", "arm_depthwise_conv_wrapper_s8", "arm_fully_connected_s8",
                "arm_fully_connected_per_channel_s8", "arm_avgpool_s8", "arm_max_pool_s8", "arm_avgpool_s16",
                "arm_max_pool_s16", "arm_elementwise_add_s8", "arm_elementwise_mul_s8", "arm_elementwise_add_s16",
                "arm_elementwise_mul_s16", "arm_convolve_wrapper_s16", "arm_depthwise_conv_s16",
                "arm_fully_connected_s16", "arm_batch_matmul_s8", "arm_transpose_conv_wrapper_s8", "mrt_svdf_s8",
                "mrt_svdf_state_s16_s8", "mrt_lstm_s8", "mrt_lstm_s16", "mrt_gemm_s8"}
    assert not executed & replaced, f"{label}: executed {sorted(executed & replaced)}"


def test_reference_emulation_needs_a_cortex_m_target():
    """kernels="reference" runs on the host unless emulation is asked for; on the host target
    emulation is refused, naming the target."""
    from micro_rt import Interpreter
    from micro_rt.errors import InputError
    data = (MODELS / "pooling_int8.tflite").read_bytes()
    assert not Interpreter.from_bytes(data, target="cortex-m4", kernels=REF).emulate
    with pytest.raises(InputError, match="Cortex-M target, not host64"):
        Interpreter.from_bytes(data, target="host64", kernels=REF, emulate=True)
