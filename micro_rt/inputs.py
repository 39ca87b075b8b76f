"""Seeded random inputs for a model: what `micro-rt run`, `fit` and `profile` feed it, and what
`run --check` and the oracle comparisons feed both micro_rt and tflite-micro.
"""
from __future__ import annotations

import numpy as np

from .errors import MicroRtError

INPUT_DISTRIBUTIONS = ("uniform", "normal")


def random_inputs(it, seed: int, distribution: str = "uniform") -> list[np.ndarray]:
    """Seeded inputs for every input of `it`. "uniform": over each integer type's whole range,
    or [-1, 1] for floats. "normal": around the input's zero point (ints: sigma an eighth of the
    range, rounded and clipped) or around 0 with sigma 0.5 (floats), so most values are not
    saturated (values beyond a limit are folded back inside). An integer input read directly by
    an operator that fails on part of the range is drawn from the valid part only: quantized
    RSQRT (TFLM refuses values below the zero point at invoke), the indices of GATHER and
    GATHER_ND and the ids of EMBEDDING_LOOKUP (refused outside the table), so a model whose
    input is an index gets inputs TFLM runs."""
    if distribution not in INPUT_DISTRIBUTIONS:
        raise MicroRtError(f"unknown input distribution '{distribution}'; choose from "
                           f"{', '.join(INPUT_DISTRIBUTIONS)}")
    rng = np.random.default_rng(seed)
    valid = _valid_ranges(it)
    inputs = []
    for i in range(it.num_inputs):
        details = it.get_input_details(i)
        dtype = np.dtype(details["dtype"])
        shape = tuple(int(d) for d in details["shape"])
        if np.issubdtype(dtype, np.integer):
            info = np.iinfo(dtype)
            if i in valid:              # an operator refuses values outside (folded back inside)
                low, high = max(int(info.min), valid[i][0]), min(int(info.max), valid[i][1])
                values = rng.integers(low, high + 1, size=shape) if distribution == "uniform" else \
                    np.abs(np.rint(rng.normal(0.0, max(high - low, 1) / 8, size=shape))) + low
                inputs.append(np.clip(values, low, high).astype(dtype))
            elif distribution == "uniform" and info.max > np.iinfo(np.int64).max:     # uint64
                inputs.append(rng.integers(0, info.max, size=shape, dtype=dtype, endpoint=True))
            elif distribution == "uniform":
                inputs.append(rng.integers(info.min, int(info.max) + 1, size=shape).astype(dtype))
            else:
                zero_points = details["quantization_parameters"]["zero_points"]
                centre = float(zero_points[0]) if len(zero_points) else 0.0
                sigma = (float(info.max) - float(info.min)) / 8
                values = np.rint(rng.normal(centre, sigma, size=shape))
                # A zero point at the edge of the range (inputs in [0, 1]: -128) would pile half
                # the values onto the limit: fold them back inside instead.
                values = np.where(values < info.min, 2 * info.min - values, values)
                values = np.where(values > info.max, 2 * info.max - values, values)
                inputs.append(np.clip(values, info.min, info.max).astype(dtype))
        elif distribution == "uniform":
            inputs.append(rng.uniform(-1.0, 1.0, size=shape).astype(dtype))
        else:
            inputs.append(rng.normal(0.0, 0.5, size=shape).astype(dtype))
    return inputs


def _valid_ranges(it) -> dict[int, tuple[int, int]]:
    """Input position -> the (lowest, highest) value the operators reading that graph input
    directly accept, where they fail the invoke on others. An empty range (an empty table)
    is left out: no value is valid there."""
    main = getattr(getattr(it, "model", None), "main", None)
    if main is None:
        return {}
    valid: dict[int, tuple[int, int]] = {}

    def narrow(tensor: int, low: int, high: int) -> None:
        if tensor not in main.inputs or high < low:
            return
        position = list(main.inputs).index(tensor)
        old = valid.get(position, (-(1 << 63), (1 << 64) - 1))
        if max(old[0], low) <= min(old[1], high):
            valid[position] = (max(old[0], low), min(old[1], high))

    for op in main.operators:
        ins = op.inputs
        if op.op_name == "RSQRT" and ins:
            q = main.tensors[ins[0]].quantization
            if q is not None and len(q.zero_points) and np.issubdtype(np.dtype(main.tensors[ins[0]].dtype), np.integer):
                narrow(ins[0], int(q.zero_points[0]), 1 << 62)
        elif op.op_name == "GATHER" and len(ins) >= 2 and ins[0] >= 0:
            shape = main.tensors[ins[0]].shape
            axis = int(op.options.get("axis", 0))
            axis = axis + len(shape) if axis < 0 else axis
            if 0 <= axis < len(shape):
                narrow(ins[1], 0, int(shape[axis]) - 1)
        elif op.op_name == "GATHER_ND" and len(ins) >= 2 and ins[0] >= 0:
            shape, indices = main.tensors[ins[0]].shape, main.tensors[ins[1]].shape
            nd = int(indices[-1]) if len(indices) else 0
            if 0 < nd <= len(shape):        # each column below its own dimension: the smallest
                narrow(ins[1], 0, min(int(d) for d in shape[:nd]) - 1)
        elif op.op_name == "EMBEDDING_LOOKUP" and len(ins) >= 2 and ins[1] >= 0:
            shape = main.tensors[ins[1]].shape
            if len(shape):
                narrow(ins[0], 0, int(shape[0]) - 1)
    return valid
