"""The layers of docs/architecture.md: imports only point down, the run and report halves
meet only at the run folder, and no module imports itself back through others."""
from __future__ import annotations

import ast
import functools
import re
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


@functools.cache  # parsed once a test process: the tests only read it
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
            if module.startswith(("comparisons.report.", "comparisons.stats.")) and dep.startswith("comparisons.run."):
                offenders.append((module, dep))
    assert not offenders, offenders


def test_shared_modules_import_neither_half():
    """run_folder, comparability and outputs are the contract: they know neither half."""
    shared = ("comparisons.run_folder", "comparisons.comparability", "comparisons.outputs")
    modules = [m for m in graph() if m in shared or m.startswith(tuple(f"{s}." for s in shared))]
    assert len(modules) > len(shared), modules  # the run_folder package's submodules are in the check too
    offenders = [(m, d) for m in modules for d in graph()[m]
                 if d.startswith(("comparisons.run.", "comparisons.report"))]
    assert not offenders, offenders


STATS_MAY_NOT_IMPORT = ("matplotlib", "html", "mlflow", "playwright", "pathlib", "json", "io", "os", "shutil", "sys")


def test_stats_imports_nothing_above_it():
    """comparisons.stats is the statistics alone: it imports common and itself, never the report, the run half, the
    plan, the run folder or a backend."""
    offenders = [(m, d) for m, deps in graph().items() if m.startswith("comparisons.stats")
                 for d in deps if not d.startswith(("comparisons.stats", "common"))]
    assert not offenders, offenders


def outside_imports(path: Path) -> set[str]:
    """The top-level names of every module a file imports (first-party or not)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
        elif isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
    return found


def test_stats_neither_reads_writes_nor_draws():
    """No plotting, HTML, tracker, file or path library in comparisons.stats, and no call to open()."""
    offenders = []
    for path in sorted((ROOT / "comparisons" / "stats").glob("*.py")):
        offenders += [(path.name, name) for name in outside_imports(path) & set(STATS_MAY_NOT_IMPORT)]
        offenders += [(path.name, "open()") for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                      if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "open"]
    assert not offenders, offenders


def test_the_stats_rule_sees_a_violation(tmp_path):
    """The checks above are not empty by accident: a file that reads a path and draws is caught."""
    bad = tmp_path / "bad.py"
    bad.write_text("import matplotlib.pyplot as plt\nfrom pathlib import Path\nopen('x')\n", encoding="utf-8")
    assert {"matplotlib", "pathlib"} <= outside_imports(bad) & set(STATS_MAY_NOT_IMPORT)
    assert "comparisons.stats.family" in graph()["comparisons.stats.bootstrap"]


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


def test_the_run_path_imports_neither_scikit_learn_nor_pandas():
    """A Ray task process and the cluster probe import comparisons.run.executors: it stays cheap (1.53 s ->
    0.17 s when scikit-learn and pandas moved to where they are used). A fresh interpreter, so nothing is cached."""
    import subprocess
    import sys

    probe = ("import sys, comparisons.run.executors; "
             "print(sorted(m for m in ('sklearn', 'pandas') if m in sys.modules))")
    found = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True)
    assert found.stdout.strip() == "[]", found.stdout + found.stderr


def test_the_code_hash_names_every_package_a_run_executes():
    """comparability.code_sha256 hashes the packages it names, so a new package under comparisons/ must
    be named there (hashed) or among the lessons and studies no run executes; the tracked files it hashes are the
    .py files of those packages and comparisons/*.py, never a lesson's or a study's."""
    import subprocess

    from comparisons.comparability import CODE_PACKAGES, CODE_PATHS, NOT_RUN

    packages = {p.parent.relative_to(ROOT).as_posix() for p in (ROOT / "comparisons").glob("*/__init__.py")}
    assert packages == {p for p in CODE_PACKAGES + NOT_RUN if p.startswith("comparisons/")}, packages
    listed = subprocess.run(["git", "ls-files", "--", *CODE_PATHS], cwd=ROOT, capture_output=True, text=True,
                            check=True).stdout.split()
    assert "comparisons/plan.py" in listed and "comparisons/run/worker.py" in listed
    assert not [name for name in listed if name.startswith(NOT_RUN)]


PLAN_FILE_JOIN = re.compile(r'/\s*"(design|manifest|benchmark|splits)\.json"')
KIND_SNIFF = re.compile(r'\((\w+ / )?(DESIGN|MANIFEST|BENCHMARK_PLAN)\)\.(is_file|exists)\(\)')


def library_sources():
    """Every module of the library but the lessons (their own scripts), with its path relative to the root."""
    for path in sorted((ROOT / "comparisons").rglob("*.py")):
        if "course" not in path.relative_to(ROOT).parts:
            yield path.relative_to(ROOT).as_posix(), path.read_text(encoding="utf-8")


def test_a_folder_s_files_are_named_and_its_kind_decided_in_one_place_each():
    """A plan file's path is joined from run_folder/names.py's names, never spelled; which kind a folder is
    (benchmark, design, split) is decided by run_folder/open_folder.py alone; verdicts.md has one renderer."""
    spelled = [f"{name}: {m.group(0)}" for name, source in library_sources() for m in PLAN_FILE_JOIN.finditer(source)]
    sniffed = [f"{name}: {m.group(0)}" for name, source in library_sources() for m in KIND_SNIFF.finditer(source)
               if name != "comparisons/run_folder/open_folder.py"]
    renderers = [name for name, source in library_sources() if "def verdicts_markdown(" in source]
    assert not spelled, spelled
    assert not sniffed, sniffed
    assert renderers == ["comparisons/report/pair_tables.py"], renderers


def test_the_one_place_rules_see_a_violation():
    assert PLAN_FILE_JOIN.search('json.loads((folder / "design.json").read_text())')
    assert KIND_SNIFF.search("if (path / DESIGN).is_file():") and KIND_SNIFF.search("(out / MANIFEST).exists()")
