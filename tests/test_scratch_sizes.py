"""The CMSIS-NN scratch sizes come from the firmware's own C (cortexm/src/mrt_buffer_sizes.h),
built for the host (micro_rt/scratch_sizes.c): the library installed with the package is built
from the current sources, and one built at first use into the cache answers the same. That the
host build answers what the firmware's functions answer on the virtual MCU is
test_vmcu_conv.py's, test_vmcu_conv_s16.py's and test_vmcu_transpose_conv.py's."""
from __future__ import annotations

import itertools

import pytest

from micro_rt import cmsis_nn_scratch as scratch
from micro_rt.kernels.conv_shapes import ConvShape

SHAPES = [ConvShape(n, 9, 7, ic, 9, 8, oc, fh, fw, ic, s, s, 1, 1, p, p)
          for n, ic, oc, fh, fw, s, p in itertools.product((1, 2), (3, 17), (3, 34), (1, 3), (1, 3), (1, 2), (0, 1))]


def _answers(dsp: bool) -> list[tuple[int, ...]]:
    lib = scratch.size_library(dsp)
    rows = []
    for g in SHAPES:
        words = tuple(getattr(g, f) for f in ("n", "ih", "iw", "ic", "oh", "ow", "oc", "fh", "fw", "fc",
                                              "sh", "sw", "dh", "dw", "ph", "pw"))
        rows.append((lib.mrt_scratch_conv_s8(*words), lib.mrt_scratch_depthwise_conv_s8(*words),
                     lib.mrt_scratch_conv_s16(*words), lib.mrt_scratch_transpose_conv_s8(*words, 0),
                     lib.mrt_scratch_transpose_conv_s8(*words, 1), lib.mrt_scratch_avgpool_s8(g.ow, g.oc),
                     lib.mrt_scratch_avgpool_s16(g.ow, g.oc)))
    return rows


def test_the_installed_library_is_built_from_the_current_sources():
    for dsp in (True, False):
        path = scratch._installed(dsp)
        assert path is not None, "setup.py builds both libraries"
        assert scratch.size_library(dsp).mrt_scratch_source().decode() == scratch.sources_hash()


def test_a_library_built_at_first_use_answers_as_the_installed_one(tmp_path, monkeypatch):
    installed = {dsp: _answers(dsp) for dsp in (True, False)}
    assert installed[True] != installed[False]          # the DSP paths need other buffers
    monkeypatch.setenv("MICRO_RT_CACHE", str(tmp_path))
    monkeypatch.setattr(scratch, "_installed", lambda dsp: None)
    monkeypatch.setattr(scratch, "_libraries", {})
    for dsp in (True, False):
        assert _answers(dsp) == installed[dsp]
        assert (tmp_path / f"{scratch.library_name(dsp)}_{scratch.sources_hash()}.so").exists()


def test_no_compiler_and_no_library_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("MICRO_RT_CACHE", str(tmp_path))
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("CC", raising=False)
    monkeypatch.setattr(scratch, "_installed", lambda dsp: None)
    monkeypatch.setattr(scratch, "_libraries", {})
    with pytest.raises(scratch.KernelError, match="no host C compiler"):
        scratch.conv_buffer_size(SHAPES[0], "cortex-m4")
