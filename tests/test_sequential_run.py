"""The replay of a fixed folder as a sequential design (comparisons/studies/replay.py). The sequential run
itself (`run --cv K --until-decided`, comparisons/sequential_run.py) is tested under the Ray executor with a local
resume in tests/test_executors.py."""
import json


def test_the_replay_of_the_committed_reference_gives_its_committed_looks_and_savings(tmp_path):
    """The replay on the committed 3 x 5 reference's own runs (a copy: the replay writes beside them) makes the
    looks, decisions and savings committed in results/reference/replay.json, and refuses a folder of no design."""
    import shutil
    from pathlib import Path

    from comparisons.studies import replay

    reference = Path(__file__).resolve().parent.parent / "results" / "reference"
    committed = json.loads((reference / "replay.json").read_text())
    out = tmp_path / "reference"
    shutil.copytree(reference, out, ignore=shutil.ignore_patterns("*.png", "*.html", "figures", "zh"))
    (out / "replay.json").unlink()
    assert replay.main(["--from", str(out)]) == 0
    result = json.loads((out / "replay.json").read_text())
    assert result["looks"] == committed["looks"]
    # the reference remade with the audited recipes: after look 1 no contrast can be decided within 3 repeats, so
    # the replay stops there (the earlier reference ran a second look of the open contrasts' variants: 35 runs)
    assert (result["runs_used"], result["runs_fixed"]) == (committed["runs_used"], committed["runs_fixed"]) == (25, 75)
    assert abs(result["minutes_used"] - committed["minutes_used"]) < 1e-6
    assert result["looks"][0]["variants_run"] == ["tfidf_logreg", "torch_scratch", "keras_layers", "hf_bert:frozen",
                                                  "hf_bert:full"]
    assert len(result["looks"]) == 1 and result["looks"][0]["stopped"] == "4 contrast(s) cannot be decided within 3 repeats"
    text = (out / "replay.md").read_text()
    assert "Replay of" in text and "hf_bert:full − torch_scratch" in text
    assert replay.main(["--from", str(tmp_path / "nothing")]) == 2
