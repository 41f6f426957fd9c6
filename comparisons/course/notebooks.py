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


def execute_notebook(notebook, cwd: Path = REPO_ROOT, timeout: int = 600):
    """Run every cell with nbclient in a kernel of this interpreter; a failing cell raises CellExecutionError."""
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import KernelManager
    from nbclient import NotebookClient

    with tempfile.TemporaryDirectory(prefix="course-kernel-") as folder:
        name = register_kernel(Path(folder))
        specs = KernelSpecManager(kernel_dirs=[str(Path(folder) / "kernels")])
        manager = KernelManager(kernel_name=name, kernel_spec_manager=specs,  # its connection file in the folder too,
                                connection_file=str(Path(folder) / "connection.json"))  # not a stray /tmp/tmp*.json
        env = {**os.environ, "MPLBACKEND": "Agg", "PYTHONPATH": os.pathsep.join(
            filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")]))}
        client = NotebookClient(notebook, km=manager, kernel_name=name, timeout=timeout,
                                resources={"metadata": {"path": str(cwd)}})
        client.execute(env=env)
    return notebook
