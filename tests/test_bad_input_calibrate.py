"""Bad nccl-tests logs and arguments for `scalefront calibrate`: one line naming the file and the line, exit 2,
nothing written; and the good log the cases are cut from is good."""

from __future__ import annotations

import pytest

from helpers import assert_one_line_error, files_in, run

NOT_UTF8 = b'name = "x"\n\xff\xfe = 1\n'


#: A 2-node all-reduce log in nccl-tests' layout (line numbers below count from 1).
NCCL_LOG = """\
# nThread 1 nGpus 1 minBytes 65536 maxBytes 1048576 step: 4(factor) warmup iters: 5 iters: 20
#
# Using devices
#  Rank  0 Group  0 Pid   1001 on nodeA device  0 [0x19] NVIDIA H100 80GB HBM3
#  Rank  1 Group  0 Pid   1002 on nodeB device  0 [0x19] NVIDIA H100 80GB HBM3
#
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
       65536         16384     float     sum      -1    20.00    3.28    3.28      0    20.00    3.28    3.28      0
      262144         65536     float     sum      -1    30.00    8.74    8.74      0    30.00    8.74    8.74      0
     1048576        262144     float     sum      -1    60.00   17.48   17.48      0    60.00   17.48   17.48      0
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 9.83
#
# Collective test concluded: all_reduce_perf
"""
_ROW10 = "      262144         65536     float     sum      -1    30.00    8.74    8.74      0" + (
    "    30.00    8.74    8.74      0"
)


def _log_with(old: str, new: str) -> str:
    assert old in NCCL_LOG
    return NCCL_LOG.replace(old, new, 1)


BAD_LOGS = {
    "no-table": ("just some text\nno results here\n", ":1: no nccl-tests run found"),
    "cut-off-line": (NCCL_LOG.split(_ROW10)[0] + _ROW10[:60] + "\n", ":10: a row with 6 of the table's 13 columns"),
    "cut-off-run": (NCCL_LOG.split("# Out of bounds")[0], ":11: the run that starts at line 1 ends without"),
    "unknown-collective": (
        _log_with("all_reduce_perf", "broadcast_perf"),
        ":15: broadcast_perf is not a test scalefront calibrates from",
    ),
    "mixed-runs": (
        _log_with(
            "# Out of bounds values : 0 OK\n", _ROW10.replace("sum", "none") + "\n# Out of bounds values : 0 OK\n"
        ),
        ":12: type/redop float/none after float/sum in one table",
    ),
    "sizes-restart": (
        _log_with("# Out of bounds values : 0 OK\n", _ROW10 + "\n# Out of bounds values : 0 OK\n"),
        ":12: size 262144 after 1048576: sizes must grow within a run",
    ),
    "zero-time": (
        _log_with("    30.00    8.74    8.74      0    30", "     0.00    8.74    8.74      0    30"),
        ":10: time 0.00 us",
    ),
    "negative": (
        _log_with("   17.48   17.48      0    60", "   17.48  -17.48      0    60"),
        ":11: busbw -17.48 is negative",
    ),
    "nan": (
        _log_with("    3.28    3.28      0    20", "    3.28     nan      0    20"),
        ":9: busbw is nan, not a measurement",
    ),
    "wrong-results": (_log_with("    8.74      0    30.00", "    8.74      3    30.00"), ":10: #wrong is 3"),
    "missing-ranks": (
        _log_with("#  Rank  1 Group  0 Pid   1002 on nodeB", "#  Rank  2 Group  0 Pid   1002 on nodeB"),
        "Rank lines missing for rank 1",
    ),
    "no-ranks": (
        "\n".join(line for line in NCCL_LOG.splitlines() if "Rank" not in line) + "\n",
        ":1: the run has no '#  Rank N Group G Pid P on HOST device D' lines",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_LOGS))
def test_bad_nccl_logs_are_one_line_naming_file_and_line(tmp_path, capsys, case):
    text, mention = BAD_LOGS[case]
    log = tmp_path / "run.txt"
    log.write_text(text, encoding="utf-8")
    out = tmp_path / "fab.toml"
    before = files_in(tmp_path)
    code, stdout, err = run(["calibrate", str(log), "--fabric", "ib-ndr", "--out", str(out)], capsys)
    assert_one_line_error(code, stdout, err, f"{log}", mention)
    assert files_in(tmp_path) == before


def test_nccl_log_that_is_not_utf8(tmp_path, capsys):
    log = tmp_path / "run.txt"
    log.write_bytes(NCCL_LOG.encode() + b"\xff\xfe garbage\n")
    code, out, err = run(["calibrate", str(log), "--fabric", "ib-ndr", "--out", str(tmp_path / "f.toml")], capsys)
    assert_one_line_error(code, out, err, f"{log}:16: not a UTF-8 text file (byte")
    assert files_in(tmp_path) == ["run.txt"]


def test_the_good_nccl_log_above_is_good(tmp_path, capsys):
    # The bad cases are each one change away from a log that calibrates.
    log = tmp_path / "run.txt"
    log.write_text(NCCL_LOG, encoding="utf-8")
    code, _, err = run(
        ["calibrate", str(log), "--fabric", "ib-ndr", "--gpu", "h100-sxm", "--out", str(tmp_path / "f.toml")], capsys
    )
    assert code == 0, err


@pytest.mark.parametrize(
    ("argv", "mention"),
    [
        (["--fabric", "ib-nd"], "unknown fabric 'ib-nd'"),
        (["--fabric", "ib-ndr", "--name", "my fabric"], "--name 'my fabric'"),
        (["--fabric", "ib-ndr", "--topology", "mesh"], "unknown topology 'mesh'"),
    ],
)
def test_calibrate_arguments(tmp_path, capsys, argv, mention):
    log = tmp_path / "run.txt"
    log.write_text(NCCL_LOG, encoding="utf-8")
    code, out, err = run(["calibrate", str(log), "--out", str(tmp_path / "f.toml"), *argv], capsys)
    assert_one_line_error(code, out, err, mention)
    assert files_in(tmp_path) == ["run.txt"]
