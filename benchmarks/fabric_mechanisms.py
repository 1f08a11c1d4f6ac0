"""What separates the fabrics, mechanism by mechanism: Llama 3 70B's data-parallel all-reduce and step time on
each 2026 fabric, on a non-blocking and a 2:1 fat-tree, at 1,024-16,384 H100s (docs/fabrics.md quotes it).

The layout is fixed (tp 8, pp 4, dp the rest, ZeRO 1, no DP overlap) so the network shows; `dp comm` is the
exposed data-parallel time per step. Each fabric in its operating modes (`FABRIC@MODE`, data/fabrics.toml): RoCE
untuned (NCCL's one queue pair, static ECMP), tuned (4 QPs), hyperscale (16 QPs, E-ECMP, uplinks at twice the NIC
rate) and dlb; SHARP needs rail-aligned leaves, so it is not on these fat-trees. Run:
python benchmarks/fabric_mechanisms.py
"""

import dataclasses

from scalefront import evaluate
from scalefront.inputs.catalog import builtin_catalog

CAT = builtin_catalog()
FABRICS = [
    ("ib-ndr@default", "ib-ndr", {}),
    ("roce-400g@untuned", "roce-400g@untuned", {}),
    ("roce-400g@tuned", "roce-400g@tuned", {}),
    ("roce-400g@hyperscale", "roce-400g@hyperscale", {}),
    ("roce-400g@dlb", "roce-400g@dlb", {}),
    ("spectrum-x", "spectrum-x", {}),
    ("uec-800g at 400G", "uec-800g", {"link_gbps": 400.0}),
]


def catalog_with(name: str, update: dict[str, float]):
    if not update:
        return CAT
    fabrics = {**CAT.fabrics, name: CAT.fabrics[name].model_copy(update=update)}
    return dataclasses.replace(CAT, fabrics=fabrics)


def main() -> None:
    print("| fabric | tree | GPUs | DP all-reduce exposed (s) | step (s) |")
    print("|---|---|---|---|---|")
    for label, name, update in FABRICS:
        cat = catalog_with(name, update)
        for over in (1.0, 2.0):
            for gpus in (1024, 4096, 16384):
                r = evaluate(
                    "llama3-70b",
                    "h100-sxm",
                    gpus,
                    fabric=name,
                    topology="fat-tree",
                    oversubscription=over,
                    tp=8,
                    pp=4,
                    dp=gpus // 32,
                    micro_batch=1,
                    global_batch=gpus // 32 * 16,
                    seq_len=8192,
                    zero=1,
                    overlap="none",
                    catalog=cat,
                )
                tree = "1:1" if over == 1.0 else f"{over:g}:1"
                print(f"| {label} | {tree} | {gpus:,} | {r.breakdown.dp_comm_s:.3f} | {r.step_time_s:.3f} |")


if __name__ == "__main__":
    main()
