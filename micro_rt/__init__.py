"""micro_rt: a TFLM-compatible runtime that answers: does it fit, is it correct, how fast.

`import micro_rt as runtime` stands in for `from tflite_micro import runtime`:
`runtime.Interpreter.from_file(...)`, `runtime.InterpreterConfig.kPreserveAllTensors`.
"""
from .compat import InterpreterConfig
from .errors import (AllocationError, EmulationError, InputError, InputIndexError, InputTypeError,
                     KernelError, MicroRtError, ModelError, TensorNotKeptError, UnsupportedOpError)
from .kernel_api import Node, Registration
from .resolver import MutableOpResolver, builtin_op_resolver

__version__ = "0.1.0"


def __getattr__(name):
    # The interpreter pulls in the kernels; import it on first use.
    if name == "Interpreter":
        from .interpreter import Interpreter
        return Interpreter
    raise AttributeError(name)


__all__ = ["Interpreter", "InterpreterConfig", "MutableOpResolver", "builtin_op_resolver",
           "Registration", "Node", "MicroRtError", "ModelError", "UnsupportedOpError",
           "AllocationError", "InputError", "InputTypeError", "InputIndexError",
           "TensorNotKeptError", "KernelError", "EmulationError"]
