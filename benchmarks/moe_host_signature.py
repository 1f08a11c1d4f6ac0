#!/usr/bin/env python3
"""The host-bound signature in the judged MoE rows (docs/design/fidelity-v3.md Sec. 14): each row's signed error
against the model's GPU time per layer and micro-batch on the busiest stage (compute / micro-batches / layers per
stage). If the misses were GPU work the model leaves out, they would not depend on how long a layer's kernels run;
if the host launches kernels at a pace of its own, short layers come out too fast and long ones do not.

Prints the rows sorted by that time, Spearman's rank correlation with the signed error, and the medians on either
side of a split. Run: python benchmarks/moe_host_signature.py [--split-ms 12]. Reads only the validation table.
"""

import argparse
import math
import statistics

from scalefront.fidelity.validation.tables import load_table
from scalefront.fidelity.validation.training import evaluate_row, row_model_entry, training_checks
from scalefront.inputs.catalog.loader import builtin_catalog


def layer_times(catalog) -> list[tuple[float, float, str]]:
    """(GPU ms per layer and micro-batch, signed error %, row id) of every judged MoE row."""
    rows = {r["id"]: r for r in load_table("training_runs")["run"]}
    checks = [c for c in training_checks(catalog, list(rows.values())) if c.role == "validation" and c.moe]
    out = []
    for c in checks:
        row = rows[c.id]
        layers = row_model_entry(row, catalog).layers
        e = evaluate_row(row, catalog)
        out.append((1e3 * e.compute_s / e.micro_batches / (layers / e.pp), 100.0 * c.error, c.id))
    return sorted(out)


def ranks(values: list[float]) -> list[float]:
    """Ranks from 0, ties sharing their mean rank."""
    order = sorted(range(len(values)), key=values.__getitem__)
    result = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            result[order[k]] = (i + j) / 2.0
        i = j + 1
    return result


def spearman(x: list[float], y: list[float]) -> float:
    rx, ry = ranks(x), ranks(y)
    mx, my = statistics.mean(rx), statistics.mean(ry)
    cov = sum((a - mx) * (b - my) for a, b in zip(rx, ry, strict=True))
    return cov / math.sqrt(sum((a - mx) ** 2 for a in rx) * sum((b - my) ** 2 for b in ry))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split-ms", type=float, default=12.0, help="where to split the rows (ms per layer)")
    split_ms = parser.parse_args().split_ms
    rows = layer_times(builtin_catalog())
    for ms, err, rid in rows:
        print(f"{ms:9.2f} ms {err:+7.1f}%  {rid}")
    rho, n = spearman([r[0] for r in rows], [r[1] for r in rows]), len(rows)
    t = rho * math.sqrt((n - 2) / (1 - rho**2))
    print(f"Spearman rank correlation (time, signed error): {rho:.3f} over {n} rows, t = {t:.2f}")
    for name, below in (("below", True), ("at or above", False)):
        signed = [err for ms, err, _ in rows if (ms < split_ms) == below]
        absolute = statistics.median(abs(e) for e in signed)
        print(
            f"{name} {split_ms:g} ms: {len(signed)} rows, median |error| {absolute:.1f}%, "
            f"median signed {statistics.median(signed):+.1f}%"
        )


if __name__ == "__main__":
    main()
