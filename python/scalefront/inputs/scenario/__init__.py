"""Scenario files: a space of cluster designs and parallel layouts to sweep (``data/scenarios/*.toml``).

The format, every key, is documented in the README ("Scenario files"). Loading checks it completely and reports the
first problem as one line naming the file, the table and the key (with a suggestion for a misspelt key), then
builds the dict the Rust sweep engine takes (SI units, catalog entries resolved).

Modules: ``file`` (the format and its checks), ``build`` (loading and building the engine's space), ``draft`` (a
scenario being edited in a form, and saved).
"""

from __future__ import annotations

from scalefront.inputs.scenario.build import (
    MixPart,
    Scenario,
    build_scenario,
    builtin_scenarios,
    load_mix,
    load_scenario,
    read_scenario,
    workload_names,
)
from scalefront.inputs.scenario.draft import FORM_FIELDS, FormErrors, FormField, ScenarioDraft
from scalefront.inputs.scenario.file import (
    AXES,
    DEFAULT_SCENARIO,
    OBJECTIVES,
    ScenarioFile,
    group_by_problem,
    objectives_problem,
    validate_file,
)

__all__ = [
    "AXES",
    "DEFAULT_SCENARIO",
    "FORM_FIELDS",
    "OBJECTIVES",
    "FormErrors",
    "FormField",
    "MixPart",
    "Scenario",
    "ScenarioDraft",
    "ScenarioFile",
    "build_scenario",
    "builtin_scenarios",
    "group_by_problem",
    "load_mix",
    "load_scenario",
    "objectives_problem",
    "read_scenario",
    "validate_file",
    "workload_names",
]
