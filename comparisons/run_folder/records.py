"""The plan files of a run folder as typed, read-only records: `Manifest` (manifest.json), `Design`
(design.json), `BenchmarkPlan` (benchmark.json), `SplitsRecord` (splits.json) and `PowerPlan` (a pilot's
power_plan.json, and design.json's copy of it); a selection's selection.json is `SelectionRecord` (selection_record.py).

Each keeps the file's dict as read (`fields`, in its key order, so `to_dict()` gives the file back key for key) and
names every key a reader uses as a typed property, with the default an older file implies where the key is absent
(the schema versions still committed under results/: docs/plans/issue64_inventory.md A.1-A.5). Nothing here writes:
design.json, manifest.json and splits.json are written by writers.py (design.json's and manifest.json's records built
by plan_records.py, splits.json's dict by carry_out.py), benchmark.json too (its dict built by benchmark.py), and
power_plan.json by studies/power_plan.py.
"""
from __future__ import annotations

from common.splits import RECORDED_BEFORE_SEEDING, as_train_size, Split, TrainSize
from comparisons.run_folder.json_record import JsonRecord
from comparisons.run_folder.names import BENCHMARK_PLAN, DESIGN, MANIFEST, SPLITS
from comparisons.run_folder.power_plan_record import PowerPlan


class PlanRecord(JsonRecord):
    """What a manifest and a design both record of the plan they were run with."""

    @property
    def variants(self) -> list[str]:
        return list(self.fields.get("variants") or [])

    @property
    def seeds(self) -> list[int]:
        return [int(s) for s in self.fields.get("seeds") or []]

    @property
    def label_budget(self) -> str | None:
        return self.fields.get("label_budget")

    @property
    def margins(self) -> dict | None:
        return self.fields.get("margins")

    @property
    def contrasts(self) -> list[tuple[str, str]] | None:
        found = self.fields.get("contrasts")
        return [tuple(pair) for pair in found] if found else None

    @property
    def code_sha256(self) -> str | None:
        return self.fields.get("code_sha256")

    @property
    def code_commit(self) -> str | None:
        return self.fields.get("code_commit")

    @property
    def code_dirty(self) -> bool | None:
        """Whether the working tree had uncommitted changes (None: not recorded)."""
        return self.fields.get("code_dirty")

    @property
    def plan(self) -> dict | None:
        """The plan as recorded; one recorded before per-partition seeding says it ran the older, shared scheme."""
        plan = self.fields.get("plan")
        return None if plan is None else {"seeding": RECORDED_BEFORE_SEEDING, **plan}


class Manifest(PlanRecord):
    """manifest.json: what a single split's or a partition's runs were planned with (docs/cli.md lists its keys)."""

    FILE = MANIFEST

    def variant_entry(self, variant: str) -> dict:
        """{backend, params, plugin} of a planned variant ({} in older fixtures that listed the variants only)."""
        entries = self.fields.get("variants") or {}
        return dict(entries.get(variant) or {}) if isinstance(entries, dict) else {}

    @property
    def train_sizes(self) -> list[TrainSize]:
        return [as_train_size(s) for s in self.fields.get("train_sizes") or [None]]

    @property
    def profile(self) -> str | None:
        return self.fields.get("profile")

    @property
    def data(self) -> dict:
        return dict(self.fields.get("data") or {})

    @property
    def class_names(self) -> tuple[str, ...]:
        return tuple(self.fields["data"]["class_names"])

    @property
    def positive_index(self) -> int | None:
        return self.fields["data"].get("positive_index")

    @property
    def data_sha256(self) -> str | None:
        return self.data.get("sha256")

    @property
    def split(self) -> dict:
        return dict(self.fields.get("split") or {})

    @property
    def split_sha256(self) -> str | None:
        return self.split.get("sha256")

    @property
    def threads(self) -> int | None:
        return self.fields.get("threads")

    @property
    def device(self) -> str | None:
        return self.fields.get("device")

    @property
    def hf_model(self) -> str | None:
        return self.fields.get("hf_model")

    @property
    def timeout_s(self) -> float | None:
        """A run's time limit in seconds (None or 0: none)."""
        return self.fields.get("timeout_s")

    @property
    def quality_only(self) -> bool:
        return bool(self.fields.get("quality_only", False))

    @property
    def precision(self) -> dict:
        """{variant: fp32 | bf16} (folders from before precision was recorded: {})."""
        return dict(self.fields.get("precision") or {})

    @property
    def machine(self) -> dict:
        return dict(self.fields.get("machine") or {})

    @property
    def created(self) -> str | None:
        return self.fields.get("created")

    @property
    def command(self) -> str | None:
        return self.fields.get("command")

    @property
    def git_commit(self) -> str | None:
        """`git describe` of the code (code_commit is the bare commit)."""
        return self.fields.get("git_commit")

    @property
    def thread_environment(self) -> dict:
        """The thread variables in force ({OMP_NUM_THREADS: ..., ...})."""
        return dict(self.fields.get("thread_environment") or {})

    @property
    def versions(self) -> dict:
        """{package: version or None} of the libraries the runs used."""
        return dict(self.fields.get("versions") or {})

    @property
    def numerics(self) -> dict | None:
        """The numerical identity (comparisons/numerics.py), or None before it was recorded."""
        return self.fields.get("numerics")

    @property
    def precision_requested(self) -> str:
        """--precision as asked (fp32 before it was recorded)."""
        return self.fields.get("precision_requested", "fp32")


class Design(PlanRecord):
    """design.json: a partition design's plan, partitions, declared contrasts and what later steps added."""

    FILE = DESIGN

    @property
    def folds(self) -> int:
        return int(self.fields["folds"])

    @property
    def repeats(self) -> int:
        return int(self.fields["repeats"])

    @property
    def seed(self) -> int | None:
        return self.fields.get("seed")

    @property
    def contrasts_declared(self) -> str | None:
        return self.fields.get("contrasts_declared")

    @property
    def family(self) -> str:
        """holm (the default, and a design that records no family) or natural-order."""
        return self.fields.get("family") or "holm"

    @property
    def train_sizes(self) -> list[TrainSize]:
        return [as_train_size(s) for s in self.fields.get("train_sizes") or ["all"]]

    @property
    def draws(self) -> int:
        return int(self.fields.get("draws") or 1)

    @property
    def drawn_sizes(self) -> list[int]:
        return [int(s) for s in self.fields.get("drawn_sizes") or []]

    @property
    def seeding(self) -> str:
        """per-partition (each partition and draw its own seeds) or shared (every design recorded before it)."""
        return self.fields.get("seeding") or RECORDED_BEFORE_SEEDING

    def partition_seeds(self, name: str) -> dict[str, list[dict]]:
        """{size label: [{"model_seed", "subset_seed"}, ...]} a partition trained with, as recorded (designs
        recorded before per-partition seeding: {})."""
        return next((dict(p.get("seeds") or {}) for p in self.partitions if p["name"] == name), {})

    @property
    def partitions(self) -> list[dict]:
        return [dict(p) for p in self.fields.get("partitions") or []]

    @property
    def partition_names(self) -> list[str]:
        return [p["name"] for p in self.partitions]

    @property
    def sequential(self) -> dict | None:
        return self.fields.get("sequential")

    @property
    def is_sequential(self) -> bool:
        return bool(self.fields.get("sequential"))

    @property
    def variance(self) -> str | None:
        return self.fields.get("variance")

    @property
    def command(self) -> str | None:
        return self.fields.get("command")

    @property
    def power_plan(self) -> PowerPlan | None:
        """The power plan the design was chosen by, as recorded before the runs (None: none)."""
        found = self.fields.get("power_plan")
        return PowerPlan.from_dict(found) if found else None

    @property
    def family_graph(self) -> dict | None:
        """The natural-order graph used (nodes dropped as unreachable, weights, transitions); None: the graph as
        declared (every curve before chains were checked) or a Holm family."""
        return self.fields.get("family_graph")

    @property
    def data_sha256(self) -> str | None:
        return self.fields.get("data_sha256")

    @property
    def numerics(self) -> dict | None:
        """The driver's numerics identity when the design was planned (designs from before it was recorded: None)."""
        return self.fields.get("numerics")

    def with_report_choices(self, contrasts: list[tuple[str, str]] | None = None,
                            variance: str | None = None) -> "Design":
        """The record with what `report` chose after the runs: declared contrasts (marked as declared at report
        time, which the pages say) and the variance estimate (so that the pages and curves read the same choice)."""
        fields = dict(self.fields)
        if contrasts is not None:
            fields.update(contrasts=[list(pair) for pair in contrasts], contrasts_declared="at report time")
        if variance is not None:
            fields["variance"] = variance
        return Design(fields)

    def with_numerics_runs(self, summary: dict, line: str | None) -> "Design":
        """The record with the numerics identities its partitions' runs were made under (comparisons/numerics.py)."""
        return Design({**self.fields, "numerics_runs": {**summary, "line": line}})

    def with_look(self, looks: list[dict], stopped: str | None) -> "Design":
        """The record of a sequential design after a look: every look so far and why it stopped (None: it goes on)."""
        return Design({**self.fields, "sequential": {**(self.sequential or {}), "looks": looks, "stopped": stopped}})

    @property
    def numerics_line(self) -> str | None:
        """The line saying whether its runs mix numerics identities (comparisons/numerics.py; None before it ran)."""
        return (self.fields.get("numerics_runs") or {}).get("line")


class BenchmarkPlan(JsonRecord):
    """benchmark.json: the corpora of a benchmark, each with its folder and status, and the shared plan."""

    FILE = BENCHMARK_PLAN

    @property
    def corpora(self) -> list[dict]:
        return [dict(c) for c in self.fields.get("corpora") or []]

    @property
    def folders(self) -> list[str]:
        return [c["folder"] for c in self.corpora]

    @property
    def variants(self) -> list[str]:
        return list(self.fields.get("variants") or [])

    @property
    def design(self) -> dict:
        return dict(self.fields.get("design") or {})

    @property
    def folds(self) -> int | None:
        """The folds of each corpus's partitions (None: one split a corpus)."""
        return self.design.get("folds")

    @property
    def repeats(self) -> int | None:
        return self.design.get("repeats")

    @property
    def limit_total(self) -> int | None:
        """The cap on each corpus's texts (None: none)."""
        return self.fields.get("limit_total")

    @property
    def command(self) -> str | None:
        return self.fields.get("command")

    @property
    def profile(self) -> str | None:
        return self.fields.get("profile")


class SplitsRecord(JsonRecord):
    """splits.json: a folder's split (indices and their hash) and every training subset drawn in it."""

    FILE = SPLITS

    @property
    def sha256(self) -> str:
        return self.fields["sha256"]

    @property
    def sizes(self) -> dict:
        return dict(self.fields.get("sizes") or {})

    @property
    def train_subsets(self) -> dict:
        return dict(self.fields.get("train_subsets") or {})

    def split(self):
        """The common.splits.Split, its hash checked."""

        return Split.from_dict(self.fields)
