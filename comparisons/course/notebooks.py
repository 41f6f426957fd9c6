"""Turn each lesson (a `# %%` script) into a Jupyter notebook, in Chinese or in English, with jupytext.

A lesson's Markdown cells hold both languages: the Chinese text first, then a line `<!-- en -->`,
then the English. The Chinese notebook keeps the part before the marker, the English one the part
after it. The script's module docstring (its first cell) is dropped: the first Markdown cell
introduces the lesson. The last cell (`if __name__ == "__main__": ...`) becomes a cell that calls
`main([...])` with the notebook's language and any extra options (the tests add `--quick`).

`execute_notebook` runs a notebook with nbclient in a kernel named for the project's interpreter,
registered in a folder of its own, so that it works from a fresh clone where no kernel is
registered. This file imports no deep-learning framework.
"""
from __future__ import annotations

import json
import os
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Sequence

from common.errors import UserInputError
from comparisons.report.i18n import check_language

COURSE_DIR = Path(__file__).resolve().parent
REPO_ROOT = COURSE_DIR.parent.parent
ENGLISH_MARKER = "<!-- en -->"
KERNEL_NAME = "transformer-compare-venv"


def lesson_path(lesson: str) -> Path:
    path = COURSE_DIR / f"{lesson}.py"
    if not path.is_file():
        raise UserInputError(f"no lesson file {path.relative_to(REPO_ROOT)}; see LESSONS in comparisons/course/__init__.py")
    return path


def language_part(markdown: str, lang: str) -> str:
    """The Chinese (before the marker) or English (after it) part of a two-language Markdown cell."""
    check_language(lang)
    chinese, marker, english = markdown.partition(ENGLISH_MARKER)
    if lang == "zh" or not marker:
        return chinese.strip()
    return english.strip()


MAIN_GUARD = 'if __name__ == "__main__":'


def is_main_guard(source: str) -> bool:
    return MAIN_GUARD in source


def run_cell_source(lesson: str, lang: str, options: Sequence[str]) -> str:
    """main() with the notebook's language (and --out next to the notebook), then its figures shown."""
    argv = ["--lang", lang, *options]
    if "--out" not in options:
        argv += ["--out", f"outputs/{lesson}"]
    comment = ("# 运行本课：加上 \"--quick\" 几秒即可跑完；其余选项见 main(['--help'])" if lang == "zh"
               else "# Run the lesson: add \"--quick\" for a run of seconds; other options: main(['--help'])")
    out = argv[argv.index("--out") + 1]
    return (f"{comment}\nARGS = {json.dumps(argv, ensure_ascii=False)}\nexit_code = main(ARGS)\n"
            "assert exit_code == 0, f\"the lesson stopped with exit code {exit_code}\"\n\n"
            "from pathlib import Path\nfrom IPython.display import Image, display\n\n"
            f"for figure in sorted(Path({out!r}).glob(\"*.png\")):\n    display(Image(filename=str(figure)))")


def build_notebook(lesson: str, lang: str = "zh", options: Sequence[str] = ()):
    """The lesson as an nbformat notebook in one language, its last cell running main(--lang lang, *options)."""
    import jupytext
    import nbformat

    notebook = jupytext.read(lesson_path(lesson), fmt="py:percent")
    cells = list(notebook.cells)
    if cells and cells[0].cell_type == "code" and cells[0].source.lstrip().startswith('"""'):
        cells = cells[1:]  # the module docstring: the first Markdown cell says it for the student
    if not any(cell.cell_type == "code" and is_main_guard(cell.source) for cell in cells):
        raise UserInputError(f"lesson {lesson} has no `{MAIN_GUARD}` block to run it")
    built = []
    for cell in cells:
        if cell.cell_type == "markdown":
            built.append(nbformat.v4.new_markdown_cell(language_part(cell.source, lang)))
        elif is_main_guard(cell.source):  # keep what precedes the guard, then the cell that runs the lesson
            before = cell.source[: cell.source.index(MAIN_GUARD)].rstrip()
            if before:
                built.append(nbformat.v4.new_code_cell(before))
            built.append(nbformat.v4.new_code_cell(run_cell_source(lesson, lang, options)))
        else:
            built.append(nbformat.v4.new_code_cell(cell.source))
    result = nbformat.v4.new_notebook(cells=built)
    result.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    result.metadata["language_info"] = {"name": "python"}
    return result


def write_notebooks(out: Path, lessons: Sequence[str], languages: Sequence[str],
                    options: Sequence[str] = ()) -> list[Path]:
    """out/<lang>/<NN>_<lesson>.ipynb for every lesson and language (written to a temp name, renamed)."""
    import nbformat

    from comparisons.course import LESSONS
    from comparisons.outputs import atomic_write_text

    paths = []
    for lang in languages:
        for lesson in lessons:
            number = LESSONS.index(lesson) + 1 if lesson in LESSONS else 0
            path = Path(out) / lang / f"{number:02d}_{lesson}.ipynb"
            path.parent.mkdir(parents=True, exist_ok=True)
            paths.append(atomic_write_text(path, nbformat.writes(build_notebook(lesson, lang, options))))
    return paths


def register_kernel(folder: Path) -> str:
    """Write a kernel spec for this interpreter (sys.executable) under folder/kernels/; return its name."""
    spec_dir = Path(folder) / "kernels" / KERNEL_NAME
    spec_dir.mkdir(parents=True, exist_ok=True)
    spec = {"argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            "display_name": f"Python ({Path(sys.prefix).name})", "language": "python"}
    (spec_dir / "kernel.json").write_text(json.dumps(spec, indent=1), encoding="utf-8")
    return KERNEL_NAME


def kernel_manager(folder: Path):
    """A kernel manager for this interpreter's kernel, its spec and connection file in folder (no stray /tmp file)."""
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import KernelManager

    name = register_kernel(Path(folder))
    specs = KernelSpecManager(kernel_dirs=[str(Path(folder) / "kernels")])
    return KernelManager(kernel_name=name, kernel_spec_manager=specs,
                         connection_file=str(Path(folder) / "connection.json"))


def kernel_environment() -> dict:
    return {**os.environ, "MPLBACKEND": "Agg", "PYTHONPATH": os.pathsep.join(
        filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")]))}


@contextmanager
def started_kernel(cwd: Path = REPO_ROOT):
    """One kernel, started once, for running several notebooks in turn (`execute_notebook(..., kernel=)`): each
    notebook starts from an emptied namespace in its own folder, while the modules the previous ones imported stay
    loaded, so a notebook costs its lesson's run, not a kernel's start and a framework's import (the tests run
    every lesson's notebook this way). A kernel per notebook stays the default."""
    with tempfile.TemporaryDirectory(prefix="course-kernel-") as folder:
        manager = kernel_manager(Path(folder))
        manager.start_kernel(env=kernel_environment(), cwd=str(cwd))
        try:
            yield manager
        finally:
            manager.shutdown_kernel(now=True)


def run_cells(notebook, manager, cwd: Path, timeout: int):
    from nbclient import NotebookClient

    client = NotebookClient(notebook, km=manager, kernel_name=KERNEL_NAME, timeout=timeout,
                            resources={"metadata": {"path": str(cwd)}})
    try:
        client.execute(env=kernel_environment())
    finally:
        if client.kc is not None:
            client.kc.stop_channels()  # the kernel is the caller's to shut down (nbclient leaves one it did not make)
    return notebook


def execute_notebook(notebook, cwd: Path = REPO_ROOT, timeout: int = 600, kernel=None):
    """Run every cell with nbclient in a kernel of this interpreter; a failing cell raises CellExecutionError.
    Without `kernel` a fresh kernel runs this notebook alone; with one from `started_kernel`, its namespace is
    emptied and its working folder set to cwd first (restarted if a previous notebook killed it)."""
    import nbformat

    if kernel is not None:
        if not kernel.is_alive():
            kernel.restart_kernel(now=True)
        fresh = nbformat.v4.new_code_cell(f"%reset -f\nimport os\nos.chdir({str(cwd)!r})\ndel os")
        run_cells(nbformat.v4.new_notebook(cells=[fresh]), kernel, cwd, timeout)
        return run_cells(notebook, kernel, cwd, timeout)
    with tempfile.TemporaryDirectory(prefix="course-kernel-") as folder:
        manager = kernel_manager(Path(folder))
        try:
            return run_cells(notebook, manager, cwd, timeout)  # nbclient starts the kernel in cwd
        finally:
            if manager.has_kernel:
                manager.shutdown_kernel(now=True)
