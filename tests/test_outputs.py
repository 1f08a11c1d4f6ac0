"""A command's outputs are all written or none (review 2, T8, T11), and a Parquet file's bytes depend on its rows
only (T13): a full disk is one line and leaves nothing, roi never leaves its table or half a report, and --all
Parquet is the same bytes however its rows arrived (chunks, threads, shards)."""

from __future__ import annotations

import errno
import hashlib
from pathlib import Path

import polars as pl
import pytest

from helpers import assert_one_line_error, files_in, run, small_scenario
from scalefront.engine.export import PARQUET_ROW_GROUP_ROWS, Outputs, StreamWriter

ONE_GPU = small_scenario(gpu='["h100-sxm"]', gpus="[64]")


def _rows(n: int) -> pl.DataFrame:
    return pl.DataFrame({"i": range(n), "x": [i * 0.5 for i in range(n)], "s": [f"r{i % 7}" for i in range(n)]})


def _streamed(frame: pl.DataFrame, chunk: int, path: Path) -> str:
    writer = StreamWriter(path)
    for start in range(0, frame.height, chunk):
        writer.write(frame.slice(start, chunk))
    writer.commit(frame.clear())
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_parquet_bytes_depend_on_the_rows_not_on_how_they_arrived(tmp_path):
    # 2.5 row groups of rows, streamed in chunks of the engine's size (16,384), of another (10,000: another thread
    # count cuts the stream elsewhere), and as one frame: one file, byte for byte.
    frame = _rows(PARQUET_ROW_GROUP_ROWS * 5 // 2)
    hashes = {_streamed(frame, chunk, tmp_path / f"c{chunk}.parquet") for chunk in (16_384, 10_000, frame.height)}
    assert len(hashes) == 1
    assert pl.read_parquet(tmp_path / "c10000.parquet").equals(frame)


def _full_disk_after(monkeypatch: pytest.MonkeyPatch, writes: int) -> None:
    """Path.write_text fails with ENOSPC from its `writes`-th call on, as a full disk does."""
    original = Path.write_text
    calls = [0]

    def write_text(self: Path, data: str, *args: object, **kwargs: object) -> int:
        calls[0] += 1
        if calls[0] >= writes:
            raise OSError(errno.ENOSPC, "No space left on device")
        return original(self, data, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "write_text", write_text)


def test_a_full_disk_leaves_neither_the_roi_table_nor_half_a_report(tmp_path, monkeypatch, capsys):
    # The disk fills while the report's fourth file is written: the table and the first three files were already
    # written (to temporaries), and none of them is left; one line, exit 2.
    (tmp_path / "s.toml").write_text(ONE_GPU, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    _full_disk_after(monkeypatch, 4)
    code, out, err = run(["roi", "s.toml", "--samples", "100", "--out", "roi.csv", "--report", "rep"], capsys)
    assert_one_line_error(code, out, err, "no space left on device", "nothing was written")
    assert files_in(tmp_path) == ["s.toml"]


def test_a_full_disk_during_an_all_export_is_one_line(tmp_path, monkeypatch, capsys):
    (tmp_path / "s.toml").write_text(ONE_GPU, encoding="utf-8")
    monkeypatch.chdir(tmp_path)

    def full(*args: object, **kwargs: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(pl.DataFrame, "write_csv", full)
    code, out, err = run(["sweep", "s.toml", "--out", "f.parquet", "--all", "all.csv"], capsys)
    assert_one_line_error(code, out, err, "all.csv: cannot write it (no space left on device)")
    assert files_in(tmp_path) == ["s.toml"]


def test_roi_refuses_a_table_where_its_report_goes_before_any_work(tmp_path, monkeypatch, capsys):
    (tmp_path / "s.toml").write_text(ONE_GPU, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    for out_path, report in [("clash.csv", "clash.csv"), ("./clash.csv", "clash.csv")]:
        code, out, err = run(["roi", "s.toml", "--out", out_path, "--report", report], capsys)
        assert_one_line_error(code, out, err, "overlap")
    assert files_in(tmp_path) == ["s.toml"]


def test_outputs_place_all_or_none(tmp_path):
    # A failure after some files were staged places none of them; a commit places every one.
    with pytest.raises(RuntimeError), Outputs() as outputs:
        outputs.text("a\n", tmp_path / "a.txt")
        outputs.frame(_rows(3), tmp_path / "b.csv")
        raise RuntimeError("a limit, Ctrl-C, a full disk")
    assert files_in(tmp_path) == []
    with Outputs() as outputs:
        outputs.text("a\n", tmp_path / "new" / "a.txt")
        outputs.frame(_rows(3), tmp_path / "b.csv")
        assert files_in(tmp_path) != []  # the temporaries (and the new folder) exist while the work goes on
        outputs.commit()
    assert files_in(tmp_path) == ["b.csv", "new", "new/a.txt"]
