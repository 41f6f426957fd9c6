"""Projected wall time of a finished plan on a Ray cluster, from the per-run wall times it recorded.

`python -m comparisons.studies.cluster_projection --out results/reference --nodes 1 4 16`

Each run records `wall_seconds` (worker start to record: import, fit, validation, the cost
measurement and the fresh serving process). On a cluster of N nodes of 2 cores with one run at a
time per node (each run takes `--threads 2`, as the latency-grade setting of docs/ray.md asks),
the runs are list-scheduled longest first (Graham's LPT rule, within 4/3 of the optimum) and the
makespan is the projection. It leaves out what a cluster adds (Ray's start, the code upload,
per-node imports cached or not) and what the driver does after the runs (the reports), so it is
a lower bound on what a user would wait; the local figure beside it says how far the sum of the
runs is from the measured wall time.
"""
from __future__ import annotations

import heapq
import json
import sys
from pathlib import Path

from common.arguments import OneLineParser
from comparisons.outputs import atomic_write_text


def run_seconds(out: Path) -> list[tuple[str, float]]:
    """(run name: its folder relative to `out` and its record's stem, wall seconds) of every finished run in a run
    folder, a partition design's partitions or a benchmark's corpus folders (`python -m comparisons benchmark`)."""
    from comparisons.run_folder.open_folder import open_folder

    opened = open_folder(out)
    found = []
    for folder in (opened.run_folders if opened is not None else []):
        for path in sorted((folder.path / "runs").glob("*.json")):
            record = json.loads(path.read_text())
            if record.get("status") == "ok" and record.get("wall_seconds"):
                found.append((f"{folder.path.relative_to(out).as_posix()}/{path.stem}", float(record["wall_seconds"])))
    return found


def makespan(seconds: list[float], nodes: int) -> float:
    """Longest-processing-time-first list scheduling on `nodes` identical nodes, one run at a time each."""
    loads = [0.0] * nodes
    heapq.heapify(loads)
    for duration in sorted(seconds, reverse=True):
        heapq.heappush(loads, heapq.heappop(loads) + duration)
    return max(loads)


def projection_markdown(out: Path, nodes: list[int]) -> str:
    runs = run_seconds(out)
    seconds = [s for _, s in runs]
    lines = [f"# Projected wall time on a Ray cluster: {out.name}", "",
             f"{len(runs)} finished runs, {sum(seconds) / 60:.1f} min of run time in all (longest run "
             f"{max(seconds) / 60:.1f} min). Nodes of 2 cores, one run at a time per node, longest first; "
             "the reports and Ray's own start are not included.", "",
             "| nodes | projected wall time (min) | speed-up over 1 node |", "| ---: | ---: | ---: |"]
    one = makespan(seconds, 1)
    for count in nodes:
        span = makespan(seconds, count)
        lines.append(f"| {count} | {span / 60:.1f} | {one / span:.1f}x |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = OneLineParser(prog="python -m comparisons.studies.cluster_projection",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True,
                        help="a finished run folder, partition design or benchmark folder")
    parser.add_argument("--nodes", type=int, nargs="+", default=[1, 4, 16])
    args = parser.parse_args(argv)
    if not run_seconds(args.out):
        print(f"error: {args.out} holds no finished run with a recorded wall time", file=sys.stderr)
        return 2
    text = projection_markdown(args.out, args.nodes)
    atomic_write_text(args.out / "cluster_projection.md", text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
