"""Everything but the two kinds of plain C library below is in pyproject.toml.

cortexm/native_hook.c is a plain C shared library (no Python API) that cortexm/native_library.py loads
with ctypes from next to itself; build_ext compiles it for normal and editable installs. It is
optional: without a C compiler the install still succeeds and native_library.py builds it at first use,
or warns that the emulator runs ~20x slower. micro_rt/scratch_sizes.c (the firmware's CMSIS-NN
buffer sizes, cortexm/src/mrt_buffer_sizes.h, built for the host) is optional the same way:
micro_rt/cmsis_nn_scratch.py builds it at first use when it is missing.
"""
import hashlib
import warnings
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.warnings import InformationOnly

# `pip install -e .` maps micro_rt.kernels / micro_rt.cortexm to kernels/ and cortexm/ with a
# meta path finder, and setuptools then always prints a notice ("be careful with folders in your
# working directory with the same name as your package"): nothing to act on here.
warnings.filterwarnings("ignore", message="Editable installation", category=InformationOnly)

HOOK_SOURCE = "cortexm/native_hook.c"
# native_library.py compares this with the hash of the source it ships with (same 16 hex digits)
SOURCE_HASH = hashlib.sha256((Path(__file__).parent / HOOK_SOURCE).read_bytes()).hexdigest()[:16]

# micro_rt/scratch_sizes.c: the firmware's CMSIS-NN buffer sizes built for the host, once per DSP
# setting; micro_rt/cmsis_nn_scratch.py compares this hash (its sources_hash) and builds it at first
# use when it is missing or stale.
SCRATCH_SOURCE = "micro_rt/scratch_sizes.c"
SCRATCH_HEADERS = ["cortexm/src/mrt_buffer_sizes.h", "cortexm/src/arm_nn_types.h", "cortexm/src/arm_nnfunctions.h"]
_scratch = hashlib.sha256((Path(__file__).parent / SCRATCH_SOURCE).read_bytes())
for _header in SCRATCH_HEADERS:
    _scratch.update((Path(__file__).parent / _header).read_bytes())
SCRATCH_HASH = _scratch.hexdigest()[:16]


class BuildPlainLibrary(build_ext):
    """A ctypes library exports its own functions, not a PyInit_ entry point."""

    def get_export_symbols(self, ext):
        return ext.export_symbols


setup(
    ext_modules=[Extension("micro_rt.cortexm._mrt_hook", sources=[HOOK_SOURCE],
                           define_macros=[("MRT_HOOK_SOURCE", f'"{SOURCE_HASH}"')],
                           extra_compile_args=["-O2"], optional=True)] +
                [Extension(f"micro_rt.{name}", sources=[SCRATCH_SOURCE], include_dirs=["cortexm/src"],
                           depends=SCRATCH_HEADERS,
                           define_macros=[("MRT_DSP", dsp), ("MRT_SCRATCH_SOURCE", f'"{SCRATCH_HASH}"')],
                           extra_compile_args=["-O2"], optional=True)
                 for name, dsp in (("_mrt_scratch_dsp", "1"), ("_mrt_scratch", "0"))],
    cmdclass={"build_ext": BuildPlainLibrary},
)
