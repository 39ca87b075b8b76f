"""The scratch buffers TFLM's CMSIS-NN build requests in Prepare, by operator and input type
(CMSIS_NN_SCRATCH). One home for both readers: the arena accounting of `--kernels cmsis-nn`
(the glue's registrations in flavours.py) and the virtual MCU, whose kernels get these buffers
(cortexm/ops/__init__.py scratch_requests). A kernel both builds share (16x8 TRANSPOSE_CONV)
requests what the reference kernel does.

The sizes are not computed here: they are the firmware's own *_get_buffer_size
(cortexm/src/mrt_buffer_sizes.h), built for the host as a small C library (scratch_sizes.c),
once for cores with the DSP extension and once for cores without. The library is the one setup.py
installed beside this module, or else one built at first use with the host C compiler into the
cache directory (native_build.py), keyed by a hash of its sources.
"""
from __future__ import annotations

import ctypes
import dataclasses
import hashlib
import importlib.util
import threading
from pathlib import Path
from typing import Any, Callable, Optional, Sequence, Union

import numpy as np

from .errors import KernelError
from .kernels.conv_shapes import ConvShape, TransposeConvShape, conv_shape, transpose_conv_shape
from .kernels.transpose_conv import BIAS
from .native_build import build_shared_library, cache_dir, installed_extension
from .targets import TARGETS

ScratchSize = Callable[[Any, dict, str], Union[int, Sequence[int]]]

# The input whose element type selects an operator's kernel: input 0, except for these.
DATA_INPUT = {"TRANSPOSE_CONV": 2}          # its input 0 is the output shape (int32)

_SHIM = Path(__file__).with_name("scratch_sizes.c")


def _firmware_sources() -> Path:
    """cortexm/src, the firmware's sources (the package ships them), found without importing
    the virtual MCU."""
    spec = importlib.util.find_spec("micro_rt.cortexm")
    if spec is None or not spec.submodule_search_locations:
        raise KernelError("CMSIS-NN scratch sizes: the package micro_rt.cortexm (the firmware's sources) is missing")
    return Path(list(spec.submodule_search_locations)[0]) / "src"


HEADERS = ("mrt_buffer_sizes.h", "arm_nn_types.h", "arm_nnfunctions.h")    # = setup.py's SCRATCH_HEADERS
_SHAPE_FUNCTIONS = ("mrt_scratch_conv_s8", "mrt_scratch_depthwise_conv_s8", "mrt_scratch_conv_s16")
_libraries: dict[bool, ctypes.CDLL] = {}
_lock = threading.Lock()


def library_name(dsp: bool) -> str:
    """The extension's name (setup.py builds both)."""
    return "_mrt_scratch_dsp" if dsp else "_mrt_scratch"


def sources_hash() -> str:
    """What a library built from the current sources reports from mrt_scratch_source()."""
    digest, headers = hashlib.sha256(_SHIM.read_bytes()), _firmware_sources()
    for name in HEADERS:
        digest.update((headers / name).read_bytes())
    return digest.hexdigest()[:16]


def _installed(dsp: bool) -> Optional[Path]:
    return installed_extension(Path(__file__), library_name(dsp))


def _build_in_cache(dsp: bool, digest: str) -> Path:
    path, error = build_shared_library(_SHIM, cache_dir() / f"{library_name(dsp)}_{digest}.so",
                                       [f"-DMRT_DSP={int(dsp)}", f'-DMRT_SCRATCH_SOURCE="{digest}"',
                                        f"-I{_firmware_sources()}"])
    if path is None:
        raise KernelError(f"CMSIS-NN scratch sizes: the size library: {error}")
    return path


def size_library(dsp: bool) -> ctypes.CDLL:
    """The host build of the firmware's size functions for a core with (or without) the DSP
    extension; KernelError when there is none and none can be built."""
    with _lock:
        lib = _libraries.get(dsp)
        if lib is not None:
            return lib
        digest = sources_hash()
        path = _installed(dsp)
        try:
            lib = ctypes.CDLL(str(path)) if path is not None else None
            if lib is not None:
                lib.mrt_scratch_source.restype = ctypes.c_char_p
                if lib.mrt_scratch_source().decode() != digest:     # sources edited since the install
                    lib = None
            if lib is None:
                lib = ctypes.CDLL(str(_build_in_cache(dsp, digest)))
        except OSError as exc:
            raise KernelError(f"CMSIS-NN scratch sizes: cannot load the size library: {exc}") from None
        i32 = ctypes.c_int32
        for name in _SHAPE_FUNCTIONS:
            getattr(lib, name).argtypes = [i32] * 16
        lib.mrt_scratch_transpose_conv_s8.argtypes = [i32] * 17
        lib.mrt_scratch_avgpool_s8.argtypes = lib.mrt_scratch_avgpool_s16.argtypes = [i32, i32]
        for name in (*_SHAPE_FUNCTIONS, "mrt_scratch_transpose_conv_s8", "mrt_scratch_avgpool_s8",
                     "mrt_scratch_avgpool_s16"):
            getattr(lib, name).restype = i32
        _libraries[dsp] = lib
        return lib


def data_input_index(node) -> int:
    """The tensor index of the input whose element type selects `node`'s kernel (-1: absent)."""
    k = DATA_INPUT.get(node.op_name, 0)
    return node.inputs[k] if k < len(node.inputs) else -1


def has_dsp(core: str) -> bool:
    """Whether CMSIS-NN takes its DSP-extension paths on `core` (ARM_MATH_DSP; targets.py)."""
    target = TARGETS.get(core)
    return bool(target is not None and target.has_dsp)


def _shape_words(g: ConvShape) -> tuple[int, ...]:
    """ConvShape's 16 integers in its field order (scratch_sizes.c's MRT_SHAPE_ARGS)."""
    return tuple(int(getattr(g, f.name)) for f in dataclasses.fields(ConvShape))


def conv_buffer_size(g: ConvShape, core: str) -> int:
    """arm_convolve_wrapper_s8_get_buffer_size."""
    return int(size_library(has_dsp(core)).mrt_scratch_conv_s8(*_shape_words(g)))


def depthwise_conv_buffer_size(g: ConvShape, core: str) -> int:
    """arm_depthwise_conv_wrapper_s8_get_buffer_size."""
    return int(size_library(has_dsp(core)).mrt_scratch_depthwise_conv_s8(*_shape_words(g)))


def avgpool_buffer_size(channels: int, core: str, output_width: int = 0, int16: bool = False) -> int:
    """arm_avgpool_s8_get_buffer_size, or arm_avgpool_s16_get_buffer_size for `int16`."""
    lib = size_library(has_dsp(core))
    return int((lib.mrt_scratch_avgpool_s16 if int16 else lib.mrt_scratch_avgpool_s8)(output_width, channels))


def convolve_s16_buffer_size(g: ConvShape, core: str) -> int:
    """arm_convolve_wrapper_s16_get_buffer_size."""
    return int(size_library(has_dsp(core)).mrt_scratch_conv_s16(*_shape_words(g)))


def transpose_conv_s8_buffer_sizes(s: TransposeConvShape, core: str) -> tuple[int, int]:
    """arm_transpose_conv_s8_get_buffer_size and _get_reverse_conv_buffer_size."""
    lib, words = size_library(has_dsp(core)), _shape_words(s)
    return int(lib.mrt_scratch_transpose_conv_s8(*words, 0)), int(lib.mrt_scratch_transpose_conv_s8(*words, 1))


def _inputs_and_output(node, tensors):
    return [tensors[i] for i in node.inputs[:2]], tensors[node.outputs[0]]


def conv_s8_scratch(node, tensors, core: str) -> int:
    (inp, flt), out = _inputs_and_output(node, tensors)
    return conv_buffer_size(conv_shape(node, inp, flt, out), core)


def depthwise_conv_s8_scratch(node, tensors, core: str) -> int:
    (inp, flt), out = _inputs_and_output(node, tensors)
    return depthwise_conv_buffer_size(conv_shape(node, inp, flt, out), core)


def avgpool_s8_scratch(node, tensors, core: str) -> int:
    out = tensors[node.outputs[0]]
    return avgpool_buffer_size(int(out.shape[3]), core, int(out.shape[2]))


def avgpool_s16_scratch(node, tensors, core: str) -> int:
    out = tensors[node.outputs[0]]
    return avgpool_buffer_size(int(out.shape[3]), core, int(out.shape[2]), int16=True)


def conv_s16_scratch(node, tensors, core: str) -> int:
    """The scratch TFLM's CMSIS-NN glue requests for a 16x8 CONV_2D (whatever the bias)."""
    (inp, flt), out = _inputs_and_output(node, tensors)
    return convolve_s16_buffer_size(conv_shape(node, inp, flt, out), core)


def transpose_conv_s8_scratch(node, tensors, core: str) -> tuple[int, int]:
    """The two buffers TFLM's CMSIS-NN glue requests for int8, in its order."""
    return transpose_conv_s8_buffer_sizes(transpose_conv_shape(node, tensors), core)


def transpose_conv_s16_scratch(node, tensors, core: str) -> tuple[int, ...]:
    """The reference kernel's requests (which a CMSIS-NN build makes for 16x8 too): the int64
    accumulators, and the widened copy of an int16 bias."""
    s = transpose_conv_shape(node, tensors)
    sizes: tuple[int, ...] = (s.n * s.oh * s.ow * s.oc * 8,)
    bias = node.inputs[BIAS] if len(node.inputs) > BIAS else -1
    if bias >= 0 and np.dtype(tensors[bias].dtype) == np.int16:
        sizes += (s.oc * 8,)
    return sizes


INT8, INT16 = "int8", "int16"
CMSIS_NN_SCRATCH: dict[tuple[str, str], ScratchSize] = {
    ("CONV_2D", INT8): conv_s8_scratch,
    ("CONV_2D", INT16): conv_s16_scratch,
    ("DEPTHWISE_CONV_2D", INT8): depthwise_conv_s8_scratch,
    ("AVERAGE_POOL_2D", INT8): avgpool_s8_scratch,
    ("AVERAGE_POOL_2D", INT16): avgpool_s16_scratch,
    ("TRANSPOSE_CONV", INT8): transpose_conv_s8_scratch,
    ("TRANSPOSE_CONV", INT16): transpose_conv_s16_scratch,
}


def scratch_requests(core: str, node, tensors: dict) -> tuple[int, ...]:
    """The buffers TFLM's CMSIS-NN glue requests for `node` on `core`, in its order; () when
    it requests none. tensors: {index: tensor} holding the node's."""
    index = data_input_index(node)
    dtype = np.dtype(tensors[index].dtype).name if index >= 0 else ""
    size = CMSIS_NN_SCRATCH.get((node.op_name, dtype))
    return size_tuple(size(node, tensors, core)) if size is not None else ()


def size_tuple(sizes: Union[int, Sequence[int]]) -> tuple[int, ...]:
    """A scratch function's answer as the buffers requested: a sequence as it is, one size as a
    buffer only when it is not 0."""
    if isinstance(sizes, Sequence):
        return tuple(int(n) for n in sizes)
    return (int(sizes),) if sizes else ()
