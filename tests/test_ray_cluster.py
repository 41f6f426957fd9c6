"""Joining an existing Ray cluster, as docs/ray.md tells a user to: a two-node local cluster (two
`ray start` processes, token authentication on, the token passed by RAY_AUTH_TOKEN) runs a tiny
plan given by `--ray-address` with the local executor's metrics, each record naming its node; a
driver without the token, with a wrong one, or at an address nobody listens on gets one line
saying so; and no Ray process outlives the cluster.

The cluster is this module's own: its own port and temp dir (so no other Ray instance on this
machine, and no `ray.init()` of another test, finds it), stopped by signalling its two
`ray start --block` processes, never by `ray stop` (which stops every Ray instance here)."""
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

import pandas as pd
import pytest

from comparisons.run.ray_join import explain, failure_cause
from tests.test_cli import run_main
from tests.test_executors import METRICS, SMALL, wait_until

pytest.importorskip("ray")

ROOT = Path(__file__).resolve().parent.parent
RAY = Path(sys.executable).with_name("ray")
MARK = "COMPARISONS_TEST_RAY_CLUSTER"  # in the environment of every process of the cluster, and only there
PLAN = ["--backends", "tfidf_logreg", "--seeds", "2", *SMALL]  # 2 runs of 1 CPU: one per node at once
STARTED = b"Ray runtime started"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def clean_env(**changes) -> dict:
    """This process's environment without any RAY_ variable (an earlier ray.init in this process sets
    RAY_AUTH_MODE, for one), plus `changes`."""
    return {**{k: v for k, v in os.environ.items() if not k.startswith("RAY_")}, "RAY_USAGE_STATS_ENABLED": "0",
            **changes}


def marked(marker: str) -> list[int]:
    """Live processes whose environment carries the marker: every process of the cluster, Ray
    workers and their worker subprocesses included (whatever their command line became)."""
    needle = f"{MARK}={marker}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                if needle in (entry / "environ").read_bytes().split(b"\0"):
                    state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
                    if state not in ("Z", "X"):
                        found.append(int(entry.name))
            except (OSError, IndexError):
                continue
    return found


def driver(address: str, out: Path, env: dict, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "comparisons", "run", *PLAN, *extra, "--out", str(out),
                           "--executor", "ray", "--ray-address", address],
                          cwd=ROOT, capture_output=True, text=True, env=env, timeout=300)


class Cluster:
    def __init__(self, folder: Path):
        self.port, self.token, self.marker = free_port(), secrets.token_hex(32), uuid.uuid4().hex
        self.address = f"127.0.0.1:{self.port}"
        self.folder = folder
        self.env = clean_env(RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=self.token, **{MARK: self.marker})
        self.nodes: list[subprocess.Popen] = []

    def start_node(self, *args: str) -> None:
        """`ray start --block ...`; returns once it says the node runs (or fails with its output)."""
        log = self.folder / f"node{len(self.nodes)}.log"
        command = [str(RAY), "start", *args, "--num-cpus", "1", "--object-store-memory", str(100 * 2**20),
                   "--temp-dir", str(self.folder / "ray"), "--dashboard-agent-listen-port", str(free_port()),
                   "--disable-usage-stats", "--block"]
        with open(log, "wb") as sink:
            node = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT, env=self.env,
                                    start_new_session=True)
        self.nodes.append(node)
        up = wait_until(lambda: STARTED in log.read_bytes() or node.poll() is not None, 90)
        assert up and node.poll() is None, f"{' '.join(command)}:\n{log.read_text()[-3000:]}"

    def alive_nodes(self) -> int:
        """Alive nodes as the cluster's GCS sees them (a driver of its own, with the token)."""
        count = subprocess.run(
            [sys.executable, "-c", "import ray, sys; ray.init(address=sys.argv[1], logging_level='ERROR', "
             "log_to_driver=False); print(sum(node['Alive'] for node in ray.nodes()))", self.address],
            capture_output=True, text=True, env=clean_env(RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=self.token),
            timeout=120)
        assert count.returncode == 0, count.stderr[-3000:]
        return int(count.stdout.split()[-1])

    def stop(self) -> list[int]:
        """SIGTERM to each `ray start --block` (it ends its node's processes), worker node first;
        returns the cluster's processes still alive 30 s later, which are then killed by pid."""
        for node in reversed(self.nodes):
            if node.poll() is None:
                node.send_signal(signal.SIGTERM)
        for node in self.nodes:
            try:
                node.wait(timeout=60)
            except subprocess.TimeoutExpired:
                node.kill()
        wait_until(lambda: not marked(self.marker), 30)
        left = marked(self.marker)
        for pid in left:  # ours by their environment; cleaned up, and reported by the caller
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        return left


def start_cluster(cluster: Cluster) -> None:
    cluster.start_node("--head", "--port", str(cluster.port), "--ray-client-server-port", str(free_port()),
                       "--include-dashboard=false")
    cluster.start_node(f"--address={cluster.address}")
    assert wait_until(lambda: cluster.alive_nodes() == 2, 60), "the second node never joined"


def test_a_two_node_cluster_runs_a_plan_joined_by_address_and_refuses_drivers_without_its_token(tmp_path, capfd):
    """One test, so that pytest-xdist never starts two clusters for one module."""
    # short: Ray's unix sockets live under the temp dir, and a socket path has at most 107 bytes
    cluster = Cluster(Path(tempfile.mkdtemp(prefix="rc-", dir="/tmp")))
    try:
        start_cluster(cluster)
        remote = driver(cluster.address, tmp_path / "ray", clean_env(RAY_AUTH_MODE="token",
                                                                      RAY_AUTH_TOKEN=cluster.token))
        assert remote.returncode == 0, remote.stderr[-3000:]
        assert "authentication" not in remote.stderr.lower()  # no warning flood on the way

        for auth, message in [
            ({}, "the cluster requires an authentication token and this driver sent none"),
            ({"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": "0" * 64}, "the cluster rejected this driver's "
                                                                      "authentication token"),
        ]:
            refused = driver(cluster.address, tmp_path / "refused", clean_env(**auth))
            assert refused.returncode == 2, refused.stderr[-3000:]
            assert refused.stderr.count("\n") == 1, refused.stderr[-3000:]  # one line: no retry warnings
            assert refused.stderr.startswith(f"error: cannot join the Ray cluster at {cluster.address}: {message}")
            assert "RAY_AUTH_TOKEN" in refused.stderr and "docs/ray.md" in refused.stderr
            assert not (tmp_path / "refused").exists()
    finally:
        left = cluster.stop()
        shutil.rmtree(cluster.folder, ignore_errors=True)
    ps = subprocess.run(["ps", "-o", "pid,args", "-p", ",".join(map(str, left))], capture_output=True, text=True)
    assert not left, f"Ray processes left after stopping the cluster: {ps.stdout}"

    # the same plan under the local executor, in this process (its main; no RAY_ variable set, as clean_env)
    no_ray_variables = {name: None for name in os.environ if name.startswith("RAY_")}
    local = run_main(capfd, "run", *PLAN, "--out", str(tmp_path / "local"),
                     env={**no_ray_variables, "RAY_USAGE_STATS_ENABLED": "0"})
    assert local.returncode == 0, local.stderr[-3000:]
    rows = {name: pd.read_csv(tmp_path / name / "summary.csv").set_index("seed") for name in ("local", "ray")}
    assert (rows["ray"]["status"] == "ok").all() and len(rows["ray"]) == 2
    pd.testing.assert_frame_equal(rows["local"][METRICS], rows["ray"][METRICS])
    records = [json.loads(path.read_text()) for path in sorted((tmp_path / "ray" / "runs").glob("*.json"))]
    assert [record["executor"] for record in records] == ["ray", "ray"]
    for record in records:  # the node each ran on: host, IP and Ray node id (both nodes share this host)
        assert record["node"] and record["node_ip"] and len(record["ray_node_id"]) == 56
    assert len({record["ray_node_id"] for record in records}) == 2, "both runs ran on one node"


def test_an_address_nobody_listens_on_gets_one_line_saying_so(tmp_path):
    address = f"127.0.0.1:{free_port()}"
    result = driver(address, tmp_path / "o", clean_env())
    assert result.returncode == 2, result.stderr[-3000:]
    assert result.stderr.count("\n") == 1, result.stderr[-3000:]
    assert result.stderr.startswith(f"error: cannot join the Ray cluster at {address}: nothing is listening there")
    assert not (tmp_path / "o").exists()


def test_a_token_mode_driver_without_a_token_gets_one_line_saying_so(tmp_path):
    """Ray aborts a process that turns token mode on without a token; the probe takes that blow."""
    home = tmp_path / "home"  # no ~/.ray/auth_token here
    home.mkdir()
    address = f"127.0.0.1:{free_port()}"  # checked before the address: the token is missing here, anywhere
    result = driver(address, tmp_path / "o", clean_env(RAY_AUTH_MODE="token", HOME=str(home)))
    assert result.returncode == 2, result.stderr[-3000:]
    assert result.stderr.count("\n") == 1, result.stderr[-3000:]
    assert result.stderr.startswith(f"error: cannot join the Ray cluster at {address}: RAY_AUTH_MODE=token but no "
                                    "authentication token was found")


def test_a_failed_join_is_explained_from_the_cause_ray_names():
    """After the probe passed, ray.init may still fail; Ray's own exception chain names the cause."""
    try:
        try:
            raise RuntimeError("Version mismatch: The cluster was started with:\n    Ray: 2.59.0")
        except RuntimeError as inner:
            raise ConnectionError("Failed to connect to Ray cluster at 10.0.0.1:6379") from inner
    except ConnectionError as exc:
        assert failure_cause(exc) == "version"
    assert failure_cause(ConnectionError("Failed to connect to Ray cluster at 10.0.0.1:6379")) is None
    line = explain("10.0.0.1:6379", "version", "cluster: Ray 2.59.0, Python 3.11.7; this driver: Ray 2.60.0, "
                                                "Python 3.11.7")
    assert line.startswith("cannot join the Ray cluster at 10.0.0.1:6379: Ray or Python versions differ (cluster: "
                           "Ray 2.59.0") and "\n" not in line and line.endswith("(see docs/ray.md)")
