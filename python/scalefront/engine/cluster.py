"""Shards of work on a Dask cluster (the optional `cluster` extra: ``pip install 'scalefront[cluster]'``), or here,
one after another, without it.

`map_shards(fn, shards, cluster=...)` calls `fn(shard)` for every shard and returns the results in shard order.
`cluster` is ``"auto"`` (a local cluster when the extra is installed and more than one worker is asked for, else
in this process), ``"local"`` (a cluster of worker processes on this machine, listening on 127.0.0.1 only, no
dashboard) or the address of a running Dask scheduler (``tcp://host:8786``). Inside `fn`, `report(...)` sends
progress to the caller's `on_progress`, `cancelled()` says the caller gave up (Ctrl-C, a limit) and `threads()`
is the number of cores the shard may use. A shard whose worker is lost is run again once; lost again, the call
fails with `ClusterError` and nothing is returned. The sweep (`scalefront sweep --cluster`) and any other
sharded work (Monte Carlo samples) use it the same way.

Why Dask and not Ray: Dask's `distributed` is ~2.5 MB of pure-Python wheels (Ray: a 79 MB binary wheel plus
protobuf, aiohttp and more); `LocalCluster` starts worker processes on loopback in a couple of seconds; its
futures follow `concurrent.futures`; and the work here is a plain map of independent shards, which needs none
of Ray's actors or object store.
"""

from __future__ import annotations

import contextlib
import contextvars
import importlib.util
import logging
import os
import re
import signal
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from scalefront._core import __version__
from scalefront.errors import ClusterError, UsageError

__all__ = [
    "ClusterError",
    "ShardCancelled",
    "ShardProgress",
    "available",
    "cancelled",
    "local_cluster",
    "map_shards",
    "report",
    "resolve",
    "threads",
]

S = TypeVar("S")
R = TypeVar("R")

#: What `pip install` line adds the engine.
INSTALL_HINT = "pip install 'scalefront[cluster]'"
#: Seconds between progress reports from a shard, and between the caller's progress calls.
REPORT_S = 0.25


def available() -> bool:
    """Is the `cluster` extra (Dask distributed) installed?"""
    return importlib.util.find_spec("distributed") is not None


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


#: A Dask scheduler address: [scheme://]host:port.
_ADDRESS = re.compile(r"(?:(?:tcp|tls|ws|wss|ucx)://)?(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):\d{1,5}")


def resolve(cluster: str | None, workers: int | None = None) -> str | None:
    """Where shards run: None (this process), "local" or a scheduler address. "auto" (or None) is "local" when
    the extra is installed and more than one worker is asked for, else this process."""
    if cluster in (None, "auto"):
        return "local" if available() and (workers or 1) > 1 else None
    if cluster != "local" and not _ADDRESS.fullmatch(cluster):
        raise UsageError(
            f"--cluster: expected auto, local or a Dask scheduler address such as tcp://host:8786, got {cluster!r}"
        )
    if cluster != "local" and not 1 <= int(cluster.rsplit(":", 1)[1]) <= 65535:
        raise UsageError(f"--cluster {cluster}: the port must be from 1 to 65535")
    if not available():
        raise UsageError(f"--cluster {cluster} needs the cluster extra: {INSTALL_HINT}")
    return cluster


# ---------------------------------------------------------------------------------------------- inside a shard


@dataclass
class _Task:
    """What a running shard knows about its caller."""

    index: int
    attempt: int
    threads: int | None
    report: Callable[[dict[str, Any]], None]
    cancelled: Callable[[], bool]
    last: float = 0.0
    #: The caller's answer to "cancelled?", and when it was asked (asked at most every REPORT_S).
    stop: bool = False
    asked: float = float("-inf")


_TASK: contextvars.ContextVar[_Task | None] = contextvars.ContextVar("scalefront_cluster_task", default=None)


def report(**values: Any) -> None:
    """Send the running shard's progress (numbers such as done=, work=, feasible=; cumulative for this shard) to the
    caller, at most every REPORT_S. Outside `map_shards`, does nothing."""
    task = _TASK.get()
    if task is None:
        return
    now = time.monotonic()
    if now - task.last < REPORT_S and not values.get("final"):
        return
    task.last = now
    task.report({"index": task.index, "attempt": task.attempt, **values})


def cancelled() -> bool:
    """Has the caller given up on this shard (Ctrl-C, a limit, another shard failed)?"""
    task = _TASK.get()
    if task is None:
        return False
    now = time.monotonic()
    if not task.stop and now - task.asked >= REPORT_S:
        task.asked = now
        task.stop = task.cancelled()
    return task.stop


class ShardCancelled(Exception):
    """Raised inside a shard whose caller gave up, to unwind it. An Exception, not a KeyboardInterrupt: Dask
    reports an Exception as the task's error, while a KeyboardInterrupt escapes its executor and takes the worker
    process down with a traceback on the caller's terminal."""


def stop_if_cancelled() -> None:
    """Raise `ShardCancelled` in a shard whose caller gave up (see `cancelled`)."""
    if cancelled():
        raise ShardCancelled("the caller cancelled this shard")


def threads() -> int | None:
    """Cores the running shard may use (its worker's share of its machine); None: all of them."""
    task = _TASK.get()
    return task.threads if task is not None else None


def _run_task(
    fn: Callable[[S], R],
    shard: S,
    index: int,
    attempt: int,
    topic: str,
    cancel_name: str,
    threads_by_host: dict[str, int],
    version: str,
) -> R:
    """Run one shard on a Dask worker, with `report`, `cancelled` and `threads` wired to the caller."""
    from distributed import get_worker
    from distributed.utils import sync

    worker = get_worker()
    if __version__ != version:
        raise ClusterError(
            f"worker {worker.address} runs scalefront {__version__}, this machine {version}; install one version"
        )
    host = worker.address.rsplit(":", 1)[0]

    def is_set() -> bool:
        # The caller's cancel Event, asked through the worker's own scheduler connection (an Event object would
        # open a client in the worker, which complains when the cluster is shut down under it).
        return bool(sync(worker.loop, worker.scheduler.event_is_set, name=cancel_name))

    task = _Task(index, attempt, threads_by_host.get(host, 1), lambda msg: worker.log_event(topic, msg), is_set)
    token = _TASK.set(task)
    try:
        return fn(shard)
    finally:
        _TASK.reset(token)


# ---------------------------------------------------------------------------------------------- the caller's side


@dataclass
class ShardProgress:
    """The latest report of every running or finished shard, summed for the caller."""

    started: float
    values: dict[int, dict[str, Any]] = field(default_factory=dict)
    finished: int = 0
    shards: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def update(self, msg: dict[str, Any]) -> None:
        with self.lock:
            current = self.values.get(msg["index"])
            if current is None or msg["attempt"] >= current["attempt"]:
                self.values[msg["index"]] = msg

    def total(self, key: str) -> float:
        """The sum over shards of their latest `key`."""
        with self.lock:
            return float(sum(v.get(key, 0) for v in self.values.values()))

    def restart(self, index: int, attempt: int) -> None:
        """A shard starts again: its earlier progress no longer counts."""
        with self.lock:
            self.values[index] = {"index": index, "attempt": attempt}


def _workers(client: Any) -> dict[str, dict[str, Any]]:
    """Every worker the scheduler knows, by address (newer Dask lists only a few unless asked for all)."""
    try:
        info = client.scheduler_info(n_workers=-1)
    except TypeError:  # Dask before the n_workers argument lists them all
        info = client.scheduler_info()
    workers: dict[str, dict[str, Any]] = info["workers"]
    return workers


def _threads_by_host(client: Any) -> dict[str, int]:
    """Each worker host's cores divided among the task slots on it (the sweep's rayon pool size per shard)."""
    workers = _workers(client)
    slots: dict[str, int] = {}
    for address, info in workers.items():
        host = address.rsplit(":", 1)[0]
        slots[host] = slots.get(host, 0) + int(info.get("nthreads", 1))
    # {worker address: cores of its machine}; a worker that has just died (the scheduler may still list it) is left
    # out rather than failing the whole map.
    try:
        cores = client.run(_cores, on_error="ignore")
    except TypeError:  # distributed before on_error
        cores = client.run(_cores)
    by_host: dict[str, int] = {}
    for address, n in cores.items():
        host = address.rsplit(":", 1)[0]
        by_host[host] = max(1, n // max(1, slots.get(host, 1)))
    return by_host


@contextlib.contextmanager
def _workers_quiet() -> Iterator[None]:
    """Start a cluster's worker processes with their standard error on /dev/null: Ctrl-C in a terminal signals the
    whole process group, and each worker would print its own KeyboardInterrupt traceback (a blocked signal does
    not survive their start: multiprocessing resets the mask). This process reports the interruption once
    and stops them; a worker's failure reaches the caller as its task's error, never through its stderr (its logs
    are silenced anyway). This process's own stderr is back once the workers are up."""
    sys.stderr.flush()
    saved = os.dup(2)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 2)
    os.close(null)
    try:
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


@contextlib.contextmanager
def local_cluster(workers: int | None = None) -> Iterator[str]:
    """A Dask cluster of `workers` single-threaded worker processes (default: one per core) on this machine,
    listening on 127.0.0.1 only, without a dashboard; yields the scheduler's address and stops it afterwards.
    A task whose worker dies is not retried by the scheduler (`map_shards` retries it once itself). Its workers
    print nothing (see `_workers_quiet`): this process handles Ctrl-C and stops them."""
    import dask
    from distributed import LocalCluster

    with dask.config.set({"distributed.scheduler.allowed-failures": 0, "distributed.worker.daemon": False}):
        with _workers_quiet():
            cluster = LocalCluster(
                n_workers=workers or _cores(),
                threads_per_worker=1,
                processes=True,
                host="127.0.0.1",
                dashboard_address=None,
                # The scheduler still serves its health and metrics routes over HTTP: on loopback, on a free port
                # (not 8787, which another cluster may hold).
                scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
                silence_logs=50,  # logging.CRITICAL: a killed worker is reported by map_shards, not by log lines
            )
        with cluster:
            try:
                yield cluster.scheduler_address
            except BaseException:
                _stop_workers(cluster)
                raise


def _stop_workers(cluster: Any) -> None:
    """SIGTERM every worker process of a local cluster at once (they may be deep in a shard, which would finish
    its task before a graceful close): Ctrl-C, SIGTERM or an error ends the command within a second or two."""
    for nanny in list(getattr(cluster, "workers", {}).values()):
        pid = getattr(getattr(getattr(nanny, "process", None), "process", None), "pid", None)
        if isinstance(pid, int):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGTERM)


@contextlib.contextmanager
def _logger_level(name: str, level: int) -> Iterator[None]:
    logger = logging.getLogger(name)
    previous = logger.level
    logger.setLevel(level)
    try:
        yield
    finally:
        logger.setLevel(previous)


@contextlib.contextmanager
def _client(cluster: str, workers: int | None) -> Iterator[Any]:
    from distributed import Client

    if cluster == "local":
        # A client whose local cluster is being stopped (Ctrl-C, a limit) logs its failed reconnections as errors,
        # with tracebacks: what happened is said once, by the command.
        with (
            _logger_level("distributed", logging.CRITICAL),
            local_cluster(workers) as address,
            Client(address) as client,
        ):
            yield client
        return
    try:
        client = Client(cluster, timeout="10s")
    except (OSError, ValueError) as err:
        # A wrong address is the caller's to fix: one line and exit 2, like any bad input (a lost worker, 75).
        raise UsageError(f"--cluster {cluster}: cannot reach a Dask scheduler there ({err})") from None
    with client:
        yield client


def _is_lost_worker(err: BaseException) -> bool:
    from distributed import KilledWorker

    return isinstance(err, KilledWorker)


def _in_process(
    fn: Callable[[S], R], shards: Sequence[S], on_progress: Callable[[ShardProgress], None] | None
) -> list[R]:
    """Without a cluster: the shards one after another, here, with the same progress reports."""
    state = ShardProgress(time.monotonic(), shards=len(shards))
    out: list[R] = []
    for i, shard in enumerate(shards):

        def send(msg: dict[str, Any]) -> None:
            state.update(msg)
            if on_progress:
                on_progress(state)

        token = _TASK.set(_Task(i, 0, None, send, lambda: False))
        try:
            out.append(fn(shard))
        finally:
            _TASK.reset(token)
        state.finished += 1
    return out


def map_shards(
    fn: Callable[[S], R],
    shards: Sequence[S] | Callable[[int], Sequence[S]],
    *,
    cluster: str | None = "auto",
    workers: int | None = None,
    on_progress: Callable[[ShardProgress], None] | None = None,
) -> list[R]:
    """`fn(shard)` for every shard, on the cluster `cluster` names (see the module's doc), results in shard order.
    `shards` may also be a function of the number of task slots (worker threads) the cluster has, returning the
    shards (a split sized for the cluster). `workers` is the number of worker processes of a local cluster (default:
    one per core). `on_progress(state)` is called from this thread every REPORT_S with the shards' latest reports.
    An exception raised here (Ctrl-C, or by `on_progress`, e.g. a time limit) cancels every shard and is
    re-raised; an exception in `fn` is re-raised as it is; a shard whose worker is lost twice raises
    `ClusterError`. `fn` and the shards must pickle (module-level functions and plain data)."""
    where = resolve(cluster, workers)
    if where is None:
        return _in_process(fn, shards(1) if callable(shards) else shards, on_progress)
    with _client(where, workers) as client:
        if callable(shards):
            slots = sum(int(w.get("nthreads", 1)) for w in _workers(client).values())
            shards = shards(max(1, slots))
        return _map_on(client, fn, shards, on_progress)


def _map_on(
    client: Any, fn: Callable[[S], R], shards: Sequence[S], on_progress: Callable[[ShardProgress], None] | None
) -> list[R]:
    from distributed import Event
    from distributed import wait as wait_futures

    run = uuid.uuid4().hex[:12]
    topic, cancel_name = f"scalefront-progress-{run}", f"scalefront-cancel-{run}"
    state = ShardProgress(time.monotonic(), shards=len(shards))
    client.subscribe_topic(topic, lambda event: state.update(event[1]))
    cancel = Event(cancel_name, client=client)
    by_host = _threads_by_host(client)

    def submit(i: int, attempt: int) -> Any:
        args = (fn, shards[i], i, attempt, topic, cancel_name, by_host, __version__)
        return client.submit(_run_task, *args, key=f"shard-{run}-{i}-{attempt}")

    futures = {submit(i, 0): (i, 0) for i in range(len(shards))}
    results: dict[int, R] = {}
    try:
        while futures:
            with contextlib.suppress(TimeoutError):
                wait_futures(list(futures), timeout=REPORT_S, return_when="FIRST_COMPLETED")
            for future in [f for f in futures if f.done()]:
                i, attempt = futures.pop(future)
                if future.status == "finished":
                    results[i] = future.result()
                    state.finished += 1
                    continue
                err = future.exception()
                if not _is_lost_worker(err):
                    raise err
                if attempt >= 1:
                    raise ClusterError(
                        f"shard {i + 1} of {len(shards)} lost its worker twice (the worker process died; out of "
                        "memory or killed?); stopped, nothing was written"
                    )
                state.restart(i, attempt + 1)
                futures[submit(i, attempt + 1)] = (i, attempt + 1)
            if on_progress:
                on_progress(state)
    except BaseException:
        cancel.set()
        client.cancel(list(futures), force=True)
        raise
    finally:
        with contextlib.suppress(Exception):
            client.unsubscribe_topic(topic)
    return [results[i] for i in range(len(shards))]
