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

Each kernel's Registration says its Prepare's sequence of those calls (`temps`, read from
tensorflow/lite/micro/kernels: the reference kernels in kernels/, the CMSIS-NN glue where it
differs in micro_rt/flavours.py). Notation: `i2` is input 2, `o0` output 0, `i*` every input
in order, `|` separates the kernel's own calls from those of the helper it calls (for the
reader only). This module reads that notation.
"""
from __future__ import annotations

from typing import Optional, Sequence

from .kernel_api import TempRule
from .model import OperatorInfo, TensorInfo


def prepare_accesses(op: OperatorInfo, tensors: Sequence[TensorInfo],
                     rule: Optional[TempRule]) -> Optional[list[int]]:
    """The tensor indices op's Prepare makes temporary TfLiteTensors for, in call order, by its
    registration's `rule`; None when the rule is not known (a user's kernel)."""
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
