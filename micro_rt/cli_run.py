"""`micro-rt run`: invoke the model on given or seeded inputs, show each output (whole when
small, else summarised), save them (--output DIR), and with --check compare with tflite-micro."""
from __future__ import annotations

from pathlib import Path
from typing import Optional, Sequence

import numpy as np

from .cli_common import emit, load_model, progress_bar, resolve_kernels
from .cli_parser import CHECK_SEEDS, EXIT_NO, EXIT_OK
from .errors import InputError, MicroRtError
from .files import load_array
from .interpreter import Interpreter
from .report import (WHOLE_ARRAY_ELEMENTS, array_summary, kernels_fields, quantization_fields,
                     quantization_label)


def _dequantize(value: np.ndarray, details: dict) -> Optional[np.ndarray]:
    q = details["quantization_parameters"]
    if len(q["scales"]) != 1 or not np.issubdtype(value.dtype, np.integer):
        return None
    return (value.astype(np.float64) - float(q["zero_points"][0])) * float(q["scales"][0])


def _check(args, data: bytes, it: Interpreter, first_inputs: list, payload: dict,
           lines: list) -> bool:
    """Compare with tflite-micro on --seeds input sets: the run's own inputs, then seeded ones
    alternating uniform over each type's range and normal around the zero point."""
    from .inputs import INPUT_DISTRIBUTIONS, random_inputs
    from .oracle import check_against_oracle
    given = bool(args.input)
    sets = [{"seed": args.seed, "distribution": "--input files" if given else "uniform"}]
    input_sets = [first_inputs]
    for n in range(1, args.seeds or CHECK_SEEDS):
        kind = INPUT_DISTRIBUTIONS[n % len(INPUT_DISTRIBUTIONS)]
        sets.append({"seed": args.seed + n, "distribution": kind})
        input_sets.append(random_inputs(it, args.seed + n, kind))
    with progress_bar(args, "checking against tflite-micro", len(input_sets)) as progress:
        # a fresh interpreter: the oracle starts fresh, and the run's invoke moved any state
        fresh = Interpreter.from_bytes(data, target=args.target, kernels=args.kernels,
                                       emulate=args.emulate)
        agreements = check_against_oracle(data, fresh, input_sets, progress)
    equal = all(a.equal for a in agreements)
    payload["check"] = {"equal": equal, "input_sets": sets,
                        "outputs": [a.as_dict() for a in agreements]}
    first = "the inputs given (--input)" if given else f"seed {args.seed} uniform"
    lines.append(f"check against tflite-micro on {len(input_sets)} input sets: {first}"
                 + (f", then seeds {args.seed + 1}..{args.seed + len(input_sets) - 1} alternating "
                    "normal around the zero point and uniform over each type's range"
                    if len(input_sets) > 1 else ""))
    for a in agreements:
        lines.append(f"check output {a.index} ({a.dtype}, required: {a.tolerance}): {a.verdict}")
    return equal


def _refuse_input_count(it: Interpreter, given: Sequence[str]) -> None:
    """--input files are one per model input, in order: any other count is refused."""
    if given and len(given) != it.num_inputs:
        sg = it.model.main
        names = ", ".join(f"{i} '{sg.tensors[t].name}'" for i, t in enumerate(sg.inputs))
        s = "s" if it.num_inputs != 1 else ""
        raise InputError(f"the model has {it.num_inputs} input{s} ({names}) but {len(given)} "
                         f"--input file{'s were' if len(given) != 1 else ' was'} given: give one "
                         ".npy file per input, in order (or none for seeded random inputs)")


def _save_outputs(directory: str, outputs: Sequence[np.ndarray]) -> list[str]:
    """run --output DIR: each output as DIR/output_<i>.npy; the paths written."""
    paths = [str(Path(directory) / f"output_{i}.npy") for i in range(len(outputs))]
    try:
        Path(directory).mkdir(parents=True, exist_ok=True)
        for path, value in zip(paths, outputs):
            np.save(path, value, allow_pickle=False)
    except OSError as e:
        raise MicroRtError(f"--output '{directory}': cannot write the outputs there: "
                           f"{e.strerror or e}") from None
    return paths


def cmd_run(args) -> int:
    from .inputs import random_inputs
    if args.seeds is not None and not args.check:
        raise InputError(f"--seeds {args.seeds} goes with --check: it is the number of input "
                         "sets compared with tflite-micro (see micro-rt run --help)")
    if args.output and Path(args.output).exists() and not Path(args.output).is_dir():
        raise InputError(f"--output '{args.output}' is a file; give a directory (each output "
                         "is saved in it as output_<i>.npy)")
    _, data = load_model(args.model)
    resolve_kernels(args)
    it = Interpreter.from_bytes(data, target=args.target, kernels=args.kernels, emulate=args.emulate)
    _refuse_input_count(it, args.input or [])
    inputs = random_inputs(it, args.seed)
    for i, path in enumerate(args.input or []):
        try:
            inputs[i] = load_array(path)
        except (OSError, ValueError, EOFError) as e:
            raise MicroRtError(f"cannot read input {i} from '{path}' (a .npy file "
                               f"saved with numpy.save): {e}") from None
    for i, value in enumerate(inputs):
        it.set_input(value, i)
    with progress_bar(args, f"running {Path(args.model).name}", len(it.nodes)) as progress:
        it.invoke(progress=progress)
    outputs = [it.get_output(i) for i in range(it.num_outputs)]
    files = _save_outputs(args.output, outputs) if args.output else [None] * len(outputs)
    payload = {"model": args.model, "target": it.target.name,
               **kernels_fields(args.kernels, it.target.name),
               "arena_bytes": it.arena_required_bytes(),
               "executed_on": "virtual_mcu" if it.emulate else "host",
               "seed": args.seed, "outputs": []}
    ran = (f"on the virtual {it.target.name}, {args.kernels} C kernels" if it.emulate else
           "on the host's kernels" if it.target.is_host else
           f"on the host's kernels (bit-exact with the {args.kernels} C kernels, which --emulate "
           "runs)")
    lines = [f"ran {ran}, in the {payload['arena_for']} ({it.arena_required_bytes():,} B)"]
    sg = it.model.main
    for i, (value, file) in enumerate(zip(outputs, files)):
        tensor = sg.tensors[sg.outputs[i]]
        deq = _dequantize(value, it.get_output_details(i))
        payload["outputs"].append(
            {"index": i, "name": tensor.name, "dtype": value.dtype.name, "shape": list(value.shape),
             "quantization": quantization_fields(tensor.quantization), "file": file,
             "raw": value.tolist(), "dequantized": None if deq is None else deq.tolist()})
        lines.append(f"output {i} '{tensor.name}' {value.dtype.name}{list(value.shape)}, "
                     f"{quantization_label(tensor.quantization)}"
                     + (f" -> {file}" if file else ""))
        lines += array_summary(value, deq)
    if not args.output and any(v.size > WHOLE_ARRAY_ELEMENTS for v in outputs):
        lines.append(f"(arrays over {WHOLE_ARRAY_ELEMENTS} values summarised: --output DIR "
                     "saves each output as .npy, --json prints every value)")
    equal = _check(args, data, it, inputs, payload, lines) if args.check else True
    emit(args, payload, "\n".join(lines))
    return EXIT_OK if equal else EXIT_NO
