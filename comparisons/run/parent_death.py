"""A child process that must not outlive the process that started it (Linux: PR_SET_PDEATHSIG).

The run worker (comparisons/run/worker.py) and the serving probe it starts (comparisons/run/measure.py)
each call `die_with_parent()` first thing. A Ray worker killed by a cancel or by Ray's memory
monitor does not end its children, and a worker killed by a timeout does not end its probe; this
does. Elsewhere (not Linux) the executor's process-group kill is the only guard.
"""
from __future__ import annotations

import os
import sys

PARENT_VARIABLE = "COMPARISONS_PARENT_PID"  # set by the executor: the process this worker must not outlive


def die_with_parent() -> None:
    """Ask Linux to kill this process when the process that started it dies."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes
    import signal

    PR_SET_PDEATHSIG = 1
    parent = int(os.environ.pop(PARENT_VARIABLE, "") or os.getppid())  # popped: not for our own children
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # the parent died before the request took effect (during our imports)
        os._exit(1)
