"""The eager-pytorch framework's host terms (data/frameworks.toml) from the recorded host probe.

    python benchmarks/host_terms.py [data/measurements/h100-host-probe.json]

Reads the record as `scalefront measure --replay` does and prints `host_terms` (python/scalefront/fidelity/measure/
host_rows.py): the median host time per kernel over the MoE layers, and the least-squares line through the looped
layers' kernel counts against their local experts, each to three significant figures, as the catalog holds them.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from scalefront.fidelity.measure.host_rows import host_section, host_terms
from scalefront.fidelity.measure.rows import Problem

RECORD = Path(__file__).resolve().parents[1] / "data" / "measurements" / "h100-host-probe.json"


def main(argv: list[str]) -> int:
    path = Path(argv[0]) if argv else RECORD
    doc = json.loads(path.read_text(encoding="utf-8"))
    _, layers, _ = host_section(doc, Problem(str(path)))
    terms = host_terms(layers)
    if terms is None:
        print(f"{path.name}: no MoE layer in the host probe", file=sys.stderr)
        return 2
    print(f"{path.name}: {terms.layers} MoE layers ({terms.looped} looped), {doc['gpu']}, PyTorch {doc['torch']}")
    for name in ("host_s_per_kernel", "moe_host_kernels", "moe_host_kernels_per_expert"):
        value = getattr(terms, name)
        print(f"{name} = {float(f'{value:.3g}')!r}" if value is not None else f"{name}: not identified")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
