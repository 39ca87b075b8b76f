"""`micro-rt emulate APP.elf`: run a firmware image from its reset vector on the virtual MCU
(cortexm/system) and report what it printed, its cycles, per-function profile, heap, stack,
faults and image size."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .cli_common import emit, write_text
from .errors import InputError
from .files import MAX_ARRAY_FILE_BYTES, load_array, read_regular_file

EXIT_DID_NOT_FINISH = 3


def _input_bytes(spec: str) -> tuple[str, bytes]:
    if "=" not in spec:
        raise InputError(f"--input {spec!r}: give SYMBOL=FILE.npy (or SYMBOL=FILE.bin for raw bytes)")
    name, path = spec.split("=", 1)
    if not name:
        raise InputError(f"--input {spec!r}: the symbol name is empty")
    if path.endswith(".npy"):
        return name, np.ascontiguousarray(load_array(path)).tobytes()
    return name, read_regular_file(path, MAX_ARRAY_FILE_BYTES, "input file", InputError)


def cmd_emulate(args) -> int:
    from .cortexm.boards import load_board
    from .cortexm.system.peripherals import MmioPolicy
    from .cortexm.system.run import EmulateRequest, run_firmware
    from .reports.firmware import firmware_section, firmware_tables, firmware_text
    from .reports.page import page
    if args.board and args.target:
        raise InputError("give --board or --target, not both (a board names its core)")
    board = load_board(args.board, args.board_dir) if args.board else None
    inputs = dict(_input_bytes(s) for s in args.input or [])
    outputs = {}
    for spec in args.output or []:
        name, _, path = spec.partition("=")
        outputs[name] = path or None
    req = EmulateRequest(Path(args.firmware), board=board, target=args.target, clock_hz=args.clock,
                         flash_wait_states=args.flash_wait_states, max_cycles=args.max_cycles,
                         inputs=inputs, outputs=tuple(outputs), timed=tuple(args.time or ()),
                         mmio=MmioPolicy.IGNORE if args.ignore_mmio else MmioPolicy.STOP)
    report = run_firmware(req)
    for name, path in outputs.items():
        if path:
            data = np.frombuffer(report.outputs[name], dtype=np.uint8)
            if path.endswith(".npy"):
                np.save(path, data)
            else:
                Path(path).write_bytes(data.tobytes())
    payload = report.to_dict()
    emit(args, payload, firmware_text(payload), firmware_tables)
    if args.html:
        write_text(args.html, page(f"{report.file}: firmware run", f"{report.file}",
                                   html_subtitle(payload), firmware_section(payload)))
    if not report.ending.ok:
        return EXIT_DID_NOT_FINISH
    return report.exit_status


def html_subtitle(p: dict) -> str:
    where = f"board {p['board']}" if p["board"] else p["core"]
    return f"{where}, {p['clock_hz'] / 1e6:g} MHz: {p['cycles']:,} cycles, {p['ending']}"
