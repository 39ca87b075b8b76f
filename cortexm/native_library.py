"""The native (C) Unicorn hook library: found, built if need be, loaded and declared.

`native_hook.c` is a plain C shared library loaded with ctypes. It is found, in this order:
1. installed next to this module (`_mrt_hook<extension suffix>`), built by setup.py's build_ext
   for normal and editable installs;
2. built at first use with the host C compiler (`cc -O2 -shared -fPIC`) into a cache directory
   (env MICRO_RT_CACHE, else ~/.cache/micro_rt), keyed by a hash of the source.
When neither is possible (or MICRO_RT_NO_NATIVE=1) `load_native` returns None and says why once
on stderr; native.HookSet then falls back to Python hooks with the same results but about 20x
slower. The library is loaded once per process (the lock and the module's cache below).
"""
from __future__ import annotations

import ctypes
import hashlib
import os
import sys
import threading
from pathlib import Path
from typing import Optional

from micro_rt.native_build import build_shared_library, cache_dir, installed_extension

_SRC = Path(__file__).with_name("native_hook.c")
LIBRARY_NAME = "_mrt_hook"          # setup.py: Extension("micro_rt.cortexm._mrt_hook")
SLOWDOWN = ("the emulator falls back to Python hooks, about 20x slower (a float model on a "
            "Cortex-M0+ took 489 s instead of 19 s)")
_lock = threading.Lock()
_lib: Optional[ctypes.CDLL] = None
_lib_error: Optional[str] = None
_lib_path: Optional[Path] = None

_u64p = ctypes.POINTER(ctypes.c_uint64)


def source_hash() -> str:
    """What a library built from the current native_hook.c reports from mrt_hook_source()."""
    return hashlib.sha256(_SRC.read_bytes()).hexdigest()[:16]


def installed_library() -> Optional[Path]:
    """The hook library the package was installed with, if build_ext built it."""
    return installed_extension(Path(__file__), LIBRARY_NAME)


def built_from(lib: ctypes.CDLL) -> str:
    lib.mrt_hook_source.restype = ctypes.c_char_p
    lib.mrt_hook_source.argtypes = []
    return lib.mrt_hook_source().decode()


def _build_in_cache() -> tuple[Optional[Path], Optional[str]]:
    """First-use build (a fallback for installs made without a C compiler): (library, error)."""
    digest = source_hash()
    return build_shared_library(_SRC, cache_dir() / f"mrt_hook_{digest}.so", [f'-DMRT_HOOK_SOURCE="{digest}"'])


def _warn_fallback(reason: str, advice: str = "install micro-rt where a C compiler is available") -> None:
    sys.stderr.write(f"micro_rt: warning: native Unicorn hook unavailable ({reason}); {SLOWDOWN}. "
                     f"To avoid it: {advice}.\n")
    sys.stderr.flush()


def load_native() -> Optional[ctypes.CDLL]:
    """The compiled hook library, or None (reason in `native_error()`, said once on stderr)."""
    global _lib, _lib_error, _lib_path
    with _lock:
        if _lib is not None or _lib_error is not None:
            return _lib
        if os.environ.get("MICRO_RT_NO_NATIVE"):
            _lib_error = "disabled by MICRO_RT_NO_NATIVE"
            _warn_fallback(_lib_error, "unset MICRO_RT_NO_NATIVE")
            return None
        try:
            lib, path = None, installed_library()
            if path is not None:
                lib = ctypes.CDLL(str(path))
                if built_from(lib) != source_hash():    # native_hook.c edited since the install
                    lib = None
            if lib is None:
                path, error = _build_in_cache()
                if path is None:
                    _lib_error = error or "no library"
                    _warn_fallback(_lib_error)
                    return None
                lib = ctypes.CDLL(str(path))
        except OSError as exc:
            _lib_error = f"cannot load it: {exc}"
            _warn_fallback(_lib_error)
            return None
        _declare(lib)
        _lib, _lib_path = lib, path
        return lib


def native_library_path() -> Optional[Path]:
    """Where the loaded hook library came from (None when not loaded)."""
    load_native()
    return _lib_path


def _declare(lib: ctypes.CDLL) -> None:
    vp = ctypes.c_void_p
    lib.mrt_new.restype = vp
    lib.mrt_new.argtypes = []
    lib.mrt_free.argtypes = [vp]
    lib.mrt_set_funcs.argtypes = [vp, vp, vp, ctypes.c_int]
    lib.mrt_set_it_reset.argtypes = [vp, vp, ctypes.c_int]
    lib.mrt_configure_mem.argtypes = [vp, ctypes.c_int, ctypes.c_uint32, ctypes.c_uint32,
                                      ctypes.c_uint32, ctypes.c_uint32, ctypes.c_uint32]
    lib.mrt_configure_mem.restype = ctypes.c_int
    lib.mrt_configure_fetch.argtypes = [vp, ctypes.c_int, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_uint32,
                                        ctypes.c_int, ctypes.c_int64, ctypes.c_int64]
    lib.mrt_configure_fetch.restype = ctypes.c_int
    lib.mrt_flush_caches.argtypes = [vp]
    lib.mrt_reset.argtypes = [vp, ctypes.c_uint64, ctypes.c_uint32]
    lib.mrt_edge_count.argtypes = [vp]
    lib.mrt_edge_count.restype = ctypes.c_uint32
    lib.mrt_edges.argtypes = [vp, _u64p, ctypes.c_uint32]
    lib.mrt_edges.restype = ctypes.c_uint32
    lib.mrt_stats.argtypes = [vp, _u64p]
    lib.mrt_unaligned.argtypes = [vp, _u64p, ctypes.c_uint32]
    lib.mrt_unaligned.restype = ctypes.c_uint32
    lib.mrt_set_checks.argtypes = [vp, ctypes.c_int, ctypes.POINTER(ctypes.c_uint32), ctypes.c_uint32,
                                   ctypes.POINTER(ctypes.c_uint32), ctypes.c_uint32]
    lib.mrt_set_checks.restype = ctypes.c_int
    lib.mrt_clear_unaligned.argtypes = [vp]
    lib.mrt_clear_edges.argtypes = [vp]
    lib.mrt_set_cost.argtypes = [vp, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_int64,
                                 ctypes.c_int64, ctypes.c_int64]
    lib.mrt_set_cost.restype = ctypes.c_int
    lib.mrt_account.argtypes = [vp, ctypes.c_int64, ctypes.POINTER(ctypes.c_int64)]
    lib.mrt_account.restype = ctypes.c_int
    lib.mrt_account_window.argtypes = [vp, ctypes.POINTER(ctypes.c_uint64), ctypes.c_uint32, ctypes.c_uint32,
                                       ctypes.c_uint32, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_int64,
                                       ctypes.POINTER(ctypes.c_int64)]
    lib.mrt_account_window.restype = ctypes.c_int
    lib.mrt_set_observer.argtypes = [vp, ctypes.c_uint32, ctypes.c_uint32, vp]
    lib.mrt_set_alias.argtypes = [vp, ctypes.c_uint64]
    lib.mrt_set_budget.argtypes = [vp, ctypes.c_uint64]
    lib.mrt_stop_at_next_block.argtypes = [vp]
    lib.mrt_truncate_last_block.argtypes = [vp, ctypes.c_uint32]
    lib.mrt_truncate_last_block.restype = ctypes.c_int
    lib.mrt_keep_edge_flash.argtypes = [vp]
    lib.mrt_keep_edge_flash.restype = ctypes.c_int
    lib.mrt_edge_stalls.argtypes = [vp, _u64p, ctypes.c_uint32]
    lib.mrt_edge_stalls.restype = ctypes.c_uint32
    lib.mrt_add_segment.argtypes = [vp, ctypes.c_uint32, ctypes.c_uint32, vp]
    lib.mrt_add_segment.restype = vp


def _uclib():
    try:
        import unicorn.unicorn_py3.unicorn as m   # unicorn >= 2.1 layout
        return m.uclib
    except ImportError:  # pragma: no cover
        import unicorn.unicorn as old          # type: ignore[no-redef]
        return old._uc                         # type: ignore[attr-defined]


def native_error() -> Optional[str]:
    load_native()
    return _lib_error
