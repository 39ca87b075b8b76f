"""What every benchmark script shares: BLAS threads pinned before numpy loads, a line naming the
machine, and the script's own section of RESULTS.md.

Each table in RESULTS.md sits between `<!-- begin:NAME -->` and `<!-- end:NAME -->`, and only
the script that measures it writes there (`--write`); text outside the markers is the reading,
written by hand after a run.

Import this module before numpy (or anything importing it): `pin_blas_threads()` must set the
thread variables before OpenBLAS starts its pool.
"""
from __future__ import annotations

import os
import platform
import re
import sys
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().with_name("RESULTS.md")
THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def pin_blas_threads(threads: int = 1) -> str:
    """One BLAS thread for micro_rt's numpy kernels (tflite-micro's C++ reference kernels run
    on one thread anyway); returns the sentence the results header carries."""
    if "numpy" in sys.modules:
        raise RuntimeError("pin_blas_threads() must run before numpy is imported")
    for name in THREAD_VARIABLES:
        os.environ[name] = str(threads)
    note = (f"BLAS threads pinned to {threads} ({', '.join(f'{v}={threads}' for v in THREAD_VARIABLES)}) "
            "for micro_rt; tflite-micro's reference kernels are single-threaded")
    coretype = {k: os.environ[k] for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE") if k in os.environ}
    if coretype:
        note += "; also set: " + ", ".join(f"{k}={v}" for k, v in coretype.items())
    return note


def machine_line() -> str:
    import numpy as np
    return (f"{platform.machine()}, {os.cpu_count()} CPUs, {platform.processor() or platform.platform()}, "
            f"Python {platform.python_version()}, numpy {np.__version__}, "
            f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")


def command_line() -> str:
    return "python " + " ".join([f"benchmarks/{Path(sys.argv[0]).name}"] +
                                [a for a in sys.argv[1:] if a != "--write"])


def section_header(threads_note: str) -> str:
    return (f"Command: `{command_line()}`  \nMachine: {machine_line()}  \n"
            f"Threads: {threads_note}\n")


def write_section(name: str, body: str, path: Path = RESULTS) -> None:
    """Replace what lies between this section's markers with `body`."""
    text = path.read_text()
    begin, end = f"<!-- begin:{name} -->", f"<!-- end:{name} -->"
    pattern = re.compile(re.escape(begin) + r"\n.*?" + re.escape(end), re.S)
    block = f"{begin}\n{body.rstrip()}\n{end}"
    if pattern.search(text):
        path.write_text(pattern.sub(lambda _: block, text, count=1))
    else:                      # a new section goes at the end
        path.write_text(text.rstrip() + "\n\n" + block + "\n")
    print(f"wrote section '{name}' of {path}")
