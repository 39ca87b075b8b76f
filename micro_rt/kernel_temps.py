"""The temporary TfLiteTensors TFLM's kernels make while they prepare.

A TFLM kernel reads its tensors in Prepare through `AllocateTempInputTensor` /
`AllocateTempOutputTensor`, and every call builds a fresh TfLiteTensor in the arena's temp
section: the struct, and for an affine-quantized tensor (a scale and a zero-point vector,
both non-empty) a TfLiteAffineQuantization and an int array of its zero points (one per
scale). Deallocating never moves the temp pointer back; it returns to the head only when the
node finishes preparing. So a node's temp bytes are the sum over its Prepare's calls, in
order, with their alignments: an operator that reads the same tensor twice (ADD(x, x), or
a kernel that reads its inputs again in a helper) pays twice. A call for an absent tensor
(-1, or a slot past the end of the node's list) makes nothing.

The tables below are each kernel's Prepare as the sequence of those calls, read from
tensorflow/lite/micro/kernels (reference kernels, and the CMSIS-NN glue where it differs).
Notation: `i2` is input 2, `o0` output 0, `i*` every input in order, `|` separates the
kernel's own calls from those of the helper it calls (for the reader only).
"""
from __future__ import annotations

from typing import Callable, Optional, Sequence, Union

from .model import OperatorInfo, TensorInfo

Rule = Union[str, Callable[[OperatorInfo, Sequence[TensorInfo]], str]]


def _mean_or_sum(op: OperatorInfo, tensors: Sequence[TensorInfo]) -> str:
    # PrepareMeanOrSumHelper, then PrepareSimple (which reads the output for int8 only).
    return "i0 o0 i1 | i0 i1" + (" o0" if _input_type(op, tensors) == "INT8" else "")


def _min_max(op: OperatorInfo, tensors: Sequence[TensorInfo]) -> str:
    # PrepareSimple first, then PrepareMinMaxHelper's own reads.
    return "i0 i1" + (" o0" if _input_type(op, tensors) == "INT8" else "") + " | i0 o0 i1"


def _reduce_all(op: OperatorInfo, tensors: Sequence[TensorInfo]) -> str:
    return "i0 o0 i1 | i0 i1" + (" o0" if _input_type(op, tensors) == "INT8" else "")


def _add_n(op: OperatorInfo, tensors: Sequence[TensorInfo]) -> str:
    # The first input and the output, then every other input in turn.
    return "i0 o0 " + " ".join(f"i{k}" for k in range(1, len(op.inputs)))


def _input_type(op: OperatorInfo, tensors: Sequence[TensorInfo]) -> Optional[str]:
    return tensors[op.inputs[0]].type_name if op.inputs and op.inputs[0] >= 0 else None


REFERENCE: dict[str, Rule] = {
    # micro_rt has kernels for these
    "ADD": "i0 i1 o0", "SUB": "i0 i1 o0", "MUL": "i0 i1 o0",
    "CONV_2D": "o0 i0 i1 | i0 i1 i2 o0",                 # ConvPrepare | CalculateOpDataConv
    "DEPTHWISE_CONV_2D": "o0 i0 i1 | i0 i1 i2 o0",
    "FULLY_CONNECTED": "i0 i1 i2 o0",
    "AVERAGE_POOL_2D": "i0 o0", "MAX_POOL_2D": "i0 o0",
    "SOFTMAX": "i0 o0", "CAST": "i0 o0", "QUANTIZE": "i0 o0", "DEQUANTIZE": "i0 o0",
    "CONCATENATION": "i0 o0 | i*",
    "EXPAND_DIMS": "i0 i1 o0", "RESHAPE": "i0 o0", "SQUEEZE": "i0 o0",
    "STRIDED_SLICE": "i0 i1 i2 i3 o0", "TRANSPOSE": "i0 i1 o0",
    "PAD": "i0 i1 i2 o0", "PADV2": "i0 i1 i2 o0",
    "RELU": "i0 o0", "RELU6": "i0", "LEAKY_RELU": "i0 o0", "HARD_SWISH": "i0 o0",
    "LOGISTIC": "i0 o0", "TANH": "i0 | i0 o0",
    "MEAN": _mean_or_sum, "SUM": _mean_or_sum, "REDUCE_MAX": _min_max, "REDUCE_MIN": _min_max,
    "REDUCE_ALL": _reduce_all,
    "SVDF": "i0 i1 i2 i3 i4 o0",
    "UNIDIRECTIONAL_SEQUENCE_LSTM": "i* o0",              # LstmTensors: all 24 inputs
    "MAXIMUM": "", "MINIMUM": "", "PACK": "", "SHAPE": "",
    "DEPTH_TO_SPACE": "i0 o0", "SPACE_TO_DEPTH": "i0 o0",
    "SPACE_TO_BATCH_ND": "i0 o0", "BATCH_TO_SPACE_ND": "i0 o0",
    "SLICE": "i0 i1 i2 o0", "REVERSE_V2": "i0 i1 o0", "SPLIT": "i0", "SPLIT_V": "i2", "UNPACK": "",
    "DYNAMIC_UPDATE_SLICE": "i0 i1 i2 o0",
    "GATHER": "i0 i1 o0", "GATHER_ND": "i0 i1 o0", "EMBEDDING_LOOKUP": "i0 i1 o0",
    "FILL": "i0 i1 o0", "BROADCAST_TO": "i0 i1 o0", "BROADCAST_ARGS": "i0 i1 o0", "MIRROR_PAD": "i0 i1 o0",
    "DIV": "i0 i1 o0", "FLOOR_DIV": "i0 i1 o0", "FLOOR_MOD": "i0 i1 o0", "SQUARED_DIFFERENCE": "i0 i1 o0",
    "PRELU": "i0 i1 o0", "ADD_N": _add_n, "SELECT_V2": "i0 i1 i2 o0",
    "EQUAL": "i0 i1", "NOT_EQUAL": "i0 i1", "GREATER": "i0 i1", "GREATER_EQUAL": "i0 i1",
    "LESS": "i0 i1", "LESS_EQUAL": "i0 i1", "LOGICAL_AND": "", "LOGICAL_OR": "",
    # the unary math family: one read of each tensor; FLOOR and NEG have no prepare
    **{op: "i0 o0" for op in ("ABS", "RSQRT", "SIN", "COS", "LOG", "SQRT", "SQUARE", "LOGICAL_NOT", "CEIL",
                              "EXP", "ROUND", "ELU", "ZEROS_LIKE")},
    "FLOOR": "", "NEG": "",
    "ARG_MAX": "", "ARG_MIN": "",                         # no prepare
    "CUMSUM": "i0 i1 o0", "LOG_SOFTMAX": "i0 o0", "L2_NORMALIZATION": "i0 o0",
    "L2_POOL_2D": "o0 i0",
    "IF": "i0", "WHILE": "", "CALL_ONCE": "",                 # the condition only
    "VAR_HANDLE": "", "READ_VARIABLE": "i0", "ASSIGN_VARIABLE": "i1",
}

# The CMSIS-NN glue's Prepare where it reads differently from the reference kernel.
CMSIS_NN: dict[str, Rule] = {
    # asks for the bias as *output* 2, which does not exist: no tensor is made for it
    "CONV_2D": "i0 i1 o0 | i0 i1 i2 o0",
    "DEPTHWISE_CONV_2D": "i0 i1 o0 | i0 i1 i2 o0",
    "AVERAGE_POOL_2D": "i0 o0 | i0 o0",                   # PoolingPrepare, then its own
}


# Kernels whose Prepare allocates its persistent data (op data, tables, copied dims) only after
# its last temporary tensor: TFLM checks a persistent allocation against the head alone, so
# those bytes may overlap the temporary tensors and do not add to their peak.
PERSISTENT_AFTER_TEMPS = frozenset({"CUMSUM", "LOG_SOFTMAX", "L2_POOL_2D", "SOFTMAX",   # SOFTMAX: int16 LUTs
                                    "EMBEDDING_LOOKUP"})


def persistent_after_temps(op: OperatorInfo) -> bool:
    """Whether op's Prepare allocates persistent memory only after its temporary tensors."""
    return not op.is_custom and op.op_name in PERSISTENT_AFTER_TEMPS
# TFLM's own custom operators (signal/micro/kernels), by the custom name they register under.
# SignalFilterBank reads its six inputs without freeing them in between (temp only grows).
SIGNAL: dict[str, Rule] = {
    "SignalWindow": "i0 i1 o0", "SignalFftAutoScale": "i0 o0 o1", "SignalRfft": "i0 o0",
    "SignalEnergy": "i0 o0", "SignalFilterBank": "i0 i1 i2 i3 i4 i5 o0",
    "SignalFilterBankSquareRoot": "i0 i1 o0", "SignalFilterBankSpectralSubtraction": "i0 o0 o1",
    "SignalPCAN": "i0 i1 i2 o0", "SignalFilterBankLog": "i0 o0",
    "SignalIrfft": "i0 o0", "SignalFramer": "i0 o0 o1", "SignalStacker": "i0 o0 o1",
    "SignalDelay": "i0 o0", "SignalOverlapAdd": "i0 o0",
}


def prepare_accesses(op: OperatorInfo, tensors: Sequence[TensorInfo],
                     kernels: str = "reference") -> Optional[list[int]]:
    """The tensor indices op's Prepare makes temporary TfLiteTensors for, in call order;
    None when TFLM's kernel for the op is not in the tables (a user's custom ops, unlisted
    builtins)."""
    if op.is_custom:
        rule = SIGNAL.get(op.op_name)
    else:
        rule = (CMSIS_NN.get(op.op_name) if kernels == "cmsis-nn" else None) or REFERENCE.get(op.op_name)
    if rule is None:
        return None
    spec = rule(op, tensors) if callable(rule) else rule
    indices = []
    for word in spec.replace("|", " ").split():
        kind, slot = word[0], word[1:]
        slots = op.inputs if kind == "i" else op.outputs
        picked = list(slots) if slot == "*" else ([slots[int(slot)]] if int(slot) < len(slots) else [])
        indices += [t for t in picked if t >= 0]
    return indices
