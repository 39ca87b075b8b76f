"""Development tools, not part of micro_rt's wheel: hostile-input campaigns against every stage,
and the op models the tests and benchmarks share.

- `fuzzing`, `fuzz_mutators`: mutated models through load, plan, run and the MCU
  (tests/test_fuzz.py, benchmarks/fuzz_campaign.py);
- `elf_fuzzing`: mutated firmware images through `emulate` (tests/test_emulate_bad_input.py,
  benchmarks/fuzz_firmware.py);
- `op_models`: the builder-made single-operator models (SVDF, LSTM, Signal, detection, circular
  buffer, the type cases) that the tests and benchmarks/bench_op_cycles.py share.

They import micro_rt like any user of it; micro_rt never imports them. Tests and benchmarks put
the repository root on sys.path to reach this package.
"""
