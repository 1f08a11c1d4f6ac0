"""Is fabric A (say InfiniBand) worth its premium over fabric B (say RoCE) for a scenario, how sure is that, and
what would change the answer?

`compare(scenario, a, b, options=...)` returns a :class:`RoiResult` of numbers: one row per GPU count (owning the
cluster for its life: total cost of ownership, cost per delivered token, break-even premium, NPV, payback), the
Monte Carlo summary (P(A cheaper per delivered token), P10/P50/P90), the tornado of every uncertain input with the
value at which the verdict flips, and the samples. `text.verdict(result)` words the answer, `text.render` prints
the terminal report, `report.write_report` the HTML/Markdown one, `result_dict` the `--json` object; `whatif` puts
the comparison behind the UI's what-if form.

This package only gathers inputs and formats: the Rust core (`rust/core/src/decision/roi/`, `decision/montecarlo/`,
`cost/economics.rs`) owns every formula; docs/roi.md works each through by hand. What happens here:
1. each workload of the scenario is swept once at typical values, over both fabrics; per (fabric, GPU count,
   topology), the fastest few distinct layouts are kept as candidates;
2. every figure with a `{ low, typical, high }` range in the catalogs becomes an uncertain input (one shared draw
   when both fabrics buy the same part at the same range), plus the model's error (training-run residuals, common
   to both fabrics; nccl-tests residuals, one draw per fabric on its exposed communication);
3. the core chooses each count's designs (same topology for both, or each on its cheapest), compares, runs the
   tornado (flip values by bisection) and the Monte Carlo (each sample re-optimises among the candidates);
4. with a scenario's ``[lifecycle]`` (``lifecycle``), each design also serves ``[serving]`` at the SLO for the
   months after training, and the core prices both phases.

Modules, in the order of the flow: ``result`` (the types and the JSON), ``designs`` (candidates), ``uncertain`` and
``model_error`` (the uncertain inputs), ``run`` (the Monte Carlo here or on a cluster), ``frames``, ``compare``;
then ``text``, ``lifecycle_text``, ``report`` and ``whatif``, which only read a result; ``repricing`` keeps the
last comparison for the what-ifs of price to re-price it (no new sweep or Monte Carlo of step times).
"""

from __future__ import annotations

from scalefront.roi.compare import compare
from scalefront.roi.model_error import model_error_residuals
from scalefront.roi.result import (
    DEFAULT_SAMPLES,
    McProgress,
    RoiOptions,
    RoiResult,
    UncertainInput,
    result_dict,
)

__all__ = [
    "DEFAULT_SAMPLES",
    "McProgress",
    "RoiOptions",
    "RoiResult",
    "UncertainInput",
    "compare",
    "model_error_residuals",
    "result_dict",
]
