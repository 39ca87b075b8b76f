"""The native Unicorn hook library: built when the package is installed (setup.py build_ext),
built at first use only as a fallback, and when neither works the ~20x slower Python hooks are
announced once on stderr, never silently."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from pathlib import Path

import pytest

from micro_rt.cortexm import native_library as native

WARNING = "micro_rt: warning: native Unicorn hook unavailable"


def test_installed_package_ships_the_built_library():
    path = native.installed_library()
    assert path is not None, "pip install -e . did not build cortexm/native_hook.c (setup.py build_ext)"
    assert path.parent == Path(native.__file__).parent
    assert native.native_library_path() == path          # the installed one is what runs
    assert native.built_from(native.load_native()) == native.source_hash()


def _probe(tmp_path, prelude: str = "", **env) -> subprocess.CompletedProcess:
    """Load the hook twice in a fresh process; print where it came from."""
    code = textwrap.dedent(f"""
        from micro_rt.cortexm import native_library as native
        {prelude}
        native.load_native(); native.load_native()
        print("path", native.native_library_path())
        print("error", native.native_error())
    """)
    full_env = {k: v for k, v in os.environ.items() if k != "MICRO_RT_NO_NATIVE"}
    full_env.update(env, MICRO_RT_CACHE=str(tmp_path / "cache"))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=full_env, timeout=120)


HIDE_INSTALLED = "native.installed_library = lambda: None"


@pytest.mark.parametrize("prelude,env,reason", [
    ("", {"MICRO_RT_NO_NATIVE": "1"}, "disabled by MICRO_RT_NO_NATIVE"),
    (HIDE_INSTALLED, {"PATH": "", "CC": ""}, "no host C compiler"),   # nothing to build with
], ids=["disabled", "no-library-no-compiler"])
def test_fallback_is_announced_once_with_the_reason_and_slowdown(tmp_path, prelude, env, reason):
    r = _probe(tmp_path, prelude, **env)
    assert r.returncode == 0, r.stderr
    assert r.stderr.count(WARNING) == 1, r.stderr
    assert reason in r.stderr and "20x slower" in r.stderr
    assert "path None" in r.stdout


def test_first_use_build_is_the_fallback(tmp_path):
    r = _probe(tmp_path, HIDE_INSTALLED)
    assert r.returncode == 0 and WARNING not in r.stderr, r.stderr
    assert f"path {tmp_path / 'cache'}" in r.stdout


def test_stale_installed_library_is_not_used(tmp_path):
    """After native_hook.c is edited, the library built at install time no longer matches: the
    source is built afresh instead of running old code."""
    stale = "native.source_hash = lambda: 'edited-source'"
    r = _probe(tmp_path, stale)
    assert r.returncode == 0 and WARNING not in r.stderr, r.stderr
    assert f"path {tmp_path / 'cache'}" in r.stdout
