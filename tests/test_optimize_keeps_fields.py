"""`optimize` changes the operator order and the offline-plan metadata, nothing else: every
other field of every tensor, operator, buffer, metadata entry and signature def is read back
equal, with the oracle package's own schema reader (an independent one)."""
from __future__ import annotations

import json

import numpy as np
import pytest

from conftest import PROJECT_MODELS, missing, oracle_available, shared_model
from micro_rt.cli import main
from micro_rt.optimize import optimize
from micro_rt.optimize.writing import OFFLINE_METADATA, ModelEdit, rewrite_model


@pytest.fixture(scope="module")
def tfl():
    if not oracle_available():
        missing("tflite-micro (its schema reader checks the rewritten fields)")
    from tflite_micro.tensorflow.lite.micro.python import schema_py_generated
    return schema_py_generated


def _unpack(tfl, data: bytes):
    return tfl.ModelT.InitFromObj(tfl.Model.GetRootAsModel(data, 0))


def _pack(tfl, model) -> bytes:
    import flatbuffers
    fb = flatbuffers.Builder(1024)
    fb.Finish(model.Pack(fb), file_identifier=b"TFL3")
    return bytes(fb.Output())


def _plain(value):
    """Object-API records as comparable plain values."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if hasattr(value, "__dict__"):
        return {k: _plain(v) for k, v in sorted(vars(value).items())}
    return value


def enriched(tfl, data: bytes) -> bytes:
    """The model with what converters write and micro_rt does not model: min/max on every
    quantized tensor, shape_signature, a signature def, an extra metadata entry."""
    m = _unpack(tfl, data)
    sg = m.subgraphs[0]
    rng = np.random.default_rng(0)
    for t in sg.tensors:
        q = t.quantization
        if q is not None and q.scale is not None:
            n = len(q.scale)
            q.min = (-rng.uniform(1, 5, n)).astype(np.float32)
            q.max = rng.uniform(1, 5, n).astype(np.float32)
        if t.shape is not None and t.shapeSignature is None:
            t.shapeSignature = np.array([-1] + list(t.shape[1:]), np.int32)
    if not m.signatureDefs:
        sig = tfl.SignatureDefT()
        sig.signatureKey = b"serving_default"
        sig.subgraphIndex = 0
        sig.inputs, sig.outputs = [], []
        for names, indices in ((sig.inputs, sg.inputs), (sig.outputs, sg.outputs)):
            for i in indices:
                tm = tfl.TensorMapT()
                tm.name, tm.tensorIndex = sg.tensors[i].name, int(i)
                names.append(tm)
        m.signatureDefs = [sig]
    extra = tfl.BufferT()
    extra.data = np.frombuffer(b"kept as it is", np.uint8)
    m.buffers.append(extra)
    meta = tfl.MetadataT()
    meta.name, meta.buffer = b"user_notes", len(m.buffers) - 1
    m.metadata = (m.metadata or []) + [meta]
    return _pack(tfl, m)


def assert_only_order_and_plan_changed(tfl, before: bytes, after: bytes, order, offsets):
    a, b = _unpack(tfl, before), _unpack(tfl, after)
    for name in ("version", "description", "operatorCodes", "metadataBuffer", "signatureDefs"):
        assert _plain(getattr(a, name)) == _plain(getattr(b, name)), name
    assert len(a.subgraphs) == len(b.subgraphs)
    sa, sb = a.subgraphs[0], b.subgraphs[0]
    for name in ("tensors", "inputs", "outputs", "name", "debugMetadataIndex"):
        assert _plain(getattr(sa, name)) == _plain(getattr(sb, name)), name
    assert [_plain(sa.operators[i]) for i in order] == [_plain(op) for op in sb.operators]
    for sga, sgb in zip(a.subgraphs[1:], b.subgraphs[1:]):
        assert _plain(sga) == _plain(sgb)

    def entries(m):
        return [(e.name.decode(), e.buffer) for e in (m.metadata or [])]
    plan_a = dict(entries(a)).get(OFFLINE_METADATA)
    plan_b = dict(entries(b)).get(OFFLINE_METADATA)
    kept_a = [(n, _plain(a.buffers[i])) for n, i in entries(a) if n != OFFLINE_METADATA]
    kept_b = [(n, _plain(b.buffers[i])) for n, i in entries(b) if n != OFFLINE_METADATA]
    assert kept_a == kept_b, "metadata other than the plan"
    if offsets is None:
        assert plan_b is None
    else:
        raw = np.asarray(b.buffers[plan_b].data, np.uint8).tobytes()
        assert np.frombuffer(raw, "<i4").tolist() == [1, 1, len(offsets)] + list(offsets)
    for i, buf in enumerate(a.buffers):     # tensors' data (and everything else) untouched
        if i != plan_a:
            assert _plain(buf) == _plain(b.buffers[i]), f"buffer {i}"
    assert len(b.buffers) - len(a.buffers) <= 1


@pytest.mark.parametrize("name", ["pooling_int8.tflite", "conv_variants_int8.tflite",
                                  "mobilenet_tiny_int8.tflite", "offline_plan_chain.tflite"])
def test_optimize_keeps_every_other_field_of_project_models(tfl, name):
    data = enriched(tfl, (PROJECT_MODELS / name).read_bytes())
    result = optimize(data, time_limit=1)
    offsets = result.tensor_offsets if result.placement != "unchanged" else None
    assert_only_order_and_plan_changed(tfl, data, result.data, result.order, offsets)


@pytest.mark.parametrize("name", ["test_conv_model.tflite", "hello_world_int8.tflite",
                                  "trained_lstm_int8.tflite", "person_detect.tflite"])
def test_optimize_keeps_every_other_field_of_real_models(tfl, name):
    """Converter output as it is: min/max (test_conv_model), shape_signature and signature
    defs (hello_world, trained_lstm), 31 operators with their options (person_detect)."""
    data = shared_model(name).read_bytes()
    result = optimize(data, time_limit=1)
    assert_only_order_and_plan_changed(tfl, data, result.data, result.order, result.tensor_offsets)


def test_rewrite_reorders_and_replaces_metadata_in_place(tfl):
    data = enriched(tfl, (PROJECT_MODELS / "offline_plan_chain.tflite").read_bytes())
    n = len(_unpack(tfl, data).subgraphs[0].operators)
    order = list(reversed(range(n)))
    plan = [0] * len(_unpack(tfl, data).subgraphs[0].tensors)
    out = rewrite_model(data, ModelEdit(order, {OFFLINE_METADATA: np.asarray(
        [1, 1, len(plan)] + plan, "<i4").tobytes()}))
    assert_only_order_and_plan_changed(tfl, data, out, order, plan)
    names = [e.name.decode() for e in _unpack(tfl, out).metadata]
    assert names == [e.name.decode() for e in _unpack(tfl, data).metadata]     # same place
    removed = rewrite_model(out, ModelEdit(None, {OFFLINE_METADATA: None}))
    assert OFFLINE_METADATA not in [e.name.decode() for e in _unpack(tfl, removed).metadata]
    # buffers keep their 16-byte alignment in the file
    m = _unpack(tfl, out)
    assert len(m.buffers) == len(_unpack(tfl, data).buffers)


def test_cli_optimize_default_target_is_plans_and_is_printed(tmp_path, capsys):
    src = PROJECT_MODELS / "pooling_int8.tflite"
    out = tmp_path / "out.tflite"
    assert main(["optimize", str(src), "-o", str(out), "--no-check", "--time-limit", "1"]) == 0
    text = capsys.readouterr().out
    assert main(["plan", str(src), "--json"]) == 0
    plan_target = json.loads(capsys.readouterr().out)["target"]
    assert f"target: {plan_target}" in text
    assert main(["optimize", str(src), "-o", str(out), "--no-check", "--time-limit", "1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["target"] == plan_target


@pytest.mark.parametrize("name,reordered", [("pooling_int8.tflite", True),
                                            ("mobilenet_tiny_int8.tflite", False)])
def test_html_says_what_was_done_and_the_bytes_saved(tmp_path, capsys, name, reordered):
    src = PROJECT_MODELS / name
    page = tmp_path / "plans.html"
    assert main(["optimize", str(src), "-o", str(tmp_path / "o.tflite"), "--json", "--no-check",
                 "--time-limit", "1", "--html", str(page)]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["reordered"] is reordered
    text = page.read_text()
    saved = payload["original_head"] - payload["predicted_head"]
    assert saved > 0 and f"saves {saved} B" in text
    if reordered:
        assert "operators reordered" in text
    else:
        assert "file order kept" in text and "reordered," not in text


def test_rewrite_refuses_fields_it_would_lose(monkeypatch):
    """A Model field newer than micro_rt's schema cannot be copied: refuse, naming it."""
    from micro_rt.optimize import writing
    from micro_rt.errors import MicroRtError
    data = shared_model("hello_world_int8.tflite").read_bytes()      # has signature_defs (7)
    fields = {k: v for k, v in writing.MODEL_FIELDS.items() if k != 7}
    monkeypatch.setattr(writing, "MODEL_FIELDS", fields)
    with pytest.raises(MicroRtError, match=r"Model field\(s\) \[7\]"):
        rewrite_model(data, ModelEdit([0, 1, 2], {}))
