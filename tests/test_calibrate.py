"""`scalefront calibrate`: nccl-tests logs in, a fabric catalog entry out that loads with --catalog.

The round trip writes logs the model itself predicts with known figures and checks the fit finds them again; the
published logs (tests/data/nccl/, NVIDIA/nccl-tests #309) check the reader and that the fit gets close."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from helpers import REPO, files_in, run
from scalefront import _core
from scalefront.errors import UsageError
from scalefront.fidelity.calibrate import FITTED_FIELDS, MIN_SIZE_BYTES, calibrate
from scalefront.fidelity.nccl_log import parse_log
from scalefront.inputs.catalog import Catalog, builtin_catalog

NCCL = REPO / "tests" / "data" / "nccl"
GJ_AION = NCCL / "issue309-ib-ndr-h100-8-2-4-nodes.txt"
XE9680 = NCCL / "issue309-ib-ndr-xe9680-2-nodes.txt"
#: The nccl-tests convention for busbw / algbw (doc/PERFORMANCE.md), to print logs as nccl-tests would.
BUSBW_FACTOR = {"all_reduce": lambda n: 2 * (n - 1) / n, "all_to_all": lambda n: (n - 1) / n}
BINARY = {"all_reduce": "all_reduce_perf", "all_to_all": "alltoall_perf", "all_gather": "all_gather_perf"}


def synthetic_log(
    op: str, nodes: int, gpus_per_node: int, fabric: dict, times_scale: float = 1.0, device: str = "NVIDIA H100"
) -> str:
    """An nccl-tests log of `op` over `nodes` x `gpus_per_node` whose times are the core's for `fabric` (rail-fat-
    tree, nvlink4-8), 8 B to 8 GiB by factor 4, in nccl-tests' own layout, on GPUs named `device`."""
    cat = builtin_catalog()
    n = nodes * gpus_per_node
    sizes = [8 * 4**i for i in range(16)]
    times = _core.collective_times(
        {
            "scale_up": cat.scale_up_domain("nvlink4-8").core_spec(),
            "fabric": fabric,
            "topology": cat.topology("rail-fat-tree").core_spec(),
            "gpus": n,
            "server_gpus": gpus_per_node,
            "op": op,
            "sizes_bytes": [float(s) for s in sizes],
        }
    )
    redop = "sum" if op == "all_reduce" else "none"
    lines = [
        f"# nThread 1 nGpus 1 minBytes 8 maxBytes {sizes[-1]} step: 4(factor) warmup iters: 5 iters: 20 agg iters: 1 "
        "validation: 1 graph: 0",
        "#",
        "# Using devices",
    ]
    for r in range(n):
        host, dev = divmod(r, gpus_per_node)
        lines.append(
            f"#  Rank {r:2d} Group  0 Pid {1000 + r:6d} on node{host:03d} device  {dev} [0x{dev:02x}] {device}"
        )
    lines += [
        "#",
        "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw "
        "#wrong",
        "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)",
    ]
    for size, t in zip(sizes, times, strict=True):
        us = t * 1e6 * times_scale
        algbw = size / (us * 1e-6) / 1e9
        busbw = algbw * BUSBW_FACTOR.get(op, BUSBW_FACTOR["all_to_all"])(n)
        lines.append(
            f"{size:12d}  {size // 4:12d}     float  {redop:>6}      -1  {us:9.3f} {algbw:7.3f} {busbw:7.3f}      0  "
            f"{us:9.3f} {algbw:7.3f} {busbw:7.3f}      0"
        )
    lines += ["# Out of bounds values : 0 OK", "# Avg bus bandwidth    : 1.0", "#"]
    lines.append(f"# Collective test concluded: {BINARY[op]}")
    return "\n".join(lines) + "\n"


def fabric_with(name: str, **values: float) -> dict:
    return builtin_catalog().fabric(name).model_copy(update=values).core_spec()


# ---------------------------------------------------------------- the reader


def test_published_logs_read_as_the_runs_they_are():
    # gj-aion's three runs in one file: 8, 2 and 4 nodes of 8 H100 (the thread's 64, 16 and 32 ranks); sizes 1 MiB
    # to 8 GiB by factor 2 = 14 rows each; no concluded line, so all-reduce is told by busbw / algbw = 2 (n-1) / n
    # (8 GiB at 8 nodes: 320.70 / 162.90 = 1.969 = 2 x 63 / 64).
    runs = parse_log(GJ_AION)
    assert [(r.collective, r.ranks, r.nodes, r.gpus_per_node, len(r.points)) for r in runs] == [
        ("all_reduce", 64, 8, 8, 14),
        ("all_reduce", 16, 2, 8, 14),
        ("all_reduce", 32, 4, 8, 14),
    ]
    last = runs[0].points[-1]
    assert (last.size_bytes, last.time_us, last.busbw_gbytes_per_s) == (8589934592, 52733.0, 320.70)
    # The opening post: MPI warnings between header lines, its command names all_reduce_perf_mpi.
    (xe,) = parse_log(XE9680)
    assert (xe.collective, xe.ranks, xe.nodes, len(xe.points)) == ("all_reduce", 16, 2, 32)
    assert xe.device == "NVIDIA H100 80GB HBM3"


def test_tagged_mpirun_output_and_several_tests_in_one_file(write):
    fabric = fabric_with("ib-ndr")
    text = synthetic_log("all_reduce", 2, 8, fabric) + "\n" + synthetic_log("all_to_all", 4, 8, fabric)
    tagged = "".join(f"[1,0]<stdout>:{line}\n" for line in text.splitlines())
    runs = parse_log(write("tagged.txt", tagged))
    assert [(r.collective, r.nodes) for r in runs] == [("all_reduce", 2), ("all_to_all", 4)]


# ---------------------------------------------------------------- the fit


@pytest.mark.parametrize("op", ["all_reduce", "all_to_all"])
def test_round_trip_recovers_known_figures(write, op):
    # Logs the model predicts with efficiency 0.80 and 9 us of NIC latency (ib-ndr without in-network reduction,
    # so the ring and tree carry all-reduce), at 2, 4 and 8 nodes. Times print with 3 decimals of a us and busbw
    # is recomputed from them, so the only error is rounding: the fit must land within 0.005 of the efficiency
    # (0.6%: one rounding step of the written figure, 3 decimals, plus the optimiser's tolerance) and 0.1 us of
    # the latency, with every residual below 0.5%.
    truth = {"efficiency": 0.80, "nic_latency_us": 9.0, "in_network_reduction_efficiency": 0.0}
    fabric = fabric_with("ib-ndr", **truth)
    paths = [write(f"{op}-{n}.txt", synthetic_log(op, n, 8, fabric)) for n in (2, 4, 8)]
    cat = builtin_catalog()
    cat = Catalog(**{**cat.__dict__, "fabrics": dict(cat.fabrics)})
    cat.fabrics["ib-ndr-plain"] = cat.fabric("ib-ndr").model_copy(update={"in_network_reduction_efficiency": 0.0})
    result = calibrate([r for p in paths for r in parse_log(p)], cat, "ib-ndr-plain")
    assert result.fitted["efficiency"] == pytest.approx(0.80, abs=0.005)
    assert result.fitted["nic_latency_us"] == pytest.approx(9.0, abs=0.1)
    assert max(abs(p.residual) for p in result.points) < 0.005
    assert all(p.size_bytes >= MIN_SIZE_BYTES for p in result.points)


def test_a_logs_gpu_is_the_catalog_gpu_whose_longest_device_name_it_bears(write):
    fabric = fabric_with("ib-ndr")
    cat = builtin_catalog()

    def scale_up_of(device: str, catalog: Catalog) -> str:
        runs = parse_log(write("log.txt", synthetic_log("all_reduce", 2, 4, fabric, device=device)))
        return calibrate(runs, catalog, "ib-ndr").setup.scale_up_id

    # "NVIDIA GB200" contains b200's "B200" and gb200's "GB200": the longer name wins, and with it the NVL72 domain.
    assert scale_up_of("NVIDIA GB200", cat) == cat.gpu("gb200").default_scale_up != cat.gpu("b200").default_scale_up
    assert scale_up_of("NVIDIA H800", cat) == cat.gpu("h100-sxm").default_scale_up
    # A GPU a user's catalog adds is recognised by its own device names; two GPUs with the same name are refused.
    mine = Catalog(**{**cat.__dict__, "gpus": dict(cat.gpus)})
    mine.gpus["b300"] = cat.gpu("b200").model_copy(update={"device_names": ["B300"], "default_scale_up": "nvlink5-72"})
    assert scale_up_of("NVIDIA B300 SXM6 AC", mine) == "nvlink5-72"
    mine.gpus["h100-pcie"] = cat.gpu("h100-sxm").model_copy(update={"device_names": ["H100"]})
    with pytest.raises(UsageError, match="fits GPUs h100-pcie, h100-sxm alike; pass --gpu"):
        scale_up_of("NVIDIA H100 80GB HBM3", mine)


def test_one_node_count_does_not_fit_load_balance(write):
    fabric = fabric_with("roce-400g")
    path = write("roce.txt", synthetic_log("all_reduce", 4, 8, fabric))
    result = calibrate(parse_log(path), builtin_catalog(), "roce-400g")
    assert "qps_per_connection" not in result.fitted
    assert "runs at 1 node count only" in result.not_fitted["qps_per_connection"]


def test_fitted_field_table_names_real_fabric_fields():
    from scalefront.inputs.catalog import FabricEntry

    for f in FITTED_FIELDS:
        assert f.name in FabricEntry.model_fields, f.name
        assert f.low < f.high


def test_published_multi_node_logs_fit_within_a_stated_bound():
    # gj-aion's 8, 2 and 4 node runs on IB NDR: one efficiency and latency for all three. The model cannot follow
    # the 2-node tree bonus (466 GB/s, above the NICs' 400; NVIDIA calls 2-node results "an aberration" in the
    # thread) nor the 8 MiB hiccup of the 8-node run (12.98 GB/s between 40 and 87), so the bound is on the
    # median: 12%, with the 1 GiB-and-up points of the 8- and 4-node runs within 15%.
    result = calibrate(parse_log(GJ_AION), builtin_catalog(), "ib-ndr")
    assert result.median_abs_residual < 0.12
    big = [p for p in result.points if p.size_bytes >= 2**30 and p.run.nodes in (4, 8)]
    assert len(big) == 8
    assert max(abs(p.residual) for p in big) < 0.15
    assert 0.5 < result.fitted["efficiency"] < 0.95


# ---------------------------------------------------------------- the command


def test_written_file_loads_with_catalog_and_eval_uses_it(tmp_path, capsys):
    out = tmp_path / "my-fabric.toml"
    code, stdout, err = run(["calibrate", str(GJ_AION), "--fabric", "ib-ndr", "--out", str(out)], capsys)
    assert code == 0, err
    assert "median |residual|" in stdout and "efficiency" in stdout
    assert "load_balance_efficiency" in stdout and "not fitted" in stdout
    doc = tomllib.loads(out.read_text(encoding="utf-8"))
    entry = doc["fabrics"]["my-fabric"]
    fitted = Catalog.load(out).fabric("my-fabric")
    assert fitted.efficiency == entry["efficiency"] != builtin_catalog().fabric("ib-ndr").efficiency
    assert entry["sources"]["efficiency"].startswith("fitted by scalefront calibrate from issue309-")
    assert entry["sources"]["link_gbps"] == builtin_catalog().fabric("ib-ndr").sources["link_gbps"]
    code, base_out, _ = run(["eval", "--gpus", "1024", "--json"], capsys)
    code2, cal_out, err = run(
        ["eval", "--gpus", "1024", "--json", "--catalog", str(out), "--fabric", "my-fabric"], capsys
    )
    assert code == code2 == 0, err
    import json

    base, cal = json.loads(base_out), json.loads(cal_out)
    assert cal["fabric"] == "my-fabric"
    # A slower fitted network (efficiency below ib-ndr's 0.93, no in-network reduction) exposes more DP time.
    assert cal["dp_comm_s"] > base["dp_comm_s"]


def test_same_input_same_bytes_and_no_overwrite(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1790000000")
    a, b = tmp_path / "a.toml", tmp_path / "b.toml"
    for out in (a, b):
        code, _, err = run(["calibrate", str(XE9680), "--fabric", "ib-ndr", "--out", str(out), "--name", "x"], capsys)
        assert code == 0, err
    assert a.read_bytes() == b.read_bytes()
    assert "; 2026-09" in a.read_text(encoding="utf-8")  # 1790000000 s = 2026-09-21
    code, _, err = run(["calibrate", str(XE9680), "--fabric", "ib-ndr", "--out", str(a), "--name", "x"], capsys)
    assert code == 2 and "already exists; pass --force" in err
    code, _, err = run(["calibrate", str(XE9680), "--fabric", "ib-ndr", "--out", str(a), "--force"], capsys)
    assert code == 0, err


def test_help_is_clear(capsys):
    code, out, _ = run(["calibrate", "--help"], capsys)
    assert code == 0
    text = " ".join(out.split())
    for words in ("nccl-tests", "--fabric", "--out", "--catalog", "64 KiB", "--force"):
        assert words in text, words


def test_nothing_written_for_single_node_logs(tmp_path, capsys, write):
    path = write("one-node.txt", synthetic_log("all_reduce", 1, 8, fabric_with("ib-ndr")))
    before = files_in(tmp_path)
    code, out, err = run(["calibrate", str(path), "--fabric", "ib-ndr", "--out", str(tmp_path / "x.toml")], capsys)
    assert code == 2 and out == "" and "one node" in err
    assert files_in(tmp_path) == before


def test_fixtures_cite_their_source():
    for path in sorted(Path(NCCL).glob("*.txt")):
        head = path.read_text(encoding="utf-8").splitlines()[:3]
        assert "# Source: GitHub NVIDIA/nccl-tests issue #309" in head[0], path
        assert any("2025-" in line for line in head), path
