"""What a prepared plan (comparisons/plan.Prepared) writes down before its runs: a partition design's design.json,
each run folder's manifest.json, and the run specs the executors carry out (comparisons/run/spec.RunSpec)."""
from __future__ import annotations

from common.errors import UserInputError
from comparisons.plan import Prepared
from comparisons.run_folder.records import Design, Manifest


def design_record(p: Prepared, partitions, code: dict) -> "Design":
    """design.json of a partition design: its partitions, margins, contrasts (declared before the runs), sizes,
    the code hash every partition's runs share and the driver's numerics identity (each run records its own)."""
    from common.datasets import fingerprint
    from common.partitions import leaked_texts
    from common.splits import drawn_sizes, largest_train_size
    from comparisons.numerics import numerics_identity
    from comparisons.stats.sequential import SPENDING

    repeats = p.plan.max_repeats if p.plan.until_decided else p.plan.repeats
    return Design({"folds": p.plan.cv, "repeats": repeats, "seed": p.plan.split_seed, "margins": p.margins,
            "contrasts": [list(pair) for pair in p.contrasts] if p.contrasts else None,
            "contrasts_declared": "before the runs" if p.contrasts else None, "family": p.plan.family,
            "code_sha256": code["code_sha256"], "command": p.command, "plan": p.plan.to_dict(),
            "variants": p.variants, "seeds": list(range(p.plan.seeds)), "data_sha256": fingerprint(p.data),
            "train_sizes": [size or "all" for size in p.train_sizes], "label_budget": p.plan.label_budget,
            "draws": p.plan.draws, "seeding": p.plan.seeding, "drawn_sizes": drawn_sizes(p.train_sizes, p.plan.draws, min(
                largest_train_size(part.split, p.plan.label_budget) for part in partitions) if partitions else 0,
                p.plan.seeding),
            "numerics": numerics_identity(p.plan.threads),
            **({"power_plan": power_plan_record(p.plan.power_plan)} if p.plan.power_plan else {}),
            **({"family_graph": family_graph_record(p)} if p.plan.family == "natural-order" and p.contrasts else {}),
            "sequential": {"max_repeats": p.plan.max_repeats, "budget_minutes": p.plan.budget_minutes,
                           "spending": SPENDING, "looks": [], "stopped": None} if p.plan.until_decided else None,
            "partitions": [{"name": part.name, "sizes": part.split.sizes(), "sha256": part.split.sha256,
                            "test_texts_in_training": leaked_texts(p.data, part.split),
                            "seeds": partition_seed_record(p, part.split, index)}
                           for index, part in enumerate(partitions)]})


def partition_seed_record(p: Prepared, split, partition_index: int) -> dict:
    """{size label: [{"model_seed", "subset_seed"}]}: the training randomness one partition's runs use, every variant
    alike (the pairing); subset_seed None where the run learns from the whole labelled part."""
    from common.splits import seed_label, size_label, subset_seed

    draws = drawn_seeds(p, split, partition_index)
    return {size_label(n): [{"model_seed": s, "subset_seed": seed_label(subset_seed(split.seed, s)) if n in draws else None}
                            for s in model_seeds(p, n, draws, partition_index)] for n in p.train_sizes}


def model_seeds(p: Prepared, size, draws: dict, partition_index: int | None) -> list[int]:
    """The model seeds of one partition's runs at one training size: its draws' at a drawn size, else its own
    (common/splits.partition_seeds)."""
    from common.splits import partition_seeds

    return list(draws[size]) if size in draws else partition_seeds(partition_index, p.plan.seeds, p.plan.seeding)

def family_graph_record(p: Prepared) -> dict:
    """The natural-order graph a curve will be tested in, fixed before its runs: the chains its power plan found
    unreachable dropped (each node with why), the rest with the weights and transitions they then hold
    (comparisons/stats/graphical.reduced_graph). Without a power plan nothing is dropped."""
    from common.splits import size_label
    from comparisons.plan import read_power_plan
    from comparisons.stats.graphical import curve_graph, graph_record, node_key, reduced_graph

    pairs = [tuple(pair) for pair in p.contrasts]
    sizes = [size_label(n) for n in p.train_sizes]  # increasing, "all" last (the plan checks the order)
    chains = read_power_plan(p.plan.power_plan).dropped_chains if p.plan.power_plan else []
    why = {(chain["contrast"], chain["kind"]): chain["why"] for chain in chains}
    declared = {f"{a} − {b}" for a, b in pairs}
    unknown = sorted({contrast for contrast, _ in why if contrast not in declared})
    if unknown:  # the plan's chances assumed these drops: a run of other contrasts cannot take them
        raise UserInputError(f"--power-plan {p.plan.power_plan} drops chains of {', '.join(unknown)}, not a declared "
                             f"contrast of this run ({', '.join(sorted(declared))}); declare the plan's contrasts as "
                             "the plan names them, or make a plan for these")
    full = curve_graph(len(pairs), len(sizes))
    label = {node: node_key(pairs[node[0]], node[1], sizes[node[2]]) for node in full.nodes}
    gone = [node for node in full.nodes if (f"{pairs[node[0]][0]} − {pairs[node[0]][1]}", node[1]) in why]
    used = reduced_graph(full, gone)
    return {"dropped": [{"node": list(label[n]), "why": why[(f"{pairs[n[0]][0]} − {pairs[n[0]][1]}", n[1])]}
                        for n in gone],
            **graph_record(used, [" ".join(label[n]) for n in used.nodes])}


def power_plan_record(path: str | None) -> dict | None:
    """What the power plan that chose the design expected (its JSON as read, its name and hash), or None."""
    if path is None:
        return None
    import hashlib
    from pathlib import Path

    from comparisons.plan import read_power_plan

    return {"file": Path(path).name, "sha256": hashlib.sha256(Path(path).read_bytes()).hexdigest(),
            **read_power_plan(path)}


def manifest_record(p: Prepared, split, code: dict, duplicates: dict, partition_index: int | None = None) -> Manifest:
    """manifest.json of a run folder: the command and plan, code, library versions, machine, numerics identity,
    each variant's backend, parameters and plugin identity, the data and its split, sizes, margins, precisions."""
    import time

    from backends.base import is_plugin, resolve_variant
    from backends.plugins import plugin_identity
    from common.datasets import fingerprint
    from comparisons.comparability import described_commit, library_versions
    from comparisons.numerics import numerics_identity
    from comparisons.run.measure import machine_description, thread_environment
    from comparisons.run.profiles import variant_overrides

    def variant_record(variant: str) -> dict:
        backend, params = resolve_variant(variant)
        return {"backend": backend, "params": {**params, **variant_overrides(p.plan.profile, variant)},
                "plugin": plugin_identity(backend.split(":")[0]) if is_plugin(backend) else None}

    data = p.data
    return Manifest({
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "command": p.command, "plan": p.plan.to_dict(),
        "git_commit": described_commit(code), **code, "versions": library_versions(), "machine": machine_description(),
        "numerics": numerics_identity(p.plan.threads),  # read without any framework (comparisons/numerics.py)
        "threads": p.plan.threads, "thread_environment": thread_environment(p.plan.threads), "device": p.plan.device,
        "profile": p.plan.profile, "seeds": model_seeds(p, None, {}, partition_index), "timeout_s": p.timeout,
        "variants": {v: variant_record(v) for v in p.variants},
        "hf_model": p.plan.hf_model,
        "data": {"spec": p.spec.to_dict(), "sha256": fingerprint(data), "rows": len(data),
                 "class_names": list(data.class_names), "positive_index": data.positive_index,
                 "duplicates": duplicates,
                 "corpus": {k: v for k, v in (data.origin or {}).items() if k != "sample"} or None,
                 "sample": (data.origin or {}).get("sample")},  # --limit-total: the stratified cap, if any
        "split": {"seed": split.seed, "sizes": split.sizes(), "sha256": split.sha256},
        "train_sizes": [size or "all" for size in p.train_sizes],
        "label_budget": p.plan.label_budget,
        "margins": p.margins,
        "contrasts": [list(pair) for pair in p.contrasts] if p.contrasts else None,
        "serve": p.serve.split(","),
        "quality_only": p.plan.quality_only,  # no latency, throughput, cold start, serving memory
        "precision_requested": p.plan.precision, "precision": {v: p.precisions[v] for v in p.variants},
    })

def drawn_seeds(p: Prepared, split, partition_index: int | None) -> dict:
    """{training size: the model seeds of its draws} of one partition (common/splits.drawn_sizes; none on the single
    split, partition_index None)."""
    from common.splits import draw_seeds, drawn_sizes, largest_train_size

    if partition_index is None:
        return {}
    largest = largest_train_size(split, p.plan.label_budget)
    return {n: draw_seeds(partition_index, p.plan.draws)
            for n in drawn_sizes(p.train_sizes, p.plan.draws, largest, p.plan.seeding)}


def run_specs(p: Prepared, split, manifest: Manifest, partition_index: int | None = None) -> list:
    """The plan's runs in a folder, in order: every training size, variant and seed (comparisons/run/spec.py); at a
    partition's drawn sizes the seeds are its draws' model seeds, each with its own subset seed."""
    from common.splits import subset_seed
    from comparisons.run.spec import RunSpec

    from comparisons.plan import runs_at, size_caps

    draws = drawn_seeds(p, split, partition_index)
    seeds = {n: model_seeds(p, n, draws, partition_index) for n in p.train_sizes}
    caps = size_caps(p.plan)  # --up-to: a variant run only at the sizes it can afford
    return [RunSpec(variant=v, seed=s, profile=p.plan.profile, threads=p.plan.threads, device=p.plan.device,
                    timeout_s=p.timeout, data=p.spec, data_sha256=manifest.data_sha256,
                    split_seed=split.seed, split_sha256=split.sha256, hf_model=p.plan.hf_model,
                    executor=p.plan.executor, code_commit=manifest.code_commit, code_dirty=manifest.code_dirty,
                    code_sha256=manifest.code_sha256, serve=p.serve, measure_costs=not p.plan.quality_only,
                    train_size=n, label_budget=p.plan.label_budget, precision=p.precisions[v],
                    subset_seed=subset_seed(split.seed, s) if n in draws else None)
            for n in p.train_sizes for v in p.variants for s in seeds[n] if runs_at(caps, v, n)]
