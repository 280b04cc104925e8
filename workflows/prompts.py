"""Prompt templates are files under configs/prompts/; this fills their `{{name}}` slots.

Plain substitution (no format-string parsing), so braces in workspace.md or in
JSON examples inside a template are left alone. Pure and deterministic.
"""

from __future__ import annotations

import re

_SLOT = re.compile(r"\{\{\s*([a-z_]+)\s*\}\}")


def render(template: str, values: dict[str, str]) -> str:
    """Replace each `{{name}}` with values[name]; unknown slots stay as they are."""
    return _SLOT.sub(lambda m: values.get(m.group(1), m.group(0)), template)
