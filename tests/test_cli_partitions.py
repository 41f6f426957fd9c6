"""`python -m comparisons run --cv K`: partitions as run folders, resume, refusals, and the recipe verdicts."""
import json
import shutil

import html5lib
import pandas as pd

from comparisons.stats.family import VERDICTS
from tests.test_cli import run_main

SMALL = ["--backends", "tfidf_logreg", "--profile", "tiny", "--limit-per-class", "60", "--threads", "1",
         "--quality-only"]


def test_cv_runs_every_partition_resumes_and_reports_recipe_verdicts(tmp_path, capfd):
    out = tmp_path / "cv"
    first = run_main(capfd, "run", *SMALL, "--cv", "3", "--out", str(out))
    assert first.returncode == 0, first.stderr
    design = json.loads((out / "design.json").read_text())
    assert [p["name"] for p in design["partitions"]] == ["r0f0", "r0f1", "r0f2"]
    assert all(p["test_texts_in_training"] == 0 for p in design["partitions"])
    assert design["margins"]["average_precision"] == 0.005
    tested = []
    for index, name in enumerate(("r0f0", "r0f1", "r0f2")):  # each partition its own model seed
        folder = out / "partitions" / name
        assert (folder / "runs" / f"tfidf_logreg__seed{index}.json").exists()
        tested += json.loads((folder / "splits.json").read_text())["test"]
    assert sorted(tested) == list(range(120)), "every text tested once"
    again = run_main(capfd, "run", *SMALL, "--cv", "3", "--out", str(out))
    assert again.returncode == 0 and again.stderr.count("finished earlier, kept") == 3
    # a second "variant" with the very same scores on every partition: equivalent, never better
    # (written into the plan too: a record of a variant the plan does not name is left out of the verdicts)
    for index, name in enumerate(("r0f0", "r0f1", "r0f2")):
        runs = out / "partitions" / name / "runs"
        record = json.loads((runs / f"tfidf_logreg__seed{index}.json").read_text())
        (runs / f"torch_scratch__seed{index}.json").write_text(json.dumps({**record, "variant": "torch_scratch"}))
        manifest = json.loads((runs.parent / "manifest.json").read_text())
        manifest["variants"]["torch_scratch"] = manifest["variants"]["tfidf_logreg"]
        (runs.parent / "manifest.json").write_text(json.dumps(manifest))
    (out / "design.json").write_text(json.dumps({**design, "variants": ["tfidf_logreg", "torch_scratch"]}))
    shutil.rmtree(out / "partitions" / "r0f0" / "logs")
    report = run_main(capfd, "report", "--out", str(out))
    assert report.returncode == 0, report.stderr
    verdicts = pd.read_csv(out / "verdicts.csv")
    assert set(verdicts["verdict"]) == {"equivalent"} and (verdicts["difference"] == 0).all()
    assert set(verdicts["verdict"]) <= set(VERDICTS)
    assert "corrected repeated k-fold t-test" in (out / "verdicts.md").read_text()
    assert "关于训练配方的结论" in (out / "zh" / "verdicts.md").read_text(encoding="utf-8")  # both languages, always
    scores = pd.read_csv(out / "scores.csv")  # the long table: one row per run and metric
    assert len(scores[["partition", "variant", "seed"]].drop_duplicates()) == 6
    assert set(scores["design"]) == {"partitions"} and "average_precision" in set(scores["metric"])
    page = (out / "report.html").read_text().replace("<wbr>", "")  # table cells may break after a name's _ : /
    assert "Verdicts about recipes" in page and "torch_scratch" in page and "equivalent within the margin" in page
    assert (out / "zh" / "report.html").exists() is False  # --lang en: the English page only
    html5lib.HTMLParser(strict=True).parse(page)


def test_cv_refusals_are_one_line_and_write_nothing(tmp_path, capsys):
    from comparisons.cli import main

    for extra, words in ((["--cv", "1"], "at least 2 folds"), (["--cv", "3", "--train-sizes", "9999,all"], "larger than partition r0f0"),
                         (["--cv", "3", "--margin-ap", "0"], "between 0 and 1"),
                         (["--cv", "30"], "too few rows per class")):
        out = tmp_path / "refused"
        assert main(["run", *SMALL, *extra, "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert words in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
        assert not out.exists()
