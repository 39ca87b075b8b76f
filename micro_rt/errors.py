"""One exception family, so callers can catch everything micro_rt raises on bad input."""


class MicroRtError(Exception):
    """Base of every error micro_rt raises on purpose."""


class ModelError(MicroRtError):
    """The .tflite file is malformed or inconsistent (names the field at fault)."""


class UnsupportedOpError(MicroRtError):
    """An operator (or operator version) has no registered kernel."""


class AllocationError(MicroRtError):
    """The tensor arena is too small, or a plan cannot be honoured."""


class InputError(MicroRtError):
    """Wrong input given to the interpreter (index, dtype, shape)."""


class KernelError(MicroRtError):
    """A kernel rejected its node in prepare, or failed during invoke."""


class EmulationError(MicroRtError):
    """The virtual MCU faulted, ran away or touched unmapped memory."""


class OracleError(MicroRtError, RuntimeError):
    """The tflite-micro oracle refused a model or failed to run it (carries TFLM's reason).
    Also a RuntimeError, the type the oracle itself raises, for callers that catch that."""
