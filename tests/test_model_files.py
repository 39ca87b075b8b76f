"""Hostile files as the model or an input (issue 10): devices, FIFOs, directories, oversized
files and a huge unused INT4 constant are refused or loaded within bounded time and memory,
by the API and the CLI alike."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from conftest import PROJECT_MODELS, ROOT
from micro_rt import InputError, Interpreter, ModelError
from micro_rt.builder import ModelBuilder
from micro_rt.files import load_array, read_model_file
from micro_rt.model import MAX_MODEL_BYTES, read_model

MODEL = PROJECT_MODELS / "residual_block_int8.tflite"
HANG_BOUND = 60          # seconds; a blocked read would never return


def _python(code: str, *args: str, limit_bytes: int | None = None) -> subprocess.CompletedProcess:
    prelude = ""
    if limit_bytes is not None:
        prelude = (f"import resource; resource.setrlimit(resource.RLIMIT_AS, "
                   f"({limit_bytes}, {limit_bytes}))\n")
    return subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(code), *args],
                          capture_output=True, text=True, timeout=HANG_BOUND, cwd=ROOT)


def test_character_device_is_refused():
    with pytest.raises(ModelError, match="'/dev/zero' is a character device"):
        Interpreter.from_file("/dev/zero")


def test_directory_is_refused(tmp_path):
    with pytest.raises(ModelError, match="is a directory"):
        Interpreter.from_file(tmp_path)


def test_missing_file_names_it(tmp_path):
    with pytest.raises(ModelError, match="cannot read model .*No such file"):
        Interpreter.from_file(tmp_path / "absent.tflite")


def test_oversized_file_is_refused_without_reading_it(tmp_path):
    big = tmp_path / "big.tflite"
    with open(big, "wb") as f:
        f.truncate(MAX_MODEL_BYTES + 1)         # sparse: nothing to read, only a size
    with pytest.raises(ModelError, match=f"is {MAX_MODEL_BYTES + 1} bytes, over"):
        read_model_file(big)


def test_fifo_without_writer_does_not_block(tmp_path):
    fifo = tmp_path / "model.fifo"
    os.mkfifo(fifo)
    done = _python("""
        import sys
        from micro_rt import Interpreter, ModelError
        from micro_rt.files import load_array
        for load in (Interpreter.from_file, load_array):
            try:
                load(sys.argv[1])
            except ModelError as e:
                print("refused:", e)
            except Exception as e:
                print("refused:", type(e).__name__, e)
        """, str(fifo))
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("FIFO (named pipe)") == 2, done.stdout


@pytest.mark.parametrize("argv", [["plan", "{fifo}"], ["info", "/dev/zero"],
                                  ["run", str(MODEL), "--input", "{fifo}"],
                                  ["run", str(MODEL), "--input", "/dev/zero"]])
def test_cli_refuses_special_files(tmp_path, argv):
    fifo = tmp_path / "x.fifo"
    os.mkfifo(fifo)
    argv = [a.format(fifo=fifo) for a in argv]
    done = subprocess.run([sys.executable, "-m", "micro_rt.cli", *argv], capture_output=True,
                          text=True, timeout=HANG_BOUND, cwd=ROOT)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "regular files only" in done.stderr and "Traceback" not in done.stderr


def test_input_arrays_load_through_the_same_reader(tmp_path):
    good = tmp_path / "x.npy"
    np.save(good, np.arange(6, dtype=np.int8).reshape(2, 3))
    np.testing.assert_array_equal(load_array(good), np.arange(6).reshape(2, 3))
    pickled = tmp_path / "objects.npy"
    np.save(pickled, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(InputError, match="not a .npy file"):
        load_array(pickled)
    with pytest.raises(InputError, match="is a directory"):
        load_array(tmp_path)


# ---- a huge INT4 constant that nothing reads -----------------------------------------------
INT4_BYTES = 256 << 20          # 256 MiB packed: 512 Mi four-bit weights


def _model_with_unused_int4(packed_bytes: int) -> bytes:
    b = ModelBuilder()
    x = b.add_tensor("x", [1, 8], "FLOAT32")
    y = b.add_tensor("y", [1, 8], "FLOAT32")
    b.add_tensor("unused_int4", [2 * packed_bytes], "INT4",
                 data=np.full(packed_bytes, 0x9F, np.uint8).tobytes())
    b.add_operator("RELU", [x], [y])
    b.inputs, b.outputs = [x], [y]
    return b.build()


def test_int4_constants_unpack_when_read():
    model = read_model(_model_with_unused_int4(3))
    t = model.main.tensors[2]
    assert t.is_constant and t.type_name == "INT4" and t.data is None
    np.testing.assert_array_equal(t.int4_values(), [-1, -7] * 3)     # 0x9F: low 0xF, high 0x9


def test_unused_int4_constant_loads_in_bounded_memory(tmp_path):
    path = tmp_path / "int4.tflite"
    path.write_bytes(_model_with_unused_int4(INT4_BYTES))
    # The file itself must be read (256 MiB); nothing beyond it may be allocated for the
    # constant (unpacked it would be 512 MiB more, and the old unpacking peaked at ~4 GiB).
    done = _python("""
        import resource, sys
        import numpy as np
        from micro_rt import Interpreter
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        it = Interpreter.from_file(sys.argv[1])
        it.set_input(np.ones((1, 8), np.float32), 0)
        it.invoke()
        grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
        print(grown * 1024)
        """, str(path), limit_bytes=3 << 29)        # 1.5 GiB of address space
    assert done.returncode == 0, done.stderr[-2000:]
    grown = int(done.stdout.split()[-1])
    assert grown < INT4_BYTES + (96 << 20), f"peak RSS grew by {grown >> 20} MiB"
