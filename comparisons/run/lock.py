"""One orchestrator per run folder: a lock file held by a live process.

Two `comparisons run` on one folder would run the same runs and overwrite each other's files.
The lock is `fcntl.flock` on `<run folder>/.run.lock`, a file that holds the owner's process id:

- the kernel holds the lock for the owner's lifetime and drops it when the owner dies, however
  it dies (even SIGKILL), so a lock left by a dead process is stale and simply taken over;
- a second orchestrator refuses at once with one line naming the holder's process id (exit 2,
  through `UserInputError`);
- the owner removes the file when it is done.

Linux and macOS (flock); a folder on a network file system without flock support gets a clear error.
"""
from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path

from common.errors import UserInputError

LOCK_NAME = ".run.lock"


class RunFolderBusy(UserInputError):
    """Another live process holds the run folder's lock."""


class RunFolderLock:
    """`with RunFolderLock(out):` holds the run folder for this process, or raises RunFolderBusy."""

    def __init__(self, folder: Path):
        self.path = Path(folder) / LOCK_NAME
        self._file = None

    def acquire(self) -> "RunFolderLock":
        if self._file is not None:  # held already
            return self
        while True:
            handle = open(self.path, "a+")
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = _holder(self.path)
                handle.close()
                raise RunFolderBusy(
                    f"another `comparisons run` (process {holder}) is using {self.path.parent}; "
                    "wait for it to finish or stop it, or choose another --out") from None
            except OSError as exc:
                handle.close()
                raise UserInputError(f"cannot lock the run folder {self.path.parent} ({exc.strerror}); "
                                     "choose an --out on a local disk") from None
            if _same_file(handle, self.path):  # else the owner removed it as we opened it: try again
                break
            handle.close()
        handle.seek(0)
        handle.truncate()
        handle.write(f"{os.getpid()}\n")
        handle.flush()
        self._file = handle
        return self

    def release(self) -> None:
        """Remove the lock file, then let go (a waiting opener sees the file is gone and retries)."""
        if self._file is None:
            return
        try:
            self.path.unlink()
        except FileNotFoundError:
            pass
        self._file.close()  # closing drops the flock
        self._file = None

    def __enter__(self) -> "RunFolderLock":
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()


def _same_file(handle, path: Path) -> bool:
    try:
        return os.stat(path).st_ino == os.fstat(handle.fileno()).st_ino
    except FileNotFoundError:
        return False


def _holder(path: Path, wait_s: float = 1.0) -> str:
    """The holder's process id as written in the lock file (it writes it just after locking)."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            text = path.read_text().strip()
        except OSError:
            text = ""
        if text.isdigit() or time.monotonic() > deadline:
            return text if text.isdigit() else "unknown"
        time.sleep(0.05)
