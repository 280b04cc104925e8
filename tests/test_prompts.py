"""Prompt templates: `render` fills `{{name}}` slots and nothing else."""

from __future__ import annotations

import json
import re

from switchback.workflows.prompts import render


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


# a file path in model-facing text that is not the workflow's own: a small model copies it as
# if it were the task's (a 1.5B model wrote notes/shopping.md for shopping.md after a
# write_file schema said "e.g. 'notes/a.md'"; notes/x.md from a todo's example)
EXAMPLE_PATH = re.compile(r"\b[\w.-]+(?:/[\w.-]+)*\.(?:md|txt|json|csv|py|html|ya?ml)\b")
OWN_FILES = {"workspace.md", "main_plan.md", "todos.yaml", "instructions.md",
             "completion.json", "error.json", "phase_N.yaml", "archive/phase_N.yaml"}


def example_paths(text: str) -> set[str]:
    return {m.group(0) for m in EXAMPLE_PATH.finditer(text)} - OWN_FILES


def test_no_model_facing_text_carries_an_example_file_path() -> None:
    """Prompts and the core tools' schemas name no file as an example (the workflow's own
    files aside): what a model reads as an example, a small model writes."""
    from switchback.activities.config_roots import PACKAGED as DEFAULT_DIR
    from switchback.activities.tools.registry import _SPECS, openai_tool

    found = {f"tool {s.name}": example_paths(json.dumps(openai_tool(s.name))) for s in _SPECS}
    for path in sorted((DEFAULT_DIR / "prompts").iterdir()):
        text = path.read_text(encoding="utf-8").replace("{{archive}}", "archive/phase_N.yaml")
        if path.suffix == ".yaml":  # its comments are for people; the model reads the todos
            text = "\n".join(line for line in text.splitlines()
                             if not line.lstrip().startswith("#"))
        found[f"prompt {path.name}"] = example_paths(text)
    assert not {k: v for k, v in found.items() if v}
    assert example_paths("write notes/a.md or out.txt, then todos.yaml") == {"notes/a.md",
                                                                            "out.txt"}
