"""Backends from outside the package (backends/plugins.py) and the importable contract (backends/contract.py):
a backend in a temporary folder on the path runs, is reported and reruns when its source changes; bad ones are
refused in one line before any run; the contract rejects a constant predictor and a copy that answers differently."""
import importlib
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from backends.base import Backend, ParamCount
from backends.contract import ContractError, check_backend
from backends.plugins import parse_spec, split_backends
from backends.tfidf_logreg import TfidfLogReg
from tests.test_cli import run_main

NAIVE_BAYES = '''
from pathlib import Path
import joblib, numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.naive_bayes import ComplementNB
from sklearn.pipeline import Pipeline
from backends.base import Backend, ParamCount

class NaiveBayes(Backend):
    name = "naive_bayes"

    def __init__(self, alpha: float = 0.3, seed: int = 0):
        self.alpha = alpha
        self.seed = seed

    def fit(self, train, valid):
        self.pipeline_ = Pipeline([("tfidf", TfidfVectorizer(sublinear_tf=True)),
                                   ("nb", ComplementNB(alpha=self.alpha))]).fit(train.texts, train.labels)
        self.classes_ = np.arange(train.n_classes)
        return self

    def predict_proba(self, texts):
        self._check_fitted()
        proba = np.zeros((len(texts), len(self.classes_)))
        proba[:, self.pipeline_.classes_] = self.pipeline_.predict_proba(list(texts))
        return proba

    def param_count(self):
        self._check_fitted()
        n = int(self.pipeline_.named_steps["nb"].feature_log_prob_.size)
        return ParamCount(total=n, trainable=n)

    def save(self, directory):
        self._check_fitted()
        path = Path(directory) / "naive_bayes.joblib"
        path.parent.mkdir(parents=True, exist_ok=True)
        joblib.dump(self.pipeline_, path)
        return path

    @classmethod
    def load(cls, directory, device=None):
        backend = cls()
        backend.pipeline_ = joblib.load(Path(directory) / "naive_bayes.joblib")
        backend.classes_ = np.arange(int(backend.pipeline_.classes_.max()) + 1)
        return backend
'''


def outside_package(folder: Path, extra: str = "") -> dict:
    """A package `outside_nb` in `folder` (not the project's), and the environment that puts it on the path."""
    package = folder / "outside_nb"
    package.mkdir(parents=True, exist_ok=True)
    (package / "__init__.py").write_text(NAIVE_BAYES + extra)
    return {"PYTHONPATH": str(folder)}


def run_with_package(capfd, env: dict, *args) -> subprocess.CompletedProcess:
    """tests/test_cli.run_main with the package's folder where a shell's PYTHONPATH puts it: on this process's
    sys.path for the orchestrator that plans the runs, and on PYTHONPATH (`env`) for its workers; `outside_nb` is
    imported afresh for the command and forgotten after it, as by a process of its own."""
    folder = env["PYTHONPATH"]
    sys.modules.pop("outside_nb", None)  # another test's package of that name (each lives in its own tmp_path)
    sys.path.insert(0, folder)
    importlib.invalidate_caches()
    try:
        return run_main(capfd, *args, env=env)
    finally:
        sys.path.remove(folder)
        sys.modules.pop("outside_nb", None)


SMALL = ["run", "--profile", "tiny", "--limit-per-class", "60", "--threads", "1", "--quality-only"]
SPEC = "outside_nb:NaiveBayes(alpha=0.5)"


def test_specs_parse_with_parameters_and_lists_split_outside_parentheses():
    assert parse_spec("pkg.mod:Class(alpha=0.5,name=x,flag=true)") == ("pkg.mod", "Class",
                                                                       {"alpha": 0.5, "name": "x", "flag": True})
    assert parse_spec("tfidf_logreg") is None
    assert split_backends("tfidf_logreg, a.b:C(x=1,y=2),hf_bert:full") == ["tfidf_logreg", "a.b:C(x=1,y=2)", "hf_bert:full"]


def test_a_registered_entry_point_name_resolves_to_its_module_and_class(monkeypatch):
    from backends import plugins
    from backends.base import resolve_variant

    monkeypatch.setattr(plugins, "registered", lambda: {"nb": "outside_nb:NaiveBayes(alpha=0.2)"})
    assert resolve_variant("nb") == ("outside_nb:NaiveBayes", {"alpha": 0.2})


def test_an_outside_backend_runs_is_reported_and_reruns_when_its_source_changes(tmp_path, capfd):
    env = outside_package(tmp_path / "plugins")
    out = tmp_path / "run"
    first = run_with_package(capfd, env, *SMALL, "--backends", f"tfidf_logreg,{SPEC}", "--out", str(out))
    assert first.returncode == 0, first.stderr[-2000:]
    summary = pd.read_csv(out / "summary.csv")
    assert SPEC in set(summary["variant"]) and (summary["status"] == "ok").all() and summary["average_precision"].notna().all()
    verdicts = pd.read_csv(out / "verdicts.csv")
    assert {(a, b) for a, b in zip(verdicts["variant_a"], verdicts["variant_b"])} == {(SPEC, "tfidf_logreg")}
    record = json.loads(next((out / "runs").glob("outside_nb*seed0.json")).read_text())
    assert record["status"] == "ok" and record["plugin"]["module"] == "outside_nb" and record["plugin"]["source_sha256"]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["variants"][SPEC]["plugin"] == record["plugin"] and manifest["variants"][SPEC]["params"] == {"alpha": 0.5}
    same = run_with_package(capfd, env, *SMALL, "--backends", f"tfidf_logreg,{SPEC}", "--out", str(out))
    assert same.returncode == 0 and same.stderr.count("finished earlier, kept") == 2
    outside_package(tmp_path / "plugins", extra="\n# a changed plugin\n")
    changed = run_with_package(capfd, env, *SMALL, "--backends", f"tfidf_logreg,{SPEC}", "--out", str(out))
    assert changed.returncode == 0 and changed.stderr.count("finished earlier, kept") == 1, changed.stderr[-2000:]


@pytest.mark.parametrize("spec, message", [
    ("no_such_module:Thing", "backend no_such_module:Thing: cannot import module no_such_module"),
    ("outside_nb:Missing", "backend outside_nb:Missing: module outside_nb has no class Missing"),
    ("outside_nb:Pipeline", "backend outside_nb:Pipeline: Pipeline is not a backend class"),
    ("outside_nb:Half", "backend outside_nb:Half: Half lacks load, param_count, predict_proba, save"),
    ("outside_nb:NoDevice", "backend outside_nb:NoDevice: NoDevice.load must take the serving device"),
])
def test_a_bad_outside_backend_is_refused_in_one_line_before_any_run(tmp_path, spec, message, monkeypatch, capsys):
    import sys

    from comparisons.cli import main

    env = outside_package(tmp_path / "plugins", extra=textwrap.dedent('''
        class Half(Backend):
            def fit(self, train, valid):
                return self

        class NoDevice(NaiveBayes):  # load without device: it would pass the check and fail at the serving probe
            @classmethod
            def load(cls, directory):
                return super().load(directory)
    '''))
    monkeypatch.syspath_prepend(env["PYTHONPATH"])  # in this process: the refusal comes before any worker
    monkeypatch.delitem(sys.modules, "outside_nb", raising=False)
    assert main([*SMALL, "--backends", f"tfidf_logreg,{spec}", "--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {message}") and err.strip().count("\n") == 0, err
    assert not (tmp_path / "run").exists()
    monkeypatch.delitem(sys.modules, "outside_nb", raising=False)


def test_an_outside_backend_that_raises_in_fit_is_a_failed_row(tmp_path, capfd):
    env = outside_package(tmp_path / "plugins", extra=textwrap.dedent('''
        class Broken(NaiveBayes):
            def fit(self, train, valid):
                raise RuntimeError("the plugin's own failure")
    '''))
    result = run_with_package(capfd, env, *SMALL, "--backends", "outside_nb:Broken", "--out", str(tmp_path / "run"))
    assert result.returncode == 1, result.stderr[-2000:]
    record = json.loads(next((tmp_path / "run" / "runs").glob("outside_nb*seed0.json")).read_text())
    assert record["status"] == "failed" and "RuntimeError" in record["reason"]


class Constant(Backend):
    """Answers one half for every text: must fail the contract."""

    def __init__(self, seed: int = 0):
        self.seed = seed

    def fit(self, train, valid):
        self.classes_ = np.arange(train.n_classes)
        return self

    def predict_proba(self, texts):
        self._check_fitted()
        return np.full((len(texts), len(self.classes_)), 1 / len(self.classes_))

    def param_count(self):
        self._check_fitted()
        return ParamCount(1, 1)

    def save(self, directory):
        Path(directory).mkdir(parents=True, exist_ok=True)
        (Path(directory) / "constant.txt").write_text("0.5")
        return Path(directory) / "constant.txt"

    @classmethod
    def load(cls, directory, device=None):
        backend = cls()
        backend.classes_ = np.arange(2)
        return backend


class Forgetful(TfidfLogReg):
    """Its loaded copy answers the other way round: must fail the contract's round trip."""

    @classmethod
    def load(cls, directory, device=None):
        backend = super().load(directory, device)
        original = backend.predict_proba
        backend.predict_proba = lambda texts: original(texts)[:, ::-1]
        return backend


def test_the_contract_rejects_a_constant_predictor_and_a_copy_that_answers_differently(tiny_splits, tmp_path):
    check_backend(lambda seed: TfidfLogReg(seed=seed, min_df=1), tiny_splits, tmp_path / "good")  # passes
    with pytest.raises(ContractError, match="must depend on the input"):
        check_backend(lambda seed: Constant(seed=seed), tiny_splits, tmp_path / "constant")
    with pytest.raises(ContractError, match="the copy load reads back must give the same probabilities"):
        check_backend(lambda seed: Forgetful(seed=seed, min_df=1), tiny_splits, tmp_path / "forgetful")
