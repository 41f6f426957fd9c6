"""Backends from outside the package: a `module:Class` variant spec, or a name an installed
distribution registers in the entry-point group `transformer_compare.backends`.

    --backends tfidf_logreg,my_backends.nb:NaiveBayes             # a class on the path (PYTHONPATH)
    --backends "my_backends.nb:NaiveBayes(alpha=0.5,ngrams=2)"    # with constructor parameters (JSON values)
    --backends nb                                                  # registered: [project.entry-points."transformer_compare.backends"] nb = "my_backends.nb:NaiveBayes"

The spec travels in the run spec as the variant's name and is resolved where the run happens (the
worker imports the module, as it imports a built-in backend's framework; a Ray job uploads the
plugin's package beside the checkout). The driver imports it once before any run starts, to refuse a
module that cannot be imported, a class that is not a backend, or one that lacks a method of the
contract, in one line naming the module, the class and what is missing. The plugin's identity (its
distribution and version when installed, and a hash of its source files) is recorded in the manifest
and in every run record: a changed plugin is not resumed as the same run.
"""
from __future__ import annotations

import hashlib
import importlib
import importlib.metadata
import importlib.util
import inspect
import json
import re
from pathlib import Path
from typing import Any

from common.errors import UserInputError

ENTRY_POINT_GROUP = "transformer_compare.backends"
SPEC = re.compile(r"^(?P<module>[A-Za-z_][\w.]*):(?P<cls>[A-Za-z_]\w*)(?:\((?P<params>.*)\))?$")
CONTRACT = ("fit", "predict_proba", "param_count", "save", "load")


def registered() -> dict[str, str]:
    """Entry-point name -> 'module:Class' of every installed distribution's registered backend."""
    return {ep.name: ep.value for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)}


def _value(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def parse_spec(variant: str) -> tuple[str, str, dict[str, Any]] | None:
    """'pkg.mod:Class(a=1,b=x)' -> ('pkg.mod', 'Class', {'a': 1, 'b': 'x'}); a registered name through its entry
    point; None when the name is neither."""
    spec = registered().get(variant, variant)
    found = SPEC.match(spec)
    if not found:
        return None
    params: dict[str, Any] = {}
    for item in filter(None, (part.strip() for part in (found["params"] or "").split(","))):
        key, equals, value = item.partition("=")
        if not equals or not key.strip().isidentifier():
            raise UserInputError(f"backend {variant!r}: parameter {item!r} is not NAME=VALUE; e.g. "
                                 f"{found['module']}:{found['cls']}(alpha=0.5)")
        params[key.strip()] = _value(value.strip())
    return found["module"], found["cls"], params


def split_backends(value: str) -> list[str]:
    """--backends LIST split at the commas outside a spec's parentheses."""
    names, depth, current = [], 0, ""
    for char in value:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            names.append(current.strip())
            current = ""
        else:
            current += char
    return [name for name in [*names, current.strip()] if name]


def plugin_class(module: str, name: str, base: type):
    """Import the module and return its backend class (a subclass of `base`, backends.base.Backend, passed in so
    that this module does not import backends.base back), or a one-line UserInputError saying what is wrong."""
    Backend = base  # noqa: N806
    try:
        loaded = importlib.import_module(module)
    except Exception as exc:  # ModuleNotFoundError, or the module's own error while importing
        raise UserInputError(f"backend {module}:{name}: cannot import module {module} "
                             f"({exc.__class__.__name__}: {str(exc).splitlines()[0] if str(exc) else ''}); put its "
                             "folder on PYTHONPATH or install its distribution") from None
    cls = getattr(loaded, name, None)
    if cls is None:
        raise UserInputError(f"backend {module}:{name}: module {module} has no class {name}")
    if not (isinstance(cls, type) and issubclass(cls, Backend)):
        raise UserInputError(f"backend {module}:{name}: {name} is not a backend class (a subclass of "
                             "backends.base.Backend; docs/adding_a_backend.md)")
    missing = sorted(set(getattr(cls, "__abstractmethods__", ())) | {m for m in CONTRACT if not hasattr(cls, m)})
    if missing:
        raise UserInputError(f"backend {module}:{name}: {name} lacks {', '.join(missing)} of the backend contract "
                             "(fit, predict_proba, param_count, save and the classmethod load)")
    if not takes_device(cls.load):
        raise UserInputError(f"backend {module}:{name}: {name}.load must take the serving device, "
                             "load(directory, device=None) (the serving probe loads the saved model on --device; "
                             "docs/adding_a_backend.md)")
    return cls


def takes_device(load) -> bool:
    """Whether a backend's load accepts `device=` (a parameter of that name or **kwargs)."""
    try:
        parameters = inspect.signature(load).parameters.values()
    except (TypeError, ValueError):  # a builtin without a signature: let the call say
        return True
    return any(p.name == "device" and p.kind != p.POSITIONAL_ONLY or p.kind == p.VAR_KEYWORD for p in parameters)


def source_files(module: str) -> list[Path]:
    """The plugin's source files: its top-level package's .py files, or the module's one file."""
    top = module.split(".")[0]
    spec = importlib.util.find_spec(top)
    if spec is None:
        return []
    if spec.submodule_search_locations:  # a package (a namespace package too: no __init__, no origin)
        return sorted(p for folder in spec.submodule_search_locations for p in Path(folder).rglob("*.py")
                      if "__pycache__" not in p.parts)
    return [] if spec.origin in (None, "built-in", "frozen") else [Path(spec.origin)]


def package_folder(module: str) -> Path | None:
    """The folder a Ray job uploads for the plugin (its top-level package), None for a single-file module."""
    spec = importlib.util.find_spec(module.split(".")[0])
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def plugin_identity(module: str) -> dict[str, Any]:
    """What makes a plugin's runs comparable: its distribution and version (when installed) and its sources' hash."""
    files = source_files(module)
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    top = module.split(".")[0]
    distributions = importlib.metadata.packages_distributions().get(top) or []
    version = None
    if distributions:
        try:
            version = importlib.metadata.version(distributions[0])
        except importlib.metadata.PackageNotFoundError:
            version = None
    return {"module": module, "distribution": distributions[0] if distributions else None, "version": version,
            "source_sha256": digest.hexdigest() if files else None}
