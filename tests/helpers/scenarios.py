"""The small scenario the sweep, shard, cluster and scenario tests share, defined once, with its variants; and the
small fabric comparison of the ROI tests."""

from __future__ import annotations

import copy
from typing import Any

#: A small sweep (two GPUs, two counts, two fabrics, two topologies, a searched data-parallel degree): 4,096
#: configurations, enough cells to split into shards, fast enough to run many times. 2 GPUs x 2 counts x 2 fabrics
#: x 2 topologies x tp 4 x pp 2 x vpp 2 x micro-batch 2 x recompute 2 x ZeRO 2 x overlap 2 (one of them a bare
#: fraction, written as "0.5").
SMALL_SCENARIO = """\
name = "small"
[workload]
model = "llama3-8b"
tokens = 1e11
global_batch = 64
[cluster]
gpu = ["h100-sxm", "a100-80gb"]
gpus = [64, 128]
fabric = ["ib-ndr", "roce-400g"]
topology = ["rail-fat-tree", { name = "fat-tree", oversubscription = 2.0 }]
[parallelism]
tp = [1, 2, 4, 8]
pp = [1, 2]
vpp = [1, 2]
micro_batch = [1, 2]
recompute = ["selective", "full"]
zero = [1, 3]
overlap = ["dp", 0.5]
"""


def small_scenario(**values: str | None) -> str:
    """SMALL_SCENARIO with the values of some keys replaced (by TOML text) or their lines dropped (None), lines
    otherwise as they are. Every key appears once in it, so a key names its line; an unknown key is an error."""
    lines, seen = [], set()
    for line in SMALL_SCENARIO.splitlines():
        key = line.split(" = ", 1)[0]
        if key in values:
            seen.add(key)
            value = values[key]
            if value is None:
                continue
            line = f"{key} = {value}"
        lines.append(line)
    if unknown := set(values) - seen:
        raise KeyError(f"not keys of SMALL_SCENARIO: {sorted(unknown)}")
    return "\n".join(lines) + "\n"


def roi_problem(**changes: Any) -> tuple[dict[str, Any], str]:
    """The default scenario cut down for `scalefront.roi.compare`: 2 GPU counts, the rail tree only, a short
    layout search. `changes` set "table.key" values, e.g. `roi_problem(**{"cluster.gpus": [4096]})`.
    Returns (scenario dict, file name), as `scalefront.inputs.scenario.read_scenario` does."""
    from scalefront.inputs.scenario import read_scenario

    raw, _ = read_scenario("ib-vs-roce")
    raw = copy.deepcopy(raw)
    raw["cluster"].update(gpus=[4096, 16384], topology=["rail-fat-tree"], fabric=["ib-ndr", "roce-400g"])
    raw["parallelism"].update(tp=[8], cp=[1], vpp=[1, 5], zero=[1], recompute=["selective"])
    for path, value in changes.items():
        table, key = path.split(".")
        raw[table][key] = value
    return raw, "small.toml"
