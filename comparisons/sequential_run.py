"""A sequential partition design (`run --cv K --until-decided --max-repeats R [--budget-minutes M]`): one
repeat of the K partitions at a time; after each (a look) the declared contrasts are tested by the group-sequential
rule (comparisons/stats/sequential.py) and the next repeat runs only the variants of the contrasts still open. Each
look, what it decided and why the design stopped go in design.json's "sequential" and on the page.

Resuming: the looks are recomputed from the finished runs, so an interrupted sequence continues where it stood with
the same looks and decisions (the budget counts the runs' recorded minutes, not the clock)."""
from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from comparisons.plan import Prepared

if TYPE_CHECKING:
    from comparisons.run_folder.records import Design


def repeat_minutes(out: Path, partitions, looks: int) -> dict[int, dict[str, float]]:
    """{repeat: {variant: minutes its finished runs took there}} of the first `looks` repeats, from the runs'
    records (wall_seconds); a later repeat's runs left by an earlier call are not counted yet."""
    from comparisons.run_folder import read_runs
    from comparisons.stats.sequential import repeat_of

    found: dict[int, dict[str, float]] = {}
    for partition in partitions:
        folder = out / "partitions" / partition.name
        if not folder.is_dir() or repeat_of(partition.name) >= looks:
            continue
        repeat = found.setdefault(repeat_of(partition.name), {})
        for record in read_runs(folder):
            if record.ok and record.get("wall_seconds"):
                repeat[record["variant"]] = repeat.get(record["variant"], 0.0) + float(record["wall_seconds"]) / 60
    return found


def look_record(look: int, folds: int, ran: list[str], decision: dict, spent: float) -> dict:
    """One look as design.json records it."""
    return {"look": look, "repeats": look, "partitions": look * folds, "variants_run": ran,
            "contrasts": [{"a": a, "b": b, "state": state, "reason": reason}
                          for (a, b), (state, reason) in decision["states"].items()],
            "next_variants": decision["variants"], "run_minutes": round(spent, 2), "stopped": decision["stop"]}


def current_verdicts(out: Path, looks: int):
    """The sequential verdict rows of the first `looks` repeats' finished runs, as the design's report computes them
    (report/design_report.DesignReport.verdict_pairs; the rows its reports write, as they stood then: a resumed
    sequence decides each look on that look's data only). Empty before any run finished."""
    import pandas as pd

    from comparisons.report.design_report import DesignReport

    pairs = DesignReport.verdict_pairs(out, looks)
    return pd.DataFrame() if pairs is None else pairs


def run_sequential(p: Prepared, executor, code: dict, design: Design, run_in_folder) -> int:
    """Run the design a repeat at a time until the rule stops it (run_in_folder: comparisons/carry_out's, which runs
    one partition's folder); 0, 1 (a run failed) or an interruption's code."""
    from comparisons.run_folder.writers import write_design
    from comparisons.stats.contrasts import pair_order
    from comparisons.stats.sequential import next_look

    out, folds, most = p.out, p.plan.cv, p.plan.max_repeats
    contrasts = p.contrasts or pair_order(p.variants)  # none declared: every pair is the family
    running, failed, looks = list(p.variants), 0, []
    for look in range(1, most + 1):
        print(f"look {look}/{most}: repeat {look} of {', '.join(running)}", file=sys.stderr)
        for fold in range(folds):
            index = (look - 1) * folds + fold
            partition = p.partitions[index]
            code_exit = run_in_folder(replace(p, variants=running), out / "partitions" / partition.name,
                                      partition.split, executor, reports=False, code=code, partition_index=index)
            if code_exit not in (0, 1):  # interrupted: the finished runs are kept, the next call resumes the sequence
                return code_exit
            failed += code_exit
        minutes = repeat_minutes(out, p.partitions, look)
        spent = sum(sum(per.values()) for per in minutes.values())
        per_repeat = {v: sum(per.get(v, 0.0) for per in minutes.values()) / look for v in p.variants}
        decision = next_look(current_verdicts(out, look), contrasts, most, look, p.variants, spent,
                             p.plan.budget_minutes, per_repeat)
        looks.append(look_record(look, folds, running, decision, spent))
        design = design.with_look(looks, decision["stop"])
        write_design(out, design)
        for (a, b), (state, reason) in decision["states"].items():
            print(f"  {a} vs {b}: {state} ({reason})", file=sys.stderr)
        if decision["stop"] is not None:
            print(f"stopped after look {look}: {decision['stop']}", file=sys.stderr)
            break
        running = decision["variants"]
    return 1 if failed else 0


def refuse_mixed(out: Path, sequential: bool) -> None:
    """A folder made sequentially is not resumed as a fixed design's, nor the other way round (one line)."""
    from common.errors import UserInputError
    from comparisons.run_folder.records import Design

    design = Design.read(out)
    if design is None:
        return
    earlier = design.is_sequential
    if earlier != sequential:
        made, asked = ("a sequential design (--until-decided)", "a fixed one") if earlier else \
            ("a fixed design", "a sequential one (--until-decided)")
        raise UserInputError(f"{out} holds {made}; it cannot be continued as {asked}: choose another --out "
                             f"(or rerun it with the command in its design.json)")
