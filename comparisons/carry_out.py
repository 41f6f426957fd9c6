"""Carrying out a plan: `execute(plan)` is what `run` does (prepare, lock the folder, open the executor, run); a
partition design runs each partition's folder, then its recipe reports and page; `run_in_folder` runs one folder's
specs (resuming what finished), writes its reports and tracks it.

    from comparisons.plan import Plan
    from comparisons.carry_out import execute
    execute(Plan(backends=("tfidf_logreg",), cv=5))   # 0: every run finished; 1: some failed (their rows say why)
"""
from __future__ import annotations

import sys
from pathlib import Path

from common.errors import UserInputError
from comparisons.plan import Plan, Prepared, prepare
from comparisons.plan_records import design_record, manifest_record, run_specs
from comparisons.report.names import REPORT_HTML, SCORES_CSV, SUMMARY_CSV, VERDICTS_MD


def execute(plan: Plan, argv: list[str] | None = None) -> int:
    """What `run` does: prepare, open the executor, hold the folder's lock, run, write the reports (and log to
    MLflow with --track); 0, 1 (a run failed: its row says why), or an interruption's exit code."""
    from comparisons.run.open_executor import open_executor
    from comparisons.run.lock import RunFolderLock

    p = prepare(plan, argv)
    warm = p.plan.quality_only and not p.plan.fresh_workers  # no costs measured: one warm worker a backend
    executor = open_executor(p.plan.executor, p.plan.ray_address, p.plan.max_concurrent, 2 * sum(map(len, p.data.texts)),
                             p.variants, warm)
    try:
        p.out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        executor.close()
        raise UserInputError(f"cannot use {p.out} as the run folder ({exc.strerror}); choose another --out") from None
    try:
        lock = RunFolderLock(p.out).acquire()  # one orchestrator per run folder; a second one exits 2
    except UserInputError:
        executor.close()
        raise
    with lock:
        try:
            return carry_out(p, executor)
        finally:
            executor.close()

def carry_out(p: Prepared, executor) -> int:
    """A prepared plan's runs through an open executor, in its folder (whose lock the caller holds)."""
    return run_partitions(p, executor) if p.plan.cv is not None else run_in_folder(p, p.out, p.split, executor)

def run_partitions(p: Prepared, executor) -> int:
    """The partition design: every partition is a run folder of its own under out/partitions/rRfF, run in
    turn through the same runner, executor, resume and checks; the recipe verdicts go in `out`."""
    from comparisons.comparability import code_state
    from comparisons.numerics import note_design_identities
    from comparisons.report.write import write_reports
    from comparisons.run_folder.records import Design
    from comparisons.run_folder.writers import write_design
    from comparisons.sequential_run import refuse_mixed, run_sequential

    out = p.out
    partitions = p.partitions
    code = code_state()  # one code hash for every partition's plan: a change mid-design fails the later runs
    design = design_record(p, partitions, code)
    earlier = Design.read(out)
    if earlier is not None and not p.plan.force:
        if [q["sha256"] for q in earlier.partitions] != [q["sha256"] for q in design.partitions]:
            raise UserInputError(f"{out} holds runs of other partitions; choose another --out or add --force")
    if earlier is not None and not p.plan.force and earlier.seeding != p.plan.seeding:
        raise UserInputError(f"{out} holds a design seeded {earlier.seeding}, this plan is seeded {p.plan.seeding}; "
                             f"add --seeding {earlier.seeding} to resume it, or choose another --out")
    if not p.plan.force:
        refuse_mixed(out, p.plan.until_decided)  # a sequential folder is not a fixed design's, nor the reverse
    write_design(out, design)
    failed = 0
    if p.plan.until_decided:  # a repeat at a time while a declared contrast is open (comparisons/sequential_run.py)
        failed = run_sequential(p, executor, code, design, run_in_folder)
        if failed not in (0, 1):
            return failed
    for number, partition in enumerate(partitions if not p.plan.until_decided else [], start=1):
        print(f"partition {partition.name} ({number}/{len(partitions)})", file=sys.stderr)
        code_exit = run_in_folder(p, out / "partitions" / partition.name, partition.split, executor, reports=False,
                                  code=code, partition_index=number - 1)
        if code_exit not in (0, 1):  # interrupted: the finished runs are kept, the next call resumes
            return code_exit
        failed += code_exit
    if any(out.glob("partitions/r*f*/runs/*.json")):  # design.json: do its runs mix numerics identities?
        note_design_identities(out)
    write_reports(out, [p.plan.lang], p.cpu_hour_price)  # none yet when no run finished
    ran = len(partitions)
    if p.plan.until_decided:  # the partitions of the looks made, not the most the plan allows
        ran = len((Design.read(out).sequential or {}).get("looks") or []) * p.plan.cv
    print(f"results: {out / VERDICTS_MD} (verdicts about recipes over {ran} partitions), "
          f"{out / SCORES_CSV}; each partition's runs in {out}/partitions/", file=sys.stderr)
    return 1 if failed else 0

def run_in_folder(p: Prepared, out: Path, split, executor, reports: bool = True, code: dict | None = None,
                  partition_index: int | None = None) -> int:
    """The plan's runs on one split, in a run folder this process holds the lock of (reports: write its tables and
    page); partition_index: the partition's place in its design (its draws' seeds)."""
    from common.splits import duplicate_report, train_subsets_record
    from comparisons.comparability import code_state
    from comparisons.run_folder.records import SplitsRecord
    from comparisons.run_folder.writers import write_manifest, write_splits
    from comparisons.report.preview import preview_note
    from comparisons.run.runner import describe, exit_code, finished
    from comparisons.plan_records import drawn_seeds
    from comparisons.run.spec import RunInputs, RunSpec

    data, budget = p.data, p.plan.label_budget
    recorded = SplitsRecord.read(out) if not p.plan.force else None
    earlier = recorded.to_dict() if recorded is not None else {}
    if earlier and earlier.get("sha256") != split.sha256:
        raise UserInputError(f"{out} holds runs of another split; choose another --out or add --force")
    duplicates = duplicate_report(data, split)
    subsets = earlier.get("train_subsets", {})
    recorded = subsets.get("sizes", {}) if subsets.get("label_budget", "train") == budget else {}  # same budget
    subset_sizes = sorted({*map(int, recorded), *(n for n in p.train_sizes if n is not None)})
    write_splits(out, {**split.to_dict(),  # every training subset drawn in this folder
                       "train_subsets": train_subsets_record(split, data.labels, subset_sizes, texts=data.texts,
                                                             budget=budget, draws=drawn_seeds(p, split, partition_index))})
    manifest = manifest_record(p, split, code or code_state(), duplicates, partition_index)
    write_manifest(out, manifest)
    sizes = split.sizes()
    print(f"data: {len(data)} rows, split train/valid/test = {sizes['train']}/{sizes['valid']}/{sizes['test']} "
          f"(sha256 {split.sha256[:12]}), {duplicates['test_rows_whose_text_is_in_train']} test texts also in train"
          f"{'' if p.spec.dedup else ' (--dedup drops duplicates)'}", file=sys.stderr)
    planned = run_specs(p, split, manifest, partition_index)
    inputs = RunInputs(data, split.to_dict()).to_json_bytes()  # the data by value, for every worker
    numbers = {request: number for number, request in enumerate(planned, start=1)}
    failed, todo = 0, []
    for number, request in enumerate(planned, start=1):
        if not p.plan.force and finished(out, request, split.sha256, manifest.data_sha256, manifest):
            print(f"[{number}/{len(planned)}] {request.name}: finished earlier, kept (--force reruns it)",
                  file=sys.stderr)
            continue
        todo.append(request)

    def started(request: RunSpec) -> None:
        print(f"[{numbers[request]}/{len(planned)}] {request.name}: started ({executor.name})", file=sys.stderr)

    def done(request: RunSpec, record: dict) -> None:
        nonlocal failed
        failed += record["status"] == "failed"
        print(f"[{numbers[request]}/{len(planned)}] {describe(record)}", file=sys.stderr)

    try:
        executor.run(out, todo, inputs, started, done)
    except KeyboardInterrupt as interruption:  # Ctrl-C, SIGTERM or SIGHUP: the running worker's group is ended
        print(f"interrupted by {getattr(interruption, 'signal_name', 'SIGINT')}: finished runs are kept in {out}; "
              "run the same command again to resume", file=sys.stderr)
        return exit_code(interruption)
    finally:
        if reports:
            from comparisons.report.write import write_reports

            write_reports(out, [p.plan.lang], p.cpu_hour_price)
    if p.plan.track:  # the driver logs the folder, after its reports (never the workers)
        from comparisons.tracking import track_after_run

        track_after_run(out, p.mlflow_uri)
    if reports:
        print(f"results: open {out / REPORT_HTML} (tables, figures, verdicts, details); {out / SUMMARY_CSV}", file=sys.stderr)
        note = preview_note(p.plan.profile, p.plan.seeds)  # a fast ranking is a preview, not the suite's finding
        if note:
            print(note, file=sys.stderr)
    return 1 if failed else 0
