"""The `micro-rt` command line's options: one parser, every option's range and default shown
in --help, usage errors in one line. The commands themselves live in micro_rt.cli."""
from __future__ import annotations

import argparse
import re
from typing import Callable, Mapping, Optional

from . import __version__
from .cortexm.boards import MAX_FLASH_WAIT_STATES
from .cli_values import (FLASH_LIMIT, RAM_LIMIT, describe_bytes, int_range, parse_frequency,
                         seconds_range, size_type)
from .report import WHOLE_ARRAY_ELEMENTS
from .flavours import KERNEL_FLAVOURS
from .reports.formats import FORMATS
from .runtimes import Runtime

EXIT_OK, EXIT_NO, EXIT_ERROR, EXIT_CANNOT_TELL, EXIT_INTERNAL = 0, 1, 2, 3, 4
CHECK_SEEDS = 5          # run --check's input sets unless --seeds says
EXIT_CODES = """Exit codes (the same for every command, so CI can gate on them):
  0  the answer is yes: the model fits, the outputs agree, the profile is complete
  1  the answer is no: the model does not fit, the outputs differ from tflite-micro
  2  error in what was given (model file, option value): one line on stderr
  3  cannot tell: something the answer depends on is not accounted for (listed in the output)
  4  internal error, a bug in micro_rt: one line on stderr; --debug shows the traceback"""
DESCRIPTION = "`micro-rt`: info, plan, fit, run, profile, optimize, boards, export, report, compare."


class _Parser(argparse.ArgumentParser):
    """Usage errors in one line naming the option, the value and what is accepted."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # '-5MHz' or '-1K' is a (refused) value, not an unknown option: no option starts
        # with a digit, so anything that does is read as a value and gets the range message.
        self._negative_number_matcher = re.compile(r"^-\d")

    def error(self, message: str):
        self.exit(EXIT_ERROR, f"{self.prog}: error: {' '.join(message.split())} "
                              f"(see {self.prog} --help)\n")


class _HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Every option that takes a value shows its default (flags are off unless given)."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if (action.option_strings and action.nargs != 0 and not action.required
                and action.default not in (None, argparse.SUPPRESS) and "default" not in text):
            text += " (default: %(default)s)"
        return text


KERNELS_HELP = ("whose arena is planned and which C kernels are measured. reference: micro_rt's "
                "kernels modelled on TFLM's reference kernels (profile and fit run them as plain C "
                "on the virtual MCU); cmsis-nn: micro_rt's own kernels written to CMSIS-NN's API, "
                "not Arm's CMSIS-NN library, with the arena TFLM allocates with CMSIS-NN kernels")
# What the default is, said in each command's --help: decided once the target is known.
KERNELS_BY_TARGET = ("the flavour TFLM is built with for the target, decided after --target or "
                     "--board: cmsis-nn on a Cortex-M core, reference on host64")
KERNELS_FOR_BOARDS = "cmsis-nn, the flavour TFLM is built with for a board's Cortex-M core"
TARGETS_HELP = "host64, cortex-m0plus, cortex-m4, cortex-m7, cortex-m33"
WAIT_STATES_HELP = (f"flash wait states as in the datasheet (flash-interface clock cycles added to "
                    f"each flash access), 0 to {MAX_FLASH_WAIT_STATES}; with --board no fewer than "
                    "its flash needs at the clock, and a line fill costs what the board's flash "
                    "interface makes of them; on a bare --target a line is read in one access, so "
                    "a line fill costs N core cycles (default: the board's table at the clock, "
                    "else 0)")


def build_parser(commands: Mapping[str, Callable]) -> argparse.ArgumentParser:
    """The parser; `commands` maps each command name to the function that runs it."""
    parser = _Parser(prog="micro-rt", description=DESCRIPTION, epilog=EXIT_CODES,
                     formatter_class=_HelpFormatter)
    parser.add_argument("--quiet", action="store_true",
                        help="no progress bar and no warnings on stderr (also accepted after "
                             "the command)")
    parser.add_argument("--version", action="version", version=f"micro-rt {__version__}")
    parser.add_argument("--debug", action="store_true",
                        help="show tracebacks on errors (also accepted after the command)")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, help: str, func, *, target: Optional[str] = "cortex-m4",
                kernels: Optional[str] = KERNELS_BY_TARGET, planner: bool = False,
                formats: bool = False):
        """One subcommand; `kernels`: what --kernels defaults to, in words (None: no option)."""
        p = sub.add_parser(name, help=help, description=help, epilog=EXIT_CODES,
                           formatter_class=_HelpFormatter)
        p.add_argument("model", help=".tflite file")
        if target:
            p.add_argument("--target", default=target, help=TARGETS_HELP)
        if kernels:
            p.add_argument("--kernels", default=None, choices=KERNEL_FLAVOURS,
                           help=f"{KERNELS_HELP} (default: {kernels})")
        if planner:
            p.add_argument("--planner", default="greedy", choices=["greedy", "linear", "offline"],
                           help="TFLM's greedy or linear planner, or the model's offline plan")
        if formats:
            p.add_argument("--format", choices=FORMATS, default="text",
                           help="text, json, csv (the main table) or markdown")
        p.add_argument("--json", action="store_true",
                       help="print JSON instead of text" + (" (same as --format json)" if formats else ""))
        # --quiet and --debug also go after the command; SUPPRESS keeps the command's parser
        # from resetting one given before it.
        p.add_argument("--quiet", action="store_true", default=argparse.SUPPRESS,
                       help="no progress bar and no warnings on stderr")
        p.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                       help="show tracebacks on errors")
        p.set_defaults(func=func)
        return p

    command("info", "operators, tensors, MACs, unsupported ops", commands["info"], target=None,
            kernels=None, formats=True)

    p = command("plan", "arena plan: lifetimes, offsets, head/tail totals", commands["plan"],
                planner=True, formats=True)
    p.add_argument("--html", metavar="FILE", help="write a lane chart of the plan (default: none)")

    p = command("fit", "does the model fit a RAM/flash budget (exit 0 yes, 1 no, 3 cannot tell)",
                commands["fit"], target=None, planner=True, formats=True)
    _add_where_options(p)
    p.add_argument("--ram", type=size_type(RAM_LIMIT), default=None,
                   help=f"RAM budget, 1 B to {describe_bytes(RAM_LIMIT)}, e.g. 256K (required "
                        "unless --board gives it: the board's SRAM)")
    p.add_argument("--flash", type=size_type(FLASH_LIMIT), default=None,
                   help=f"flash budget, 1 B to {describe_bytes(FLASH_LIMIT)}, e.g. 1M "
                        "(default: the board's flash, else none: flash is reported but not judged)")
    p.add_argument("--no-emulate", action="store_true",
                   help="skip the emulated inference that measures kernel stack and code: the "
                        "verdict is then for the arena and the model only")
    _add_arena_region(p)
    _add_runtime_option(p)

    p = command("run", "invoke the model on given or random inputs", commands["run"])
    p.add_argument("--input", action="append", metavar="FILE.npy",
                   help="one per model input, in order (default: seeded random inputs)")
    p.add_argument("--seed", type=int_range(0, 2 ** 32 - 1), default=0,
                   help="seed of the random inputs, 0 to 2^32-1")
    p.add_argument("--emulate", action="store_true",
                   help="run on the virtual MCU of the Cortex-M target, with the flavour's C "
                        "kernels, instead of the host's kernels (the outputs are the same, bit "
                        "for bit)")
    p.add_argument("--check", action="store_true",
                   help="also run the tflite-micro oracle on several input sets and compare")
    p.add_argument("--seeds", type=int_range(1, 1000), default=None, metavar="N",
                   help="input sets for --check, only with --check (the run's own, then seeds "
                        f"SEED+1...), 1 to 1000 (default: {CHECK_SEEDS})")
    p.add_argument("-o", "--output", metavar="DIR",
                   help="save each output as DIR/output_<i>.npy (i = the output's index; "
                        "numpy.load reads them), DIR created if missing (default: none; text "
                        f"shows arrays of up to {WHOLE_ARRAY_ELEMENTS} values whole, larger "
                        "ones summarised; --json prints every value)")

    p = command("profile", "cycles per operator on a virtual Cortex-M (with cmsis-nn kernels: "
                "micro_rt's CMSIS-NN-style C kernels; with reference kernels: plain C loops as TFLM's "
                "reference kernels); with --board also whether the model fits the board's RAM and "
                "flash, as fit judges it (exit 0 the profile is complete and, with --board, the "
                "model fits; 1 it does not fit the board; 3 the total or the fit leaves something "
                "out)", commands["profile"], target=None, formats=True)
    _add_where_options(p)
    p.add_argument("--clock", type=parse_frequency, default=None,
                   help="core clock with a unit (Hz, kHz, MHz, GHz), 1 kHz to 2 GHz, e.g. "
                        "120MHz (default: the board's clock, else 100MHz)")
    p.add_argument("--flash-wait-states", type=int_range(0, MAX_FLASH_WAIT_STATES), default=None,
                   metavar="N", help=WAIT_STATES_HELP)
    p.add_argument("--strict-alignment", action="store_true",
                   help="report every unaligned access, as if UNALIGN_TRP were set")
    p.add_argument("--arena-misalign", type=int_range(0, 15), default=0, help=argparse.SUPPRESS)
    p.add_argument("--seed", type=int_range(0, 2 ** 32 - 1), default=0,
                   help="seed of the random inputs, 0 to 2^32-1")
    _add_arena_region(p)
    _add_runtime_option(p)

    p = command("optimize", "reorder operators and write an offline memory plan", commands["optimize"])
    p.add_argument("-o", "--output", required=True, metavar="OUT.tflite",
                   help="where to write the optimized model (required)")
    p.add_argument("--time-limit", type=seconds_range(0, 86400), default=10.0, metavar="S",
                   help="seconds for the order and placement searches, 0 to 86400")
    p.add_argument("--html", metavar="FILE",
                   help="lane charts of the original and optimized plans (default: none)")
    p.add_argument("--seeds", type=int_range(1, 1000), default=3, metavar="N",
                   help="seeded inputs for the output check, 1 to 1000")
    p.add_argument("--no-check", action="store_true", help="skip running both models to compare outputs")
    p.add_argument("--oracle-verify", action="store_true",
                   help="also measure candidates with the tflite-micro oracle (for ops micro_rt lacks)")

    p = command("boards", "the model on every board of the catalog: fits or not (RAM and flash "
                "with margins) and latency at the board's clock, one row per board, fastest "
                "fitting board first (exit 0 some board fits, 1 none, 3 cannot tell)",
                commands["boards"], target=None, kernels=KERNELS_FOR_BOARDS, planner=True,
                formats=True)
    p.add_argument("--board-dir", action="append", metavar="DIR",
                   help="a directory of board files (NAME.json) searched before the shipped "
                        "catalog; repeatable (default: none, and $MICRO_RT_BOARDS)")
    p.add_argument("--workers", type=int_range(1, 64), default=None, metavar="N",
                   help="boards measured at once in worker processes, 1 to 64 (default: the "
                        "number of CPUs)")
    p.add_argument("--seed", type=int_range(0, 2 ** 32 - 1), default=0,
                   help="seed of the random inputs of the emulated inference, 0 to 2^32-1")
    _add_arena_region(p, "on every board that has a RAM region of that name (the others place "
                         "it as without the option)")
    _add_runtime_option(p)

    p = command("export", "a C project for a board: the model's constants and firmware plan, "
                "micro_rt's device runtime and the kernel sources it needs, a main.c that runs one "
                "inference and prints its outputs and cycles, the board's linker script and a "
                "Makefile for arm-none-eabi-gcc (exit 0 written; 1 the image, counted as its linker "
                "script places it with the seeded test input, would not fit the board's flash or "
                "RAM: nothing written; 2 an error)", commands["export"], target=None,
                kernels=KERNELS_FOR_BOARDS)
    p.add_argument("--board", required=True, metavar="NAME",
                   help="a board of the catalog (micro-rt boards lists them): its core, flash and "
                        "RAM regions (required)")
    p.add_argument("-o", "--output", required=True, metavar="DIR",
                   help="the project directory, new or empty (required)")
    p.add_argument("--board-dir", action="append", metavar="DIR",
                   help="a directory of board files (NAME.json) searched before the shipped "
                        "catalog; repeatable (default: none, and $MICRO_RT_BOARDS)")
    p.add_argument("--seed", type=int_range(0, 2 ** 32 - 1), default=0,
                   help="seed of the random inputs main.c feeds the model, as profile's --seed")

    _add_emulate_command(sub, commands["emulate"])

    _add_report_options(command("report", "one self-contained HTML page: budget verdict, "
                                "per-operator table, arena lane chart, live bytes, cycles per "
                                "operator, warnings and suggestions (exit 0; with a budget 1/3 as "
                                "fit; 3 when the cycle total is incomplete)", commands["report"],
                                target=None, planner=True, formats=True))
    _add_compare_options(command("compare", "two models side by side (original vs optimized, "
                                 "int8 vs int16, one model on two boards): arena, RAM, flash, "
                                 "cycles, per operator (exit 0 unless an error)", commands["compare"],
                                 target=None, planner=True, formats=True))
    return parser


def _add_emulate_command(sub, func) -> None:
    help = ("run a firmware image (an ELF) from its reset vector on the virtual MCU: its console "
            "output, cycles at the board clock, a profile per function, heap, stack high-water, "
            "faults and image size per region; for a TFLM application also one row per operator "
            "(kernel, CMSIS-NN calls, cycles, TFLM's glue and interpreter cycles, profiler ticks) "
            "and the arena it reported (exit: the program's own exit code when it exits "
            "through semihosting; 3 when it does not finish: --max-cycles, a lock-up, an "
            "unmodelled peripheral, a reset request; 2 an error)")
    p = sub.add_parser("emulate", help=help, description=help, epilog=EXIT_CODES,
                       formatter_class=_HelpFormatter)
    p.add_argument("firmware", metavar="APP.elf", help="a linked 32-bit ARM ELF with a vector table")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--board", metavar="NAME", default=None,
                       help="a board of the catalog: its memory map, console UART and flash "
                            "registers (micro-rt boards lists them)")
    where.add_argument("--target", default=None, choices=["cortex-m0plus", "cortex-m4", "cortex-m7", "cortex-m33"],
                       help="a core, with a generic memory map made from the image (default "
                            "without --board: the core the ELF's build attributes were built for; "
                            "cortex-m4 for v7E-M or when they say nothing)")
    p.add_argument("--board-dir", action="append", metavar="DIR",
                   help="a directory of board files searched before the shipped catalog; repeatable")
    p.add_argument("--clock", type=parse_frequency, default=None,
                   help="core clock with a unit, for ms and semihosting time (default: the "
                        "board's clock, else 100MHz)")
    p.add_argument("--flash-wait-states", type=int_range(0, MAX_FLASH_WAIT_STATES), default=None,
                   metavar="N", help="wait states of the configured flash interface (used where the "
                                     "board file names no flash-control register; default: the "
                                     "board's at its clock, else 0)")
    p.add_argument("--input", action="append", metavar="SYMBOL=FILE",
                   help="write FILE (.npy: its array's bytes; else raw bytes) into the data "
                        "object SYMBOL: into its initial image for .data, when main is entered "
                        "for .bss; repeatable")
    p.add_argument("--output", action="append", metavar="SYMBOL[=FILE]",
                   help="read the data object SYMBOL at the end: in the report, and saved to "
                        "FILE (.npy as uint8, else raw) when given; repeatable")
    p.add_argument("--time", action="append", metavar="FUNCTION",
                   help="time every call of FUNCTION (a symbol of the image): its cycles, exact "
                        "instructions and stack below its entry SP, in the report; repeatable "
                        "(micro_rt's mrt_invoke and TFLM's MicroInterpreter::Invoke are timed "
                        "without asking)")
    p.add_argument("--max-cycles", type=int_range(1, 10 ** 12), default=1_000_000_000, metavar="N",
                   help="stop a program that has not exited after N cycles, 1 to 10^12")
    p.add_argument("--ignore-mmio", action="store_true",
                   help="read unmodelled peripheral addresses as 0 and drop writes to them, "
                        "counted in the report (default: such an access stops the run, named)")
    p.add_argument("--format", choices=FORMATS, default="text",
                   help="text, json, csv (the function table) or markdown")
    p.add_argument("--json", action="store_true", help="same as --format json")
    p.add_argument("--html", metavar="FILE", help="also write the report as an HTML page")
    p.add_argument("--quiet", action="store_true", default=argparse.SUPPRESS,
                   help="no warnings on stderr")
    p.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                   help="show tracebacks on errors")
    p.set_defaults(func=func)


RUNTIME_HELP = ("whose runtime the answer prices: micro_rt (its own device runtime and plan, what "
                "micro_rt measures) or tflm (a TFLM deployment: micro_rt's kernels plus TFLM's "
                "interpreter and kernel glue per operator, and TFLM's code and static data, as "
                "measured on real TFLM builds; cortexm/board_data/measurements/tflm_runtime.json) "
                "(default: micro_rt)")


def _add_runtime_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--runtime", choices=[r.value for r in Runtime], default=Runtime.MICRO_RT.value,
                   help=RUNTIME_HELP)


def _add_where_options(p: argparse.ArgumentParser, suffix: str = "", side: str = "") -> None:
    """--target or --board (one of them), for report and compare."""
    group = p.add_mutually_exclusive_group()
    group.add_argument(f"--target{suffix}", default=None,
                       help=f"{side}{TARGETS_HELP} (default: cortex-m4, or the board's core)")
    group.add_argument(f"--board{suffix}", metavar="NAME",
                       help=f"{side}a board of the catalog (micro_rt.cortexm.boards): its core, "
                            "clock and flash wait states, and its SRAM and flash as budgets "
                            "(default: none)")


def _add_setup_options(p: argparse.ArgumentParser) -> None:
    """What report and compare run the model with; each overrides the board's figure."""
    p.add_argument("--clock", type=parse_frequency, default=None,
                   help="core clock, e.g. 120MHz (default: the board's, else 100MHz)")
    p.add_argument("--flash-wait-states", type=int_range(0, MAX_FLASH_WAIT_STATES), default=None,
                   metavar="N", help=WAIT_STATES_HELP)
    p.add_argument("--ram", type=size_type(RAM_LIMIT), default=None,
                   help="RAM budget, e.g. 256K (default: the board's, else none and no verdict)")
    p.add_argument("--flash", type=size_type(FLASH_LIMIT), default=None,
                   help="flash budget, e.g. 1M (default: the board's, else none)")
    p.add_argument("--no-cycles", action="store_true",
                   help="skip the emulated inference: no cycles, kernel stack or code")
    p.add_argument("--strict-alignment", action="store_true",
                   help="report every unaligned access, as if UNALIGN_TRP were set (as profile)")
    p.add_argument("--seed", type=int_range(0, 2 ** 32 - 1), default=0,
                   help="seed of the random inputs of the emulated inference, 0 to 2^32-1")


def _add_arena_region(p: argparse.ArgumentParser, where: str = "with --board") -> None:
    p.add_argument("--arena-region", metavar="NAME",
                   help=f"the board's RAM region the tensor arena goes in, {where} (default: with "
                        "the static data where the vendor's linker puts .bss when everything fits "
                        "there, else the largest region that holds it)")


def _add_report_options(p: argparse.ArgumentParser) -> None:
    _add_where_options(p)
    _add_runtime_option(p)
    _add_setup_options(p)
    _add_arena_region(p)
    p.add_argument("-o", "--output", metavar="REPORT.html",
                   help="where to write the page (default: none, the summary is printed)")
    p.add_argument("--model-explorer", metavar="DIR",
                   help="also write per-operator node data for Model Explorer "
                        "(model-explorer MODEL --node_data_paths=...) into DIR (default: none)")
    p.add_argument("--optimize-seconds", type=seconds_range(0, 3600), default=2.0, metavar="S",
                   help="search time for the optimize suggestion, 0 to skip it")


def _add_compare_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("model_b", metavar="MODEL_B", help="the second .tflite file (may be the same)")
    _add_where_options(p)
    _add_where_options(p, "-b", "for MODEL_B (default: as for MODEL): ")
    _add_setup_options(p)
    p.add_argument("--html", metavar="FILE", help="also write the comparison as a page (default: none)")
