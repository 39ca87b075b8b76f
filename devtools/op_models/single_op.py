"""A one-operator model of a builtin from tensor specs (dicts of shape, type, scale, zp, data,
qdim), built with micro_rt.builder.ModelBuilder. The kernel tests (through tests/kernel_cases.py)
and the type cases (devtools/op_models/type_cases.py, which bench_op_cycles.py runs) share it."""
from __future__ import annotations

from typing import Optional, Sequence, cast

from micro_rt.builder import ModelBuilder


def single_op(op: str, inputs: Sequence[Optional[dict]], output: Optional[dict] = None,
              options: Optional[dict] = None, outputs: Optional[Sequence[dict]] = None) -> bytes:
    """A model of one operator. `inputs`: specs, None for an omitted optional input (-1);
    inputs without `data` become the graph inputs, the op's outputs the graph outputs."""
    b = ModelBuilder("kernel test")
    ins, graph_inputs = [], []
    for k, spec in enumerate(inputs):
        if spec is None:
            ins.append(-1)
            continue
        t = b.add_tensor(f"in{k}", spec["shape"], spec.get("type", "INT8"), data=spec.get("data"),
                         scale=spec.get("scale"), zero_point=spec.get("zp"),
                         quantized_dimension=spec.get("qdim", 0))
        ins.append(t)
        if spec.get("data") is None:
            graph_inputs.append(t)
    outs = [b.add_tensor(f"out{k}", spec["shape"], spec.get("type", "INT8"), scale=spec.get("scale"),
                         zero_point=spec.get("zp"), quantized_dimension=spec.get("qdim", 0))
            for k, spec in enumerate(outputs or [cast(dict, output)])]
    b.add_operator(op, ins, outs, options=options or {})
    b.inputs, b.outputs = graph_inputs, outs
    return b.build()
