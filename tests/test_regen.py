"""Every file derived from the model is current: `python tests/regen.py --check` (make regen-check) finds nothing
stale (the generated `Evaluation` and README column table, the framework terms calibrated in
data/frameworks.toml, data/model_error.toml, docs/validation.md, the README's validation figures). The UI snapshots are
checked by tests/tui/test_snapshots.py. And the regeneration itself: what it finds, what it leaves alone."""

from __future__ import annotations

import regen
from helpers import REPO


def test_no_derived_file_is_stale(capsys):
    # Fails after a change that moves the schema, a calibration, the error model or the validation table without
    # `make regen` (and after a catalog edit without `make build`).
    assert regen.main(["--check"]) == 0, capsys.readouterr().err


def test_a_readme_figure_that_differs_from_the_validation_table_is_rewritten():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    docs = (REPO / "docs" / "validation.md").read_text(encoding="utf-8")
    facts = regen.validation_facts(docs)
    stale = readme.replace(f"has {facts['rows']} runs", f"has {int(facts['rows']) + 1} runs")
    stale = stale.replace(f"median {float(facts['c64k']):.1f}% (all_reduce", "median 99.9% (all_reduce")
    assert stale.count("99.9%") == 1 and stale != readme
    # Rewritten with the decimals the README gives each figure (the worst collective error as a whole percent).
    assert regen.readme_figures({"README.md": stale, "docs/validation.md": docs})["README.md"] == readme


def test_a_calibration_that_moves_no_figure_keeps_its_dates():
    # `--calibrate --write` stamps today's month on each calibrated source; when no figure moves, the file stays
    # as committed, so the check does not go stale with the calendar.
    # Both files it writes: the frameworks' fitted terms and the GPUs' serving_efficiency.
    texts = {name: (REPO / name).read_text(encoding="utf-8") for name in ("data/frameworks.toml", "data/gpus.toml")}
    dated = {name: regen.CALIBRATION_DATE.sub(r'\1; 2001-01"', text) for name, text in texts.items()}
    assert all(dated[name] != texts[name] for name in texts)
    assert regen.calibration(dated) == dated
