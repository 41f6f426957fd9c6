"""Replay a committed fixed partition design as if it had run until decided: its runs in the order they
were made (repeat by repeat), the group-sequential rule after each repeat (comparisons/stats/sequential.py, the
same `next_look` the runner uses), and what it would have saved: the runs of variants no open contrast needed, and
their recorded minutes. No run is made.

    python -m comparisons.studies.replay --from results/reference        # -> results/reference/replay.md, .json
"""
from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from common.arguments import OneLineParser
from common.errors import UserInputError
from comparisons.outputs import atomic_write_json, atomic_write_text
from comparisons.report.names import VERDICTS_CSV
from comparisons.run_folder.records import Design


def run_minutes(out: Path) -> pd.DataFrame:
    """partition, variant, seed, train_size, minutes of every finished run (its recorded wall_seconds)."""
    from comparisons.run_folder import read_runs

    rows = []
    for folder in sorted((out / "partitions").glob("r*f*")):
        for record in read_runs(folder):
            if record.ok:
                rows.append({"partition": folder.name, "variant": record["variant"], "seed": record["seed"],
                             "minutes": float(record.get("wall_seconds") or 0.0) / 60})
    return pd.DataFrame(rows)


def replay(scores: pd.DataFrame, minutes: pd.DataFrame, design: Design, max_repeats: int, sets=None,
           variance: str | None = None) -> dict:
    """The looks the sequential rule would have made on these runs, and the runs and minutes it would have used."""
    from comparisons.stats.contrasts import pair_order
    from comparisons.stats.design_variance import DEFAULT_VARIANCE
    from comparisons.stats.partition_verdicts import sequential_verdicts
    from comparisons.stats.sequential import next_look, repeat_of

    order = [v for v in design.variants if v in set(scores["variant"])]
    contrasts = design.contrasts or pair_order(order)
    scores = scores.assign(repeat=[repeat_of(p) for p in scores["partition"]])
    minutes = minutes.assign(repeat=[repeat_of(p) for p in minutes["partition"]])
    made, running, looks, verdicts = set(), list(order), [], pd.DataFrame()
    for look in range(1, max_repeats + 1):
        made |= {(look - 1, v) for v in running}
        upto = scores[[(r, v) in made for r, v in zip(scores["repeat"], scores["variant"])]]
        verdicts = sequential_verdicts(upto.drop(columns="repeat"), design.margins, order, design.contrasts,
                                       design.folds, max_repeats, sets, variance or design.variance or DEFAULT_VARIANCE)
        used = minutes[[(r, v) in made for r, v in zip(minutes["repeat"], minutes["variant"])]]
        per_repeat = used.groupby("variant")["minutes"].sum() / look
        decision = next_look(verdicts, contrasts, max_repeats, look, order, float(used["minutes"].sum()), None,
                             per_repeat.to_dict())
        looks.append({"look": look, "variants_run": list(running),
                      "contrasts": [{"a": a, "b": b, "state": s, "reason": why}
                                    for (a, b), (s, why) in decision["states"].items()],
                      "stopped": decision["stop"]})
        if decision["stop"] is not None:
            break
        running = decision["variants"]
    used = minutes[[(r, v) in made for r, v in zip(minutes["repeat"], minutes["variant"])]]
    return {"max_repeats": max_repeats, "looks": looks, "verdicts": verdicts,
            "runs_used": len(used), "runs_fixed": len(minutes[minutes["repeat"] < max_repeats]),
            "minutes_used": float(used["minutes"].sum()),
            "minutes_fixed": float(minutes.loc[minutes["repeat"] < max_repeats, "minutes"].sum())}


def replay_markdown(result: dict, fixed: pd.DataFrame, source: str) -> str:
    """The replay as replay.md: the looks, each declared contrast's sequential verdict beside the fixed design's."""
    from comparisons.stats.family import PRIMARY

    saved_runs = result["runs_fixed"] - result["runs_used"]
    saved_minutes = result["minutes_fixed"] - result["minutes_used"]
    lines = [f"# Replay of {source} as a sequential design (run until decided)", "",
             f"The committed runs in the order they were made, one repeat a look, at most {result['max_repeats']} "
             "repeats; the group-sequential rule (Lan-DeMets O'Brien-Fleming alpha spending on the design's t, "
             "repeated p-values, Holm over the declared family; docs/statistics.md \"Run until decided\") after each "
             "look; the next repeat runs only the variants of contrasts still open. No run was made: the figures "
             "are the committed runs' own.", "",
             f"- runs: **{result['runs_used']}** of the fixed design's {result['runs_fixed']} "
             f"({result['runs_used'] / result['runs_fixed']:.0%}; {saved_runs} saved)",
             f"- run minutes: **{result['minutes_used']:.1f}** of {result['minutes_fixed']:.1f} "
             f"({saved_minutes:.1f} saved, {saved_minutes / max(result['minutes_fixed'], 1e-9):.0%}; the runs' "
             "recorded wall time)",
             f"- stopped after look {result['looks'][-1]['look']}: {result['looks'][-1]['stopped']}", "",
             "## The looks", "", "| look | variants run | " + " | ".join(
                 f"{c['a']} vs {c['b']}" for c in result["looks"][0]["contrasts"]) + " |",
             "|---:|---|" + "---|" * len(result["looks"][0]["contrasts"])]
    for look in result["looks"]:
        lines.append(f"| {look['look']} | {', '.join(look['variants_run'])} | "
                     + " | ".join(f"{c['state']} ({c['reason']})" for c in look["contrasts"]) + " |")
    lines += ["", "## Each declared contrast (average precision): sequential against the fixed design", "",
              "| contrast | sequential verdict | at look | ΔAP [repeated 95% CI] | fixed 3 x 5 verdict | ΔAP [95% CI] |",
              "|---|---|---:|---|---|---|"]
    verdicts = result["verdicts"]
    rows = verdicts[(verdicts["metric"] == PRIMARY) & (verdicts["contrast"] != "exploratory")]
    for row in rows.itertuples():
        other = fixed[(fixed["metric"] == PRIMARY) & (fixed["variant_a"] == row.variant_a)
                      & (fixed["variant_b"] == row.variant_b)]
        fixed_text = "—" if other.empty else (f"{other['verdict'].iloc[0]} | {other['difference'].iloc[0]:+.4f} "
                                              f"[{other['ci_low'].iloc[0]:+.4f}, {other['ci_high'].iloc[0]:+.4f}]")
        at = "—" if pd.isna(row.decided_at) else str(int(row.decided_at))
        lines.append(f"| {row.variant_a} − {row.variant_b} | {row.verdict} | {at} | {row.difference:+.4f} "
                     f"[{row.ci_low:+.4f}, {row.ci_high:+.4f}] | {fixed_text} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(prog="python -m comparisons.studies.replay", description=__doc__.splitlines()[0])
    parser.add_argument("--from", dest="source", type=Path, required=True, help="a fixed partition design's folder")
    parser.add_argument("--max-repeats", type=int, help="the sequential design's most repeats (default: the folder's)")
    args = parser.parse_args(argv)
    try:
        from comparisons.run_folder.scores import wide_runs
        from comparisons.run_folder.open_folder import scores_table
        from comparisons.run_folder.training_sets import training_sets

        design = Design.read(args.source)
        if design is None:
            raise UserInputError(f"{args.source} holds no partition design (no design.json); give a --cv run's folder")
        most = args.max_repeats or design.repeats
        if not 2 <= most <= design.repeats:
            raise UserInputError(f"--max-repeats must be between 2 and the folder's {design.repeats} repeats")
        scores = wide_runs(scores_table(args.source)[0])
        minutes = run_minutes(args.source)
        if scores.empty or minutes.empty:
            raise UserInputError(f"{args.source} holds no finished partition runs to replay")
        result = replay(scores, minutes, design, most, training_sets(args.source, scores))
    except UserInputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    fixed = pd.read_csv(args.source / VERDICTS_CSV)
    atomic_write_text(args.source / "replay.md", replay_markdown(result, fixed, str(args.source)))
    atomic_write_json(args.source / "replay.json", {k: v for k, v in result.items() if k != "verdicts"})
    print(f"replay: {args.source}/replay.md ({result['runs_used']} of {result['runs_fixed']} runs)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
