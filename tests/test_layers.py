"""The import structure issue 23 asks for, held by reading every module's imports (function-level
and TYPE_CHECKING ones included): no import cycle, and the runtime core imports nothing of the
virtual MCU (it finds it through the `micro_rt.executors` entry point, micro_rt/executor_api.py).
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# where each import name's modules live (pyproject's package-dir)
PACKAGES = {"micro_rt": ROOT / "micro_rt", "micro_rt.kernels": ROOT / "kernels", "micro_rt.cortexm": ROOT / "cortexm"}
# the modules of micro_rt/ that sit above the core and the virtual MCU: commands and the
# answers they give about a board (ARCHITECTURE.md)
COMMANDS = {"cli", "cli_emulate", "cli_parser", "cli_run", "export", "export_boot", "export_bringup",
            "export_image", "fit", "fit_measure", "placement", "profile", "run_setup", "runtimes", "reports.boards",
            "reports.compare", "reports.firmware", "reports.model_report", "reports.page", "reports.tables"}


def _modules() -> dict[str, Path]:
    found = {}
    for package, folder in PACKAGES.items():
        for path in folder.rglob("*.py"):
            rel = path.relative_to(folder).with_suffix("")
            if any(part in PACKAGES or part.startswith((".", "__pycache__")) for part in rel.parts[:-1]):
                continue
            parts = [p for p in rel.parts if p != "__init__"]
            name = ".".join([package, *parts])
            if package == "micro_rt" and parts and parts[0] in ("kernels", "cortexm"):
                continue
            found[name] = path
    return found


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    is_package = path.name == "__init__.py"
    here = name.split(".") if is_package else name.split(".")[:-1]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = here[:len(here) - node.level + 1] if node.level else []
            stem = ".".join(base + ([node.module] if node.module else []))
            # `from package import module` imports the module; `from module import name`, the
            # module (a package's own __init__ is not counted when it is only the way there)
            targets = [f"{stem}.{a.name}" if f"{stem}.{a.name}" in modules else stem for a in node.names]
        else:
            continue
        for target in targets:
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name:
                out.add(target)
    return out


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def test_the_graph_is_read():
    graph = _graph()
    assert "micro_rt.interpreter" in graph and "micro_rt.kernels.conv" in graph
    assert "micro_rt.cortexm.ops.nn" in graph and "micro_rt.cortexm.system.run" in graph
    assert "micro_rt.cortexm.ops.context" in graph["micro_rt.cortexm.ops.nn"]
    assert "micro_rt.kernel_api" in graph["micro_rt.kernels.conv"]


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import cycles: strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return cycles


def test_the_cycle_finder_finds_cycles():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle():
    assert _cycles(_graph()) == []


def test_the_core_imports_nothing_of_the_virtual_mcu_nor_of_the_commands():
    graph = _graph()
    core = [name for name in graph if not name.startswith("micro_rt.cortexm")
            and name.removeprefix("micro_rt.") not in COMMANDS]
    assert "micro_rt.interpreter" in core and "micro_rt.kernels.lstm" in core
    above = {f"micro_rt.{c}" for c in COMMANDS}
    reaching = {name: sorted(t for t in graph[name] if t.startswith("micro_rt.cortexm") or t in above)
                for name in core}
    assert {name: t for name, t in reaching.items() if t} == {}   # not even through a command


def test_no_host_kernel_knows_about_flavours():
    """TFLM's CMSIS-NN glue is a registration of its own (micro_rt/flavours.py) made from the
    reference kernel: no module of kernels/ imports the flavours, nor asks its context which
    flavour runs it."""
    graph = _graph()
    kernels = [name for name in graph if name.startswith("micro_rt.kernels.")]
    assert len(kernels) > 30
    assert {name: "micro_rt.flavours" for name in kernels if "micro_rt.flavours" in graph[name]} == {}
    asking = [name for name in kernels
              if any(w in (ROOT / "kernels" / (name.split(".")[-1] + ".py")).read_text()
                     for w in ("target.kernels", '"kernels"', "ctx.kernels", "cmsis-nn"))]
    assert asking == []


def test_the_interpreter_finds_the_virtual_mcu_through_its_entry_point():
    import pytest
    from micro_rt.cortexm.executor import McuExecutor
    from micro_rt.errors import EmulationError
    from micro_rt.executor_api import executor_class
    assert executor_class() is McuExecutor
    with pytest.raises(EmulationError, match="no executor 'riscv' is installed"):
        executor_class("riscv")
