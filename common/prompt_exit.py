"""End a command-line process as soon as its work is done, without the interpreter's module teardown.

A process that has imported torch, TensorFlow or transformers spends 0.6-1.4 s after its last line of work
tearing those modules down (measured on this project's 2-core host: 0.65 s with torch, 1.05 s with TensorFlow,
1.35 s with transformers, 0.3 s with scikit-learn and pandas alone). Every run pays it twice (the worker and its
fresh serving process), and the driver once. `exit_promptly` does what a normal exit does that anyone can observe,
in the same order, and skips the rest:

1. waits for the process's non-daemon threads, as the interpreter does before it exits;
2. runs the atexit handlers (logging's flush, temporary folders' clean-up, Ray's and MLflow's shutdown hooks);
3. flushes standard output and standard error;
4. ends the process with the exit code (os._exit), leaving the memory to the operating system.

Only a `__main__` calls it: code that imports these modules (the tests, the Python API, a notebook) keeps its own
interpreter and its own exit. Under a profiler or a tracer (`python -m cProfile -m comparisons ...`, a debugger,
coverage) it exits the ordinary way, so that the tool can write what it gathered after the program returns.
"""
from __future__ import annotations

import atexit
import os
import sys
import threading
from typing import NoReturn


def observed() -> bool:
    """A profiler or tracer is watching this process: it writes what it gathered after the program returns."""
    return sys.getprofile() is not None or sys.gettrace() is not None


def exit_promptly(code: int | None) -> NoReturn:
    """Exit with `code` (None: 0) once the threads, the atexit handlers and the standard streams are done."""
    if observed():
        raise SystemExit(code)
    for thread in threading.enumerate():
        if thread is not threading.main_thread() and not thread.daemon:
            thread.join()
    atexit._run_exitfuncs()  # CPython's own call at exit; the handlers are not run a second time by os._exit
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (AttributeError, OSError, ValueError):  # closed or replaced streams have nothing left to write
            pass
    os._exit(0 if code is None else int(code))
