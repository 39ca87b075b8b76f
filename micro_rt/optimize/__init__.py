"""Beyond TFLM: reorder operators and place buffers to shrink the arena's head (issue 6).

TFLM runs operators in file order and places the buffers with its greedy planner. This package
searches both choices and writes the result back into a .tflite that stock TFLM honours:

- `ordering`: the operator order with the smallest peak of live bytes (dynamic programming over
  sets of executed operators, a beam search when that is too large);
- `placement`: arena offsets for one order, by many first-fit orders, random restarts and an
  exact branch and bound, scored by simulating TFLM's greedy planner around them;
- `writing`: the operators rewritten in the new order and the offsets as
  `OfflineMemoryAllocation` metadata, every other byte of the model kept;
- `optimizer`: the whole search (`optimize`) and the check that only memory changed
  (`check_outputs`).

    result = optimize(data, target="cortex-m4", kernels="cmsis-nn")
    Path("out.tflite").write_bytes(result.data)
"""
from .optimizer import OptimizeResult, check_outputs, optimize

__all__ = ["OptimizeResult", "check_outputs", "optimize"]
