"""The layers of docs/architecture (DESIGN.md): imports only point down, the run and report halves
meet only at the run folder, and no module imports itself back through others."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("common", "backends", "comparisons")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> set[str]:
    """Every first-party module this file imports, at the top or inside a function."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = []
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        found.update(name for name in names if name.split(".")[0] in PACKAGES)
    return found


def graph() -> dict[str, set[str]]:
    files = [p for package in PACKAGES for p in (ROOT / package).rglob("*.py")]
    modules = {module_name(p): p for p in files}
    return {name: {m for m in imports(path) if m in modules and m != name} for name, path in modules.items()}


def test_common_and_backends_never_import_comparisons():
    offenders = [(m, i) for m, deps in graph().items() if m.split(".")[0] in ("common", "backends")
                 for i in deps if i.startswith("comparisons")]
    assert not offenders, offenders


def test_the_run_and_report_halves_meet_only_at_the_run_folder():
    offenders = []
    for module, deps in graph().items():
        for dep in deps:
            if module.startswith("comparisons.run.") and dep.startswith("comparisons.report"):
                offenders.append((module, dep))
            if module.startswith("comparisons.report.") and dep.startswith("comparisons.run."):
                offenders.append((module, dep))
    assert not offenders, offenders


def test_shared_modules_import_neither_half():
    """run_folder, comparability and outputs are the contract: they know neither half."""
    shared = ("comparisons.run_folder", "comparisons.comparability", "comparisons.outputs")
    offenders = [(m, d) for m in shared for d in graph()[m]
                 if d.startswith(("comparisons.run.", "comparisons.report"))]
    assert not offenders, offenders


def test_no_import_circle():
    edges = graph()
    state: dict[str, int] = {}
    circles = []

    def visit(node, stack):
        state[node] = 1
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                circles.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt, stack + [nxt])
        state[node] = 2

    for node in sorted(edges):
        if node not in state:
            visit(node, [node])
    assert not circles, circles


def test_the_check_sees_an_import():
    """The graph is not empty by accident: the CLI imports both halves."""
    deps = graph()["comparisons.cli"]
    assert "comparisons.run.runner" in deps and "comparisons.report.i18n" in deps
