"""What every host kernel uses (TFLM's kernels/kernel_util.h): errors that name the op and the
tensor, tensor accessors, TfLiteType names as TFLM prints them, fused-activation ranges, and
the input checks TFLM's kernels make before they read anything.
"""
from __future__ import annotations

import numpy as np
import numpy.typing as npt

from micro_rt.errors import KernelError
from micro_rt.schema import NUMPY_DTYPE

from .fixedpoint import round_half_away
from micro_rt.kernel_api import KernelContext, Node, absent_input

# --------------------------------------------------------------------------- errors


def kernel_error(node, message: str) -> KernelError:
    """A KernelError naming the op (raise the result): "op 3 CONV_2D: <message>", with its
    subgraph for operators of subgraphs after the first ("subgraph 2 op 0 MUL: ...")."""
    where = f"subgraph {node.subgraph} " if getattr(node, "subgraph", 0) else ""
    return KernelError(f"{where}op {node.index} {node.op_name}: {message}")


def tensor_name(t) -> str:
    """The tensor's name in quotes, as error messages show it."""
    return f"'{getattr(t, 'name', '?')}'"


def tensor_desc(t) -> str:
    """The quoted name with type and shape: "'x' (int8[1, 4])"."""
    return f"'{t.name}' ({np.dtype(t.dtype).name}{list(t.shape)})"


def dtype_name(t) -> str:
    """numpy's name of the tensor's type ("int8")."""
    return np.dtype(t.dtype).name


# --------------------------------------------------------------------------- TfLiteType names
# So a kernel refusing a type can say what TFLM says ("Type UINT8 (3) not supported.") next to
# our own explanation.

# numpy dtype -> the schema's TensorType name (TfLiteType's name without "kTfLite").
_NAME_OF = {np.dtype(dt): name for name, dt in NUMPY_DTYPE.items()}

# TfLiteType's enum values (c_api_types.h; an order of its own, not the schema's TensorType).
_TFLITE_CODE = {name: code for code, name in enumerate(
    "NOTYPE FLOAT32 INT32 UINT8 INT64 STRING BOOL INT16 COMPLEX64 INT8 FLOAT16 FLOAT64 "
    "COMPLEX128 UINT64 RESOURCE VARIANT UINT32 UINT16 INT4 BFLOAT16".split())}

# The wording of TFLM's hybrid-model refusal (conv_common.cc, depthwise_conv_common.cc).
HYBRID = "Hybrid models are not supported on TFLite Micro."


def type_name(dtype) -> str:
    """"INT8", "UINT8", ... (TfLiteTypeGetName's spelling)."""
    return _NAME_OF.get(np.dtype(dtype), np.dtype(dtype).name.upper())


def type_code(dtype) -> int:
    """TfLiteType's enum value of a numpy dtype (-1 for none)."""
    return _TFLITE_CODE.get(type_name(dtype), -1)


def type_label(dtype) -> str:
    """"UINT8 (3)": how TFLM's "%s (%d)" messages name a type."""
    return f"{type_name(dtype)} ({type_code(dtype)})"


# --------------------------------------------------------------------------- tensor accessors

def scale_of(t) -> float:
    """params.scale of a tensor: the first scale as a float32-exact Python float, 0.0 when
    the tensor is not quantized."""
    s = getattr(t, "scales", None)
    if s is None or len(s) == 0:
        return 0.0
    return float(np.float32(s[0]))


def zero_point_of(t) -> int:
    """params.zero_point of a tensor: the first zero point, 0 when not quantized."""
    z = getattr(t, "zero_points", None)
    if z is None or len(z) == 0:
        return 0
    return int(z[0])


def is_quantized(t) -> bool:
    """Whether the tensor has quantization parameters."""
    s = getattr(t, "scales", None)
    return s is not None and len(s) > 0


def element_count(t) -> int:
    """Number of elements (1 for a scalar)."""
    return int(np.prod(t.shape)) if len(t.shape) else 1


# --------------------------------------------------------------------------- fused activations

def activation_of(node) -> str:
    """The node's fused activation function ("NONE" when the options have none)."""
    act = node.options.get("fused_activation_function", "NONE")
    return act if isinstance(act, str) else str(act)


def check_activation(node, act: str) -> None:
    """Refuse a fused activation the conv / FC / pooling kernels cannot clamp to."""
    if act not in ("NONE", "RELU", "RELU6", "RELU_N1_TO_1"):
        raise kernel_error(node, f"fused activation {act} is not supported")


FLOAT32_MAX = float(np.finfo(np.float32).max)


def activation_range_float(activation: str) -> tuple[float, float]:
    """CalculateActivationRange for float kernels: "no bound" is std::numeric_limits<float>'s
    lowest() / max(), so an infinite result comes out as -+FLT_MAX."""
    if activation == "RELU":
        return 0.0, FLOAT32_MAX
    if activation == "RELU6":
        return 0.0, 6.0
    if activation == "RELU_N1_TO_1":
        return -1.0, 1.0
    return -FLOAT32_MAX, FLOAT32_MAX


def activation_with_min_max(x: np.ndarray, lo, hi) -> np.ndarray:
    """TFLM's ActivationFunctionWithMinMax, std::min(std::max(x, lo), hi): NaN passes through and
    a tie keeps x (RELU leaves -0.0 as -0.0, where numpy's maximum would give 0.0)."""
    x = np.where(x < lo, lo, x)
    return np.where(hi < x, hi, x)


def activation_range_quantized(activation: str, scale: float, zero_point: int,
                               dtype: npt.DTypeLike) -> tuple[int, int]:
    """CalculateActivationRangeQuantized: the clamp bounds of a fused activation."""
    info = np.iinfo(dtype)
    qmin, qmax = int(info.min), int(info.max)

    def quantize(value: float) -> int:
        # TFLM divides in float32 and rounds with roundf.
        return zero_point + round_half_away(float(np.float32(value) / np.float32(scale)))

    if activation == "RELU":
        return max(qmin, quantize(0.0)), qmax
    if activation == "RELU6":
        return max(qmin, quantize(0.0)), min(qmax, quantize(6.0))
    if activation == "RELU_N1_TO_1":
        return max(qmin, quantize(-1.0)), min(qmax, quantize(1.0))
    return qmin, qmax


def activation_range_int(activation: str, dtype) -> tuple[int, int]:
    """CalculateActivationRange<int32_t>: the bounds in the integer type itself."""
    info = np.iinfo(dtype)
    if activation == "RELU":
        return 0, int(info.max)
    if activation == "RELU6":
        return 0, 6
    if activation == "RELU_N1_TO_1":
        return -1, 1
    return int(info.min), int(info.max)


# --------------------------------------------------------------------------- input checks

def require_inputs(ctx: KernelContext, node: Node, count: int | None = None) -> list:
    """The node's inputs 0..count-1 (every input when count is None), refusing too few or an
    absent one (-1): TFLM's kernels dereference them unconditionally."""
    count = len(node.inputs) if count is None else count
    if len(node.inputs) < count:
        raise kernel_error(node, f"has {len(node.inputs)} inputs, needs {count}")
    tensors = [ctx.input(node, i) for i in range(count)]
    for i, t in enumerate(tensors):
        if t is None:
            raise kernel_error(node, absent_input(node, i))
    return tensors


def check_elements(node, what: str, t, expected: int) -> None:
    """A tensor must hold exactly `expected` elements (bias length, output size, ...)."""
    count = element_count(t)
    if count != expected:
        raise kernel_error(node, f"{what} {tensor_name(t)} {list(t.shape)} holds {count} elements, "
                                 f"expected {expected}")


def check_quantized(node, t, role: str) -> None:
    """A tensor whose scale a kernel divides by (an output's, mostly) must have one, positive
    and finite. TFLM does not check: it divides by zero and converts the infinite multiplier
    to an integer, which is undefined. (A zero scale in a numerator is fine: TFLM's
    multiplier is then 0, and so is ours.)"""
    scales = np.asarray(getattr(t, "scales", ()), dtype=np.float64).reshape(-1)
    kind = np.dtype(t.dtype).name
    desc = f"{role} {tensor_name(t)} ({kind}{list(t.shape)})"
    if scales.size == 0:
        raise kernel_error(node, f"{desc} has no quantization parameters; a quantized {kind} tensor "
                                 "needs a scale and a zero point")
    bad = np.nonzero(~np.isfinite(scales) | (scales <= 0))[0]
    if bad.size:
        where = f" (channel {int(bad[0])} of {scales.size})" if scales.size > 1 else ""
        raise kernel_error(node, f"{desc} has quantization scale {float(scales[bad[0]])!r}{where}; "
                                 "a scale must be positive and finite")


# --------------------------------------------------------------------------- output shapes

def allocate_writable_dims(ctx, t) -> None:
    """TFLM's CreateWritableTensorDimsWithCopy: a kernel that sets its output's shape in
    prepare first copies the tensor's dims (a TfLiteIntArray of the model's rank) to
    persistent memory; the arena pays for it."""
    ctx.allocate_persistent(ctx.target.sizeof("TfLiteIntArray") + 4 * len(t.shape))


def check_computed_shape(node, out, shape) -> None:
    """The output shape TFLM's prepare computes must be the model's: TFLM plans the model's
    bytes and then writes the computed shape's, so a model that differs is refused."""
    if [int(d) for d in out.shape] != [int(d) for d in shape]:
        raise kernel_error(node, f"output {tensor_desc(out)} does not match the shape TFLM computes "
                                 f"from the inputs, {[int(d) for d in shape]}")
