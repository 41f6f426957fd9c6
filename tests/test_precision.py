"""--precision auto|fp32|bf16: the choice per variant with the hardware's capability faked both
ways, the one-line refusals, and bf16 runs never resumed or averaged with fp32 ones."""
from __future__ import annotations

import json

import numpy as np
import pytest

from backends.precision import choose, cpu_bf16_native
from common.errors import UserInputError
from comparisons.run import precision as run_precision
from comparisons.run.precision import plan_precisions
from comparisons.run.runner import finished
from comparisons.run_folder import select_runs
from tests.test_outputs import PLAN, record

NATIVE = {"cuda": False, "cuda_bf16": False, "cpu_bf16": True}
EMULATED = {"cuda": False, "cuda_bf16": False, "cpu_bf16": False}
VARIANTS = ["tfidf_logreg", "torch_scratch", "keras_layers", "hf_bert:frozen", "hf_bert:full"]


def test_auto_picks_bf16_only_where_the_hardware_multiplies_it_and_only_for_the_backends_it_speeds():
    assert plan_precisions("auto", VARIANTS, "auto", NATIVE) == {
        "tfidf_logreg": "fp32", "torch_scratch": "fp32", "keras_layers": "fp32", "hf_bert:frozen": "bf16",
        "hf_bert:full": "bf16"}
    assert set(plan_precisions("auto", VARIANTS, "auto", EMULATED).values()) == {"fp32"}
    assert set(plan_precisions("fp32", VARIANTS, "auto", NATIVE).values()) == {"fp32"}
    bf16 = plan_precisions("bf16", VARIANTS, "cpu", NATIVE)
    assert bf16["keras_layers"] == bf16["torch_scratch"] == "bf16" and bf16["tfidf_logreg"] == "fp32", \
        "bf16 wherever a backend has a bf16 path"
    # the device the runs will use decides: a GPU with bf16 and a CPU without, and the other way round
    gpu = {"cuda": True, "cuda_bf16": True, "cpu_bf16": False}
    assert plan_precisions("auto", ["hf_bert:full"], "auto", gpu) == {"hf_bert:full": "bf16"}
    assert plan_precisions("auto", ["hf_bert:full"], "cpu", gpu) == {"hf_bert:full": "fp32"}
    assert plan_precisions("auto", ["hf_bert:full"], "cuda", {**gpu, "cuda_bf16": False, "cpu_bf16": True}) == {
        "hf_bert:full": "fp32"}


def test_bf16_without_native_hardware_and_unknown_precisions_are_refused():
    with pytest.raises(UserInputError, match="does not multiply bf16 natively"):
        choose("bf16", "hf_bert", native_bf16=False)
    with pytest.raises(UserInputError, match="'fp16' is not one of auto, fp32, bf16"):
        plan_precisions("fp16", ["tfidf_logreg"], "auto", NATIVE)
    assert plan_precisions("bf16", ["tfidf_logreg"], "auto", EMULATED) == {"tfidf_logreg": "fp32"}  # nothing to refuse


def test_the_capability_probe_reports_what_pytorch_sees_without_torch_in_this_process():
    import sys

    had_torch = "torch" in sys.modules
    run_precision.hardware_capability.cache_clear()
    found = run_precision.hardware_capability()
    assert set(found) == {"cuda", "cuda_bf16", "cpu_bf16"} and all(isinstance(v, bool) for v in found.values())
    assert ("torch" in sys.modules) == had_torch, "the probe runs in a subprocess"
    assert found["cpu_bf16"] == cpu_bf16_native()  # the same rule, read in this process for the comparison


@pytest.mark.parametrize("args, message", [
    (["--precision", "bf16"], "--precision bf16: this machine does not multiply bf16 natively"),
    (["--precision", "fp16"], "--precision 'fp16' is not one of auto, fp32, bf16"),
])
def test_cli_refusals_are_one_line_exit_2_and_write_nothing(tmp_path, capsys, monkeypatch, args, message):
    from comparisons.cli import main

    monkeypatch.setattr(run_precision, "hardware_capability", lambda: EMULATED)
    out = tmp_path / "out"
    assert main(["run", "--backends", "tfidf_logreg,hf_bert:full", *args, "--profile", "tiny", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0] and not out.exists()


def test_building_a_plan_probes_no_hardware(monkeypatch):
    """Plan construction only checks its fields: the bf16 probe, a process that imports torch, is
    prepare's; a bad precision word is still refused at once."""
    from comparisons.plan import Plan

    def probe():
        raise AssertionError("building a Plan probed the hardware")

    monkeypatch.setattr(run_precision, "hardware_capability", probe)
    Plan(backends=("tfidf_logreg", "hf_bert:full"), precision="bf16")
    with pytest.raises(ValueError, match="'fp16' is not one of"):
        Plan(backends=("tfidf_logreg",), precision="fp16")


def finished_fp32_folder(tmp_path):
    """A run folder holding one finished fp32 run of torch_scratch (its record and predictions)."""
    out = tmp_path / "run"
    (out / "runs").mkdir(parents=True)
    (out / "predictions").mkdir()
    done = record(variant="torch_scratch", precision="fp32", serve_paths=["native"], latency_ms_b1_p50=1.0)
    (out / "runs" / "torch_scratch__seed0.json").write_text(json.dumps(done))
    np.savez(out / "predictions" / "torch_scratch__seed0.npz", proba=np.zeros((1, 2)))
    return out, done


def test_fp32_runs_are_not_resumed_as_bf16_nor_averaged_with_them(tmp_path):
    from comparisons.run.spec import RunSpec
    from common.datasets import DataSpec

    out, done = finished_fp32_folder(tmp_path)
    plan = {**PLAN, "variants": {"torch_scratch": {}}}
    spec = RunSpec(variant="torch_scratch", seed=0, profile="fast", threads=2, device="auto", timeout_s=60,
                   data=DataSpec(), data_sha256="d" * 64, split_seed=0, split_sha256="s" * 64, precision="fp32")
    assert finished(out, spec, "s" * 64, "d" * 64, {**plan, "precision": {"torch_scratch": "fp32"}})
    as_bf16 = {**plan, "precision": {"torch_scratch": "bf16"}}
    assert not finished(out, spec, "s" * 64, "d" * 64, as_bf16), "an fp32 run is rerun when the plan is bf16"
    bf16_run = {**done, "seed": 1, "precision": "bf16"}
    kept, left_out = select_runs([done, bf16_run], {**as_bf16, "seeds": [0, 1]})
    assert kept == [bf16_run] and left_out == ["torch_scratch__seed0 (precision fp32, plan bf16)"]
    assert spec.record_identity()["precision"] == "fp32"
