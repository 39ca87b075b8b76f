"""Reading the files a user names (a model, an input array) with hard limits.

A size check that trusts `st_size` is not enough: a device reads forever (/dev/zero has size
0) and a FIFO with no writer blocks the first read forever. So the file is opened without
blocking, the opened descriptor must be a regular file, and at most limit + 1 bytes are read.
The CLI reads through the same functions.
"""
from __future__ import annotations

import io
import os
import stat
from pathlib import Path
from typing import Any

import numpy as np

from .errors import InputError, InputTypeError, MicroRtError, ModelError
from .model import MAX_MODEL_BYTES, MAX_TENSOR_BYTES

# An input array is at most one tensor (the model refuses larger ones) plus the .npy header.
MAX_ARRAY_FILE_BYTES = MAX_TENSOR_BYTES + (1 << 16)

_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
          (stat.S_ISSOCK, "a socket"))


def read_regular_file(path: Any, limit: int, what: str,
                      error: type[MicroRtError] = ModelError) -> bytes:
    """The bytes of `path`, which must be a regular file of at most `limit` bytes; anything
    else raises `error` naming the file."""
    if not isinstance(path, (str, Path)):
        raise InputTypeError(f"{what} path must be a str or Path, got {type(path).__name__}")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        raise error(f"cannot read {what} '{path}': {e.strerror}") from None
    mode = os.fstat(fd)
    if not stat.S_ISREG(mode.st_mode):
        os.close(fd)
        kind = next((name for test, name in _KINDS if test(mode.st_mode)), "not a regular file")
        raise error(f"{what} '{path}' is {kind}; micro_rt reads {what}s from regular files only")
    with os.fdopen(fd, "rb", buffering=0) as f:
        if mode.st_size > limit:
            raise error(f"{what} '{path}' is {mode.st_size} bytes, over micro_rt's {limit}-byte limit")
        try:
            data = f.read(mode.st_size + 1)
            if len(data) > mode.st_size:        # it grew since fstat: read on, up to the limit
                data += f.read(limit + 1 - len(data))
        except OSError as e:
            raise error(f"cannot read {what} '{path}': {e.strerror}") from None
    if len(data) > limit:
        raise error(f"{what} '{path}' is over micro_rt's {limit}-byte limit")
    return data


def read_model_file(path: Any) -> bytes:
    """A .tflite file's bytes (at most MAX_MODEL_BYTES)."""
    return read_regular_file(path, MAX_MODEL_BYTES, "model")


def load_array(path: Any) -> np.ndarray:
    """A .npy file saved with numpy.save (no pickled objects), read with the same limits."""
    data = read_regular_file(path, MAX_ARRAY_FILE_BYTES, "input array", InputError)
    try:
        return np.load(io.BytesIO(data), allow_pickle=False)
    except (OSError, ValueError, EOFError) as e:
        raise InputError(f"input array '{path}' is not a .npy file saved with numpy.save: "
                         f"{e}") from None
