"""The run folder: the one contract between the run half (comparisons/run/) and the report half
(comparisons/report/).

What a folder holds (docs/cli.md): `manifest.json` (the plan), `splits.json`, `runs/NAME.json` (one
record per run), `predictions/NAME.npz` (test ids, labels and probabilities; never text), `logs/`; a partition
design's top folder its `design.json` and `partitions/rRfF/`, a benchmark's its `benchmark.json` and a folder a corpus.

- `names.py`: every file and folder name, and each run's paths.
- `records.py`: the plan files as typed read-only records (`Manifest`, `Design`, `BenchmarkPlan`, `SplitsRecord`);
  `selection_record.py`: a selection's selection.json (`SelectionRecord`).
- `folder.py`: `RunRecord`, `RunFolder` (a folder opened once), `Predictions`.
- `open_folder.py`: `open_folder(path)`, the one decision of what a folder is: `SplitFolder`, `DesignFolder`,
  `BenchmarkFolder` (or None), each handing out its plan record, run folders, manifests and scores table.
- `writers.py`: the one writer of each plan file and of a run's record; `scores.py`: the long scores table.
- `TrainSize`: `int | None`, None being the whole training split. "all" is only a spelling in file
  names, tables and labels (`size_label`); `as_train_size` reads every spelling older files used
  (None, "all", "", NaN, inf).
"""
from common.splits import TrainSize, as_train_size, size_key, size_label  # noqa: F401 (re-exported)
from comparisons.run_folder.folder import Predictions, RunFolder, RunRecord, read_runs, select_runs  # noqa: F401
from comparisons.run_folder.names import (BENCHMARK_PLAN, DESIGN, LOGS, MANIFEST, PARTITION_GLOB,  # noqa: F401
                                          PARTITIONS, PREDICTIONS, RUNS, SELECTION, SERVING, SPLITS, default_out, log_path,
                                          prediction_path, run_name, run_path, worker_record_path)
from comparisons.run_folder.json_record import JsonRecord  # noqa: F401
from comparisons.run_folder.power_plan_record import PowerPlan  # noqa: F401
from comparisons.run_folder.records import BenchmarkPlan, Design, Manifest, SplitsRecord  # noqa: F401
from comparisons.run_folder.selection_record import SelectionRecord  # noqa: F401
