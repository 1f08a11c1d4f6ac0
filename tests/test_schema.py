"""One schema across Rust and Python: the core defines every column once; everything else derives from it (the
generated files are checked with every other derived file by test_regen.py)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from scalefront import _core, errors, schema
from scalefront._evaluation import Evaluation
from scalefront.errors import ConfigurationError, InternalError, ScalefrontError

ROOT = Path(__file__).resolve().parents[1]


def test_evaluation_fields_are_the_schema_columns_with_their_kinds():
    fields = dataclasses.fields(Evaluation)
    assert [f.name for f in fields] == schema.COLUMNS
    python_type = {"float": "float", "count": "int", "flag": "bool", "text": "str"}
    for f in fields:
        assert f.type == python_type[schema.column(f.name).kind], f.name


def test_groups_are_consistent():
    step = [m.name for m in schema.METRICS if m.group == "step"]
    assert step[0] == "compute_s" and "bubble_s" in step
    assert {m.group for m in schema.METRICS} == {"result", "step", "hidden", "memory", "run", "cluster", "model"}
    assert all(c.group == "input" for c in schema.INPUTS)


def test_error_categories_are_shared_with_the_core():
    assert list(errors.CATEGORIES) == _core.error_categories()


def test_configuration_error_has_category_field_and_a_plain_message():
    from scalefront import evaluate

    with pytest.raises(ConfigurationError) as info:
        evaluate("llama3-70b", "h100-sxm", 128, tp=16, pp=1)
    err = info.value
    assert err.category == "tp_heads" and err.field == "tp"
    assert str(err) == err.message and "\n" not in str(err) and not str(err).startswith("(")
    assert isinstance(err, ScalefrontError)


def test_a_panic_is_an_internal_error_not_bad_input():
    with pytest.raises(InternalError, match="deliberate test panic") as info:
        _core._panic_for_test()
    assert not isinstance(info.value, ScalefrontError)


def test_a_dict_the_core_cannot_read_is_an_internal_error_naming_the_field(monkeypatch):
    # The Python layer builds every dict the core reads: one the core cannot read is a bug in scalefront (exit 70),
    # reported with the field's path, not as a TypeError whose field hides in __cause__.
    from scalefront import evaluate
    from scalefront.inputs import model

    real, seen = _core.evaluate, []
    monkeypatch.setattr(model, "core_evaluate", lambda config: seen.append(config) or real(config))
    evaluate("llama3-70b", "h100-sxm", 1024)
    config = seen[0]
    del config["fabric"]["mtu_bytes"]
    with pytest.raises(InternalError, match=r"^bindings contract: Config\.fabric\.mtu_bytes is missing$"):
        real(config)
    config["fabric"]["mtu_bytes"] = "4096"
    with pytest.raises(InternalError, match=r"^bindings contract: Config\.fabric\.mtu_bytes: .*not str"):
        real(config)
