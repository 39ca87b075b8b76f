# micro_rt developer entry points. Everything runs inside .venv, created on first use.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
DEMO_MODEL ?= models/mobilenet_tiny_int8.tflite

.PHONY: demo test venv test-venv bench results fuzz clean firmware calibration op-cycles structs

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

# An editable install leaves the bytecode to the first import, which an environment with
# PYTHONDONTWRITEBYTECODE never writes: every command would compile every module again
# (~0.35 s), so it is written here, as pip does for a regular install.
BYTECODE = $(BIN)/python -m compileall -q micro_rt kernels cortexm

$(VENV)/.installed: pyproject.toml setup.py cortexm/native_hook.c | $(BIN)/python
	$(BIN)/python -m pip install -q -e .
	$(BYTECODE)
	touch $@

$(VENV)/.installed-test: pyproject.toml setup.py cortexm/native_hook.c | $(BIN)/python
	$(BIN)/python -m pip install -q -e '.[test]'
	$(BYTECODE)
	touch $@ $(VENV)/.installed

venv: $(VENV)/.installed
test-venv: $(VENV)/.installed-test

# The main job on a bundled model: what it is, whether it fits a 64 KiB / 256 KiB part, its
# plan, a run, and its cycles on a virtual Cortex-M4 at 120 MHz.
demo: venv
	$(BIN)/micro-rt info $(DEMO_MODEL)
	$(BIN)/micro-rt fit $(DEMO_MODEL) --target cortex-m4 --kernels cmsis-nn --ram 64K --flash 256K
	$(BIN)/micro-rt plan $(DEMO_MODEL) --target cortex-m4 --html out/plan.html
	$(BIN)/micro-rt run $(DEMO_MODEL) --seed 1
	$(BIN)/micro-rt profile $(DEMO_MODEL) --target cortex-m4 --clock 120MHz

test: test-venv
	$(BIN)/ruff check --no-cache micro_rt kernels cortexm devtools benchmarks models tests
	$(BIN)/python -m mypy
	$(BIN)/python -m pytest

bench: test-venv
	$(BIN)/python benchmarks/bench_host_kernels.py
	$(BIN)/python benchmarks/bench_profile.py
	$(BIN)/python benchmarks/bench_optimize.py
	$(BIN)/python benchmarks/bench_op_cycles.py

# Rewrites every table of benchmarks/RESULTS.md: each script replaces its own marked section.
results: test-venv
	$(BIN)/python benchmarks/bench_host_kernels.py --runs 30 --write
	$(BIN)/python benchmarks/bench_optimize.py --write
	$(BIN)/python benchmarks/fuzz_campaign.py -n $(FUZZ_N) --seed $(FUZZ_SEED) --write
	$(BIN)/python benchmarks/fuzz_firmware.py -n 3000 --seed $(FUZZ_SEED) --write
	$(BIN)/python benchmarks/bench_mcu_memory.py --write
	$(BIN)/python benchmarks/bench_profile.py --write
	$(BIN)/python benchmarks/bench_profile.py --baseline-soft-float --write
	$(BIN)/python benchmarks/bench_blas_threads.py --write
	$(BIN)/python benchmarks/bench_planner.py --write
	$(BIN)/python benchmarks/bench_op_cycles.py --write
	$(BIN)/python benchmarks/bench_op_cycles.py --flavours --cores cortex-m0plus cortex-m4 cortex-m7 cortex-m33 --write
	$(BIN)/python benchmarks/bench_runtime.py --write
	$(BIN)/python benchmarks/bench_memory_system.py --write
	$(BIN)/python benchmarks/bench_wall.py --models $(MLPERF_MODELS) --write

# Cycles per MAC / per element of every C kernel of the virtual MCU on M0+ and M4 (issue 12):
# one single-operator model per (op, input type) of micro_rt.cortexm.ops.KERNELS.
op-cycles: test-venv
	$(BIN)/python benchmarks/bench_op_cycles.py --write

# Latency against published TFLM + CMSIS-NN measurements on catalog boards; needs MLPerf Tiny's
# reference models (mlcommons/tiny benchmark/training/*/trained_models/) in MLPERF_MODELS.
calibration: test-venv
	$(BIN)/python benchmarks/bench_calibration.py --models $(MLPERF_MODELS) --write

# Hostile-input campaign (issues 5, 10): FUZZ_N mutants (1-3 stacked schema- or byte-level
# mutations) of real and builder-made models, each in a forked child through every stage (load,
# info, plan per target, host, virtual MCU) and tflite-micro; counts ok / project errors /
# wrapped Python errors / foreign exceptions / hangs / crashes and host-vs-MCU-vs-oracle
# disagreements, and writes its section of benchmarks/RESULTS.md. FUZZ_SEED picks the campaign.
FUZZ_N ?= 10000
FUZZ_SEED ?= 0
fuzz: test-venv
	$(BIN)/python benchmarks/fuzz_campaign.py -n $(FUZZ_N) --seed $(FUZZ_SEED) --write
	$(BIN)/python benchmarks/fuzz_firmware.py -n 3000 --seed $(FUZZ_SEED) --write

# Virtual-MCU firmware (needs arm-none-eabi-gcc): cortexm/firmware/cortex-m{0plus,4,7,33}.elf,
# byte-for-byte reproducible (tests/test_vmcu_*.py rebuilds and compares), and beside each the
# facts every emulated run would otherwise recompute from its code, ~1 s each
# (<core>.alignment.json, <core>.references.json: cortexm/write_firmware_facts.py).
firmware: venv
	$(MAKE) -C cortexm/src
	$(BIN)/python -m micro_rt.cortexm.write_firmware_facts cortexm/firmware/*.elf

# The sizes and alignments of TFLM's structs per build (needs gcc and arm-none-eabi-gcc):
# micro_rt/struct_layouts.py from micro_rt/structs/tflm_structs.h, where they are declared
# (tests/test_struct_layouts.py rebuilds and compares).
structs: venv
	$(BIN)/python -m devtools.struct_layouts

clean:
	rm -rf $(VENV) out build *.egg-info .pytest_cache
