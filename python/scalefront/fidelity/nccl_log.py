"""Reading nccl-tests output (all_reduce_perf, all_gather_perf, reduce_scatter_perf, alltoall_perf) as the tests
print it (NVIDIA/nccl-tests src/common.cu): a header (`# nThread 1 nGpus 1 minBytes ...`), one
`#  Rank  0 Group  0 Pid 1234 on HOST device  0 [0000:19:00] NVIDIA H100 80GB HBM3` line per rank, the column
header `size count type redop root time algbw busbw #wrong time algbw busbw #wrong`, one row per message size, then
`# Avg bus bandwidth` and, in recent versions, `# Collective test concluded: all_reduce_perf`.

A file may hold several runs (each starts with its own `# nThread` line) and anything else between them (command
lines, MPI warnings, `mpirun --tag-output` prefixes). Each run yields its collective, its ranks, nodes (distinct
hosts in the Rank lines) and GPUs per node, and its out-of-place rows. Anything that does not read as nccl-tests
output is a :class:`LogError` naming the file, the line and what is wrong.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

from scalefront.errors import ScalefrontError

__all__ = ["COLLECTIVES", "LogError", "Point", "Run", "parse_log", "parse_text"]

#: The nccl-tests binaries scalefront models, by the core's collective name.
COLLECTIVES = {
    "all_reduce_perf": "all_reduce",
    "all_gather_perf": "all_gather",
    "reduce_scatter_perf": "reduce_scatter",
    "alltoall_perf": "all_to_all",
}
#: nccl-tests' other binaries: recognised, so that a log of one is refused by name.
OTHER_TESTS = ("broadcast_perf", "reduce_perf", "sendrecv_perf", "gather_perf", "scatter_perf", "hypercube_perf")

_BINARY = re.compile(r"\b(" + "|".join(map(re.escape, [*COLLECTIVES, *OTHER_TESTS])) + r")(?:_mpi)?\b")
_TAG = re.compile(r"^\[\d+,\d+\]<std(?:out|err)>:")  # mpirun --tag-output
_RANK = re.compile(r"^#\s*Rank\s+(\d+)\s+Group\s+\d+\s+Pid\s+\d+\s+on\s+(\S+)\s+device\s+\d+\s+\[[^\]]*\]\s*(.*)$")
_CONCLUDED = re.compile(r"^#\s*Collective test (?:concluded|starting):\s*(\S+)")
_NUMBER_START = re.compile(r"^\s*\d")
#: The out-of-place columns a row must have (named as the column header names them).
_NEEDED = ("size", "redop", "time", "algbw", "busbw", "#wrong")
#: Columns an nccl-tests table repeats for each placement (out-of-place, then in-place).
_PAIRED = ("time", "algbw", "busbw", "#wrong")


class LogError(ScalefrontError):
    """An nccl-tests log that cannot be read: the message names the file, the line and what is wrong."""


@dataclass(frozen=True)
class Point:
    """One row of a run: the out-of-place measurement at one message size."""

    line: int
    size_bytes: int
    time_us: float
    algbw_gbytes_per_s: float
    busbw_gbytes_per_s: float


@dataclass(frozen=True)
class Run:
    """One nccl-tests run: which collective, over how many ranks and nodes, and its rows."""

    file: str
    #: Line of the run's `# nThread` header (1-based).
    line: int
    #: The core's name: all_reduce, all_gather, reduce_scatter, all_to_all.
    collective: str
    ranks: int
    nodes: int
    gpus_per_node: int
    #: The GPU the Rank lines name (e.g. "NVIDIA H100 80GB HBM3").
    device: str
    points: tuple[Point, ...]

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"


def parse_log(path: str | Path) -> list[Run]:
    """Every run in one nccl-tests output file."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as err:
        raise LogError(f"{path}: cannot read: {err.strerror or err}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        raise LogError(
            f"{path}:{line}: not a UTF-8 text file (byte {err.start} is 0x{data[err.start]:02x}); "
            "is it an nccl-tests output file?"
        ) from None
    return parse_text(text, str(path))


@dataclass
class _Draft:
    """A run being read."""

    line: int
    ranks: dict[int, tuple[str, str]]
    named: list[tuple[int, str]]  # (line, binary) from concluded/starting lines and command lines
    columns: dict[str, int] | None = None
    width: int = 0
    rows: list[tuple[int, list[str]]] | None = None
    ended: bool = False


def parse_text(text: str, file: str) -> list[Run]:
    """Every run in the text of one nccl-tests output file (`file` names it in errors)."""
    lines = [_TAG.sub("", raw).rstrip("\r") for raw in text.split("\n")]
    runs: list[_Draft] = []
    pending: list[tuple[int, str]] = []  # binaries named before the next run's header
    current: _Draft | None = None
    for number, line in enumerate(lines, start=1):
        stripped = line.strip()
        if stripped.startswith("# nThread"):
            if current is not None:
                _check_ended(current, file)
            current = _Draft(line=number, ranks={}, named=pending)
            pending = []
            runs.append(current)
            continue
        named = _CONCLUDED.match(stripped)
        if named:
            # `starting` comes before its run's header, `concluded` after its run's table.
            if "starting" in stripped or current is None:
                pending.append((number, _strip_mpi(named.group(1))))
            else:
                current.named.append((number, _strip_mpi(named.group(1))))
            continue
        if current is None or current.ended:
            if not stripped.startswith("#"):  # a command line naming the next run's binary
                pending += [(number, m.group(1)) for m in _BINARY.finditer(line)]
            continue
        _read_run_line(current, stripped, file, number)
    if current is not None:
        _check_ended(current, file, len(lines))
    if not runs:
        raise LogError(
            f"{file}:1: no nccl-tests run found (no '# nThread ... nGpus ...' header line); "
            "is it the output of all_reduce_perf, all_gather_perf, reduce_scatter_perf or alltoall_perf?"
        )
    return [_finish(d, file) for d in runs]


def _strip_mpi(name: str) -> str:
    return name.removesuffix("_mpi")


def _read_run_line(d: _Draft, stripped: str, file: str, number: int) -> None:
    """One line inside a run, before its `# Avg bus bandwidth`: a Rank line, the column header or a row."""
    rank = _RANK.match(stripped)
    if rank:
        if d.columns is not None:
            raise LogError(f"{file}:{number}: a Rank line inside the result table")
        d.ranks[int(rank.group(1))] = (rank.group(2), rank.group(3).strip())
    elif stripped.startswith("#") and "busbw" in stripped and "redop" in stripped:
        if d.columns is not None:
            raise LogError(
                f"{file}:{number}: a second result table in one run without its own '# nThread' header "
                "(several runs pasted together?); keep each run's header lines"
            )
        d.columns, d.width = _columns(stripped, file, number)
        d.rows = []
    elif d.rows is not None and stripped.startswith("#"):
        d.ended = "Avg bus bandwidth" in stripped
    elif d.rows is not None and _NUMBER_START.match(stripped):
        d.rows.append((number, stripped.split()))
    elif d.rows is not None and len(stripped.split()) == d.width:
        # A row of the table's width whose size is not a number: malformed, not a line of other output (NCCL's
        # INFO and WARN lines, which may interleave with the table, are of other widths).
        raise LogError(f"{file}:{number}: a row whose size {stripped.split()[0]!r} is not a number of bytes")


def _check_ended(d: _Draft, file: str, last_line: int | None = None) -> None:
    if d.ended:
        return
    if d.columns is None:
        where = last_line if last_line is not None else d.line
        raise LogError(
            f"{file}:{where}: the run that starts at line {d.line} has no result table "
            "(no 'size count type redop root time algbw busbw #wrong' header); the log is cut off or not nccl-tests"
        )
    if d.rows and len(d.rows[-1][1]) != d.width:
        _points(d, file)  # the cut-off row is the clearer message
    last = d.rows[-1][0] if d.rows else d.line
    raise LogError(
        f"{file}:{last}: the run that starts at line {d.line} ends without '# Avg bus bandwidth': "
        "the log is cut off (did the job stop early?)"
    )


def _columns(header: str, file: str, number: int) -> tuple[dict[str, int], int]:
    names = header.lstrip("#").split()
    columns: dict[str, int] = {}
    for i, name in enumerate(names):
        columns.setdefault(name, i)  # the first time/algbw/busbw/#wrong are the out-of-place ones
    missing = [n for n in _NEEDED if n not in columns]
    if missing:
        raise LogError(f"{file}:{number}: the column header lacks {', '.join(missing)}; not an nccl-tests table")
    counts = {n: names.count(n) for n in _PAIRED}
    if len(set(counts.values())) > 1:
        short = min(counts, key=lambda n: counts[n])
        raise LogError(
            f"{file}:{number}: the column header has {counts[short]} {short} column(s) but "
            f"{max(counts.values())} of the others; time, algbw, busbw and #wrong come once per placement "
            "(out-of-place, in-place): a column is missing"
        )
    return columns, len(names)


def _finish(d: _Draft, file: str) -> Run:
    assert d.columns is not None and d.rows is not None
    where = f"{file}:{d.line}"
    if not d.rows:
        raise LogError(f"{where}: the run's result table has no rows")
    ranks, nodes, per_node, device = _placement(d, file)
    points = _points(d, file)
    collective = _collective(d, file, ranks, points)
    return Run(file, d.line, collective, ranks, nodes, per_node, device, points)


def _placement(d: _Draft, file: str) -> tuple[int, int, int, str]:
    where = f"{file}:{d.line}"
    if not d.ranks:
        raise LogError(
            f"{where}: the run has no '#  Rank N Group G Pid P on HOST device D' lines, so its ranks and nodes "
            "cannot be counted; keep the header nccl-tests prints"
        )
    n = max(d.ranks) + 1
    if sorted(d.ranks) != list(range(n)):
        missing = sorted(set(range(n)) - set(d.ranks))
        shown = ", ".join(map(str, missing[:5])) + (", ..." if len(missing) > 5 else "")
        raise LogError(f"{where}: Rank lines missing for rank {shown} of 0-{n - 1}; keep every Rank line")
    per_host: dict[str, int] = {}
    for host, _ in d.ranks.values():
        per_host[host] = per_host.get(host, 0) + 1
    counts = sorted(set(per_host.values()))
    if len(counts) > 1:
        raise LogError(
            f"{where}: ranks are spread unevenly over the hosts ({', '.join(f'{h} {c}' for h, c in per_host.items())})"
            "; scalefront models the same number of GPUs on every node"
        )
    devices = sorted({dev for _, dev in d.ranks.values()})
    return n, len(per_host), counts[0], " / ".join(devices)


def _number(text: str, what: str, where: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise LogError(f"{where}: {what} {text!r} is not a number") from None
    if math.isnan(value) or math.isinf(value):
        raise LogError(f"{where}: {what} is {text}, not a measurement")
    if value < 0:
        raise LogError(f"{where}: {what} {text} is negative")
    return value


def _points(d: _Draft, file: str) -> tuple[Point, ...]:
    assert d.columns is not None and d.rows is not None
    col = d.columns
    points: list[Point] = []
    kinds: tuple[str, str] | None = None
    for number, fields in d.rows:
        where = f"{file}:{number}"
        if len(fields) != d.width:
            raise LogError(
                f"{where}: a row with {len(fields)} of the table's {d.width} columns; the line is cut off or "
                f"malformed: {' '.join(fields)!r}"
            )
        size = _number(fields[col["size"]], "size", where)
        if size <= 0 or size != int(size):
            raise LogError(f"{where}: size {fields[col['size']]} is not a positive whole number of bytes")
        time = _number(fields[col["time"]], "time", where)
        if time <= 0:
            raise LogError(f"{where}: time {fields[col['time']]} us is not a duration")
        algbw = _number(fields[col["algbw"]], "algbw", where)
        busbw = _number(fields[col["busbw"]], "busbw", where)
        _check_wrong(fields, col, where)
        kind = (fields[col.get("type", col["redop"])], fields[col["redop"]])
        if kinds is not None and kind != kinds:
            raise LogError(
                f"{where}: type/redop {'/'.join(kind)} after {'/'.join(kinds)} in one table: runs of several "
                "data types or operations (-d all / -o all) or of different tests mixed; run one type and op per log"
            )
        kinds = kind
        if points and size <= points[-1].size_bytes:
            raise LogError(
                f"{where}: size {int(size)} after {points[-1].size_bytes}: sizes must grow within a run; two runs "
                "are mixed in one table without their own '# nThread' headers"
            )
        points.append(Point(number, int(size), time, algbw, busbw))
    return tuple(points)


def _check_wrong(fields: list[str], col: dict[str, int], where: str) -> None:
    """Every #wrong column (out-of-place and in-place) must be 0 or N/A (validation off)."""
    for i, value in enumerate(fields):
        if i < col["#wrong"] or (i - col["#wrong"]) % 4 != 0:
            continue
        if value in ("0", "N/A"):
            continue
        raise LogError(
            f"{where}: #wrong is {value}: nccl-tests found wrong results at this size, so the run's timings "
            "cannot be trusted; fix the cluster and measure again"
        )


def _collective(d: _Draft, file: str, ranks: int, points: tuple[Point, ...]) -> str:
    """The run's collective: from `# Collective test concluded/starting` lines and command lines naming the
    binary, else from the table where it is unambiguous (busbw / algbw = 2 (n-1) / n with a reduction is
    all-reduce; nccl-tests doc/PERFORMANCE.md)."""
    where = f"{file}:{d.line}"
    names = {_strip_mpi(b) for _, b in d.named}
    if len(names) > 1:
        raise LogError(f"{where}: the run is named as {' and '.join(sorted(names))}; one test per run")
    ratio_kind = _ratio_kind(points, ranks, d)
    if names:
        (binary,) = names
        line = next(n for n, b in d.named if _strip_mpi(b) == binary)
        if binary not in COLLECTIVES:
            raise LogError(
                f"{file}:{line}: {binary} is not a test scalefront calibrates from (it reads {', '.join(COLLECTIVES)})"
            )
        collective = COLLECTIVES[binary]
        if ratio_kind is not None and (collective == "all_reduce") != (ratio_kind == "all_reduce"):
            factor = "2 (n-1) / n, all-reduce's" if ratio_kind == "all_reduce" else "(n-1) / n, not all-reduce's"
            raise LogError(f"{where}: the rows' busbw / algbw is {factor}, but the log names {binary}; runs mixed up?")
        return collective
    if ratio_kind == "all_reduce":
        return "all_reduce"
    raise LogError(
        f"{where}: cannot tell which test this run is (no '# Collective test concluded' line and no "
        "*_perf command line before it); add the command line (e.g. './build/all_gather_perf -b 8 -e 8G') "
        "above the run's '# nThread' line"
    )


def _ratio_kind(points: tuple[Point, ...], ranks: int, d: _Draft) -> str | None:
    """'all_reduce' when the biggest rows' busbw / algbw is 2 (n-1) / n and the op reduces, 'other' when it is
    (n-1) / n, None when the printed figures are too coarse to tell."""
    if ranks < 2:
        return None
    best = max(points, key=lambda p: p.algbw_gbytes_per_s)
    if best.algbw_gbytes_per_s < 1.0:  # two printed decimals: too coarse
        return None
    ratio = best.busbw_gbytes_per_s / best.algbw_gbytes_per_s
    n = float(ranks)
    if abs(ratio - 2.0 * (n - 1.0) / n) < 0.02 * ratio:
        return "all_reduce"
    if abs(ratio - (n - 1.0) / n) < 0.02 * ratio:
        return "other"
    return None
