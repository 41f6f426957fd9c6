"""The typed plan records: every committed plan file and run record parses, gives its dict back
key for key, and its typed properties agree with the raw keys (with an older schema's defaults where a key is
absent)."""
import json
from pathlib import Path

import pytest

from comparisons.run_folder import (BenchmarkPlan, Design, Manifest, RunRecord, SplitsRecord, as_train_size,
                                    read_runs)

RESULTS = Path(__file__).resolve().parent.parent / "results"


def committed(name: str) -> list[Path]:
    return sorted(RESULTS.rglob(name))


@pytest.mark.parametrize("kind", [Manifest, Design, BenchmarkPlan, SplitsRecord])
def test_every_committed_plan_file_reads_as_its_record_and_back(kind):
    paths = committed(kind.FILE)
    assert paths, f"no committed {kind.FILE}"
    for path in paths:
        raw = json.loads(path.read_text())
        record = kind.read(path.parent)
        assert record.to_dict() == raw and list(record.to_dict()) == list(raw), path  # key for key, in order
        assert dict(record) == raw and record == kind.from_dict(raw)


def test_the_typed_properties_agree_with_the_raw_keys_and_default_for_older_schemas():
    for path in committed(Design.FILE):
        raw, design = json.loads(path.read_text()), Design.read(path.parent)
        assert design.folds == raw["folds"] and design.repeats == raw["repeats"], path
        assert design.family == raw.get("family", "holm") and design.draws == (raw.get("draws") or 1)
        assert design.partition_names == [p["name"] for p in raw.get("partitions") or []]
        assert design.is_sequential == bool(raw.get("sequential"))
        assert design.train_sizes == [as_train_size(s) for s in raw.get("train_sizes") or ["all"]]
        assert design.contrasts == ([tuple(p) for p in raw["contrasts"]] if raw.get("contrasts") else None)
    for path in committed(Manifest.FILE)[:200]:
        raw, manifest = json.loads(path.read_text()), Manifest.read(path.parent)
        assert manifest.variants == list(raw.get("variants") or []), path
        assert manifest.data_sha256 == raw["data"].get("sha256") and manifest.split_sha256 == raw["split"]["sha256"]
        assert manifest.positive_index == raw["data"].get("positive_index")
        assert manifest.quality_only == bool(raw.get("quality_only", False))
        for variant in manifest.variants:
            assert manifest.variant_entry(variant) == dict(raw["variants"][variant])
    for path in committed(BenchmarkPlan.FILE):
        plan = BenchmarkPlan.read(path.parent)
        assert plan.folders == [c["folder"] for c in json.loads(path.read_text())["corpora"]]
    splits = committed(SplitsRecord.FILE)[0]
    assert SplitsRecord.read(splits.parent).split().sha256 == json.loads(splits.read_text())["sha256"]
    assert Manifest.read(RESULTS / "no such folder") is None
    assert Manifest({"variants": ["tfidf_logreg"]}).variant_entry("tfidf_logreg") == {}  # an older fixture's list


def test_every_committed_run_record_reads_and_keeps_every_key():
    folders = sorted({p.parent.parent for p in RESULTS.rglob("runs/*.json")})
    assert len(folders) > 20
    for folder in folders:
        for record in read_runs(folder):
            raw = json.loads((folder / "runs" / f"{record.name}.json").read_text())
            assert set(record) == set(raw) and record.variant == raw["variant"] and record.seed == int(raw["seed"])
            assert record.train_size == as_train_size(raw.get("train_size"))  # one spelling of the size
            assert {k: v for k, v in record.to_dict().items() if k != "train_size"} == \
                {k: v for k, v in raw.items() if k != "train_size"}
    assert isinstance(read_runs(folders[0])[0], RunRecord)


def test_a_selection_record_reads_its_scores_with_nan_and_adds_a_deployment_without_changing_itself(tmp_path):
    from comparisons.run_folder.selection_record import SelectionRecord

    fields = {"plan": {"candidates": ["a", "b"], "delta": 0.01, "alpha": 0.05},
              "scores": [[0.9, 0.8], [0.91, None]], "folds": [{"partition": "r0f0", "ran": ["a", "b"]}],
              "decision": {"outcome": "selected", "pick": "a", "claimable": ["a"], "behind_best": {"a": 0.0},
                           "wall_minutes": 1.5}}
    (tmp_path / SelectionRecord.FILE).write_text(json.dumps(fields))
    record = SelectionRecord.read(tmp_path)
    assert record.to_dict() == fields and record.candidates == ["a", "b"] and record.confidence == pytest.approx(0.95)
    assert record.scores.shape == (2, 2) and record.scores[1, 1] != record.scores[1, 1]  # None read as NaN
    assert list(record.scores_of("b")) == [0.8] and list(record.scores_of("a")) == [0.9, 0.91]
    assert (record.pick, record.outcome, record.wall_minutes, record.deployment) == ("a", "selected", 1.5, None)
    shipped = record.with_deployment({"backend": "x"})
    assert shipped.deployment == {"backend": "x"} and record.deployment is None and list(shipped)[-1] == "deployment"
    assert SelectionRecord.read(tmp_path / "absent") is None
