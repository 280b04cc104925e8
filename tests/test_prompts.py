"""Prompt templates: `render` fills `{{name}}` slots and nothing else."""

from __future__ import annotations

from workflows.prompts import render


def test_replaces_slots_including_repeats_and_inner_spaces() -> None:
    assert render("{{a}} and {{ a }} and {{b_c}}", {"a": "1", "b_c": "2"}) == "1 and 1 and 2"


def test_unknown_slots_stay() -> None:
    assert render("Hi {{name}}, {{missing}}", {"name": "Ann"}) == "Hi Ann, {{missing}}"


def test_other_braces_are_left_alone() -> None:
    template = 'JSON: {"todos": [{"id": 1}]} {name} {0} {{ Name }} {{x1}} {{name}}'
    out = render(template, {"name": "N", "Name": "bad", "x1": "bad"})
    assert out == 'JSON: {"todos": [{"id": 1}]} {name} {0} {{ Name }} {{x1}} N'


def test_values_are_inserted_literally() -> None:
    values = {"a": r"\1 \g<0> {{b}} {x}", "b": "never"}
    assert render("[{{a}}]", values) == r"[\1 \g<0> {{b}} {x}]"


def test_no_slots_is_identity() -> None:
    assert render("", {"a": "1"}) == ""
    assert render("plain {text}", {}) == "plain {text}"
