"""Builder-made single-operator models that the tests and the benchmarks share (dev-only, not
in the wheel): one module per operator family.

- `single_op`: a one-operator model of a builtin from tensor specs (tests/kernel_cases.py
  re-exports it);
- `svdf`, `lstm`: one SVDF / UNIDIRECTIONAL_SEQUENCE_LSTM op with seeded weights;
- `signal`: TFLM's Signal custom operators, their stream cases and frames;
- `detection`: an SSD head's TFLite_Detection_PostProcess;
- `circular_buffer`: a streaming CIRCULAR_BUFFER model;
- `type_cases`: every registered builtin in every tensor-type combination worth asking about.

The same seeds give the same models whoever builds them, so a benchmark measures the models the
tests check.
"""
