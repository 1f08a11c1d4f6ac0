"""The input parameters, defined once in the core (`scalefront_core::inputs`): the API, the command line and the
scenario file take each input the same way, check it against the same bounds, and fill a missing one the same way.
The tests run over the whole table, so that a new input is covered without a new test here."""

from __future__ import annotations

import json

import pytest

from helpers import assert_one_line_error, run
from scalefront import Inputs, evaluate, evaluate_inputs
from scalefront._enums import AXES, OBJECTIVES
from scalefront.engine.sweep import objective_column
from scalefront.errors import UsageError
from scalefront.inputs.params import PARAMS, param, taking
from scalefront.schema import METRICS

BOUNDED = [p for p in taking("api") if p.kind in ("count", "float", "ratio", "level", "tokens")]


def _beyond(p) -> float | int:
    """A value just outside the parameter's bounds."""
    if p.kind == "count":
        return int(p.le) + 1 if p.le is not None and p.le < 2**20 else int(p.ge) - 1
    low = p.ge if p.ge is not None else p.gt
    return (low or 0.0) - 0.5


@pytest.mark.parametrize("p", BOUNDED, ids=[p.name for p in BOUNDED])
def test_a_value_outside_an_inputs_bounds_is_a_usage_error_naming_it(p, capsys):
    value = _beyond(p)
    with pytest.raises(UsageError) as info:
        evaluate(**{p.name: value})
    assert str(info.value).startswith(f"{p.name}={value!r}: expected ") and "\n" not in str(info.value)
    if p.takes("flag"):
        code, out, err = run(["eval", f"--{p.name.replace('_', '-')}", str(value)], capsys)
        assert_one_line_error(code, out, err, f"--{p.name.replace('_', '-')}")


@pytest.mark.parametrize("p", [p for p in PARAMS if p.kind == "enum" and p.takes("api")], ids=lambda p: p.name)
def test_an_enum_input_takes_its_names_and_nothing_else(p):
    assert p.default in p.choices
    with pytest.raises(UsageError, match=rf"^{p.name}='bogus': expected one of {', '.join(p.choices)}$"):
        Inputs(**{p.name: "bogus"})


@pytest.mark.parametrize("p", [p for p in PARAMS if p.kind == "flag" and p.takes("api")], ids=lambda p: p.name)
def test_a_flag_takes_true_or_false_and_nothing_else(p):
    # Not Python's truthiness: "no", 0 or None would otherwise reach the core as whatever bool() makes of them.
    for bad in ("no", 1, None):
        with pytest.raises(UsageError, match=rf"^{p.name}={bad!r}: expected true or false$"):
            Inputs(**{p.name: bad})


def test_the_command_line_offers_each_input_with_its_doc_and_default(capsys):
    code, out, _ = run(["eval", "--help"], capsys)
    assert code == 0
    text = " ".join(out.split())
    for p in taking("flag"):
        option = (
            "--price" if p.kind == "prices" else f"--{'no-' if p.default is True else ''}{p.name.replace('_', '-')}"
        )
        assert option in text and p.doc in text, p.name
        if p.means:
            assert f"{p.doc} (default: {p.means})" in text, p.name


def test_the_same_record_from_the_api_and_the_command_line(capsys):
    # Every default of the table, as `scalefront eval` and `evaluate()` fill it, gives the same answer.
    code, out, err = run(["eval", "--json"], capsys)
    assert code == 0, err
    assert json.loads(out) == json.loads(json.dumps(evaluate_inputs(Inputs()).to_dict()))
    assert evaluate_inputs(Inputs(tp=4, pp=2)) == evaluate(tp=4, pp=2)


def test_expert_tp_zero_means_the_attentions_tp():
    # The core's Parallelism.etp takes 0 for "as tp"; the scenario file always did, the API now says so too.
    assert evaluate("mixtral-8x7b", gpus=64, ep=8, etp=0) == evaluate("mixtral-8x7b", gpus=64, ep=8)
    assert evaluate("mixtral-8x7b", gpus=64, ep=8).etp == 8


def test_the_busiest_experts_load_is_a_ratio_as_people_write_it(capsys):
    runs = [
        run(["eval", "--model", "mixtral-8x7b", "--gpus", "64", "--ep", "8", "--moe-imbalance", t, "--json"], capsys)
        for t in ("3:2", "1.5")
    ]
    assert all(code == 0 for code, _, _ in runs)
    assert json.loads(runs[0][1]) == json.loads(runs[1][1])
    assert json.loads(runs[0][1])["moe_imbalance"] == 1.5


def test_objectives_are_the_metrics_with_a_direction():
    directed = {m.name: m.direction for m in METRICS if m.direction}
    assert set(OBJECTIVES) == set(directed) and directed["mfu"] == "max"
    assert {o for o in OBJECTIVES if objective_column(o)[1]} == {"mfu"}  # maximised: sorted descending
    assert set(param("objectives").choices) == set(OBJECTIVES)


def test_axes_are_the_inputs_swept():
    assert set(AXES) == {p.name for p in taking("axis")}
    assert all(p.scenario is not None and p.takes("column") for p in taking("axis"))


NAMES = [p for p in taking("api") if p.kind == "names"]


@pytest.mark.parametrize("p", NAMES, ids=[p.name for p in NAMES])
def test_a_set_of_names_is_taken_as_text_or_a_list_and_spelt_one_way(p):
    # Any order, commas or spaces, a string or a list: the result's column spells the set in the choices' order.
    # A name outside the choices, a repeated one, or a value of another type: a usage error naming the input.
    two = [p.choices[-1], p.choices[0]]
    base = {"recompute": "selective"} if p.name == "recompute_modules" else {}
    shown = {evaluate(**base, **{p.name: v}).to_dict()[p.name] for v in (two, " ".join(two), ", ".join(two))}
    assert shown == {f"{p.choices[0]},{p.choices[-1]}"}
    assert evaluate(**base).to_dict()[p.name] == ""
    for bad in ("nonesuch", [p.choices[0], p.choices[0]], 3):
        with pytest.raises(UsageError) as info:
            evaluate(**{p.name: bad})
        assert str(info.value).startswith(f"{p.name}={bad!r}: expected names among ") and "\n" not in str(info.value)
