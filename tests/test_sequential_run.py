"""`run --cv K --until-decided` (comparisons/sequential_run.py, issue 51): a repeat at a time, the looks recorded and
shown, only open contrasts' variants run on, a resumed sequence makes the same looks, refusals in one line; and the
replay of a fixed folder through the same rule."""
import json

import pandas as pd

from tests.test_plugins import SMALL, SPEC, outside_package, run_with_package

SEQUENTIAL = [*SMALL, "--cv", "3", "--until-decided", "--max-repeats", "2"]


def looks_without_minutes(design: dict) -> list:
    return [{k: v for k, v in look.items() if k != "run_minutes"} for look in design["sequential"]["looks"]]


def test_a_sequential_design_records_its_looks_resumes_them_and_refuses_to_mix(tmp_path, capfd):
    env = outside_package(tmp_path / "plugins")
    out = tmp_path / "sequential"
    plan = [*SEQUENTIAL, "--backends", f"tfidf_logreg,{SPEC}", "--out", str(out)]
    first = run_with_package(capfd, env, *plan)
    assert first.returncode == 0, first.stderr[-3000:]
    design = json.loads((out / "design.json").read_text())
    sequential = design["sequential"]
    assert sequential["max_repeats"] == 2 and sequential["stopped"] and 1 <= len(sequential["looks"]) <= 2
    assert [p["name"] for p in design["partitions"]] == [f"r{r}f{f}" for r in range(2) for f in range(3)]
    for look in sequential["looks"]:  # each look ran exactly its variants on its repeat's partitions
        for fold in range(3):
            runs = out / "partitions" / f"r{look['look'] - 1}f{fold}" / "runs"
            ran = {json.loads(p.read_text())["variant"] for p in runs.glob("*.json")}
            assert ran == set(look["variants_run"])
        assert [c["state"] for c in look["contrasts"]] and all(c["reason"] for c in look["contrasts"])
    ran_looks = len(sequential["looks"])
    verdicts = pd.read_csv(out / "verdicts.csv")
    assert verdicts["interval_method"].str.startswith("repeated confidence interval").all()
    assert (verdicts["look"] <= ran_looks).all() and verdicts["nominal_level"].lt(0.05).all()
    page = (out / "report.html").read_text()
    assert "Run until decided" in page and sequential["stopped"].split(";")[0] in page
    assert "Run until decided: the looks" in (out / "verdicts.md").read_text()

    # an interruption mid-sequence: a run of each look lost; the same command resumes the same sequence, each look
    # decided on its own repeats only (the later ones' runs already on disk must not leak into an earlier look)
    for look in sequential["looks"]:
        next(iter(sorted((out / "partitions" / f"r{look['look'] - 1}f2" / "runs").glob("*.json")))).unlink()
    again = run_with_package(capfd, env, *plan)
    assert again.returncode == 0, again.stderr[-3000:]
    made = sum(3 * len(look["variants_run"]) for look in sequential["looks"])
    assert again.stderr.count("finished earlier, kept") == made - ran_looks
    assert looks_without_minutes(json.loads((out / "design.json").read_text())) == looks_without_minutes(design)

    # a sequential folder is not a fixed design's, and the options refuse what they do not belong to
    fixed = run_with_package(capfd, env, *SMALL, "--cv", "3", "--repeats", "2", "--backends", f"tfidf_logreg,{SPEC}",
                             "--out", str(out))
    assert fixed.returncode == 2 and "holds a sequential design" in fixed.stderr and "Traceback" not in fixed.stderr
    for extra, words in ((["--until-decided", "--repeats", "2"], "instead of --repeats"),
                         (["--max-repeats", "4"], "add --until-decided"),
                         (["--until-decided", "--budget-minutes", "0"], "positive number of minutes")):
        refused = run_with_package(capfd, env, *SMALL, "--cv", "3", *extra, "--backends", "tfidf_logreg",
                                   "--out", str(tmp_path / "never"))
        assert refused.returncode == 2 and words in refused.stderr, refused.stderr[-500:]
        assert not (tmp_path / "never").exists()


def test_the_replay_of_a_fixed_folder_uses_the_same_rule_and_counts_what_it_saves(tmp_path, capfd):
    from comparisons.studies import replay

    env = outside_package(tmp_path / "plugins")
    out = tmp_path / "fixed"
    made = run_with_package(capfd, env, *SMALL, "--cv", "3", "--repeats", "2",
                            "--backends", f"tfidf_logreg,{SPEC}", "--out", str(out))
    assert made.returncode == 0, made.stderr[-3000:]
    assert replay.main(["--from", str(out)]) == 0
    result = json.loads((out / "replay.json").read_text())
    assert result["runs_fixed"] == 12 and result["runs_used"] in (6, 12)
    assert result["runs_used"] == 6 * len(result["looks"])  # both variants every look, or the design stopped
    text = (out / "replay.md").read_text()
    assert "Replay of" in text and f"{SPEC} − tfidf_logreg" in text
    assert replay.main(["--from", str(tmp_path / "nothing")]) == 2
