"""Capping numpy's BLAS thread pool while an interpreter invokes.

The matrices of microcontroller models are small: waking BLAS worker threads for them costs
more than it saves, and far more on a busy machine (an image classifier ran 3.3x slower than
tflite-micro with OpenBLAS's default threads on a loaded 2-core machine, and 11x faster with
one thread). The cap holds only during invoke; the caller's own numpy work keeps its threads.
"""
from __future__ import annotations

import numbers
from typing import Any, Optional

from .errors import InputError, InputTypeError


class BlasThreadLimit:
    """A reusable context manager: on entry every loaded BLAS library is set to at most
    `threads` threads, on exit each gets its own count back. Finding the libraries is the
    expensive part of threadpoolctl (~0.3 ms), so it happens once, at the first entry; each
    entry then costs a few microseconds. `threads=None` leaves the pool alone."""

    def __init__(self, threads: Optional[int]):
        if threads is not None:
            if isinstance(threads, bool) or not isinstance(threads, numbers.Integral):
                raise InputTypeError(f"blas_threads must be a positive integer or None, got "
                                     f"{type(threads).__name__} {threads!r}")
            if threads < 1:
                raise InputError(f"blas_threads must be at least 1, got {threads}")
            threads = int(threads)
        self.threads = threads
        self._libraries: Optional[list] = None
        self._restore: list[list[tuple[Any, int]]] = []

    def libraries(self) -> list:
        """threadpoolctl's controllers of the BLAS libraries loaded in this process."""
        if self._libraries is None:
            from threadpoolctl import ThreadpoolController
            self._libraries = list(ThreadpoolController().select(user_api="blas").lib_controllers)
        return self._libraries

    def __enter__(self) -> "BlasThreadLimit":
        changed: list = []
        if self.threads is not None:
            for lib in self.libraries():
                current = lib.get_num_threads()
                if current is not None and current > self.threads:
                    lib.set_num_threads(self.threads)
                    changed.append((lib, current))
        self._restore.append(changed)
        return self

    def __exit__(self, *exc_info: Any) -> None:
        for lib, threads in self._restore.pop():
            lib.set_num_threads(threads)
