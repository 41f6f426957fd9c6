"""`transformer-compare select` end to end on the shipped SMS data with two cheap candidates, its replay, and its
one-line refusals (comparisons/select.py)."""
from __future__ import annotations

import json

import pytest

from comparisons.cli import main


def test_select_runs_folds_until_it_decides_and_replays_to_the_same_pick(tmp_path, capsys):
    out = tmp_path / "selection"
    code = main(["select", "--candidates", "tfidf_logreg,tfidf_logreg:seed", "--labels", "100", "--folds", "4",
                 "--budget-minutes", "30", "--profile", "fast", "--threads", "1", "--out", str(out)])
    assert code == 0
    record = json.loads((out / "selection.json").read_text())
    plan, decision = record["plan"], record["decision"]
    assert sorted(plan["candidates"]) == ["tfidf_logreg", "tfidf_logreg:seed"]
    assert len(plan["boundaries"]) == plan["most"] - plan["first"] + 1
    assert len(record["scores"]) == len(record["folds"]) == decision["partitions"] >= plan["first"]
    assert all(len(fold["ran"]) == 2 for fold in record["folds"][:plan["first"]])  # the first folds run everyone
    assert decision["outcome"] in ("selected", "most partitions", "budget", "more folds needed", "more labels needed")
    assert decision["predicted_minutes"] <= plan["budget"]
    err = capsys.readouterr().err
    assert ("selected " in err) or ("cannot say within this budget" in err)
    # a pick is trained on all the labels and shipped with its card; no pick, nothing shipped
    shipped = (out / "deploy" / "MODEL_CARD.md").is_file()
    assert shipped == (decision["outcome"] == "selected") == ("deployed " in err)
    # every fold's runs are a partition folder of the design; the replay re-decides from the record alone
    assert (out / "design.json").is_file() and len(list((out / "partitions").glob("r0f*"))) == decision["partitions"]
    assert main(["select", "--replay", str(out)]) == 0
    assert "replay identical" in capsys.readouterr().err
    assert "Which recipe to deploy" in (out / "selection.md").read_text()
    assert "部署哪个配方" in (out / "zh" / "selection.md").read_text()
    page = (out / "selection.html").read_text()  # the page draws the same content, and links its other language
    assert "Which recipe to deploy" in page and 'href="zh/selection.html"' in page and "<script" not in page
    assert 'href="../selection.html"' in (out / "zh" / "selection.html").read_text()
    tampered = json.loads((out / "selection.json").read_text())
    tampered["scores"].append(tampered["scores"][-1])  # a fold the procedure, having stopped, never asked for
    (out / "selection.json").write_text(json.dumps(tampered))
    assert main(["select", "--replay", str(out)]) == 1
    assert "replay differs" in capsys.readouterr().err


def test_a_budget_too_small_for_the_pilot_is_refused_after_the_run_that_shows_it(tmp_path, capsys):
    """The pilot runs one candidate at a time: past the budget after its first run, it stops there (one line, the
    run kept for a resume) instead of finishing the fold first."""
    out = tmp_path / "selection"
    code = main(["select", "--candidates", "tfidf_logreg,tfidf_logreg:seed", "--labels", "100", "--folds", "4",
                 "--budget-minutes", "0.0001", "--profile", "fast", "--threads", "1", "--out", str(out)])
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert code == 2 and len(errors) == 1 and "Traceback" not in err, err
    assert "cannot hold the pilot fold: its first 1 candidate(s) took" in errors[0]
    ran = [path.name for path in (out / "partitions" / "r0f0" / "runs").glob("*.json")]
    assert ran == ["tfidf_logreg__n100__seed0.json"], ran  # the second candidate never started
    assert not (out / "selection.json").exists()


@pytest.mark.parametrize("argv, message", [
    (["--candidates", "tfidf_logreg,torch_scratch"], "--budget-minutes is required"),
    (["--budget-minutes", "5", "--delta", "2"], "--delta 2.0"),
    (["--budget-minutes", "5", "--confidence", "0.3"], "--confidence 0.3"),
    (["--budget-minutes", "5", "--candidates", "tfidf_logreg"], "at least two candidates"),
    (["--budget-minutes", "5", "--folds", "2"], "at least 3 partitions"),
    (["--budget-minutes", "5", "--labels", "3"], "at least 10 labelled texts"),
    (["--budget-minutes", "5", "--labels", "100", "--max-memory-mb", "900"], "leave out --labels"),
    (["--budget-minutes", "5", "--max-latency-ms", "0"], "--max-latency-ms 0"),
])
def test_bad_settings_get_one_line(tmp_path, capsys, argv, message):
    assert main(["select", "--out", str(tmp_path / "s"), *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "s" / "selection.json").exists()


def test_replay_of_a_folder_without_a_selection_is_one_line(tmp_path, capsys):
    assert main(["select", "--replay", str(tmp_path)]) == 2
    assert "is not a selection's record" in capsys.readouterr().err


def test_api_select_is_the_command_in_python(tmp_path):
    from comparisons import api

    from comparisons.selection_caps import ServingCaps

    chosen = api.select(str(_small_csv(tmp_path)), 30, quiet=True, candidates="tfidf_logreg,tfidf_logreg:seed",
                        folds=3, profile="fast", threads=1, out=tmp_path / "api", deploy=False, text_col="text",
                        label_col="label",
                        caps=ServingCaps(max_memory_mb=100_000.0))  # a cap both meet: the pilot measures serving
    record = json.loads((tmp_path / "api" / "selection.json").read_text())
    assert chosen.record == record and chosen.exit_code == 0
    assert chosen.pick == record["decision"]["pick"] and chosen.outcome == record["decision"]["outcome"]
    assert chosen.scores.shape == (3, 2) and list(chosen.scores.index) == ["r0f0", "r0f1", "r0f2"]
    assert not (tmp_path / "api" / "deploy").exists()  # deploy=False ships nothing
    figures = record["serving"]["figures"]
    assert record["serving"]["excluded"] == {} and set(figures) == {"tfidf_logreg", "tfidf_logreg:seed"}
    assert all(f["latency_ms_b1_p50"] > 0 and f["peak_rss_serve_mb"] > 0 and f["cost_per_million"] > 0
               for f in figures.values())
    assert "USD per million predictions" in (tmp_path / "api" / "selection.md").read_text()
    with pytest.raises(ValueError, match="--delta 2"):
        api.select("sms_spam", 30, quiet=True, delta=2.0, out=tmp_path / "bad")
    with pytest.raises(ValueError, match="select: "):
        api.select("sms_spam", 30, no_such_setting=1)


def _small_csv(tmp_path, per_class=60):
    """A CSV of 2 x per_class SMS messages (header text,label): a selection on all its labels in seconds."""
    import pandas as pd

    from common.datasets import DataSpec, load

    data = load(DataSpec(limit_per_class=per_class))
    path = tmp_path / "small.csv"
    pd.DataFrame({"text": list(data.texts), "label": [data.class_names[i] for i in data.labels]}).to_csv(path,
                                                                                                     index=False)
    return path


def test_caps_no_candidate_meets_are_one_line_after_the_pilot(tmp_path, capsys):
    out = tmp_path / "capped"
    code = main(["select", "--data", str(_small_csv(tmp_path)), "--text-col", "text", "--label-col", "label",
                 "--candidates", "tfidf_logreg,tfidf_logreg:seed",
                 "--folds", "3", "--budget-minutes", "30", "--profile", "fast", "--threads", "1",
                 "--max-latency-ms", "1e-6", "--no-deploy", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    line = [l for l in err.splitlines() if "serving caps" in l]
    assert len(line) == 1 and "no candidate is within them" in line[0] and "--max-latency-ms 1e-06" in line[0]
    assert (out / "partitions" / "r0f0" / "runs").is_dir() and not (out / "selection.json").exists()


def test_serving_caps_exclude_what_is_over_or_unmeasured():
    import math

    from comparisons.selection_caps import ServingCaps

    caps = ServingCaps(max_latency_ms=5.0, max_memory_mb=500.0)
    serving = {"fast": {"latency_ms_b1_p50": 0.5, "peak_rss_serve_mb": 200.0},
               "slow": {"latency_ms_b1_p50": 12.0, "peak_rss_serve_mb": 700.0},
               "unmeasured": {"latency_ms_b1_p50": math.nan, "peak_rss_serve_mb": 100.0}}
    out = caps.excluded(serving)
    assert set(out) == {"slow", "unmeasured"} and "over --max-latency-ms 5" in out["slow"]
    assert "serving peak memory (MB) 700 over --max-memory-mb 500" in out["slow"]
    figures = ServingCaps(cpu_hour_price=0.1).figures({"throughput_per_s": 1000.0}, threads=2)
    assert figures["cost_per_million"] == pytest.approx(1e6 / 1000 / 3600 * 2 * 0.1)
    assert not ServingCaps().measured and ServingCaps(cpu_hour_price=0.1).measured
    with pytest.raises(Exception, match="--max-memory-mb -1"):
        ServingCaps(max_memory_mb=-1.0).check()


def test_a_candidate_s_predicted_cost_is_its_own_pilot_wall_less_its_imports():
    """Time outside training is a candidate's own (the MiniLM scores a fold's test texts for seconds, TF-IDF for a
    fraction): the rule that added the smallest overhead of any candidate predicted 29.5 minutes for a selection
    whose runs took 32.4. Imports are not paid again by a warm worker; training is the least a run costs."""
    from comparisons.select import not_repeated_minutes, predicted_costs

    training = {"tfidf_logreg": 0.011, "hf_bert:full": 2.0, "hf_bert:frozen": 0.02}
    wall = {"tfidf_logreg": 0.04, "hf_bert:full": 2.09, "hf_bert:frozen": 0.24}
    imports = {"tfidf_logreg": 0.002, "hf_bert:full": 0.0, "hf_bert:frozen": 0.02}
    predicted = predicted_costs(training, wall, imports)
    assert predicted == pytest.approx({"tfidf_logreg": 0.038, "hf_bert:full": 2.09, "hf_bert:frozen": 0.22})
    assert predicted_costs({"a": 1.0}, {"a": 0.9}, {"a": 0.5}) == {"a": 1.0}  # never below its training
    # a pilot under serving caps measured what later folds do not: its latency calls, throughput passes, cold start
    quality_only = {"import_seconds": 1.2, "latency_ms_b1_p50": None, "cold_start_s": None}
    assert not_repeated_minutes(quality_only) == pytest.approx(1.2 / 60)
    measured = {"import_seconds": 1.2, "latency_ms_b1_calls": 20, "latency_ms_b1_p50": 10.0,
                "latency_ms_b32_calls": 20, "latency_ms_b32_p50": 100.0, "throughput_passes": 5,
                "throughput_texts": 1500, "throughput_per_s": 250.0, "cold_start_s": 4.8}
    assert not_repeated_minutes(measured) == pytest.approx((1.2 + 0.2 + 2.0 + 30.0 + 4.8) / 60)
