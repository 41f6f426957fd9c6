# %% [markdown]
# # The suite from Python: a plan, a run, DataFrames
#
# `comparisons.api` runs what `transformer-compare run` runs, in this process, and hands back the tables as
# pandas DataFrames (docs/api.md). The folder stays the store: run the cell again and it resumes.

# %%
from pathlib import Path

from comparisons import api

OUT = globals().get("OUT", "runs/api_example")  # the tests set OUT and QUICK
QUICK = globals().get("QUICK", False)
plan = api.Plan(backends=("tfidf_logreg", "torch_scratch"), seeds=1, threads=1,
                profile="tiny" if QUICK else "fast", limit_per_class=60 if QUICK else None,
                quality_only=QUICK, out=OUT)  # QUICK (the tests): no latency or memory measured
print(plan.to_argv())  # the same plan as a command line

# %% [markdown]
# A plan is checked when it is built: a field the command line would refuse raises ValueError with the
# command line's own one-line message.

# %%
try:
    api.Plan(seeds=0)
except ValueError as refusal:
    print("refused:", refusal)

# %%
result = api.run(plan, quiet=True)
print("exit code", result.exit_code, "folder", Path(result.folder).name)
result.summary[["variant", "seed", "status", "average_precision", "macro_f1"]]

# %% [markdown]
# Each pair of variants gets one verdict (A better, B better, equivalent within the declared margin, or
# inconclusive), with its interval; on one split the interval covers seeds and test texts, not the texts
# trained on (for that, `cv=5`).

# %%
verdicts = result.verdicts
print(verdicts.loc[verdicts["metric"] == "average_precision",
                   ["variant_a", "variant_b", "difference", "ci_low", "ci_high", "verdict"]].to_string(index=False))
