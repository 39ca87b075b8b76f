"""The pages: `plan --html`, `optimize --html` and `micro-rt report`, checked in their HTML and
in a real browser (Playwright driving the system's Chromium): no console errors, no request
leaving the file, one drawn box per planned buffer and one table row per buffer or operator
(counted against `plan --json` and `info --json`), and tooltips read by hovering."""
from __future__ import annotations

import json
import re

import pytest

from browser import Page, chromium, screenshot_dir
from conftest import PROJECT_MODELS, host_kernel_model, shared_model
from micro_rt.builder import ModelBuilder
from micro_rt.cli import main
from micro_rt.reports.charts import byte_label, ticks

MODEL = PROJECT_MODELS / "inception_block_int8.tflite"
PAGE_BYTES_LIMIT = 300_000          # a page small enough to attach to a CI run


def _json(capsys, argv: list) -> dict:
    assert main([*argv, "--json"]) in (0, 1, 3)
    return json.loads(capsys.readouterr().out)


def _chart_data(html: str) -> list[dict]:
    return [json.loads(m.replace("<\\/", "</")) for m in
            re.findall(r'<script type="application/json" class="chart-data">(.*?)</script>', html, re.S)]


def _write_plan_page(tmp_path, capsys, model, *extra) -> str:
    path = tmp_path / "plan.html"
    assert main(["plan", str(model), "--html", str(path), *extra]) == 0
    capsys.readouterr()
    return path.read_text()


# ---- the HTML itself ---------------------------------------------------------------------------
def test_plan_page_is_self_contained_with_a_box_and_a_row_per_buffer(tmp_path, capsys):
    html = _write_plan_page(tmp_path, capsys, MODEL)
    assert "src=" not in html and "href=" not in html and "@import" not in html
    assert "http://" not in html and "https://" not in html
    plan = _json(capsys, ["plan", str(MODEL)])
    buffers = plan["buffers"]
    assert len(re.findall(r'<rect class="box buf [^"]*" data-i=', html)) == len(buffers)
    assert len(re.findall(r'<tr id="lanes0-b\d+"', html)) == len(buffers)
    assert all(b["name"] in html for b in buffers if b["kind"] == "tensor")


def test_lane_columns_are_operators_numbered_as_info_and_profile(tmp_path, capsys):
    html = _write_plan_page(tmp_path, capsys, MODEL)
    info = _json(capsys, ["info", str(MODEL)])
    plan = _json(capsys, ["plan", str(MODEL)])
    lanes = _chart_data(html)[0]
    assert lanes["columns"] == ["in"] + [str(o["index"]) for o in info["ops"]]
    boxes = [it for it in lanes["items"] if it["row"]]
    for b, box in zip(plan["buffers"], boxes):
        # TFLM step s is operator s - 1; column 0 ("in") is step 0.
        assert (box["x0"], box["x1"]) == (b["first_use"], b["last_use"])
        assert (box["y0"], box["y1"]) == (b["offset"], b["offset"] + b["size"])
    ops = {o["index"]: o["op"] for o in info["ops"]}
    named = 0
    for box in boxes:        # line by line: "scratch of op 2" is followed by "144 B at ..."
        for k, name in (m for line in box["tip"] for m in re.findall(r"op (\d+) ([A-Z_0-9]+)", line)):
            assert ops[int(k)] == name          # tooltips name operators as info does
            named += 1
    assert named and any(b["kind"] == "scratch" for b in plan["buffers"])    # CMSIS-NN's scratch too


def test_tail_is_a_band_of_its_own(tmp_path, capsys):
    html = _write_plan_page(tmp_path, capsys, MODEL)
    plan = _json(capsys, ["plan", str(MODEL)])
    lanes = _chart_data(html)[0]
    tail = {k: v for k, v in plan["tail_breakdown"].items() if v > 0}
    assert [tip[0] for tip in lanes["band"]] == [f"tail (persistent): {k}" for k in
                                                 sorted(tail, key=lambda k: -tail[k])]
    assert sum(int(tip[1].split()[0].replace(",", "")) for tip in lanes["band"]) == plan["tail_bytes"]
    # The byte axis is the head's: the buffers fill the plot instead of a tail-sized void.
    assert plan["head_bytes"] <= lanes["top"] < 1.1 * plan["head_bytes"]


def test_untouched_tensors_get_a_column_of_their_own(tmp_path, capsys):
    b = ModelBuilder()
    t = [b.add_tensor(f"t{i}", [1, 64], "FLOAT32") for i in range(3)]
    b.add_operator("RELU", [t[0]], [t[1]])
    b.add_operator("RELU", [t[1]], [t[2]])
    b.add_tensor("nobody_uses_me", [1, 300], "INT8", scale=0.5, zero_point=0)
    b.inputs, b.outputs = [t[0]], [t[2]]
    model = tmp_path / "untouched.tflite"
    model.write_bytes(b.build())
    lanes = _chart_data(_write_plan_page(tmp_path, capsys, model))[0]
    assert lanes["columns"] == ["none", "in", "0", "1"]
    lonely = [it for it in lanes["items"] if "'nobody_uses_me'" in it["tip"][0]]
    assert len(lonely) == 1 and (lonely[0]["x0"], lonely[0]["x1"]) == (0, 0)
    assert any("live at no operator" in line for line in lonely[0]["tip"])


def test_offline_placed_buffers_are_marked_and_explained(tmp_path, capsys):
    html = _write_plan_page(tmp_path, capsys, PROJECT_MODELS / "offline_plan_chain.tflite")
    assert re.search(r'<rect class="box buf \w+ offline" data-i=', html)
    assert "placed by the offline plan" in html


def test_byte_ticks_are_round_in_kib_and_mib():
    assert ticks(2_600_000, "bytes")[:3] == [0, 512 * 1024, 1024 * 1024]
    assert [byte_label(v) for v in ticks(82_320, "bytes")] == [
        "0 B", "16 KiB", "32 KiB", "48 KiB", "64 KiB", "80 KiB"]
    assert ticks(2_500_000, "cycles")[1] == 500_000


def test_pages_of_a_large_model_stay_small(tmp_path, capsys):
    model = shared_model("mobilenet_v2_quantized_1x3x224x224.tflite")
    html = _write_plan_page(tmp_path, capsys, model)
    assert len(html.encode()) < PAGE_BYTES_LIMIT
    page = tmp_path / "report.html"
    assert main(["report", str(model), "--no-cycles", "--optimize-seconds", "0", "-o", str(page)]) == 0
    capsys.readouterr()
    assert len(page.read_bytes()) < PAGE_BYTES_LIMIT


# ---- in a real browser -------------------------------------------------------------------------
@pytest.fixture(scope="module")
def browser():
    with chromium() as b:
        yield b


@pytest.fixture(scope="module")
def shots(tmp_path_factory, request):
    path = screenshot_dir(tmp_path_factory)
    yield path
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    with capture.global_and_fixture_disabled():
        print(f"\nscreenshots of the pages: {path}")


@pytest.fixture
def open_page(browser, shots):
    pages = []

    def open_(path, width: int = 1400) -> Page:
        page = Page(browser, shots, width)
        page.page.goto(path.as_uri())
        pages.append(page)
        return page
    yield open_
    for page in pages:
        assert page.errors == [], page.errors
        assert page.outside == [], page.outside
        page.close()


def test_plan_page_of_mobilenet_v2_in_chromium(tmp_path, capsys, open_page):
    model = shared_model("mobilenet_v2_quantized_1x3x224x224.tflite")
    _write_plan_page(tmp_path, capsys, model)
    plan = _json(capsys, ["plan", str(model)])
    page = open_page(tmp_path / "plan.html")
    p = page.page
    assert p.locator("#lanes0 svg.plot rect.buf").count() == len(plan["buffers"])
    assert p.locator("#lanes0-table tbody tr").count() == len(plan["buffers"])
    # The plot fills the window: no wide blank margin beside it.
    plot = p.locator("#lanes0 svg.plot").bounding_box()
    assert plot["width"] > 0.85 * 1400 and plot["height"] >= 300
    # The smallest buffer is a sliver; it can still be hovered, and the tooltip names it.
    smallest = min(range(len(plan["buffers"])), key=lambda k: plan["buffers"][k]["size"])
    b = plan["buffers"][smallest]
    tip = page.hover_centre(p.locator(f'#lanes0 svg.plot rect[data-i="{smallest}"]'))
    assert f"{b['size']:,} B at offset {b['offset']:,}" in tip
    assert (b["name"] in tip) if b["kind"] == "tensor" else ("scratch of op" in tip)
    assert p.locator("#lanes0-b%d.hot" % smallest).count() == 1     # its table row lights up
    page.shot("plan_mobilenet_v2_hover", full_page=False)
    # Zoom: x+ doubles the plot's width inside its scrolling frame; "fit" undoes it.
    p.click("#lanes0 button[data-z=x][data-f='2']")
    assert p.locator("#lanes0 svg.plot").bounding_box()["width"] > 1.9 * plot["width"]
    assert p.locator("#lanes0 .xaxis text:not(.thin)").count() > 40
    page.shot("plan_mobilenet_v2_zoomed", full_page=False)
    p.click("#lanes0 button[data-z=reset]")
    assert abs(p.locator("#lanes0 svg.plot").bounding_box()["width"] - plot["width"]) < 2
    page.shot("plan_mobilenet_v2")


def test_report_page_with_host_kernels_in_chromium(tmp_path, capsys, open_page):
    model = host_kernel_model(tmp_path / "host_kernel.tflite")     # its SignalRfft runs on the host
    path = tmp_path / "report.html"
    rc = main(["report", str(model), "-o", str(path), "--ram", "64K", "--optimize-seconds", "0.5"])
    capsys.readouterr()
    assert rc == 3             # cycles incomplete and some parts not accounted: cannot tell
    info = _json(capsys, ["info", str(model)])
    profile = _json(capsys, ["profile", str(model)])
    host_ops = [o["index"] for o in profile["ops_not_counted"]]
    assert host_ops
    page = open_page(path)
    p = page.page
    assert p.locator("#ops-table tbody tr").count() == len(info["ops"])
    assert p.locator("#cycles svg.plot rect").count() == len(info["ops"])
    assert p.locator("#cycles svg.plot rect.nc").count() == len(host_ops)
    assert p.locator("#ops-table td.nc").filter(has_text="not counted").count() == len(host_ops)
    assert "CANNOT TELL" in p.inner_text(".verdict")
    assert "≥" in p.inner_text(".verdict") and "INCOMPLETE" in p.inner_text(".verdict")
    tip = page.hover_centre(p.locator(f'#cycles svg.plot rect[data-i="{host_ops[0]}"]'))
    assert "not counted" in tip and f"op {host_ops[0]} " in tip
    counted = [o for o in profile["ops"] if o["on_mcu"]]
    busiest = max(counted, key=lambda o: o["cycles"])
    tip = page.hover_centre(p.locator(f'#cycles svg.plot rect[data-i="{busiest["index"]}"]'))
    assert f"{busiest['cycles']:,} cycles" in tip
    # Sort by cycles (descending): the busiest operator comes first.
    p.click("#ops-table th[data-k=cycles]")
    assert p.locator("#ops-table tbody tr").first.get_attribute("id") == f"op-{busiest['index']}"
    page.shot("report_host_kernel")


def test_optimize_page_shows_before_and_after_in_chromium(tmp_path, capsys, open_page):
    src = PROJECT_MODELS / "pooling_int8.tflite"
    out, path = tmp_path / "out.tflite", tmp_path / "plans.html"
    assert main(["optimize", str(src), "-o", str(out), "--no-check", "--time-limit", "1",
                 "--html", str(path)]) == 0
    capsys.readouterr()
    before = _json(capsys, ["plan", str(src), "--target", "cortex-m4"])
    after = _json(capsys, ["plan", str(out), "--target", "cortex-m4"])
    page = open_page(path)
    p = page.page
    assert p.locator("#lanes0 svg.plot rect.buf").count() == len(before["buffers"])
    assert p.locator("#lanes1 svg.plot rect.buf").count() == len(after["buffers"])
    assert p.locator("#lanes1 svg.plot rect.offline").count() > 0
    # One byte scale for both: the optimized arena's boxes end lower on the same axis.
    assert p.text_content("#lanes0 .yaxis") == p.text_content("#lanes1 .yaxis")
    page.shot("optimize_pooling_int8")
