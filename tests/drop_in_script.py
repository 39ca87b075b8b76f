"""One script, run unchanged against `tflite_micro.runtime` and against micro_rt.

    python drop_in_script.py tflite_micro|micro_rt MODEL CUSTOM_OP_MODEL

Prints a JSON record of what happened: details, outputs, which built-in exception classes
each error is an instance of, and the print_allocations lines with the numbers masked.
Only the binding of `runtime` depends on the first argument.
"""
import json
import os
import re
import sys
import tempfile

import numpy as np

if sys.argv[1] == "tflite_micro":
    from tflite_micro import runtime
else:
    import micro_rt as runtime

MODEL, CUSTOM_OP_MODEL = sys.argv[2], sys.argv[3]
BUILTIN = (ValueError, RuntimeError, IndexError, TypeError, KeyError, AttributeError)
record = {}


def caught_by(fn):
    """The built-in classes an `except` clause could name to catch what fn raises."""
    try:
        fn()
    except Exception as e:   # noqa: BLE001 - the point is to see what it is
        return sorted(c.__name__ for c in BUILTIN if isinstance(e, c))
    return "no error"


def stderr_of(fn):
    saved = os.dup(2)
    with tempfile.TemporaryFile() as capture:
        sys.stderr.flush()
        os.dup2(capture.fileno(), 2)
        try:
            fn()
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
        capture.seek(0)
        return capture.read().decode()


def details(d):
    q = d["quantization_parameters"]
    return {"keys": sorted(d), "dtype": d["dtype"].__name__, "shape": d["shape"].tolist(),
            "shape_dtype": str(d["shape"].dtype), "q_keys": sorted(q),
            "scales": [str(q["scales"].dtype), q["scales"].tolist()],
            "zero_points": [str(q["zero_points"].dtype), q["zero_points"].tolist()],
            "quantized_dimension": [type(q["quantized_dimension"]).__name__,
                                    q["quantized_dimension"]]}


# ---- loading -------------------------------------------------------------------------------
record["missing file"] = caught_by(lambda: runtime.Interpreter.from_file("/nonexistent.tflite"))
record["too small arena"] = caught_by(lambda: runtime.Interpreter.from_file(MODEL, arena_size=1024))
record["unregistered custom op"] = caught_by(lambda: runtime.Interpreter.from_file(CUSTOM_OP_MODEL))
it = runtime.Interpreter.from_file(model_path=MODEL, custom_op_registerers=[], arena_size=None)
positional = runtime.Interpreter.from_bytes(open(MODEL, "rb").read(), [], 1 << 20,
                                            runtime.InterpreterConfig.kAllocationRecording)

# ---- details -------------------------------------------------------------------------------
inp, out = it.get_input_details(0), it.get_output_details(0)
record["input details"] = details(inp)
record["output details"] = details(out)
record["details index 3"] = caught_by(lambda: it.get_input_details(3))
record["output details index 3"] = caught_by(lambda: it.get_output_details(3))

# ---- set_input errors ----------------------------------------------------------------------
shape, dtype = tuple(inp["shape"]), inp["dtype"]
good = np.zeros(shape, dtype)
record["wrong dtype"] = caught_by(lambda: it.set_input(good.astype(np.float64), 0))
record["wrong shape"] = caught_by(lambda: it.set_input(np.zeros(shape[:-1] + (shape[-1] + 1,), dtype), 0))
record["wrong rank"] = caught_by(lambda: it.set_input(good[0], 0))
record["input index 5"] = caught_by(lambda: it.set_input(good, 5))
record["input index -1"] = caught_by(lambda: it.set_input(good, -1))
record["None input"] = caught_by(lambda: it.set_input(None, 0))
record["output index 3"] = caught_by(lambda: it.get_output(3))

# ---- invoke and outputs --------------------------------------------------------------------
rng = np.random.default_rng(7)
outputs = []
for runner in (it, positional):
    for _ in range(3):
        x = rng.integers(-128, 128, size=shape).astype(dtype)
        runner.set_input(x, 0)
        runner.invoke()
        y = runner.get_output(0)
        outputs.append([str(y.dtype), list(y.shape), y.ravel().tolist()])
record["outputs"] = outputs
record["reset"] = caught_by(it.reset)

# ---- preserved tensors ---------------------------------------------------------------------
kept = runtime.Interpreter.from_file(MODEL, intrepreter_config=runtime.InterpreterConfig.kPreserveAllTensors)
kept.set_input(x, 0)
kept.invoke()
tensor = kept.GetTensor(0, 0)
record["GetTensor keys"] = sorted(tensor)
record["GetTensor input"] = [tensor["dtype"].__name__, tensor["shape"].tolist(),
                             bool(np.array_equal(tensor["tensor_data"], x))]

# ---- print_allocations ---------------------------------------------------------------------
lines = stderr_of(it.print_allocations).splitlines()
record["print_allocations"] = [re.sub(r"\d+", "N", line) for line in lines]
json.dump(record, sys.stdout, indent=1)
