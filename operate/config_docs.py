"""The job config, stated once: `configs/defaults.yaml` and `docs/config-reference.md` are
generated from the schema (workflows/contract/config.py: each setting's default, and the
string under it as its one-line description).

    python -m switchback.operate.config_docs          write both files
    python -m switchback.operate.config_docs --check  exit 1 when either differs from the schema

tests/test_config_docs.py runs the check, so a setting changed in the schema and not
regenerated fails the suite.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel

from switchback.workflows.contract.config import PROMPT_FILES, JobConfig

ROOT = Path(__file__).resolve().parent.parent
DEFAULTS = ROOT / "configs" / "defaults.yaml"
REFERENCE = ROOT / "docs" / "config-reference.md"
NOT_IN_DEFAULTS = {"extends"}  # the base extends nothing
WIDTH = 96

HEADER = """\
# switchback defaults: every job config extends these (directly or through another config).
# GENERATED from the schema (workflows/contract/config.py) by
# `python -m switchback.operate.config_docs`:
# change a default or a description there, then run it; docs/config-reference.md is the
# same, as a table. Model endpoints are the operator's (configs/endpoints.yaml): a job
# picks one by name; `default` is OPENAI_BASE_URL / OPENAI_API_KEY.
"""


def summary(model: type[BaseModel]) -> str:
    """A model's docstring's first paragraph, on one line."""
    return " ".join((model.__doc__ or "").strip().split("\n\n")[0].split())


def value(v: Any) -> str:
    """`v` as a YAML flow value: plain where YAML reads it back as the same value, else JSON
    (which YAML reads too)."""
    if v is None or isinstance(v, bool):
        return json.dumps(v)
    if isinstance(v, str) and v and " #" not in v and yaml.safe_load(v) == v:
        return v
    return json.dumps(v, ensure_ascii=False)


def wrap(text: str, indent: str) -> list[str]:
    """`text` as comment lines at `indent`, each at most WIDTH characters."""
    lines, line = [], ""
    for word in text.split():
        if line and len(indent) + 2 + len(line) + 1 + len(word) > WIDTH:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    return [f"{indent}# {x}" for x in lines + ([line] if line else [])]


def defaults_yaml() -> str:
    out = [HEADER]

    def emit(model: type[BaseModel], instance: BaseModel, depth: int) -> None:
        indent = "  " * depth
        for name, field in model.model_fields.items():
            if depth == 0 and name in NOT_IN_DEFAULTS:
                continue
            v = getattr(instance, name)
            if isinstance(v, BaseModel):
                if depth == 0:
                    out.append("")
                out.extend(wrap(field.description or summary(type(v)), indent))
                out.append(f"{indent}{name}:")
                emit(type(v), v, depth + 1)
            else:
                out.extend(wrap(field.description or "", indent))
                out.append(f"{indent}{name}: {value(v)}")

    emit(JobConfig, JobConfig(), 0)
    return "\n".join(out) + "\n"


def reference_md() -> str:
    out = ["# Config reference", "",
           "Every setting of a job config, its default and what it does. Generated from the "
           "schema (`workflows/contract/config.py`) by "
           "`python -m switchback.operate.config_docs`, like "
           "`configs/defaults.yaml`; how configs are written and merged: "
           "[configs.md](configs.md).", ""]
    rows: list[str] = []
    count = 0

    def table(model: type[BaseModel], instance: BaseModel, prefix: str) -> None:
        nonlocal count
        for name, field in model.model_fields.items():
            v = getattr(instance, name)
            if isinstance(v, BaseModel):
                rows.append(f"| **`{prefix}{name}`** | | {summary(type(v))} |")
                table(type(v), v, f"{prefix}{name}.")
            else:
                count += 1
                doc = (field.description or "").replace("|", "\\|")
                rows.append(f"| `{prefix}{name}` | `{value(v)}` | {doc} |".replace(
                    "`` ", "`\"\"` "))

    table(JobConfig, JobConfig(), "")
    out += [f"{count} settings.", "", "| setting | default | description |", "| --- | --- | --- |"]
    prompts = ["", "## Prompts", "",
               "The prompt files a job's strategies use, under the configs folder; `prompts: "
               "{<name>: <file>}` in a config puts its own file in place of one.", "",
               "| name | file | what it is |", "| --- | --- | --- |"]
    prompts += [f"| `{name}` | `{path}` | {what} |" for name, (path, what) in PROMPT_FILES.items()]
    return "\n".join(out + rows + prompts) + "\n"


def leaves(model: type[BaseModel] = JobConfig, prefix: str = "") -> list[tuple[str, str]]:
    """(dotted name, description) of every leaf setting."""
    out = []
    for name, field in model.model_fields.items():
        default = field.get_default(call_default_factory=True)
        if isinstance(default, BaseModel):
            out += leaves(type(default), f"{prefix}{name}.")
        else:
            out.append((prefix + name, field.description or ""))
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m switchback.operate.config_docs",
                                description=__doc__.split(
        "\n\n")[0])
    p.add_argument("--check", action="store_true", help="only check, write nothing")
    args = p.parse_args(argv)
    stale = []
    for path, text in ((DEFAULTS, defaults_yaml()), (REFERENCE, reference_md())):
        current = path.read_text(encoding="utf-8") if path.exists() else ""
        if current == text:
            continue
        stale.append(str(path.relative_to(ROOT)))
        if not args.check:
            path.write_text(text, encoding="utf-8")
    if stale:
        print(("out of date: " if args.check else "written: ") + ", ".join(stale)
              + (" (run python -m switchback.operate.config_docs)" if args.check else ""))
    return 1 if stale and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
