"""TfLiteType names and codes as TFLM prints them, so a kernel refusing a type can say what
TFLM says ("Type UINT8 (3) not supported.") next to our own explanation."""
from __future__ import annotations

import numpy as np

from micro_rt.schema import NUMPY_DTYPE

# numpy dtype -> the schema's TensorType name (TfLiteType's name without "kTfLite").
_NAME_OF = {np.dtype(dt): name for name, dt in NUMPY_DTYPE.items()}


def type_name(dtype) -> str:
    """"INT8", "UINT8", ... (TfLiteTypeGetName's spelling)."""
    return _NAME_OF.get(np.dtype(dtype), np.dtype(dtype).name.upper())


# TfLiteType's enum values (c_api_types.h; an order of its own, not the schema's TensorType).
_TFLITE_CODE = {name: code for code, name in enumerate(
    "NOTYPE FLOAT32 INT32 UINT8 INT64 STRING BOOL INT16 COMPLEX64 INT8 FLOAT16 FLOAT64 "
    "COMPLEX128 UINT64 RESOURCE VARIANT UINT32 UINT16 INT4 BFLOAT16".split())}


def type_code(dtype) -> int:
    """TfLiteType's enum value of a numpy dtype (-1 for none)."""
    return _TFLITE_CODE.get(type_name(dtype), -1)


def type_label(dtype) -> str:
    """"UINT8 (3)": how TFLM's "%s (%d)" messages name a type."""
    return f"{type_name(dtype)} ({type_code(dtype)})"


# The wording of TFLM's hybrid-model refusal (conv_common.cc, depthwise_conv_common.cc).
HYBRID = "Hybrid models are not supported on TFLite Micro."
