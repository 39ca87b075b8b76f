"""Development and verification tools: not part of the runtime.

- `oracle`: the tflite-micro pip runtime as a reference (`micro-rt run --check`,
  `micro-rt optimize`'s output check, the tests and the benchmarks);
- `fuzzing`, `fuzz_mutators`: hostile-input campaigns against every stage of micro_rt
  (tests/test_fuzz.py, benchmarks/fuzz_campaign.py).

The runtime core (reader, model, resolver, interpreter, allocator, planner, arena, kernels,
virtual MCU) never imports this package.
"""
