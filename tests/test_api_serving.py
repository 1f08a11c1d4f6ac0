"""`scalefront.api`'s serving frontier, as the UI's serving tab shows it: the sweep a training scenario implies is
`scalefront inference --scenario` on the file it writes, SLOs on an objective refilter the held frontier and give
the same rows as a sweep with them, and an SLO nothing meets is an empty frontier with a message."""

from __future__ import annotations

import json
import tomllib

import pytest

from helpers import run
from scalefront import api


@pytest.fixture(scope="module")
def draft() -> api.ScenarioDraft:
    return api.ScenarioDraft.open("ib-vs-roce")


def _cli_rows(tmp_path, capsys, sweep: api.ServingSweep, slos: list[str]) -> list[tuple[str, int, int, int, float]]:
    path = tmp_path / "serving.toml"
    path.write_text(sweep.toml())
    code, out, err = run(["inference", "--scenario", str(path), *[f"--slo={s}" for s in slos], "--json"], capsys)
    assert code == 0, err
    return [
        (f["cluster"]["fabric"], p["tp"], p["pp"], p["batch"], p["tpot_s"])
        for f in json.loads(out)
        for p in sorted(f["points"], key=lambda p: -p["output_tokens_per_s_per_gpu"])
    ]


def _rows(view: api.ServingView) -> list[tuple[str, int, int, int, float]]:
    return [(r["fabric"], r["tp"], r["pp"], r["batch"], r["tpot_s"]) for r in view.frame.iter_rows(named=True)]


def test_the_default_serving_sweep_serves_the_scenarios_model_over_each_fabric(draft):
    sweep = api.serving_sweep(draft)
    doc = tomllib.loads(sweep.toml())["serving"]
    # The scenario's model, GPU and fabrics; two 8-GPU servers; `scalefront inference`'s default workload.
    assert (doc["model"], doc["gpu"], doc["gpus"]) == ("llama3-70b", "h100-sxm", 16)
    assert doc["fabric"] == ["ib-ndr@default", "roce-400g@untuned", "eth-100g-tcp"]
    assert "input_tokens" not in doc and "quantization" not in doc
    view = sweep.view()
    assert set(view.frame["fabric"]) == set(doc["fabric"]) and view.message == ""
    assert view.evaluated + view.rejected == 3 * 4 * 2 * 7  # fabrics x tp x pp x batch


# Every bound here leaves layouts on the frontier (the fastest prefill of 70B on 16 H100s takes ~41 ms), so the
# comparison is between rows, not two empty frontiers.
@pytest.mark.parametrize("slos", [[], ["tpot_s<=0.02"], ["tpot_s<=0.02", "ttft_s<=0.05"], ["ttft_s<=0.045"]])
def test_the_frontier_is_scalefront_inferences_for_the_same_slos(draft, tmp_path, capsys, slos):
    sweep = api.serving_sweep(draft)
    view = sweep.view([api.parse_slo(s) for s in slos])
    assert not view.frame.is_empty()
    assert _rows(view) == _cli_rows(tmp_path, capsys, sweep, slos)
    # A bound on TPOT (an objective) refilters the frontier; one on TTFT (not one) needs a new sweep.
    assert view.rerun == any(s.startswith("ttft") for s in slos)
    for name, _, limit in view.slos:
        assert all(v <= limit for v in view.frame[name])


def test_an_slo_nothing_meets_is_an_empty_frontier_with_its_reason(draft):
    view = api.serving_sweep(draft).view([("tpot_s", "<=", 1e-4)])  # 0.1 ms a token: no GPU decodes 70B so fast
    assert view.frame.is_empty()
    assert view.over_slo == view.evaluated > 0  # every possible layout is over it
    assert view.message.startswith(f"No serving layout meets TPOT <= 100us: {view.evaluated:,} possible layouts")


def test_serving_columns_carry_the_schemas_labels_and_units():
    specs = {s.name: s for s in api.serving_columns(api.SERVING_COLUMNS + api.SERVING_DETAIL)}
    assert (specs["tpot_s"].label, specs["tpot_s"].unit) == ("TPOT", "s")
    assert specs["cost_usd_per_million_tokens"].format(0.3) == "$0.30"
    assert specs["kv_cache_bytes"].format(35.1e9) == "35.1 GB"
