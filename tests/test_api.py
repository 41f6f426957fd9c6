"""The typed plan (comparisons/plan.py) and the Python API (comparisons/api.py): round trips, the command line's
one-line refusals as ValueError, and the same scores and manifest through the API as through the command line."""
import json
from pathlib import Path

import pandas as pd
import pytest

from comparisons import api
from comparisons.cli import build_parser, main
from comparisons.plan import Plan
from tests.test_cli import ROOT, run_cli

TINY = dict(backends=("tfidf_logreg",), profile="tiny", limit_per_class=30, threads=1, quality_only=True)


def test_a_plan_round_trips_through_its_file_form_and_its_command_line():
    plan = Plan(backends="tfidf_logreg,torch_scratch", cv=10, train_sizes="50,all",
                contrasts="torch_scratch-tfidf_logreg", seeds=2, out="runs/x")
    assert plan.backends == ("tfidf_logreg", "torch_scratch") and plan.train_sizes == ("50", "all")
    assert Plan.from_dict(json.loads(json.dumps(plan.to_dict()))) == plan
    assert Plan.from_namespace(build_parser().parse_args(plan.to_argv())) == plan
    assert Plan().to_argv() == ["run"] and Plan().folder.as_posix() == "runs/fast"
    with pytest.raises(ValueError, match="a plan has no field colour"):
        Plan.from_dict({"colour": "red"})
    with pytest.raises(ValueError, match=r"^argument --seeds: invalid int value: '2'$"):  # the parser's words
        Plan(seeds="2")


@pytest.mark.parametrize("fields, message", [({"seeds": 0}, "--seeds and --threads must be at least 1"),
                                             ({"backends": "nope"}, "unknown backend 'nope'"),
                                             ({"train_sizes": "100,50"}, "50 after 100; give increasing sizes"),
                                             ({"cv": 1}, "--cv needs at least 2 folds"),
                                             ({"cv": 3, "repeats": 2, "train_sizes": "50,all"},
                                              "the test folds of two repeats share texts")])
def test_a_bad_field_raises_value_error_with_the_command_line_s_one_line_message(tmp_path, capsys, fields, message):
    with pytest.raises(ValueError) as raised:
        Plan(**fields)
    assert message in str(raised.value) and "\n" not in str(raised.value)
    argv = Plan().to_argv() + [f"--{k.replace('_', '-')}={v}" for k, v in fields.items()]
    code = main([*argv, "--out", str(tmp_path / "cli")])  # in-process, as test_cli: the same dispatch and refusal
    err = capsys.readouterr().err
    assert code == 2 and err.strip() == f"error: {raised.value}", err


def test_a_run_through_the_api_gives_the_command_line_s_scores_and_manifest(tmp_path):
    plan = Plan(**TINY, out=str(tmp_path / "api"))
    result = api.run(plan, quiet=True)
    assert result.exit_code == 0 and result.plan == plan
    typed = run_cli(*Plan(**TINY, out=str(tmp_path / "cli")).to_argv())
    assert typed.returncode == 0, typed.stderr[-2000:]
    other = api.load(tmp_path / "cli")
    columns = ["variant", "seed", "average_precision", "macro_f1", "accuracy"]
    pd.testing.assert_frame_equal(result.summary[columns], other.summary[columns])
    manifests = [json.loads((folder / "manifest.json").read_text()) for folder in (tmp_path / "api", tmp_path / "cli")]
    for manifest in manifests:
        for key in ("created", "command", "plan", "machine", "numerics"):
            manifest.pop(key)
    assert manifests[0] == manifests[1], "a plan from Python and the same plan typed give the same manifest"
    assert set(result.scores["metric"]) >= {"average_precision", "brier", "ece"}
    (tmp_path / "api" / "summary.csv").unlink()  # api.report rebuilds it, as `report --out` does (not by calling it)
    assert api.report(tmp_path / "api", quiet=True).folder == tmp_path / "api"
    rebuilt, typed_summary = (pd.read_csv(tmp_path / f / "summary.csv")[columns] for f in ("api", "cli"))
    pd.testing.assert_frame_equal(rebuilt, typed_summary)
    with pytest.raises(ValueError, match="holds no finished runs; run `python -m comparisons run"):
        api.report(tmp_path / "nothing", quiet=True)
    with pytest.raises(ValueError, match="larger than the split's labelled part"):
        api.run(Plan(**TINY, train_sizes="9999,all", out=str(tmp_path / "refused")), quiet=True)
    assert not (tmp_path / "refused").exists()


def test_the_example_notebook_executes_on_a_tiny_plan(tmp_path):
    nbformat = pytest.importorskip("nbformat")
    jupytext = pytest.importorskip("jupytext")
    from comparisons.course.notebooks import execute_notebook  # the course's: a kernel of this interpreter

    notebook = jupytext.read(Path(ROOT) / "docs" / "api_example.py", fmt="py:percent")
    notebook.cells.insert(0, nbformat.v4.new_code_cell(f"OUT = {str(tmp_path / 'example')!r}\nQUICK = True"))
    execute_notebook(notebook, cwd=Path(ROOT))
    shown = "".join(str(output.get("text", "")) + str(output.get("data", {}).get("text/plain", ""))
                    for cell in notebook.cells if cell.cell_type == "code" for output in cell.get("outputs", []))
    assert "torch_scratch" in shown and "verdict" in shown
    assert (tmp_path / "example" / "verdicts.csv").exists()
