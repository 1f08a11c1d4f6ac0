"""The catalog figure table (`scalefront_core::figures`) against the catalog classes, and what derives from it: every
field of every entry class has one row (and every row a field) with the same kind, limits and choices; the SI
conversions, sources, ranges and the ROI's labels and units follow the rows."""

from __future__ import annotations

import copy
import types
import typing
from typing import Any

import annotated_types as at
import pytest
from pydantic import BaseModel

from scalefront.dev.catalog_docs import render_section, render_units
from scalefront.inputs.catalog import FabricEntry, GpuEntry, builtin_catalog
from scalefront.inputs.catalog.figures import FIGURES, Figure, figure
from scalefront.inputs.catalog.loader import ENTRY_CLASSES
from scalefront.roi.uncertain import fabric_inputs, price_inputs

#: The entry fields that are not catalog fields: where the sources and the ranges of the others are kept.
BOOKKEEPING = {"sources", "ranges", "status"}


def _fields(cls: Any) -> dict[str, Any]:
    return {name: info for name, info in cls.model_fields.items() if name not in BOOKKEEPING}


def test_every_field_of_every_entry_class_has_one_row_and_every_row_a_field():
    assert sorted(ENTRY_CLASSES) == sorted(FIGURES)
    for section, cls in ENTRY_CLASSES.items():
        # The same names in the same order: the core specs, the docs and the error messages follow the table's.
        assert list(_fields(cls)) == list(FIGURES[section]), section


def _base(annotation: Any) -> tuple[Any, list[Any]]:
    """The annotation without `| None`, and the constraints inside it."""
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        annotation = next(a for a in typing.get_args(annotation) if a is not type(None))
    if typing.get_origin(annotation) is typing.Annotated:
        inner, *extra = typing.get_args(annotation)
        return inner, [m for e in extra for m in getattr(e, "metadata", [e])]
    return annotation, []


def _kind(annotation: Any) -> str:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "table"
    if typing.get_origin(annotation) is typing.Literal or annotation is str:
        return "text"
    if typing.get_origin(annotation) is list:
        (item,) = typing.get_args(annotation)
        return "grid" if typing.get_origin(_base(item)[0]) is list else "names"
    return {float: "float", int: "count", bool: "flag"}[annotation]


def _limits(metadata: list[Any]) -> dict[str, float]:
    """The pydantic constraints as {ge, gt, le, lt}."""
    kinds = (at.Ge, at.Gt, at.Le, at.Lt)
    return {
        type(m).__name__.lower(): float(getattr(m, type(m).__name__.lower())) for m in metadata if isinstance(m, kinds)
    }


@pytest.mark.parametrize("section", sorted(FIGURES))
def test_each_field_has_its_rows_kind_limits_and_choices(section):
    for name, info in _fields(ENTRY_CLASSES[section]).items():
        fig = FIGURES[section][name]
        annotation, inner = _base(info.annotation)
        assert _kind(annotation) == fig.kind, (section, name)
        choices = typing.get_args(annotation) if typing.get_origin(annotation) is typing.Literal else ()
        assert list(choices) == fig.choices, (section, name)
        if fig.kind in ("float", "count"):
            table = {k: v for k in ("ge", "gt", "le", "lt") if (v := getattr(fig, k)) is not None}
            assert _limits([*info.metadata, *inner]) == table, (section, name)


def test_the_core_spec_is_each_figure_in_si():
    cat = builtin_catalog()
    ib = cat.fabric("ib-ndr").core_spec()
    # ib-ndr: 400 Gb/s = 400e9 / 8 bytes/s; NIC latency 5 us; a hop 0.2 us (data/fabrics.toml).
    assert ib["link_bytes_per_s"] == 5e10
    assert ib["nic_latency_s"] == pytest.approx(5e-6, rel=1e-15)
    assert ib["switch_hop_latency_s"] == pytest.approx(2e-7, rel=1e-15)
    assert ib["links_per_gpu"] == 1 and ib["load_balancing"] == "adaptive"
    assert "name" not in ib and "kind" not in ib
    h100 = cat.gpu("h100-sxm").core_spec()
    # H100 SXM: 989 TFLOP/s dense BF16, 80 GB HBM at 3,350 GB/s (data/gpus.toml).
    assert (h100["peak_bf16_flops"], h100["hbm_bytes"], h100["hbm_bytes_per_s"]) == (989e12, 80e9, 3350e9)
    assert "scale_up_link" not in h100 and "default_scale_up" not in h100


def test_a_model_spec_nests_its_moe_and_mla_fields_and_drops_absent_groups():
    cat = builtin_catalog()
    dsv3 = cat.model("deepseek-v3").core_spec()
    # DeepSeek-V3: 256 routed experts, top 8, 1 shared, first 3 layers dense; KV latent rank 512 (arXiv 2412.19437).
    assert dsv3["moe"]["experts"] == 256 and dsv3["moe"]["top_k"] == 8 and dsv3["moe"]["shared_experts"] == 1
    assert dsv3["moe"]["first_dense_layers"] == 3 and dsv3["mla"]["kv_lora_rank"] == 512
    dense = cat.model("llama3-70b").core_spec()
    assert dense["moe"] is None and dense["mla"] is None and "seq_len" not in dense


def test_sources_are_required_where_the_table_says():
    text = {f.name for f in FIGURES["gpus"].values() if f.kind == "text" and f.sourced}
    assert text == {"scale_up_link"}
    raw = dict(builtin_catalog().gpu("h100-sxm").model_dump(), sources={})
    with pytest.raises(ValueError, match="peak_bf16_tflops: no source"):
        GpuEntry.model_validate(raw)


def _fabric_with(fabric: str, **ranges: tuple[float, float, float]) -> FabricEntry:
    cat = builtin_catalog()
    entry = cat.fabric(fabric)
    raw = entry.model_dump(exclude_unset=True) | {
        k: dict(zip(("low", "typical", "high"), v, strict=True)) for k, v in ranges.items()
    }
    return FabricEntry.model_validate({**raw, "sources": entry.sources})


def test_a_ranged_fabric_figure_is_an_roi_input_in_si_with_its_label_and_unit():
    entry = _fabric_with("ib-ndr", link_gbps=(200.0, 400.0, 800.0), nic_latency_us=(4.0, 5.0, 6.0))
    cat = copy.deepcopy(builtin_catalog())
    cat.fabrics["ib-ndr"] = entry
    inputs = {i.name: i for i in fabric_inputs(cat, [("ib-ndr", 0)])}
    rate = inputs["ib-ndr line rate"]
    # 200 / 400 / 800 Gb/s = 2.5e10 / 5e10 / 1e11 bytes/s, shown back in Gb/s.
    assert (rate.low, rate.typical, rate.high) == (2.5e10, 5e10, 1e11)
    assert rate.unit == "gbps" and rate.targets == [{"section": "fabric", "side": 0, "field": "link_bytes_per_s"}]
    assert rate.typical * rate.display_scale == pytest.approx(400.0)
    # A figure of the NIC and its transport belongs to the NIC (one draw for every fabric on it, issue 19).
    latency = inputs[f"{entry.nic} NIC latency"]
    assert latency.unit == "us" and latency.high == pytest.approx(6e-6)


def test_price_inputs_take_their_labels_and_units_from_the_table():
    cat = builtin_catalog()
    inputs = {i.name: i for i in price_inputs(cat, [("ib-ndr", 0), ("roce-400g", 1)], "h100-sxm", "nvlink4-8", {})}
    # Both fabrics buy the same ConnectX-7 card at the same range: one input, labelled by its figure and both ids;
    # InfiniBand's NIC-side module is NVIDIA's (LinkX), its own input.
    assert inputs["NIC price (ib-ndr, roce-400g)"].unit == "usd"
    assert inputs["NIC price (ib-ndr, roce-400g)"].targets == [
        {"section": "network", "side": s, "field": "nic_usd"} for s in (0, 1)
    ]
    assert inputs["ib-ndr NIC optics price"].targets == [{"section": "network", "side": 0, "field": "nic_optic_usd"}]
    assert inputs["PUE"].unit == "ratio" and inputs["utilisation"].unit == "fraction"
    for i in inputs.values():
        (target,) = {t["section"] for t in i.targets}
        section = {"network": "prices.fabric", "gpu": "prices.gpu", "economics": "prices.economics"}[target]
        fig = figure(section, i.targets[0]["field"])
        assert fig.sampled and fig.label in i.name and fig.unit == i.unit


def test_figures_are_read_once_from_the_core():
    fig = figure("fabrics", "link_gbps")
    assert isinstance(fig, Figure) and fig.si_scale == 1e9 / 8 and fig.unit_text == "Gb/s" and fig.sampled
    assert figure("prices.fabric", "dac_reach_m").sampled is False


def test_data_readme_tables_are_rendered_from_the_rows():
    fabrics = render_section("fabrics")
    assert "| `link_gbps` | Gb/s | > 0; `roi` samples its range | line rate of one NIC port |" in fabrics
    assert "| `switch_radix` | count | integer >= 4 | ports per switch at `link_gbps` |" in fabrics
    assert "| `forwarding` |  | `cut-through`, `store-and-forward` |" in fabrics
    assert "| `host_link_m` | m | >= 0; default 30.0 |" in render_section("topologies")
    assert "| `gbps` | Gb/s | 1.25 x 10^8 bytes/s |" in render_units()
