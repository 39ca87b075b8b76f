"""The block-cost cache between processes (cortexm/block_store.py): a stored cost is served only
for the bytes it was priced from, a broken or unwritable cache costs time and one warning, never
a different cycle count."""
from __future__ import annotations

import json
import os
import subprocess
import sys

from conftest import PROJECT_MODELS
from micro_rt.cortexm.block_store import BlockStore, code_digest
from micro_rt.cortexm.core_timing import block_cost

BASE = 0x0800_0100
# movs r0,#1; adds r0,r0,r1; ldr r2,[r1]; bx lr  |  ldr r3,[r0]; str r3,[r1]; bx lr
CODE = bytearray(bytes.fromhex("0120" "4018" "0a68" "7047" "0368" "0b60" "7047"))
BLOCKS = [(BASE, 8), (BASE + 8, 6)]


def _read(addr: int, size: int) -> bytes:
    return bytes(CODE[addr - BASE:addr - BASE + size])


def _priced(core: str = "cortex-m4") -> list:
    return [block_cost(core, a, s, _read) for a, s in BLOCKS]


def test_a_stored_cost_equals_the_priced_one(tmp_path):
    path = tmp_path / "store.jsonl"
    BlockStore(path).add(_priced(), _read)
    again = BlockStore(path)
    assert [again.lookup(a, s, _read) for a, s in BLOCKS] == _priced()
    assert again.lookup(BASE, 4, _read) is None                 # another block: not stored


def test_other_bytes_at_the_same_block_are_priced_again(tmp_path):
    path = tmp_path / "store.jsonl"
    BlockStore(path).add(_priced(), _read)
    CODE[0] ^= 0x02                                         # movs r0,#3: another program's block
    try:
        store = BlockStore(path)
        assert store.lookup(*BLOCKS[0], _read) is None
        assert store.lookup(*BLOCKS[1], _read) == _priced()[1]
    finally:
        CODE[0] ^= 0x02


def test_a_corrupt_line_warns_once_and_keeps_the_others(tmp_path, capsys):
    path = tmp_path / "store.jsonl"
    first, second = _priced()
    BlockStore(path).add([first], _read)
    with open(path, "a") as fh:
        fh.write('[[1,2,"x"\n{"not": "a list"}\n')           # a torn write and a foreign line
    BlockStore(path).add([second], _read)
    store = BlockStore(path)
    assert store.lookup(*BLOCKS[0], _read) == first and store.lookup(*BLOCKS[1], _read) == second
    store.lookup(*BLOCKS[0], _read)
    err = capsys.readouterr().err
    assert err.count("micro_rt: warning: block-cost cache") == 1 and "2 unreadable line(s)" in err
    # the file was rewritten with its readable blocks: the next process reads it without a warning
    again = BlockStore(path)
    assert again.lookup(*BLOCKS[0], _read) == first and again.lookup(*BLOCKS[1], _read) == second
    assert "block-cost cache" not in capsys.readouterr().err
    assert not list(tmp_path.glob("*.tmp"))


def test_a_row_of_the_wrong_types_is_priced_again(tmp_path):
    """A row whose line parses but whose fields are of other types (a cycles string, a float
    size, an unhashable address) is never served; the rows beside it are."""
    path = tmp_path / "store.jsonl"
    first, second = _priced()
    digest = code_digest(_read(*BLOCKS[0]))
    rows = [[BASE, 8, digest, first.n_insns, "7", 0, first.last, 0],
            [BASE + 8, 6.0, code_digest(_read(*BLOCKS[1])), 3, 4, 0, "return", 1]]
    path.write_text(json.dumps(rows) + "\n" + json.dumps([[[1], 2, "d", 1, 1, 0, "x", 0]]) + "\n")
    store = BlockStore(path)
    assert store.lookup(*BLOCKS[0], _read) is None and store.lookup(*BLOCKS[1], _read) is None
    store.add([first, second], _read)
    assert BlockStore(path).lookup(*BLOCKS[0], _read) == first


def test_an_unwritable_cache_warns_once_and_prices_as_without_it(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("a file where the cache directory would be")
    store = BlockStore(blocker / "block_costs" / "store.jsonl")
    store.add(_priced()[:1], _read)
    store.add(_priced()[1:], _read)
    assert capsys.readouterr().err.count("cannot write") == 1
    assert store.lookup(*BLOCKS[1], _read) == _priced()[1]      # still served in this process


def test_cold_and_warm_processes_count_the_same_cycles(tmp_path):
    """Two processes profile one model through one cache directory: the second prices nothing
    anew (the file does not grow) and reports every count the first did."""
    model = PROJECT_MODELS / "mobilenet_tiny_int8.tflite"
    env = {**os.environ, "MICRO_RT_CACHE": str(tmp_path / "cache")}
    argv = [sys.executable, "-m", "micro_rt.cli", "profile", str(model), "--target", "cortex-m7", "--json"]
    runs, sizes = [], []
    for _ in range(2):
        done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
        assert "warning" not in done.stderr
        report = json.loads(done.stdout)
        runs.append([(o["op"], o["instructions"], o["cycles"]) for o in report["ops"]]
                    + [report["total_cycles"]])
        files = list((tmp_path / "cache" / "block_costs").glob("*-cortex-m7-*.jsonl"))
        assert len(files) == 1
        sizes.append(files[0].stat().st_size)
    assert runs[0] == runs[1]
    assert sizes[0] > 0 and sizes[1] == sizes[0]


def test_the_digest_is_of_the_bytes():
    assert code_digest(b"\x01\x20") != code_digest(b"\x03\x20") and len(code_digest(b"")) == 16
