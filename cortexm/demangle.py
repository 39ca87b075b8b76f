"""C++ symbol names as a user reads them: `_ZN6tflite16MicroInterpreter6InvokeEv` becomes
`tflite::MicroInterpreter::Invoke()`.

The demangler is the C++ runtime's own `__cxa_demangle` (libstdc++, present wherever a C++
program or compiler is), reached through ctypes: the Itanium ABI's grammar is large, and the
runtime that defines it is the one reading that never disagrees with `c++filt`. Where no C++
runtime can be loaded, names stay as the ELF spells them.
"""
from __future__ import annotations

import ctypes
import ctypes.util
from typing import Any, Optional


class Demangler:
    """One per report: it loads the runtime once and remembers each name it demangled."""

    def __init__(self):
        self._cache: dict[str, str] = {}
        self._demangle: Optional[Any] = None     # libstdc++'s __cxa_demangle, when found
        self._free: Any = None
        path = ctypes.util.find_library("stdc++")
        if path is None:
            return
        try:
            lib = ctypes.CDLL(path)
            libc = ctypes.CDLL(ctypes.util.find_library("c"))
        except OSError:
            return
        fn = getattr(lib, "__cxa_demangle")     # getattr: a class body would mangle the name
        fn.restype = ctypes.c_void_p
        fn.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_size_t),
                       ctypes.POINTER(ctypes.c_int)]
        libc.free.argtypes = [ctypes.c_void_p]
        self._demangle, self._free = fn, libc.free

    @property
    def available(self) -> bool:
        return self._demangle is not None

    def __call__(self, name: str) -> str:
        """The readable form of a symbol key: a mangled name, or "name [file]" as elf.py keys a
        local symbol whose name several files define (the file is kept)."""
        hit = self._cache.get(name)
        if hit is not None:
            return hit
        base, sep, rest = name.partition(" [")
        readable = (self._one(base) or base) + (sep + rest if sep else "")
        self._cache[name] = readable
        return readable

    def _one(self, mangled: str) -> Optional[str]:
        if self._demangle is None or not mangled.startswith("_Z"):
            return None
        status = ctypes.c_int()
        ptr = self._demangle(mangled.encode(), None, None, ctypes.byref(status))
        if not ptr:
            return None
        try:
            return ctypes.string_at(ptr).decode("utf-8", "replace") if status.value == 0 else None
        finally:
            self._free(ptr)


def without_parameters(name: str) -> str:
    """A demangled function without its parameter list (and " [file]"): "tflite::(anonymous
    namespace)::Eval(TfLiteContext*, TfLiteNode*) [conv.cc]" is "tflite::(anonymous
    namespace)::Eval"."""
    base = name.partition(" [")[0]
    if base.endswith(")"):                        # the parameter list: from its closing paren back
        depth = 0
        for i in range(len(base) - 1, -1, -1):
            depth += {")": 1, "(": -1}.get(base[i], 0)
            if depth == 0:
                return base[:i]
    return base


def unqualified(name: str) -> str:
    """A demangled function without its namespaces, classes and parameter list, its " [file]"
    kept: "tflite::(anonymous namespace)::Eval(TfLiteContext*, TfLiteNode*) [conv.cc]" is
    "Eval [conv.cc]"."""
    _, sep, file = name.partition(" [")
    base = without_parameters(name)
    depth, cut = 0, 0
    for i, ch in enumerate(base):                 # the last "::" outside parentheses and templates
        depth += {"(": 1, ")": -1, "<": 1, ">": -1}.get(ch, 0)
        if depth == 0 and base.startswith("::", i):
            cut = i + 2
    return base[cut:] + sep + file
