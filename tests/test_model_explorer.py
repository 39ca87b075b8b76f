"""Node data for Google's Model Explorer, checked with the package itself (ai-edge-model-explorer):
its dataclasses read our files and write them back identically, its TFLite adapter names the
nodes our keys point at, and its web app (served by `model-explorer`, opened in Chromium) shows
the figures on the graph."""
from __future__ import annotations

import json
import socket
import subprocess
import sys
import time

import pytest

from browser import Page, chromium, screenshot_dir
from conftest import PROJECT_MODELS, missing
from micro_rt.cli import main

MODEL = PROJECT_MODELS / "inception_block_int8.tflite"


def _explorer():
    try:
        import model_explorer
        from model_explorer import node_data_builder
    except ImportError:
        missing("ai-edge-model-explorer not installed (pip install -e '.[test]')")
    return model_explorer, node_data_builder


@pytest.fixture(scope="module")
def node_data(tmp_path_factory):
    out = tmp_path_factory.mktemp("node_data")
    import contextlib
    import io
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(["report", str(MODEL), "--optimize-seconds", "0", "--json",
                     "--model-explorer", str(out)]) == 0
    report = json.loads(buf.getvalue())
    return out, report


def test_files_round_trip_through_the_packages_dataclasses(node_data):
    import dacite
    _, builder = _explorer()
    out, report = node_data
    files = sorted(out.glob(f"{MODEL.stem}.*.json"))
    assert {f.name.split(".")[1] for f in files} >= {"cycles", "macs", "live_bytes", "weight_bytes"}
    for path in files:
        text = path.read_text()
        graphs = {gid: dacite.from_dict(builder.GraphNodeData, g, dacite.Config(strict=True))
                  for gid, g in json.loads(text).items()}
        assert builder.ModelNodeData(graphsData=graphs).to_json_string(indent=2) == text
    cycles = json.loads((out / f"{MODEL.stem}.cycles.json").read_text())["main"]["results"]
    assert {int(k): v["value"] for k, v in cycles.items()} == \
        {o["index"]: o["cycles"] for o in report["operators"]}


def test_keys_are_the_adapters_operator_nodes(node_data):
    _explorer()
    from model_explorer.builtin_tflite_flatbuffer_adapter import BuiltinTfliteFlatbufferAdapter
    out, report = node_data
    graphs = BuiltinTfliteFlatbufferAdapter().convert(str(MODEL), {})["graphCollections"][0].graphs
    main_graph = next(g for g in graphs if g["id"] == "main")
    nodes = {n["id"]: n["label"] for n in main_graph["nodes"]}
    data = json.loads((out / f"{MODEL.stem}.macs.json").read_text())
    assert set(data) == {"main"}
    for key in data["main"]["results"]:
        op = report["operators"][int(key)]["op"]
        assert nodes[key] == op.lower()          # the adapter labels CONV_2D as conv_2d


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_model_explorer_shows_the_cycles_on_the_graph(node_data, tmp_path_factory):
    _explorer()
    out, report = node_data
    cycles = out / f"{MODEL.stem}.cycles.json"
    port = _free_port()
    log = out / "model_explorer.log"
    with open(log, "w") as sink:      # a file, not a pipe: the server's log never blocks it
        server = subprocess.Popen(
            [sys.executable, "-m", "model_explorer", str(MODEL), f"--node_data_paths={cycles}",
             "--no_open_in_browser", "--host", "127.0.0.1", "--port", str(port)],
            stdout=sink, stderr=subprocess.STDOUT, text=True)
    try:
        url = None
        deadline = time.monotonic() + 120
        while url is None and time.monotonic() < deadline and server.poll() is None:
            url = next((line.strip() for line in log.read_text().splitlines()
                        if line.startswith(f"http://127.0.0.1:{port}/")), None)
            time.sleep(0.2)
        assert url, f"model-explorer did not start: {log.read_text()[-2000:]}"
        with chromium() as browser:
            page = Page(browser, screenshot_dir(tmp_path_factory))
            page.page.goto(url)
            first = report["operators"][0]["cycles"]
            page.page.get_by_text("micro_rt cycles").first.wait_for(timeout=60_000)
            page.page.get_by_text(str(first), exact=True).first.wait_for(timeout=60_000)
            page.shot("model_explorer_cycles", full_page=False)
            # The web app asks for web fonts, which are not here; it is its request, not ours.
            assert all("fonts" in u for u in page.outside), page.outside
            page.close()
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
