"""Helpers shared by the test modules (they import from here, never from one another or from conftest):
paths, the in-process command and its bad-input checks, TOML writers, the shared small scenarios, and real
processes on a pseudo-terminal. Fixtures stay in conftest.py. The brute-force reference sweep is
`helpers.sweeps`."""

from pathlib import Path

from helpers.cli import ONE_LINE_ERROR, assert_one_line_error, files_in, run
from helpers.scenarios import SMALL_SCENARIO, roi_problem, small_scenario
from helpers.terminal import finish_on_a_terminal, start_on_a_terminal
from helpers.toml_text import scenario_text, toml_table, toml_value

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "data"

__all__ = [
    "DATA",
    "ONE_LINE_ERROR",
    "REPO",
    "SMALL_SCENARIO",
    "assert_one_line_error",
    "files_in",
    "finish_on_a_terminal",
    "roi_problem",
    "run",
    "scenario_text",
    "small_scenario",
    "start_on_a_terminal",
    "toml_table",
    "toml_value",
]
