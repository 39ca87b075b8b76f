"""Conversion, checks and the README section for make_models_ops.py (TensorFlow venv).

The oracle and micro_rt's reader live in the project venv: this module calls
`tflm_ops.py` there (`mm.TFLM_PYTHON`) for the op/type listing, for running each model in
tflite-micro and for the op x type acceptance table.
"""
from __future__ import annotations

import json
import subprocess
import tempfile
from dataclasses import dataclass

import numpy as np

import make_models as mm
from make_models import keras, schema, tf

OPS_DIR = mm.OUT_DIR / "ops"
HELPER = mm.OUT_DIR / "tflm_ops.py"
# The tensor type a variant's ops work in (dynamic-range models compute in float).
VARIANT_TYPE = {"f32": "FLOAT32", "int8": "INT8", "int16x8": "INT16", "int32": "INT32",
                "int64": "INT64", "bool": "BOOL", "dynamic_int8": "FLOAT32"}
MARKER = mm.OPS_SECTION
# Worst relative error (float outputs) or share of differing elements (integer/bool outputs)
# accepted against TensorFlow, by variant.
TOLERANCE = {"f32": (1e-4, 0.0), "int32": (1e-4, 0.0), "int64": (1e-4, 0.0), "bool": (1e-4, 0.0),
             "dynamic_int8": (0.02, 0.0), "int8": (0.15, 0.25), "int16x8": (0.02, 0.25)}


@dataclass
class Result:
    model: object
    variant: str
    file: str
    size: int
    desc: dict          # micro_rt's reader: ops and tensor types per subgraph
    options: list       # op variants (options) per subgraph, from TensorFlow's schema
    tf_error: str
    oracle: str         # "ok" / refusal text
    allocations: dict
    vs_ref: str         # oracle outputs against LiteRT's reference kernels


def _helper(*args: str) -> str:
    r = subprocess.run([str(mm.TFLM_PYTHON), str(HELPER), *args], capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"tflm_ops.py {args[0]} failed:\n{r.stdout}\n{r.stderr}")
    return r.stdout


# --------------------------------------------------------------------------- conversion

def build(m, v: str):
    keras.utils.set_random_seed(m.seed)
    mm._seed_counter[0] = m.seed * 1000
    return m.build(v)


def representative(g, seed: int):
    rng = np.random.default_rng(seed)

    def gen():
        for _ in range(mm.N_REPRESENTATIVE):
            yield [i.sample(rng) for i in g.inputs]
    return gen


def convert(m, v: str) -> bytes:
    g = build(m, v)
    if g.module is not None:
        conv = tf.lite.TFLiteConverter.from_concrete_functions([g.fn.get_concrete_function()], g.module)
        conv.experimental_enable_resource_variables = True
    else:
        cf = tf.function(g.fn, input_signature=[i.spec() for i in g.inputs],
                         autograph=False).get_concrete_function()
        conv = tf.lite.TFLiteConverter.from_concrete_functions([cf])
    if v in ("int8", "int16x8", "dynamic_int8"):
        conv.optimizations = [tf.lite.Optimize.DEFAULT]
        conv._experimental_disable_per_channel = m.per_tensor
    if v == "int8":
        conv.representative_dataset = representative(g, m.seed)
        conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
        conv.inference_input_type = conv.inference_output_type = tf.int8
        conv._experimental_variable_quantization = True     # int8 resource variables
    elif v == "int16x8":
        conv.representative_dataset = representative(g, m.seed)
        conv.target_spec.supported_ops = [
            tf.lite.OpsSet.EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8]
        conv.inference_input_type = conv.inference_output_type = tf.int16
    return conv.convert()


# --------------------------------------------------------------------------- inspection

ENUMS = {"padding": mm.PADDING, "fusedActivationFunction": mm.ACT,
         "mode": {0: "REFLECT", 1: "SYMMETRIC"}, "outputType": mm.TYPENAME}


def _option_text(o) -> list[str]:
    if o is None:
        return []
    default = type(o)()
    parts = []
    for k, val in sorted(vars(o).items()):
        if isinstance(val, (list, np.ndarray)):
            parts.append(f"{k}={list(np.asarray(val).tolist())}")
        elif isinstance(val, bytes):
            if val:
                parts.append(f"{k}={val.decode()}")
        elif val != getattr(default, k) or k == "padding":
            parts.append(f"{k}={ENUMS.get(k, {}).get(val, val)}")
    return parts


def op_variants(data: bytes) -> list[list[str]]:
    """Per subgraph: OP(options that differ from the defaults) for every operator."""
    model = schema.ModelT.InitFromPackedBuf(data, 0)
    return [[f"{mm.op_code(model, op)}({','.join(_option_text(op.builtinOptions))})".replace("()", "")
             for op in sg.operators] for sg in model.subgraphs]


# --------------------------------------------------------------------------- checks

def _as_list(out) -> list[np.ndarray]:
    return [np.asarray(o) for o in (out if isinstance(out, (tuple, list)) else [out])]


def _to_model(x: np.ndarray, d: dict) -> np.ndarray:
    scale, zp = d["quantization"]
    if scale and d["dtype"] in (np.int8, np.int16):
        info = np.iinfo(d["dtype"])
        return np.clip(np.round(x / scale) + zp, info.min, info.max).astype(d["dtype"])
    return x.astype(d["dtype"]).reshape(d["shape"])


def _from_model(y: np.ndarray, d: dict) -> np.ndarray:
    scale, zp = d["quantization"]
    return (y.astype(np.float32) - zp) * scale if scale else y


def _error(y: np.ndarray, r: np.ndarray) -> tuple[float, bool]:
    """(error, is_float): relative to the output's range for floats, else differing share."""
    if y.shape != r.shape:
        raise AssertionError(f"output shape {y.shape} != TensorFlow's {r.shape}")
    if np.issubdtype(r.dtype, np.floating):
        return float(np.max(np.abs(y - r)) / max(1e-6, float(np.max(np.abs(r))))), True
    return float(np.mean(y != r)), False


def _lsb_diff(ours: np.ndarray, ref: np.ndarray) -> str:
    if ours.shape != ref.shape:
        return f"shape {ours.shape} vs {ref.shape}"
    if np.issubdtype(ref.dtype, np.floating):
        return f"max |diff| {float(np.max(np.abs(ours - ref))):.2g}"
    n = int(np.count_nonzero(ours != ref))
    if n == 0:
        return "exact"
    return f"{n}/{ref.size} differ (max {int(np.max(np.abs(ours.astype(np.int64) - ref.astype(np.int64))))})"


def _litert(data: bytes):
    """LiteRT with its reference kernels, or (for ops the reference resolver lacks, e.g.
    CEIL) its builtin kernels without delegates."""
    kinds = tf.lite.experimental.OpResolverType
    for kind in (kinds.BUILTIN_REF, kinds.BUILTIN_WITHOUT_DEFAULT_DELEGATES):
        try:
            it = tf.lite.Interpreter(model_content=data, experimental_op_resolver_type=kind)
        except ValueError:
            continue
        it.allocate_tensors()
        return it, ("reference" if kind == kinds.BUILTIN_REF else "builtin")
    raise AssertionError("LiteRT cannot load the model")


def check_model(m, v: str, data: bytes) -> Result:
    fname = f"{m.name}_{v}.tflite"
    path = OPS_DIR / fname
    path.write_bytes(data)
    desc = json.loads(_helper("--describe", str(path)))[str(path)]
    found = {op for sg in desc["subgraphs"] for op in sg["ops"]}
    g = build(m, v)
    for want in g.expect:
        full = want if ":" in want else f"{want}:{VARIANT_TYPE[v]}"
        if full not in found:
            raise AssertionError(f"{fname}: expected {full}, micro_rt's reader found {sorted(found)}")

    # The same seeded steps through TensorFlow itself (fresh weights and state), the oracle
    # (a child process) and LiteRT; TFLM's outputs are held against TensorFlow's and LiteRT's.
    rng = np.random.default_rng(m.seed + 1000)
    steps = [[i.sample(rng) for i in g.inputs] for _ in range(m.steps)]
    ref = [_as_list(g.fn(*[tf.constant(x) for x in xs])) for xs in steps]
    lrt, resolver = _litert(data)
    ins, outs = lrt.get_input_details(), lrt.get_output_details()
    typed = [[_to_model(x, d) for x, d in zip(xs, ins)] for xs in steps]
    with tempfile.TemporaryDirectory() as tmp:
        np.savez(f"{tmp}/in.npz", **{f"step{k}_in{i}": x for k, xs in enumerate(typed)
                                     for i, x in enumerate(xs)})
        verdict = json.loads(_helper("--run", str(path), f"{tmp}/in.npz", f"{tmp}/out.npz"))
        ok = verdict["status"] == "ok"
        if m.refusal and m.refusal not in verdict["detail"]:
            raise AssertionError(f"{fname}: the oracle should refuse with {m.refusal!r}: {verdict}")
        if not m.refusal and not ok:
            raise AssertionError(f"{fname}: the oracle {verdict['status']}: {verdict['detail']}")
        tflm = np.load(f"{tmp}/out.npz") if ok else None
    lrt_out, lrt_error = [], ""
    for xs in typed:
        for x, d in zip(xs, ins):
            lrt.set_tensor(d["index"], x)
        try:
            lrt.invoke()
        except RuntimeError as e:      # e.g. LiteRT has no int16 SQUARED_DIFFERENCE
            lrt_error = str(e).split("Node number")[0].strip()
            break
        lrt_out.append([lrt.get_tensor(d["index"]).copy() for d in outs])
    if ok:
        got = [[tflm[f"step{k}_out{i}"] for i in range(len(outs))] for k in range(len(steps))]
    elif lrt_error:
        raise AssertionError(f"{fname}: neither TFLM nor LiteRT runs it: {lrt_error}")
    else:
        got = lrt_out
    worst = {True: 0.0, False: 0.0}
    for ys, rs in zip(got, ref):
        for y, d, r in zip(ys, outs, rs):
            err, is_float = _error(_from_model(y, d), r)
            worst[is_float] = max(worst[is_float], err)
    tol_f, tol_i = TOLERANCE[v]
    off = worst[True] > tol_f or worst[False] > tol_i
    if off != bool(m.tf_deviation):
        raise AssertionError(f"{fname}: against TensorFlow {worst}, tolerance {TOLERANCE[v]}"
                             + (f", expected a deviation: {m.tf_deviation}" if m.tf_deviation else ""))
    tf_error = f"{worst[True]:.2g}" + (f" / {worst[False]:.0%} int" if worst[False] else "")
    if off:
        tf_error += " (known TFLM deviation)"
    if not ok:
        vs_ref = "-"
    elif lrt_error:
        vs_ref = f"LiteRT cannot run it: {lrt_error}"
    else:
        diffs = {_lsb_diff(y, r) for ys, rs in zip(got, lrt_out) for y, r in zip(ys, rs)}
        vs_ref = ("exact" if diffs == {"exact"} else "; ".join(sorted(diffs - {"exact"}))) + f" ({resolver})"
    oracle = "ok" if ok else f"{verdict['status']}: {verdict['detail']}"
    return Result(m, v, fname, len(data), desc, op_variants(data), tf_error, oracle,
                  verdict.get("allocations") or {}, vs_ref)


# --------------------------------------------------------------------------- README

def write_readme(models, results) -> None:
    from ops_readme import section
    matrix = json.loads(_helper("--json"))
    readme = mm.OUT_DIR / "README.md"
    text = readme.read_text()
    head = text.split(MARKER)[0].rstrip() + "\n\n"
    readme.write_text(head + section(models, results, matrix, tf.__version__, keras.__version__,
                                     np.__version__))
    print("wrote", readme)
