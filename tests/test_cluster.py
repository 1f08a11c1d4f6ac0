"""Sweeps on a Dask cluster (scalefront.engine.cluster, the `cluster` extra): results in shard order, the merged
frontier equal to a one-machine run's bytes, a killed worker's shard retried once then a clear failure, Ctrl-C leaving
nothing. One local cluster (2 worker processes on 127.0.0.1) serves the whole module; tests gate on events
(marker files a shard writes, the progress line), never on delays."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from pathlib import Path

import pytest

distributed = pytest.importorskip("distributed", reason="the cluster extra is not installed")
import cloudpickle  # noqa: E402  (comes with distributed)
import psutil  # noqa: E402  (comes with distributed)

from helpers import SMALL_SCENARIO, finish_on_a_terminal, roi_problem, start_on_a_terminal  # noqa: E402
from scalefront.cli import main  # noqa: E402
from scalefront.engine import cluster  # noqa: E402
from scalefront.engine.limits import LimitExceeded  # noqa: E402
from scalefront.engine.shards import run_sweep_sharded  # noqa: E402
from scalefront.engine.sweep import run_sweep  # noqa: E402
from scalefront.errors import ClusterError, UsageError  # noqa: E402
from scalefront.inputs.scenario import load_scenario  # noqa: E402

# Shard functions defined here travel to the workers by value (this module is not importable there).
cloudpickle.register_pickle_by_value(sys.modules[__name__])


@pytest.fixture(scope="module")
def address():
    """A local cluster for the module: 2 single-threaded worker processes on 127.0.0.1, stopped afterwards."""
    with cluster.local_cluster(2) as addr:
        yield addr


def _mark(directory: Path, name: str, text: str) -> None:
    """Write a marker file atomically (a reader never sees it half written)."""
    tmp = directory / f".{name}.tmp"
    tmp.write_text(text, encoding="utf-8")
    tmp.rename(directory / name)


def _wait_for(path: Path, timeout_s: float = 120) -> str:
    deadline = time.monotonic() + timeout_s
    while not path.exists():
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        time.sleep(0.01)
    return path.read_text(encoding="utf-8")


def _held_shard(job: tuple[int, str, int]) -> int:
    """Shard `i`: marks its start (with its process id), then on attempts below `hold` waits until cancelled."""
    i, directory, hold = job
    d = Path(directory)
    attempt = len(list(d.glob(f"start-{i}-*")))
    _mark(d, f"start-{i}-{attempt}", str(os.getpid()))
    while i == 0 and attempt < hold and not cluster.cancelled():
        time.sleep(0.02)
    _mark(d, f"end-{i}-{attempt}", "")
    cluster.report(done=i + 1)
    return i * 10


def _square(x: int) -> int:
    cluster.report(done=1)
    return x * x


def test_results_come_in_shard_order_with_progress(address):
    seen: list[float] = []
    out = cluster.map_shards(
        _square, list(range(9)), cluster=address, on_progress=lambda s: seen.append(s.total("done"))
    )
    assert out == [x * x for x in range(9)]
    # On any cluster a shard runs on its worker's share of its machine's cores.
    assert cluster.map_shards(_threads, [0, 1], cluster=address) == [max(1, _cores() // 2)] * 2


def _threads(_: int) -> int | None:
    return cluster.threads()


def _cores() -> int:
    return len(os.sched_getaffinity(0))


def test_without_a_cluster_shards_run_here_in_order():
    seen = []
    assert cluster.map_shards(_square, [3, 1, 2], cluster=None, on_progress=lambda s: seen.append(s)) == [9, 1, 4]
    assert seen and seen[-1].total("done") == 3
    assert cluster.resolve("auto", 1) is None  # one worker: no cluster


@pytest.mark.parametrize("value", ["foo", "", "tcp://host", "http://host:8786", "host:port"])
def test_a_cluster_that_is_no_address_is_refused(value, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code = main(["sweep", "--cluster", value, "--out", "x.csv"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "expected auto, local or a Dask scheduler address" in err, err
    assert list(tmp_path.iterdir()) == []


def test_without_the_extra_a_cluster_is_refused_with_the_install_line(monkeypatch):
    monkeypatch.setattr(cluster, "available", lambda: False)
    assert cluster.resolve("auto", 4) is None  # auto falls back to this process
    hint = r"--cluster local needs the cluster extra: pip install 'scalefront\[cluster\]'"
    with pytest.raises(UsageError, match=hint):
        cluster.resolve("local", 2)


def test_a_killed_workers_shard_is_retried_once(address, tmp_path):
    # Shard 0 holds on its first attempt; once it has started (its marker file), its worker process is killed.
    # The shard runs again (a second marker) and the call returns every result, in order.
    box: dict = {}
    jobs = [(i, str(tmp_path), 1) for i in range(4)]
    t = threading.Thread(target=lambda: box.setdefault("out", cluster.map_shards(_held_shard, jobs, cluster=address)))
    t.start()
    os.kill(int(_wait_for(tmp_path / "start-0-0")), signal.SIGKILL)
    t.join(timeout=120)
    assert box["out"] == [0, 10, 20, 30]
    assert (tmp_path / "start-0-1").exists() and not (tmp_path / "start-0-2").exists()


def test_a_shard_whose_worker_is_lost_twice_fails_clearly(address, tmp_path):
    box: dict = {}
    jobs = [(i, str(tmp_path), 5) for i in range(2)]

    def call() -> None:
        try:
            cluster.map_shards(_held_shard, jobs, cluster=address)
        except ClusterError as err:
            box["err"] = err

    t = threading.Thread(target=call)
    t.start()
    os.kill(int(_wait_for(tmp_path / "start-0-0")), signal.SIGKILL)
    os.kill(int(_wait_for(tmp_path / "start-0-1")), signal.SIGKILL)
    t.join(timeout=120)
    assert "shard 1 of 2 lost its worker twice" in str(box["err"]) and "nothing was written" in str(box["err"])
    assert not (tmp_path / "start-0-2").exists()


def test_an_error_in_the_caller_cancels_the_running_shards(address, tmp_path):
    # A limit raised in on_progress (or Ctrl-C) while shard 0 runs: the call raises it, and the shard, asked
    # through `cancelled()`, stops (its end marker) instead of running on in its worker.
    def stop(state: cluster.ShardProgress) -> None:
        if (tmp_path / "start-0-0").exists():
            raise LimitExceeded("over the limit")

    with pytest.raises(LimitExceeded):
        cluster.map_shards(_held_shard, [(0, str(tmp_path), 99)], cluster=address, on_progress=stop)
    _wait_for(tmp_path / "end-0-0")


def test_a_sweep_on_the_cluster_equals_the_one_machine_sweep(address, small, tmp_path, capsys):
    # Through the command line, attached to the running cluster: the same frontier bytes as in one process.
    one, many = tmp_path / "one.csv", tmp_path / "many.csv"
    assert main(["sweep", str(small), "--out", str(one)]) == 0
    assert main(["sweep", str(small), "--cluster", address, "--out", str(many)]) == 0
    assert many.read_bytes() == one.read_bytes()
    capsys.readouterr()
    # In shards of one cell each (more shards than workers), with the counts of the whole.
    scenario = load_scenario(small)
    whole = run_sweep(scenario)
    merged = run_sweep_sharded(scenario, cluster=address, shards=32)
    assert merged.kept.equals(whole.kept) and merged.frontier().equals(whole.frontier())
    assert (merged.evaluated, merged.feasible, merged.rejected) == (whole.evaluated, whole.feasible, whole.rejected)


def test_a_local_cluster_started_by_the_command(small, tmp_path, capsys):
    # `--workers 2` (cluster auto) starts a local cluster: the frontier and the --all rows are the bytes one
    # process writes, and the workers' hidden row files are gone.
    one, one_all = tmp_path / "one.csv", tmp_path / "one-all.csv"
    many, many_all = tmp_path / "many.csv", tmp_path / "many-all.csv"
    assert main(["sweep", str(small), "--out", str(one), "--all", str(one_all)]) == 0
    assert main(["sweep", str(small), "--workers", "2", "--out", str(many), "--all", str(many_all)]) == 0
    assert many.read_bytes() == one.read_bytes()
    assert many_all.read_bytes() == one_all.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def test_all_rows_from_a_remote_cluster_are_refused(address, small, tmp_path, capsys):
    code = main(["sweep", str(small), "--cluster", address, "--all", str(tmp_path / "a.csv")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "--all from a cluster needs the workers to write beside it" in err


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_ctrl_c_stops_the_whole_cluster_and_leaves_nothing(tmp_path, signum):
    # A real process sweeping on a local cluster it started, interrupted once its progress line shows (its shards
    # held at the engine's pause gate, so the sweep cannot end first): it exits 130 (143 for SIGTERM) without
    # writing anything (neither output, nor the workers' hidden --all row files), and its worker processes are gone.
    (tmp_path / "small.toml").write_text(SMALL_SCENARIO, encoding="utf-8")
    cmd = [sys.executable, "-m", "scalefront", "sweep", "small.toml", "--cluster", "local", "--workers", "2"]
    p, master = start_on_a_terminal([*cmd, "--out", "OUT.csv", "--all", "ALL.csv"], tmp_path)
    workers = psutil.Process(p.pid).children(recursive=True)
    assert workers, "the local cluster's worker processes"
    p.send_signal(signum)
    out, err = finish_on_a_terminal(p, master)
    assert p.returncode == (130 if signum == signal.SIGINT else 143), err
    assert "Traceback" not in err and "nothing was written" in err.strip().splitlines()[-1], err
    assert out == "" and sorted(os.listdir(tmp_path)) == ["small.toml"]
    _, alive = psutil.wait_procs(workers, timeout=60)
    assert alive == []


def test_the_roi_monte_carlo_on_the_cluster_equals_the_one_machine_run(address):
    # Shards of samples on the cluster, each drawn from (seed, sample index) whatever shard draws it: every frame
    # of the comparison (samples, summaries, table, tornado) equals the one-process run's, value for value.
    from scalefront.roi import RoiOptions, compare
    from scalefront.roi.text import verdict

    options = RoiOptions(samples=203, seed=11)  # not a multiple of the shard count: uneven shards
    here = compare(roi_problem(), options=options)
    seen: list[int] = []
    there = compare(roi_problem(), options=options, cluster=address, on_progress=lambda p: seen.append(p.done))
    for name in ("samples", "table", "tornado", "workloads", "breakdown"):
        assert getattr(there, name).equals(getattr(here, name)), name
    assert verdict(there) == verdict(here) and not there.mc_cancelled
    assert seen and seen[-1] == 203
