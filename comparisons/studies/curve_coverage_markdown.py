"""The curve coverage study's Markdown (comparisons/studies/curve_coverage.py): its set-up, the truths, A against B
and the A/A, each row's rates with Clopper-Pearson intervals."""
from __future__ import annotations

from comparisons.studies.coverage import _rate


def study_markdown(result: dict, command: str) -> str:
    shared = result["expected_shared_texts"]
    lines = [f"# Coverage of the pair test at small training sizes: {result['recipes']['A']} against "
             f"{result['recipes']['B']}", "",
             f"Command: `{command}`. Took {result['seconds']:.0f} s with {result['workers']} worker processes on "
             f"{result['machine']['cpu']} ({result['machine']['cores']} cores). Seconds per sample (all its runs, in "
             "one worker; wall, CPU): " + ", ".join(f"n = {k}: {v['wall']:.1f}, {v['cpu']:.1f}"
                                                    for k, v in result["seconds_per_sample"].items())
             + "; each size's truth: " + ", ".join(f"n = {k}: {v['wall']:.0f}, {v['cpu']:.0f}"
                                                  for k, v in result["truth_seconds"].items()) + ".",
             "", f"The tweets corpus ({result['texts']} texts, negative against the rest, AP of the negative class). "
             f"Per size, {result['samples']} samples of {result['sample_size']} texts from a region of "
             f"{result['sample_region']} (the rest beside the truth's regions), each cut into {result['folds']} "
             f"folds{'' if result.get('repeats', 1) == 1 else ' ' + str(result['repeats']) + ' times (reshuffled; the sequential rule looks after each repeat, the fixed rows use every partition)'}; in each partition {result['draws']} draws (own training subset of n labelled texts, own model "
             "seed), A and B trained on the same draws; the verdict by comparisons.stats.partition_verdicts with "
             f"both variances on the same runs, AP margin ±{result['margin']}, the pair its own family. A/A: B "
             f"against B, model seeds s and s + {result['aa_offset']} on the same draws (truth 0). Scratch encoder "
             "budget: " + ", ".join(f"{k} {v}" for k, v in result["scratch_budget"].items()) + " (the recipe's "
             "tokenizer, learning rate, pooling, dropout otherwise; validation chooses the epoch).", "",
             f"The samples of one size overlap: {result['samples']} x {result['sample_size']} texts do not fit in "
             f"the region, so two samples share {shared:.0f} texts on average ({shared / result['sample_size']:.0%} "
             "of a sample); the comparisons of one row are not independent, and the Clopper-Pearson intervals "
             "below, which treat them as independent, are somewhat too narrow.", "",
             "## The truths", "", "| size | true ΔAP (A − B) | its standard error (draws, items) | spread over draws "
             "| mean AP A, B | base rate |", "| ---: | ---: | --- | ---: | --- | ---: |"]
    for size, t in result["truths"].items():
        lines.append(f"| {size} | {t['difference']:+.4f} | {t['se']:.4f} ({t['se_draws']:.4f}, {t['se_items']:.4f}) "
                     f"| {t['spread_over_draws']:.4f} | {t['ap']['A']:.4f}, {t['ap']['B']:.4f} | {t['base_rate']:.4f} |")
    lines.append(f"\n{result['truth_draws']} draws of n texts from {result['truth_train']} truth training texts, "
                 f"tested on {result['truth_test']} fixed texts.")
    lines += ["", "## A against B", "", "| size | variance | 95% interval covers the truth | wrong-sign \"better\" "
              "(of all; of \"better\") | verdicts | mean interval width | intervals leaving [-1, 1] | mean overlap |",
              "| ---: | --- | --- | --- | --- | ---: | ---: | ---: |"]
    for row in result["summary"]:
        real = row["A-B"]
        verdicts = ", ".join(f"{k} {v}" for k, v in sorted(real["verdicts"].items()))
        lines.append(f"| {row['size']} | {row['method']} | {_rate(real['coverage'])} | {_rate(real['wrong_sign'])}; "
                     f"{_rate(real['wrong_sign_among_better'])} | {verdicts} | {real['mean_width']:.4f} "
                     f"| {real['outside_unit']} | {real['mean_training_overlap']:.4f} |")
    lines += ["", "## A/A (B against B, disjoint seeds)", "", "| size | variance | called different | interval "
              "covers 0 | verdicts | mean interval width | intervals leaving [-1, 1] |",
              "| ---: | --- | --- | --- | --- | ---: | ---: |"]
    for row in result["summary"]:
        aa = row["A/A"]
        verdicts = ", ".join(f"{k} {v}" for k, v in sorted(aa["verdicts"].items()))
        lines.append(f"| {row['size']} | {row['method']} | {_rate(aa['called_different'])} | {_rate(aa['coverage'])} "
                     f"| {verdicts} | {aa['mean_width']:.4f} | {aa['outside_unit']} |")
    lines += ["", "Intervals: Clopper-Pearson, 95%. \"overlap\" names itself nadeau_bengio on the rows where the cap "
              "does not bind (comparisons/stats/design_variance.py); the truth is an estimate (its standard error "
              "above), so a coverage near the nominal level is read against it.", ""]
    return "\n".join(lines)
