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
    an operator that fails on part of the range (quantized RSQRT: values below the zero point,
    which TFLM refuses at invoke) is drawn from the valid part only."""
    if distribution not in INPUT_DISTRIBUTIONS:
        raise MicroRtError(f"unknown input distribution '{distribution}'; choose from "
                           f"{', '.join(INPUT_DISTRIBUTIONS)}")
    rng = np.random.default_rng(seed)
    lowest = _lowest_valid_values(it)
    inputs = []
    for i in range(it.num_inputs):
        details = it.get_input_details(i)
        dtype = np.dtype(details["dtype"])
        shape = tuple(int(d) for d in details["shape"])
        if np.issubdtype(dtype, np.integer):
            info = np.iinfo(dtype)
            if i in lowest:             # an operator refuses the values below (folded back above)
                low = max(int(info.min), lowest[i])
                values = rng.integers(low, int(info.max) + 1, size=shape) if distribution == "uniform" else \
                    np.abs(np.rint(rng.normal(0.0, (float(info.max) - low) / 8, size=shape))) + low
                inputs.append(np.clip(values, low, info.max).astype(dtype))
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


def _lowest_valid_values(it) -> dict[int, int]:
    """Input position -> the lowest value its consumers accept, for graph inputs that a
    quantized RSQRT reads directly (TFLM fails the invoke on values below the zero point)."""
    main = getattr(getattr(it, "model", None), "main", None)
    if main is None:
        return {}
    lowest: dict[int, int] = {}
    for op in main.operators:
        if op.op_name != "RSQRT" or not op.inputs or op.inputs[0] not in main.inputs:
            continue
        t = main.tensors[op.inputs[0]]
        q = t.quantization
        if q is not None and len(q.zero_points) and np.issubdtype(np.dtype(t.dtype), np.integer):
            position = list(main.inputs).index(op.inputs[0])
            lowest[position] = max(lowest.get(position, -(1 << 63)), int(q.zero_points[0]))
    return lowest
