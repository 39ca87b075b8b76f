"""micro_rt/struct_layouts.py, the sizes and alignments behind micro_rt/targets.py, is what
micro_rt/structs/tflm_structs.h gives: compiled again for the 32-bit Cortex-M build
(arm-none-eabi-gcc, no compression, short enums) and the host64 build the tflite-micro pip
package is (host gcc, USE_TFLM_COMPRESSION), the table comes out byte for byte as committed."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from conftest import require_tool
from devtools import struct_layouts
from micro_rt.targets import STRUCTS


@pytest.fixture(scope="module")
def rows():
    for cc, _ in struct_layouts.BUILDS.values():
        require_tool(cc)
    return struct_layouts.table_rows()


def test_the_table_is_what_the_header_gives(rows):
    text = struct_layouts.render(rows)
    assert struct_layouts.TABLE.read_text(encoding="utf-8") == text, \
        "micro_rt/struct_layouts.py differs from tflm_structs.h: run make structs"


def test_every_row_is_read_back(rows):
    assert [r[0] for r in rows] == list(STRUCTS)
    assert all(align > 0 for *_, host_align, arm_align in rows for align in (host_align, arm_align))


def test_kernel_op_data_rows_are_16_aligned(rows):
    """A kernel's op data row says 16 (AllocatePersistentBuffer's alignment), the others alignof."""
    source = Path(struct_layouts.HEADER).read_text(encoding="utf-8")
    opdata = source.split("#define MRT_KERNEL_OP_DATA(X)", 1)[1]
    for name in ("OpDataConv", "OpDataLSTMCmsis", "OpDataCircularBuffer"):
        assert f"X({name})" in opdata
        assert STRUCTS[name][2:] == (16, 16)
    assert STRUCTS["TfLiteEvalTensor"][2:] == (8, 4)        # pointers: the build's alignment


def test_a_header_that_does_not_compile_is_named(tmp_path, monkeypatch):
    require_tool("gcc")
    broken = tmp_path / "tflm_structs.h"
    broken.write_text("#define MRT_TABLE_RECORDS(X) X(NoSuchStruct)\n#define MRT_KERNEL_OP_DATA(X)\n")
    monkeypatch.setattr(struct_layouts, "HEADER", broken)
    with pytest.raises(struct_layouts.LayoutError, match="does not compile for host64"):
        struct_layouts.compile_rows("host64", tmp_path)


def test_an_op_data_struct_aligned_past_16_is_refused(tmp_path, monkeypatch):
    for cc, _ in struct_layouts.BUILDS.values():
        require_tool(cc)
    header = tmp_path / "tflm_structs.h"
    header.write_text("typedef struct { _Alignas(32) int x; } Wide;\n"
                      "#define MRT_TABLE_RECORDS(X)\n#define MRT_KERNEL_OP_DATA(X) X(Wide)\n")
    monkeypatch.setattr(struct_layouts, "HEADER", header)
    with pytest.raises(struct_layouts.LayoutError, match="Wide .*alignof 32"):
        struct_layouts.table_rows()


def test_host_compiler_is_lp64():
    """host64 means pointers and size_t of 8 bytes (the pip package's x86-64/arm64 build)."""
    cc = require_tool("gcc")
    r = subprocess.run([cc, "-m64", "-dM", "-E", "-x", "c", "/dev/null"], capture_output=True, text=True)
    assert "__SIZEOF_POINTER__ 8" in r.stdout and "__SIZEOF_SIZE_T__ 8" in r.stdout
