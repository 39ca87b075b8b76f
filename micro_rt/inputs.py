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
    saturated (values beyond a limit are folded back inside)."""
    if distribution not in INPUT_DISTRIBUTIONS:
        raise MicroRtError(f"unknown input distribution '{distribution}'; choose from "
                           f"{', '.join(INPUT_DISTRIBUTIONS)}")
    rng = np.random.default_rng(seed)
    inputs = []
    for i in range(it.num_inputs):
        details = it.get_input_details(i)
        dtype = np.dtype(details["dtype"])
        shape = tuple(int(d) for d in details["shape"])
        if np.issubdtype(dtype, np.integer):
            info = np.iinfo(dtype)
            if distribution == "uniform":
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
