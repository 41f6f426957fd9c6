"""Which executor runs a plan (`--executor local|ray`), checked in one place: the local one (comparisons/run/executors.py)
or Ray (comparisons/run/ray_executor.py, imported only when asked for)."""
from __future__ import annotations

import importlib.util

from common.errors import UserInputError
from comparisons.run.executors import Executor, LocalExecutor

EXECUTORS = ("local", "ray")


def open_executor(name: str, ray_address: str | None, max_concurrent: int | None, inputs_bytes: int,
                  variants: list[str] | None = None, warm: bool = False) -> Executor:
    """The executor the command line asked for, checked (and Ray started or joined); `warm`: the local executor
    keeps one worker a backend (a quality-only design; Ray runs a task a run either way)."""
    if name not in EXECUTORS:
        raise UserInputError(f"unknown executor {name!r}; choose from {', '.join(EXECUTORS)}")
    if max_concurrent is not None and max_concurrent < 1:
        raise UserInputError("--max-concurrent must be at least 1")
    if name == "local":
        if ray_address is not None or max_concurrent is not None:
            raise UserInputError("--ray-address and --max-concurrent need --executor ray "
                                 "(the local executor runs one worker at a time)")
        return LocalExecutor(warm)
    if importlib.util.find_spec("ray") is None:
        raise UserInputError("--executor ray needs the ray package: pip install -c constraints.txt 'ray[default]'")
    from comparisons.run.ray_executor import RayExecutor, plugin_packages

    return RayExecutor(ray_address, max_concurrent, inputs_bytes, plugin_packages(variants or []))
