"""The detail tab's lines that name a configuration's hardware and settings."""

from __future__ import annotations

from scalefront_tui.widgets.detail import _gpu_line, _settings_line


def test_the_gpu_line_names_the_nvlink_segment_only_where_one_is_set():
    # A GB200 job laid out in Slurm segments of 16 trays says so beside its NVL72 domain; without one (0, or a row
    # from before the input existed) the line is as it was.
    row = {"gpu": "gb200", "scale_up": "nvlink5-72", "precision": "bf16", "nvlink_segment_nodes": 16}
    assert _gpu_line(row) == "gb200, nvlink5-72 domain in 16-server segments, bf16"
    assert _gpu_line({**row, "nvlink_segment_nodes": 0}) == "gb200, nvlink5-72 domain, bf16"
    del row["nvlink_segment_nodes"]
    assert _gpu_line(row) == "gb200, nvlink5-72 domain, bf16"


def test_the_settings_line_names_the_modules_a_selective_configuration_reruns():
    # A space that names Megatron-Core's modules shows them beside selective recomputation only; elsewhere (none,
    # full, no modules, or a row from before the column existed) the line is as it was.
    row = {"micro_batch": 1, "zero": 1, "recompute": "selective", "overlap": "dp", "recompute_modules": "layernorm,moe"}
    assert _settings_line(row) == "mb 1, ZeRO-1, recompute selective (layernorm, moe), overlap dp"
    assert _settings_line({**row, "recompute": "full"}) == "mb 1, ZeRO-1, recompute full, overlap dp"
    assert _settings_line({**row, "recompute_modules": ""}) == "mb 1, ZeRO-1, recompute selective, overlap dp"
    del row["recompute_modules"]
    assert _settings_line(row) == "mb 1, ZeRO-1, recompute selective, overlap dp"
