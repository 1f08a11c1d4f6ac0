"""`scalefront sweep` and the exports behind it (scalefront.engine.export): schema, determinism, no overwrite,
Ctrl-C, one-line errors, what goes to stderr. In-process through scalefront.cli.main, except Ctrl-C."""

from __future__ import annotations

import io
import json
import os
import signal
import stat
import sys
from pathlib import Path

import polars as pl
import pytest

import scalefront.cli
import scalefront.engine.job
import scalefront.engine.sweep
from helpers import (
    SMALL_SCENARIO,
    assert_one_line_error,
    finish_on_a_terminal,
    run,
    small_scenario,
    start_on_a_terminal,
)
from scalefront import _core, schema
from scalefront.cli import main
from scalefront.engine.export import StreamWriter, read_frame, write_frame
from scalefront.engine.limits import LimitExceeded, SweepLimits, projected_s
from scalefront.engine.sweep import COLUMNS, Progress, run_sweep
from scalefront.errors import UsageError
from scalefront.inputs.scenario import load_scenario
from scalefront.schema import INPUT_COLUMNS, METRIC_COLUMNS


def leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.startswith("."))


# ---------------------------------------------------------------- schema


def test_frontier_csv_schema(small, tmp_path, capsys):
    out = tmp_path / "f.csv"
    code, _, err = run(["sweep", str(small), "--out", str(out)], capsys)
    assert code == 0, err
    header = out.read_text(encoding="utf-8").splitlines()[0]
    assert header.split(",") == COLUMNS
    back = pl.read_csv(out)
    assert back.columns == COLUMNS and back.height > 0
    frontier = run_sweep(load_scenario(small)).frontier()
    assert read_frame(out).equals(back)
    # Every value survives the trip through CSV (floats written in full).
    assert back.drop("overlap").equals(frontier.drop("overlap"))
    assert back["overlap"].cast(pl.Utf8).to_list() == frontier["overlap"].to_list()


def test_read_frame_round_trips_what_scalefront_wrote(small, tmp_path):
    # read_frame: "Read a frame scalefront wrote". The overlap column holds text: names ("dp") or fractions
    # written as in the scenario ("0.5"). A frame whose overlaps are all fractions must read back as text too, and
    # the recompute_modules column a sweep leaves empty as "" (CSV writes an empty string as nothing at all).
    small.write_text(small_scenario(overlap="[0.5]"), encoding="utf-8")
    frontier = run_sweep(load_scenario(small)).frontier()
    assert frontier.height > 0 and set(frontier["overlap"]) == {"0.5"}
    assert set(frontier["recompute_modules"]) == {""}
    out = write_frame(frontier, tmp_path / "f.csv")
    back = read_frame(out)
    assert back.schema == frontier.schema and back.equals(frontier)


def test_column_names_match_eval_json_keys(capsys):
    # One schema: eval --json has exactly the export columns, in the same order.
    code, out, _ = run(["eval", "--json"], capsys)
    assert code == 0
    assert list(json.loads(out)) == COLUMNS
    assert len(COLUMNS) == len(set(COLUMNS)) == len(INPUT_COLUMNS) + len(METRIC_COLUMNS)


def test_units_are_in_the_names():
    timed = [
        c
        for c in METRIC_COLUMNS
        if any(w in c for w in ("time", "comm", "bubble", "compute", "optimizer")) and not c.endswith("_bytes")
    ]
    # Prediction-interval ends carry the unit before their _lo / _hi.
    assert all(c.removesuffix("_lo").removesuffix("_hi").endswith(("_s", "_days")) for c in timed), timed
    assert all(c.endswith(("_gb", "_bytes")) for c in METRIC_COLUMNS if "memory" in c)
    assert all(
        c.removesuffix("_lo").removesuffix("_hi").endswith("_usd")
        for c in METRIC_COLUMNS
        if "cost" in c or "capex" in c
    )
    assert "energy_mwh" in METRIC_COLUMNS and "it_power_w" in METRIC_COLUMNS
    # The core's rule (metrics::UNIT_SUFFIXES): a metric in a unit with a suffix carries it; a new unit or a new
    # unitless metric needs no list here.
    assert schema.UNIT_SUFFIXES["days"] == "_days" and schema.UNIT_SUFFIXES["1/day"] == "_per_day"
    for c in schema.METRICS:
        suffix = schema.UNIT_SUFFIXES.get(c.unit)
        assert suffix is None or c.name.removesuffix("_lo").removesuffix("_hi").endswith(suffix), (c.name, c.unit)


def test_all_file_has_every_feasible_configuration_once(tmp_path, capsys):
    out, every = tmp_path / "f.csv", tmp_path / "all.csv"
    code, _, err = run(["sweep", "--out", str(out), "--all", str(every)], capsys)
    assert code == 0, err
    result = run_sweep(load_scenario("ib-vs-roce"))
    rows = pl.read_csv(every)
    assert rows.columns == COLUMNS
    assert rows.height == result.feasible > 0
    assert rows["feasible"].all()
    assert not rows.select(INPUT_COLUMNS).is_duplicated().any()
    # The frontier is a subset of the feasible rows.
    frontier = pl.read_csv(out)
    assert frontier.join(rows, on=INPUT_COLUMNS, how="anti").height == 0


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_all_export_of_a_small_scenario_equals_the_streamed_rows(small, tmp_path, capsys, suffix):
    every = tmp_path / f"all{suffix}"
    code, _, err = run(["sweep", str(small), "--all", str(every)], capsys)
    assert code == 0, err
    rows: list[pl.DataFrame] = []
    result = run_sweep(load_scenario(small), on_rows=rows.append)
    want = pl.concat(rows).sort(INPUT_COLUMNS)
    got = read_frame(every).with_columns(pl.col("overlap").cast(pl.Utf8)).sort(INPUT_COLUMNS)
    assert got.height == result.feasible
    assert got.equals(want)
    assert leftovers(tmp_path) == []


def test_empty_all_export_has_the_header(tmp_path, capsys):
    # Nothing fits: 8 GPUs of 80 GB for a 70B model with ZeRO 0 (weights, gradients, Adam: 16 bytes x 70B).
    path = tmp_path / "none.toml"
    path.write_text(
        small_scenario(model='"llama3-70b"', gpus="[8]", zero="[0]", tp="[8]", pp="[1]", vpp="[1]"), encoding="utf-8"
    )
    every, out = tmp_path / "all.csv", tmp_path / "f.csv"
    code, _, err = run(["sweep", str(path), "--all", str(every), "--out", str(out)], capsys)
    assert code == 0, err
    assert every.read_text(encoding="utf-8").splitlines() == [",".join(COLUMNS)]
    assert out.read_text(encoding="utf-8").splitlines() == [",".join(COLUMNS)]


# ---------------------------------------------------------------- determinism


def test_same_scenario_twice_gives_identical_bytes(tmp_path, capsys):
    for name in ("a", "b"):
        code, _, err = run(
            ["sweep", "--out", str(tmp_path / f"{name}.csv"), "--all", str(tmp_path / f"{name}-all.csv")], capsys
        )
        assert code == 0, err
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()
    # --all rows come in enumeration order, whatever the threads did: the same bytes too.
    assert (tmp_path / "a-all.csv").read_bytes() == (tmp_path / "b-all.csv").read_bytes()


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_all_export_is_the_same_whatever_the_number_of_threads(small, tmp_path, suffix):
    # One thread, two, and more threads than this machine has cores: the same rows in the same order, and for
    # CSV the same bytes.
    scenario = load_scenario(small)
    for threads in (1, 2, 5):
        writer = StreamWriter(tmp_path / f"all-{threads}{suffix}")
        result = run_sweep(scenario, on_rows=writer.write, threads=threads)
        writer.commit(result.kept.clear())
    frames = [read_frame(tmp_path / f"all-{t}{suffix}") for t in (1, 2, 5)]
    assert frames[0].height == result.feasible > 0
    assert frames[0].equals(frames[1]) and frames[0].equals(frames[2])
    if suffix == ".csv":
        assert len({(tmp_path / f"all-{t}.csv").read_bytes() for t in (1, 2, 5)}) == 1


def test_same_scenario_twice_gives_equal_parquet(small, tmp_path, capsys):
    for name in ("a", "b"):
        code, _, err = run(["sweep", str(small), "--out", str(tmp_path / f"{name}.parquet")], capsys)
        assert code == 0, err
    a, b = pl.read_parquet(tmp_path / "a.parquet"), pl.read_parquet(tmp_path / "b.parquet")
    assert a.columns == COLUMNS and a.height > 0
    assert a.equals(b)
    assert read_frame(tmp_path / "a.parquet").equals(run_sweep(load_scenario(small)).frontier())


# ---------------------------------------------------------------- no overwrite


@pytest.mark.parametrize("flag", ["--out", "--all"])
def test_existing_output_is_not_replaced_without_force(small, tmp_path, capsys, flag):
    target = tmp_path / "taken.csv"
    target.write_text("precious\n", encoding="utf-8")
    before = target.stat()
    other = tmp_path / "other.csv"
    other_flag = "--all" if flag == "--out" else "--out"
    code, out, err = run(["sweep", str(small), flag, str(target), other_flag, str(other)], capsys)
    assert_one_line_error(code, out, err, str(target), "already exists", "--force")
    assert target.read_text(encoding="utf-8") == "precious\n"
    assert target.stat().st_mtime_ns == before.st_mtime_ns
    assert not other.exists()  # checked before any work: the other file is not written either
    assert leftovers(tmp_path) == []

    code, out, err = run(["sweep", str(small), flag, str(target), other_flag, str(other), "--force"], capsys)
    assert code == 0, err
    assert target.read_text(encoding="utf-8").splitlines()[0] == ",".join(COLUMNS)
    assert other.exists() and leftovers(tmp_path) == []


def test_target_appearing_while_writing_is_not_replaced(tmp_path):
    frame = pl.DataFrame({"a": [1, 2]})
    target = tmp_path / "t.csv"
    writer = StreamWriter(target)
    writer.write(frame)
    target.write_text("someone else's\n", encoding="utf-8")
    with pytest.raises(UsageError, match="appeared while writing"):
        writer.commit(frame.clear())
    assert target.read_text(encoding="utf-8") == "someone else's\n"
    assert leftovers(tmp_path) == []
    # With force it is replaced; abort leaves nothing.
    writer = StreamWriter(target, force=True)
    writer.write(frame)
    writer.commit(frame.clear())
    assert pl.read_csv(target).equals(frame)
    writer = StreamWriter(tmp_path / "u.parquet")
    writer.write(frame)
    writer.abort()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.csv"]


def test_written_files_get_the_usual_permissions(small, tmp_path, capsys):
    # Files are written beside the target and renamed into place; the result must still be an ordinary file
    # (mode 0666 less the umask, as open() would make it), not the temporary file's private 0600.
    umask = os.umask(0o022)
    os.umask(umask)
    out, every = tmp_path / "f.csv", tmp_path / "all.parquet"
    code, _, err = run(["sweep", str(small), "--out", str(out), "--all", str(every)], capsys)
    assert code == 0, err
    for path in (out, every):
        assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask, path


# ---------------------------------------------------------------- one-line errors


@pytest.mark.parametrize(
    "args, mentions",
    [
        (["--group-by", "fabrc"], ["group-by axis 'fabrc'", "fabric"]),
        (["--group-by", ","], ["--group-by"]),
        (["--objectives", "mfu"], ["two or three objectives, got 1"]),
        (["--objectives", "mfu,speed"], ["objective 'speed'", "time_to_train_days"]),
        (["--objectives", "mfu,cost_to_train_usd,energy_mwh,network_capex_usd"], ["two or three objectives, got 4"]),
        (["--max-configs", "10"], ["built-in scenario ib-vs-roce", "138,240 configurations", "--max-configs 10"]),
        (["--out", "x.xlsx"], ["x.xlsx", "'.xlsx'", ".csv or .parquet"]),
        (["--all", "x.xlsx"], ["x.xlsx", "'.xlsx'"]),
        (["--out", "nodir/f.csv"], ["nodir", "does not exist"]),
        (["--out", "same.csv", "--all", "same.csv"], ["--out and --all name the same file, same.csv"]),
        (["nosuch"], ["nosuch", "cannot read", "nor a built-in scenario (ib-vs-roce, large, lifecycle, mix)"]),
        (["ib-vs-roc"], ["ib-vs-roc", "did you mean 'ib-vs-roce'?"]),
        (["--max-configs", "many"], ["--max-configs"]),
    ],
    ids=[
        "group-by",
        "group-by-empty",
        "one-objective",
        "unknown-objective",
        "four-objectives",
        "max-configs",
        "out-xlsx",
        "all-xlsx",
        "missing-dir",
        "same-file",
        "unknown-scenario",
        "misspelt-scenario",
        "max-configs-text",
    ],
)
def test_bad_sweep_arguments_exit_2_with_one_line(tmp_path, capsys, monkeypatch, args, mentions):
    monkeypatch.chdir(tmp_path)
    code, out, err = run(["sweep", *args], capsys)
    assert_one_line_error(code, out, err, *mentions)
    assert list(tmp_path.iterdir()) == []


def test_catalog_flag_adds_a_gpu_to_a_scenario(small, my_gpu_catalog, tmp_path, capsys):
    small.write_text(small_scenario(gpu='["my-gpu"]'), encoding="utf-8")
    code, _, err = run(["sweep", str(small), "--out", str(tmp_path / "f.csv")], capsys)
    assert_one_line_error(code, "", err, "unknown GPU 'my-gpu'")
    code, _, err = run(
        ["sweep", str(small), "--catalog", str(my_gpu_catalog), "--out", str(tmp_path / "f.csv")], capsys
    )
    assert code == 0, err
    assert set(pl.read_csv(tmp_path / "f.csv")["gpu"]) == {"my-gpu"}


# ---------------------------------------------------------------- what goes where


def test_out_when_not_a_terminal_writes_only_the_wrote_line(small, tmp_path, capsys):
    # capsys streams are not terminals: no progress line, no count line, no table; one line on stderr.
    out = tmp_path / "f.csv"
    code, stdout, stderr = run(["sweep", str(small), "--out", str(out)], capsys)
    assert code == 0
    assert stdout == ""
    assert stderr == f"wrote {out}\n"
    every = tmp_path / "all.csv"
    code, stdout, stderr = run(["sweep", str(small), "--out", str(tmp_path / "g.csv"), "--all", str(every)], capsys)
    assert code == 0 and stdout == "" and stderr == f"wrote {tmp_path / 'g.csv'}, {every}\n"


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_all_with_stdout_piped_says_what_it_wrote_on_stderr(small, tmp_path, monkeypatch):
    # `sweep --all F | less` on a terminal: the frontiers go to the pipe, "wrote F" to the terminal (stderr),
    # never into the piped result.
    out, err = io.StringIO(), _Terminal()
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", err)
    every = tmp_path / "all.csv"
    assert main(["sweep", str(small), "--all", str(every)]) == 0
    assert f"wrote {every}\n" in err.getvalue()
    assert "wrote" not in out.getvalue()
    assert out.getvalue().startswith("scenario small: ") and "Pareto frontier" in out.getvalue()


def test_without_out_the_frontier_is_printed(small, capsys):
    code, stdout, stderr = run(
        ["sweep", str(small), "--group-by", "gpus", "--objectives", "mfu,cost_to_train_usd"], capsys
    )
    assert code == 0 and stderr == ""
    result = run_sweep(load_scenario(small))
    assert stdout.startswith(f"scenario small: {result.evaluated:,} configurations in ")
    assert f"{result.feasible:,} feasible" in stdout
    assert "Pareto frontier (mfu vs cost_to_train_usd) per gpus:" in stdout
    assert "fastest configuration per fabric and GPU count:" in stdout


class TickingClock:
    """An injected clock that moves `step` seconds each time it is read."""

    def __init__(self, step: float):
        self.now, self.step = 0.0, step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


def test_time_limit_projection_uses_the_work_rate():
    limits = SweepLimits("s.toml", 1_000_000, time_limit_s=100.0)
    # 2 s for 10% of the work (100 of 1,000 units): 18 s left, 20 s in all, under the limit of 100.
    p = Progress(done=990_000, total=1_000_000, feasible=5, elapsed_s=2.0, work_done=100, work_total=1000)
    assert projected_s(p) == 20.0
    limits(p)
    # 2 s for 1% of the work: 198 s left, 200 s in all; although 99% of the configurations are done (most were
    # rejected at once), the work rate stops it.
    p = Progress(done=990_000, total=1_000_000, feasible=5, elapsed_s=2.0, work_done=10, work_total=1000)
    assert projected_s(p) == 200.0
    with pytest.raises(LimitExceeded, match=r"would take about 200 s .* over --time-limit 100 s"):
        limits(p)
    # Not before the first second (a projection from the first moments says little) ...
    limits(Progress(done=1, total=1_000_000, feasible=0, elapsed_s=0.5, work_done=1, work_total=1000))
    # ... and a finished sweep is never stopped, even past the limit.
    limits(Progress(done=1_000_000, total=1_000_000, feasible=5, elapsed_s=150.0, work_done=1000, work_total=1000))


def test_time_limit_stops_a_held_sweep_at_the_first_check_past_the_limit(small, tmp_path, capsys, monkeypatch):
    # Gated on events, timed by an injected clock: the engine is held at the pause gate before its first task, so
    # nothing is ever done and no projection exists; the clock moves 2 s per read (two reads per poll with --all:
    # the stream's deadline and the progress), so the checks see 4, 8 s: the first past --time-limit 5 stops it.
    # The sweep is cancelled, the error is one line, and neither output nor any temporary file is left.
    handle = _core.SweepHandle()
    handle.pause()
    monkeypatch.setattr(scalefront.engine.sweep, "SweepHandle", lambda: handle)
    monkeypatch.setattr(scalefront.engine.job, "CLOCK", TickingClock(2.0))
    seen: list[float] = []
    check = SweepLimits.check_time

    def spy(self, p):
        seen.append(p.elapsed_s)
        check(self, p)

    monkeypatch.setattr(SweepLimits, "check_time", spy)
    out, every = tmp_path / "f.csv", tmp_path / "all.csv"
    code, stdout, err = run(["sweep", str(small), "--out", str(out), "--all", str(every), "--time-limit", "5"], capsys)
    assert_one_line_error(code, stdout, err, str(small), "over --time-limit 5 s", ": 0 done in 8.0 s")
    assert seen == [4.0, 8.0]
    assert handle.cancelled() and handle.done() == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["small.toml"]


# ---------------------------------------------------------------- Ctrl-C


@pytest.mark.parametrize(
    "name, force, signum",
    [
        ("OUT.csv", False, signal.SIGINT),
        ("OUT.parquet", False, signal.SIGINT),
        ("OUT.csv", True, signal.SIGINT),
        ("OUT.csv", False, signal.SIGTERM),
        ("OUT.parquet", False, signal.SIGTERM),
    ],
    ids=["csv", "parquet", "csv-force-existing", "sigterm-csv", "sigterm-parquet"],
)
def test_ctrl_c_and_sigterm_stop_the_sweep_and_leave_nothing(tmp_path, name, force, signum):
    # A real process, interrupted once it shows progress (an event, not a delay; the sweep is held at the engine's
    # pause gate, so it cannot end first): Ctrl-C exits 130, SIGTERM (kill, a job scheduler's stop) 143; neither
    # OUT nor any hidden temporary file or directory is left, and an existing file is untouched.
    (tmp_path / "small.toml").write_text(SMALL_SCENARIO, encoding="utf-8")
    if force:
        (tmp_path / name).write_text("precious\n", encoding="utf-8")
    cmd = [sys.executable, "-m", "scalefront", "sweep", "small.toml", "--all", name] + (["--force"] if force else [])
    p, master = start_on_a_terminal(cmd, tmp_path)
    p.send_signal(signum)
    out, err = finish_on_a_terminal(p, master)
    word = "interrupted" if signum == signal.SIGINT else "terminated"
    assert p.returncode == (130 if signum == signal.SIGINT else 143), err
    assert "Traceback" not in err and err.strip().endswith(f"scalefront: {word}; nothing was written"), err
    assert out == ""
    left = sorted(os.listdir(tmp_path))
    assert left == sorted(["small.toml", *([name] if force else [])]), left
    if force:
        assert (tmp_path / name).read_text(encoding="utf-8") == "precious\n"
