"""Everything but the native hook is in pyproject.toml.

cortexm/native_hook.c is a plain C shared library (no Python API) that cortexm/native_library.py loads
with ctypes from next to itself; build_ext compiles it for normal and editable installs. It is
optional: without a C compiler the install still succeeds and native_library.py builds it at first use,
or warns that the emulator runs ~20x slower.
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


class BuildPlainLibrary(build_ext):
    """A ctypes library exports its own functions, not a PyInit_ entry point."""

    def get_export_symbols(self, ext):
        return ext.export_symbols


setup(
    ext_modules=[Extension("micro_rt.cortexm._mrt_hook", sources=[HOOK_SOURCE],
                           define_macros=[("MRT_HOOK_SOURCE", f'"{SOURCE_HASH}"')],
                           extra_compile_args=["-O2"], optional=True)],
    cmdclass={"build_ext": BuildPlainLibrary},
)
