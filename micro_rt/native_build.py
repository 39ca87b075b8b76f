"""Plain C shared libraries micro_rt loads with ctypes: where an installed one lies, the cache a
first-use build goes to, and that build. Two libraries use it: the virtual MCU's native hook
(cortexm/native_library.py) and the host build of the kernels' scratch sizes
(cmsis_nn_scratch.py). setup.py builds both at install; these are the fallbacks."""
from __future__ import annotations

import importlib.machinery
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Optional, Sequence


def cache_dir() -> Path:
    """micro_rt's cache: env MICRO_RT_CACHE, else ~/.cache/micro_rt."""
    env = os.environ.get("MICRO_RT_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "micro_rt"


def installed_extension(beside: Path, name: str) -> Optional[Path]:
    """The library setup.py's build_ext put next to the module `beside` as `name`, if any."""
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = beside.with_name(name + suffix)
        if path.exists():
            return path
    return None


def host_compiler() -> Optional[str]:
    """$CC, else the first of cc, gcc, clang on PATH."""
    for name in (os.environ.get("CC"), "cc", "gcc", "clang"):
        if name and shutil.which(name):
            return name
    return None


def build_shared_library(source: Path, out: Path, flags: Sequence[str]) -> tuple[Optional[Path], Optional[str]]:
    """`out` built from `source` with the host compiler (-O2 -shared -fPIC and `flags`), unless it
    is there already: (library, None), or (None, why not). Written to a temporary name and moved
    into place, so concurrent processes are fine."""
    if out.exists():
        return out, None
    cc = host_compiler()
    if cc is None:
        return None, "not installed with the package, and no host C compiler (cc/gcc/clang) to build it"
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out.parent) as tmp:
        tmp_so = Path(tmp) / out.name
        r = subprocess.run([cc, "-O2", "-shared", "-fPIC", *flags, "-o", str(tmp_so), str(source)],
                           capture_output=True, text=True)
        if r.returncode != 0:
            return None, f"compiling {source.name} with {cc} failed: {r.stderr.strip()[:500]}"
        os.replace(tmp_so, out)
    return out, None
