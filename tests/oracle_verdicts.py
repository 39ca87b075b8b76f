"""TFLM's verdict on single-op models (the type cases of devtools/op_models/type_cases.py,
tests/test_kernels_types.py; the binary and comparison families): each model loaded and
invoked once on zeros by the tflite-micro oracle in a child process, since TFLM can crash on a
model it does not check."""
from __future__ import annotations

_PROBE = r"""
import json, os, sys, tempfile
sys.path.insert(0, os.environ["KERNEL_CASES_DIR"])
sys.path.insert(1, os.path.dirname(os.environ["KERNEL_CASES_DIR"]))   # the root: kernel_cases imports devtools
from kernel_cases import oracle_load_and_run
from micro_rt import oracle

for path in sys.argv[1:]:
    data = open(path, "rb").read()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as capture:
        os.dup2(capture.fileno(), 2)
        try:
            oracle_load_and_run(oracle, data)
            verdict = "accepted"
        except Exception as e:
            verdict = "refused: " + str(e)
            printed = getattr(e, "printed", "")     # an OracleError keeps TFLM's lines
        else:
            printed = ""
        finally:
            os.dup2(saved, 2)
        capture.seek(0)
        log = printed + capture.read().decode(errors="replace")
    print(json.dumps([path, verdict, log]), flush=True)
"""


def oracle_verdicts(models: list[bytes], tmp_path) -> list[tuple[bool, str]]:
    """TFLM's answer on each model, loaded and invoked once on zeros in a child process
    (TFLM can crash on a model it does not check): (accepted, what it printed). A model
    that crashes the child counts as refused, with "crashed" as its message."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path
    paths = []
    for k, data in enumerate(models):
        p = tmp_path / f"m{k}.tflite"
        p.write_bytes(data)
        paths.append(str(p))
    verdicts: dict[str, tuple[bool, str]] = {}
    while len(verdicts) < len(paths):
        todo = [p for p in paths if p not in verdicts]
        run = subprocess.run([sys.executable, "-c", _PROBE, *todo], capture_output=True, text=True,
                             env={**os.environ, "KERNEL_CASES_DIR": str(Path(__file__).parent)})
        for line in run.stdout.splitlines():
            path, verdict, log = json.loads(line)
            verdicts[path] = (verdict == "accepted", (log + verdict).strip())
        if run.returncode != 0:
            crashed = next(p for p in todo if p not in verdicts)
            verdicts[crashed] = (False, f"crashed (exit {run.returncode})")
    return [verdicts[p] for p in paths]
