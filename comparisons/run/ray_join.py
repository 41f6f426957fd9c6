"""Joining a Ray cluster (`--ray-address`): why it fails, in one line. A probe in a subprocess asks the cluster's GCS
once before `ray.init`, so a missing or wrong authentication token, a wrong address or a Ray/Python version mismatch
ends in one line saying which and what to do (docs/ray.md), not in Ray's 20 s of retries that print a warning a
second (or a crash: Ray aborts a process that enables token authentication without a token)."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

from comparisons.comparability import ROOT

CONNECT_TIMEOUT_S = 5  # the TCP check of a cluster address
PROBE_TIMEOUT_S = 20  # the whole probe (Ray's own client waits 40 s for an address that is not a GCS)
DOCS = "docs/ray.md"


def cluster_problem(address: str) -> str | None:
    """One line saying why this driver cannot join the cluster at `address` and what to do; None if it can.

    The probe runs in a subprocess: Ray's client prints its retries straight to the process's
    stderr and aborts the process in some cases (token mode without a token); here its output is
    captured and a hung connection is cut at PROBE_TIMEOUT_S."""
    command = [sys.executable, "-c", "import sys; from comparisons.run.ray_join import probe; probe(sys.argv[1])",
               address]
    try:
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=PROBE_TIMEOUT_S,
                              env={**os.environ, "PYTHONPATH": os.pathsep.join(
                                  filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))})
    except subprocess.TimeoutExpired:
        return explain(address, "no_answer", "")
    verdicts = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if not verdicts:  # the probe itself died (Ray aborted it, say): Ray's last words are the clue
        last = [line.strip() for line in done.stderr.splitlines() if line.strip()]
        return (f"cannot join the Ray cluster at {address}: the connection check failed "
                f"({last[-1][:300] if last else f'exit status {done.returncode}'}); see {DOCS}")
    verdict = json.loads(verdicts[-1])
    return None if verdict["cause"] == "ok" else explain(address, verdict["cause"], verdict["detail"])


def probe(address: str) -> None:
    """In a subprocess (see cluster_problem): print one JSON line {"cause", "detail"}.

    Steps as Ray's own join takes them, each once: resolve `auto`; Ray's token check
    (RAY_AUTH_MODE=token needs a token here); TCP connect; the GCS client (the cluster checks the
    token); the cluster's Ray and Python versions against ours."""
    def answer(cause: str, detail: str = "") -> None:
        print(json.dumps({"cause": cause, "detail": detail}), flush=True)

    import platform

    import ray
    try:  # Ray's internals as of the pinned version (constraints.txt); another Ray: no probe, ray.init says
        from ray._common.usage import usage_lib
        from ray._private import services
        from ray._private.authentication.authentication_token_setup import (
            ensure_token_if_auth_enabled, maybe_enable_token_auth_if_token_available)
        from ray._private.utils import check_version_info
        from ray._raylet import GcsClient
        from ray.exceptions import AuthenticationError
    except ImportError:
        return answer("ok")

    try:
        resolved = services.canonicalize_bootstrap_address(address)
    except ConnectionError as exc:  # auto: no RAY_ADDRESS, no cluster started on this machine
        return answer("no_cluster", str(exc))
    except ValueError as exc:
        return answer("bad_address", str(exc))
    if resolved is None:
        return answer("no_cluster")
    if address == "auto":  # what ray.init does for auto (an explicit address never turns token mode on)
        maybe_enable_token_auth_if_token_available(warn_if_disabled=False)
    token_mode = os.environ.get("RAY_AUTH_MODE", "").lower() == "token"
    try:
        ensure_token_if_auth_enabled(None, create_token_if_missing=False)
    except AuthenticationError:
        return answer("token_missing")
    host, port = resolved.rsplit(":", 1)
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_TIMEOUT_S).close()
    except socket.gaierror as exc:
        return answer("unknown_host", str(exc))
    except ConnectionRefusedError:
        return answer("refused")
    except OSError as exc:  # a timeout, no route to host...
        return answer("unreachable", str(exc) or exc.__class__.__name__)
    try:
        client = GcsClient(address=resolved)
    except AuthenticationError:
        return answer("token_rejected" if token_mode else "token_required")
    except Exception as exc:
        return answer("no_answer", str(exc).splitlines()[0] if str(exc) else exc.__class__.__name__)
    try:
        metadata = usage_lib.get_cluster_metadata(client)
    except Exception:  # the cluster answered and took the token; ray.init will check the versions itself
        return answer("ok")
    try:
        if metadata:
            check_version_info(metadata, "this driver")
    except RuntimeError:  # "Version mismatch: ..." (Ray's rule: the same Ray, the same Python x.y.z)
        return answer("version", f"cluster: Ray {metadata['ray_version']}, Python {metadata['python_version']}; "
                                 f"this driver: Ray {ray.__version__}, Python {platform.python_version()}")
    answer("ok")


def failure_cause(exc: BaseException) -> str | None:
    """The cause of a failed ray.init named by Ray itself, along the exception's chain; None if not named."""
    seen = exc
    while seen is not None:
        text = f"{seen.__class__.__name__}: {seen}"
        if "AuthenticationError" in text or "InvalidAuthToken" in text:
            return "token_rejected" if os.environ.get("RAY_AUTH_MODE", "").lower() == "token" else "token_required"
        if "Version mismatch" in text:
            return "version"
        seen = seen.__cause__ or seen.__context__
    return None


def explain(address: str, cause: str, detail: str) -> str:
    """The one line for a cause found by `probe` or `failure_cause`."""
    mode = os.environ.get("RAY_AUTH_MODE")
    token_help = ("the head's token (`ray get-auth-token` there) in ~/.ray/auth_token, RAY_AUTH_TOKEN or the file "
                  "RAY_AUTH_TOKEN_PATH names")
    why = {
        "token_required": ("the cluster requires an authentication token and this driver sent none "
                           f"({'RAY_AUTH_MODE=' + mode if mode else 'RAY_AUTH_MODE is unset'})",
                           f"run with RAY_AUTH_MODE=token and {token_help}"),
        "token_rejected": ("the cluster rejected this driver's authentication token",
                           f"use {token_help}"),
        "token_missing": ("RAY_AUTH_MODE=token but no authentication token was found on this machine",
                          f"put {token_help}"),
        "refused": ("nothing is listening there (connection refused)",
                    "check --ray-address: the head's HOST:PORT (`ray start --head` prints it; port 6379 "
                    "unless --port) and that the head is running"),
        "unreachable": (f"no connection ({detail})",
                        "check the host of --ray-address and that the head's port is open to this machine"),
        "unknown_host": (f"unknown host ({detail})", "check the host of --ray-address"),
        "bad_address": (detail, "use --ray-address auto or HOST:PORT"),
        "no_answer": ("something accepts connections there but no Ray cluster answered"
                      + (f" ({detail})" if detail else f" within {PROBE_TIMEOUT_S} s"),
                      "check the port of --ray-address: the head's GCS port (6379 unless `ray start --port`)"),
        "version": (f"Ray or Python versions differ ({detail})" if detail else "Ray or Python versions differ",
                    "install the same Ray and Python on every node and this driver "
                    "(pip install -c constraints.txt, one Python version)"),
    }
    if cause == "no_cluster":
        return ("cannot join a Ray cluster: --ray-address auto found none (no RAY_ADDRESS, no `ray start` on this "
                f"machine); start one with `ray start --head` or pass the head's HOST:PORT (see {DOCS})")
    reason, action = why[cause]
    return f"cannot join the Ray cluster at {address}: {reason}; {action} (see {DOCS})"
