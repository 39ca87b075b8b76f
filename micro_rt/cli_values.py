"""Values `micro-rt` accepts on its command line: byte sizes, clock frequencies, bounded numbers.

Each parser returns the value or raises argparse.ArgumentTypeError with one line naming the
value and the accepted range (argparse prefixes the option: "argument --ram: ..."). Numbers are
read with Decimal, so a 400-digit value is refused by its range instead of overflowing a float.
"""
from __future__ import annotations

import argparse
import re
from decimal import Decimal, InvalidOperation
from typing import Callable

KIB = 1024
MIB = 1024 * KIB
GIB = 1024 * MIB
# Far above any microcontroller, low enough that no arithmetic downstream misbehaves.
RAM_LIMIT = 4 * GIB
FLASH_LIMIT = 64 * GIB
# A Cortex-M core runs from a 32 kHz crystal up to ~1 GHz (Cortex-M7 and M85 parts).
CLOCK_MIN_HZ = 1_000
CLOCK_MAX_HZ = 2_000_000_000

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kKmMgG]?)(i?[bB])?\s*$")
_SIZE_SCALE = {"": 1, "k": KIB, "m": MIB, "g": GIB}
_FREQ = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kKmMgG]?)[hH][zZ]\s*$")
_INT = re.compile(r"^\s*[+-]?\d+\s*$")
_FREQ_SCALE = {"": 1, "k": 10 ** 3, "m": 10 ** 6, "g": 10 ** 9}


def describe_bytes(n: int) -> str:
    """4294967296 -> '4 GiB'; for range messages."""
    for unit, scale in (("GiB", GIB), ("MiB", MIB), ("KiB", KIB)):
        if n >= scale and n % scale == 0:
            return f"{n // scale} {unit}"
    return f"{n} B"


def describe_hz(hz: int) -> str:
    for unit, scale in (("GHz", 10 ** 9), ("MHz", 10 ** 6), ("kHz", 10 ** 3)):
        if hz >= scale and hz % scale == 0:
            return f"{hz // scale} {unit}"
    return f"{hz} Hz"


def _show(text: str) -> str:
    """The user's value for an error message: quoted, and cut short if it is very long."""
    text = text.strip()
    return repr(text if len(text) <= 40 else text[:20] + "..." + text[-8:])


def parse_size(text: str, limit: int = FLASH_LIMIT) -> int:
    """'256K', '1M', '1.5MiB', '8192' -> bytes (K = 1024), from 1 B to `limit`."""
    accepted = f"give 1 B to {describe_bytes(limit)}, e.g. 8192, 256K, 1M, 1.5MiB"
    m = _SIZE.match(text)
    if not m:
        raise argparse.ArgumentTypeError(f"{_show(text)} is not a size: {accepted}")
    value = Decimal(m.group(1)) * _SIZE_SCALE[m.group(2).lower()]
    if value != value.to_integral_value():
        raise argparse.ArgumentTypeError(f"{_show(text)} is not a whole number of bytes: {accepted}")
    if not 1 <= value <= limit:
        raise argparse.ArgumentTypeError(f"{_show(text)} is out of range: {accepted}")
    return int(value)


def size_type(limit: int) -> Callable[[str], int]:
    """An argparse `type` for sizes up to `limit` bytes."""
    def parse(text: str) -> int:
        return parse_size(text, limit)
    return parse


def parse_frequency(text: str) -> int:
    """'120MHz', '480mhz', '32768Hz', '1.5GHz' -> Hz; a unit is required (120 alone is refused:
    it would be 120 Hz)."""
    accepted = (f"give {describe_hz(CLOCK_MIN_HZ)} to {describe_hz(CLOCK_MAX_HZ)} with a unit "
                "(Hz, kHz, MHz or GHz), e.g. 120MHz")
    m = _FREQ.match(text)
    if not m:
        bare = re.match(r"^\s*\d+(?:\.\d+)?\s*[kKmMgG]?\s*$", text)
        why = "has no unit" if bare else "is not a clock frequency"
        raise argparse.ArgumentTypeError(f"{_show(text)} {why}: {accepted}")
    value = Decimal(m.group(1)) * _FREQ_SCALE[m.group(2).lower()]
    if not CLOCK_MIN_HZ <= value <= CLOCK_MAX_HZ:
        raise argparse.ArgumentTypeError(f"{_show(text)} is not a clock a core runs at: {accepted}")
    return int(value)


def int_range(low: int, high: int) -> Callable[[str], int]:
    """An argparse `type` for a whole number from `low` to `high` inclusive."""
    def parse(text: str) -> int:
        if not _INT.match(text):
            raise argparse.ArgumentTypeError(f"{_show(text)} is not a whole number: give {low} to {high}")
        value = Decimal(text.strip())       # any length, no int-conversion digit limit
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{_show(text)} is out of range: give {low} to {high}")
        return int(value)
    return parse


def seconds_range(low: float, high: float) -> Callable[[str], float]:
    """An argparse `type` for a duration in seconds from `low` to `high` inclusive."""
    def parse(text: str) -> float:
        try:
            value = Decimal(text.strip())
        except InvalidOperation:
            value = None
        if value is None or not value.is_finite():
            raise argparse.ArgumentTypeError(
                f"{_show(text)} is not a number of seconds: give {low:g} to {high:g}")
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{_show(text)} is out of range: give {low:g} to {high:g} s")
        return float(value)
    return parse
