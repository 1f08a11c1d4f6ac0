"""The eager-pytorch framework's host terms (data/frameworks.toml) from the recorded host probe.

    python benchmarks/host_terms.py [data/measurements/h100-host-probe.json]

host_s_per_kernel: the median over the probe's MoE layers of host time per kernel launched (forward and backward);
moe_host_kernels and moe_host_kernels_per_expert: a least-squares line through the looped layers' kernel counts
against their local experts (intercept: the kernels beside the experts; slope: each looped expert's). Each printed
to three significant figures, as the catalog holds them.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

RECORD = Path(__file__).resolve().parents[1] / "data" / "measurements" / "h100-host-probe.json"


def host_terms(doc: dict) -> dict[str, float]:
    layers = [r for r in doc["host"] if r.get("kind") == "moe_layer" and "error" not in r]
    per_kernel = statistics.median(r["host_ms"] * 1e-3 / r["kernels"] for r in layers)
    loop = [(r["experts_local"], r["kernels"]) for r in layers if not r["grouped"]]
    slope, intercept = statistics.linear_regression([x for x, _ in loop], [y for _, y in loop])
    return {"host_s_per_kernel": per_kernel, "moe_host_kernels": intercept, "moe_host_kernels_per_expert": slope}


def main(argv: list[str]) -> int:
    path = Path(argv[0]) if argv else RECORD
    doc = json.loads(path.read_text(encoding="utf-8"))
    layers = sum(r.get("kind") == "moe_layer" for r in doc["host"])
    print(f"{path.name}: {layers} MoE layers, {doc['gpu']}, PyTorch {doc['torch']}, {doc['date']}")
    for name, value in host_terms(doc).items():
        print(f"{name} = {float(f'{value:.3g}')!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
