"""What the `micro-rt` commands share: reading the model, printing the answer in --format,
warnings, the progress bar, writing files. The commands are in micro_rt.cli and micro_rt.cli_run."""
from __future__ import annotations

import json
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator, Optional

from .errors import MicroRtError
from .files import read_model_file
from .interpreter import Interpreter
from .model import Model, read_model


def load_model(path: str) -> tuple[Model, bytes]:
    data = read_model_file(path)
    return read_model(data), data


def resolve_kernels(args) -> None:
    """--kernels not given: the flavour TFLM is built with for the target (known by now: given,
    or the board's core), as the help says."""
    if args.kernels is None:
        from .flavours import default_kernels
        args.kernels = default_kernels(args.target)


def plan_interpreter(args, data: bytes, plan_only: bool = True) -> Interpreter:
    return Interpreter.from_bytes(data, target=args.target, kernels=args.kernels,
                                  planner=getattr(args, "planner", "greedy"), plan_only=plan_only)


def emit(args, payload: dict, text: str, tables: Optional[Callable[[dict], tuple]] = None) -> None:
    """Print the answer in --format: json (the payload, as --json always printed it), text,
    or csv/markdown from `tables(payload)` -> (summary lines, tables) (micro_rt.reports.tables)."""
    if args.format == "json":
        print(json.dumps(payload, indent=2))
    elif args.format in ("csv", "markdown") and tables is not None:
        from .reports.formats import render
        print(render(args.format, *tables(payload)))
    else:
        print(text)


def warn(args, text: str) -> None:
    if not args.quiet:
        print(f"micro-rt: warning: {' '.join(text.split())}", file=sys.stderr)


@contextmanager
def progress_bar(args, label: str, total: int) -> Iterator[Optional[Callable[[int, int], None]]]:
    """A progress bar on stderr, only when stderr is a terminal (never in logs, --json or
    --quiet); yields the `progress(done, total)` callback, or None. The bar appears on the
    first call, so work that turns out not to run shows none."""
    if args.format != "text" or args.quiet or not sys.stderr.isatty():
        yield None
        return
    from tqdm import tqdm
    bars: list = []

    def update(done: int, _total: int) -> None:
        if not bars:
            bars.append(tqdm(total=total, desc=label, unit="op", leave=False, dynamic_ncols=True,
                             file=sys.stderr))
        bars[0].update(done - bars[0].n)
    try:
        yield update
    finally:
        for bar in bars:
            bar.close()


def write_text(path: str, text: str) -> None:
    try:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(text)
    except OSError as e:
        raise MicroRtError(f"cannot write '{path}': {e.strerror}") from None


def refuse_directory(option: str, path: Optional[str]) -> None:
    """Before any work: an output path naming an existing directory is a usage error."""
    if path is not None and Path(path).is_dir():
        raise MicroRtError(f"{option} '{path}' is a directory; give a file name")
