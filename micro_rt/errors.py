"""One exception family, so callers can catch everything micro_rt raises on bad input.

Each class is also the built-in exception `tflite_micro.runtime` raises for the same case, so
an `except RuntimeError:` / `except ValueError:` written for tflite-micro still catches it:
a bad model path or file is a ValueError there, a failed allocation, an unregistered op and a
failed invoke are RuntimeErrors, a wrong input a ValueError, an index out of range an
IndexError, an argument of the wrong type a TypeError.
"""


class MicroRtError(Exception):
    """Base of every error micro_rt raises on purpose."""


class ModelError(MicroRtError, ValueError):
    """The .tflite file is malformed or inconsistent (names the field at fault)."""


class UnsupportedOpError(MicroRtError, RuntimeError):
    """An operator (or operator version) has no registered kernel."""


class AllocationError(MicroRtError, RuntimeError):
    """The tensor arena is too small, or a plan cannot be honoured."""


class InputError(MicroRtError, ValueError):
    """Wrong input given to the interpreter (index, dtype, shape, argument)."""


class InputTypeError(InputError, TypeError):
    """An argument of the wrong type (names the argument and the types it accepts)."""


class InputIndexError(InputError, IndexError):
    """An input, output or tensor index out of range."""


class TensorNotKeptError(InputError, RuntimeError):
    """An intermediate tensor was asked for, but the interpreter does not preserve them."""


class KernelError(MicroRtError, RuntimeError):
    """A kernel rejected its node in prepare, or failed during invoke."""


class EmulationError(MicroRtError, RuntimeError):
    """The virtual MCU faulted, ran away or touched unmapped memory."""

    event: object = None     # an unaligned-access fault's AlignmentEvent (cortexm.alignment)


class FirmwareError(EmulationError):
    """A firmware image cannot be run: not a 32-bit little-endian ARM ELF, truncated, overlapping
    segments, no vector table, a segment outside the memory map (names the file and the field)."""


class OracleError(MicroRtError, RuntimeError):
    """The tflite-micro oracle refused a model or failed to run it (carries TFLM's reason).
    Also a RuntimeError, the type the oracle itself raises, for callers that catch that."""

    printed: object = None     # what TFLM printed while refusing (oracle.tflm_stderr's capture)
