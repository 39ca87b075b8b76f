"""One SVDF operator with seeded weights, scales and zero points (`svdf_model`): int8 input
with int16 or int8 state, or float32. The SVDF tests (tests/test_kernels_svdf.py,
test_vmcu_svdf.py, ...), the type cases and benchmarks/bench_op_cycles.py share it."""
from __future__ import annotations

from typing import Optional

import numpy as np

from micro_rt.builder import ModelBuilder

F32 = np.float32


def svdf_model(batch: int, input_size: int, num_filters: int, rank: int, memory: int, kind: str = "int16",
               activation: str = "NONE", seed: int = 0, state_zp: Optional[int] = None,
               input_zp: Optional[int] = None, output_zp: Optional[int] = None, bias: bool = True,
               state_variable: bool = True, wt_type: Optional[str] = None) -> bytes:
    """A one-SVDF model: kind "int16" / "int8" (int8 input, weights_time and state of that
    type) or "float"; weights, scales and zero points drawn from `seed`."""
    rng = np.random.default_rng(seed)
    units = num_filters // rank if rank else num_filters
    b = ModelBuilder("svdf test")
    if kind == "float":
        x = b.add_tensor("input", (batch, input_size), "FLOAT32")
        wf = b.add_tensor("weights_feature", (num_filters, input_size), "FLOAT32",
                          data=rng.standard_normal((num_filters, input_size)).astype(F32) * F32(0.5))
        wt = b.add_tensor("weights_time", (num_filters, memory), "FLOAT32",
                          data=rng.standard_normal((num_filters, memory)).astype(F32) * F32(0.5))
        bs = b.add_tensor("bias", (units,), "FLOAT32", data=rng.standard_normal(units).astype(F32)) if bias else -1
        st = b.add_tensor("state", (batch, memory * num_filters), "FLOAT32", is_variable=state_variable)
        out = b.add_tensor("output", (batch, units), "FLOAT32")
    else:
        st_type = "INT16" if kind == "int16" else "INT8"
        wt_type = wt_type or st_type
        in_scale = float(F32(rng.uniform(0.01, 0.1)))
        wf_scale = float(F32(rng.uniform(0.002, 0.01)))
        wt_scale = float(F32(rng.uniform(0.001, 0.01) if kind == "int16" else rng.uniform(0.005, 0.02)))
        # Scales that put typical values mid-range (some saturate): the state code of a
        # feature dot product, then the output code of a unit sum.
        st_range = 32767 if st_type == "INT16" else 127
        wt_hi = 8000 if wt_type == "INT16" else 127
        dot_typ = 8000 * np.sqrt(input_size)
        st_scale = float(F32(in_scale * wf_scale * dot_typ / (0.6 * st_range)))
        acc_typ = 0.4 * st_range * 0.5 * wt_hi * np.sqrt(memory * rank)
        out_scale = float(F32(st_scale * wt_scale * acc_typ / 50))
        if state_zp is None:
            state_zp = 0 if st_type == "INT16" else int(rng.integers(-60, 60))
        if input_zp is None:
            input_zp = int(rng.integers(-128, 128))
        if output_zp is None:
            output_zp = int(rng.integers(-30, 30))
        x = b.add_tensor("input", (batch, input_size), "INT8", scale=in_scale, zero_point=input_zp)
        wf = b.add_tensor("weights_feature", (num_filters, input_size), "INT8",
                          data=rng.integers(-127, 128, (num_filters, input_size)), scale=wf_scale, zero_point=0)
        wt = b.add_tensor("weights_time", (num_filters, memory), wt_type,
                          data=rng.integers(-wt_hi, wt_hi + 1, (num_filters, memory)), scale=wt_scale, zero_point=0)
        bias_scale = float(F32(F32(st_scale) * F32(wt_scale)))
        bs = (b.add_tensor("bias", (units,), "INT32", data=rng.integers(-int(acc_typ), int(acc_typ) + 1, units),
                           scale=bias_scale, zero_point=0) if bias else -1)
        st = b.add_tensor("state", (batch, memory * num_filters), st_type, scale=st_scale,
                          zero_point=state_zp, is_variable=state_variable)
        out = b.add_tensor("output", (batch, units), "INT8", scale=out_scale, zero_point=output_zp)
    b.add_operator("SVDF", [x, wf, wt, bs, st], [out],
                   options={"rank": rank, "fused_activation_function": activation})
    b.inputs, b.outputs = [x], [out]
    return b.build()

