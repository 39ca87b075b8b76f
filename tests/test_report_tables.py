"""Tables for a person keep their numeric columns in view: a long TFLite tensor name is elided
in text and markdown (whole in CSV and JSON, and in the HTML page as the cell's tooltip, the
cell wrapped), and a 49-output UNPACK shows as '49 outputs' with the first few."""
from __future__ import annotations

import csv
import io
import json
import re

from cli_runner import run_cli
from conftest import shared_model
from micro_rt.builder import ModelBuilder
from micro_rt.report import elide
from micro_rt.reports.formats import Column, Shown, Table, summarise_items

LONG = ("model/sequential/conv2d_very_long_block_name/BiasAdd;model/sequential/"
        "conv2d_very_long_block_name/Conv2D;StatefulPartitionedCall:0")


def unpack_model(path) -> str:
    """int8 x [49, 2] -> RELU -> (a long name) -> UNPACK -> 49 outputs [2]."""
    b = ModelBuilder()
    x = b.add_tensor("x", (49, 2), "INT8", scale=0.1, zero_point=0)
    y = b.add_tensor(LONG, (49, 2), "INT8", scale=0.1, zero_point=0)
    rows = [b.add_tensor(f"row_{k}", (2,), "INT8", scale=0.1, zero_point=0) for k in range(49)]
    b.add_operator("RELU", [x], [y])
    b.add_operator("UNPACK", [y], rows, options={"num": 49, "axis": 0})
    b.inputs, b.outputs = [x], rows
    path.write_bytes(b.build())
    return str(path)


def test_elide_keeps_start_and_end_within_the_width():
    assert elide("short", 10) == "short"
    short = elide(LONG, 40)
    assert len(short) == 40 and short.startswith("model/sequential/") and \
        short.endswith("PartitionedCall:0") and "…" in short
    assert summarise_items(["a", "b", "c", "d"], "outputs") == "a b c d"
    assert summarise_items([f"t{k}" for k in range(49)], "outputs") == "49 outputs: t0 t1 t2 …"


def test_text_table_elides_a_long_name_and_csv_keeps_it():
    table = Table([Column("name", "name", width=20), Column("bytes", "bytes", True)],
                  [{"name": LONG, "bytes": 1234}, {"name": "x", "bytes": 5}])
    lines = table.text().splitlines()
    assert len({len(line) for line in lines}) == 1            # the numbers line up
    assert lines[1] == f"{elide(LONG, 20)}  1,234"
    assert next(csv.DictReader(io.StringIO(table.csv())))["name"] == LONG
    cell = re.search(r'<td class="wrap" title="([^"]*)">', table.html("t")).group(1)
    assert cell == LONG


def test_shown_cell_is_short_for_a_person_and_whole_in_csv():
    table = Table([Column("shapes", "shapes")], [{"shapes": Shown("a b c d e", "5 items")}])
    assert table.text().splitlines()[1] == "5 items"
    assert table.csv().splitlines()[1] == "a b c d e"
    assert '<td data-v="a b c d e" title="a b c d e">5 items</td>' in table.html("t")


def test_info_summarises_a_49_output_unpack(capsys, tmp_path):
    model = unpack_model(tmp_path / "unpack.tflite")
    code, out, _ = run_cli(capsys, "info", model)
    row = next(line for line in out.splitlines() if "UNPACK" in line)
    assert code == 0 and row.endswith("-> 49 outputs: int8[2], int8[2], int8[2], …")
    code, out, _ = run_cli(capsys, "info", model, "--format", "markdown")
    assert "| 49 outputs: int8[2] int8[2] int8[2] … |" in out and "| tensor |" in out
    code, out, _ = run_cli(capsys, "info", model, "--format", "csv")
    unpack = next(r for r in csv.DictReader(io.StringIO(out)) if r["op"] == "UNPACK")
    assert unpack["outputs"].split() == ["int8[2]"] * 49


def test_report_tables_and_page_keep_numbers_in_view(capsys, tmp_path):
    model = unpack_model(tmp_path / "unpack.tflite")
    page = tmp_path / "report.html"
    code, out, _ = run_cli(capsys, "report", model, "--no-cycles", "--optimize-seconds", "0",
                           "--format", "markdown")
    assert code == 0 and "| int8[49,2] -> 49 outputs: int8[2] int8[2] int8[2] … |" in out
    code, out, _ = run_cli(capsys, "report", model, "--no-cycles", "--optimize-seconds", "0",
                           "--format", "csv")
    unpack = next(r for r in csv.DictReader(io.StringIO(out)) if r["op"] == "UNPACK")
    assert unpack["shapes"] == "int8[49,2] -> " + " ".join(["int8[2]"] * 49)
    code, out, _ = run_cli(capsys, "report", model, "--no-cycles", "--optimize-seconds", "0",
                           "--json")
    assert any(b["name"] == LONG for b in json.loads(out)["buffers"])
    code, _, _ = run_cli(capsys, "report", model, "--no-cycles", "--optimize-seconds", "0",
                         "-o", str(page), "--quiet")
    html = page.read_text()
    # the buffer table's name cell wraps and carries the whole name as its tooltip
    assert f'<td class="wrap" title="{LONG}">{LONG}</td>' in html
    assert 'title="int8[49,2] -&gt; ' + " ".join(["int8[2]"] * 49) + '"' in html
    assert ">int8[49,2] -&gt; 49 outputs: int8[2] int8[2] int8[2] …</td>" in html
    assert "td.wrap{white-space:normal" in html


def test_profile_columns_stay_in_place_for_a_long_operator_name(capsys):
    code, out, _ = run_cli(capsys, "profile", str(shared_model("audio_preprocessor_int8.tflite")),
                           "--quiet")
    lines = out.splitlines()
    header = next(line for line in lines if line.lstrip().startswith("#  op"))   # after the flash line
    ops = [line for line in lines if re.match(r"\s+\d+  ", line)]
    assert code == 0 and any("SignalFilterBankSpectralSubtraction" in line for line in ops)
    assert {len(line) for line in ops} == {len(header)}
