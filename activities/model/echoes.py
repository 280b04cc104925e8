"""A file written with the conversation's prompt in it (the small model profile).

The 1.5B model under react wrote its own prompt - the task, then the prompt's sections
("## Issue that started this attempt", "## Workspace memory (workspace.md)", the chat
template's tool list) - into each of the three notes its task asked for, and claimed
completion: the files existed, so only a check of their content could tell. A `write_file`
of a file of the work (not the memory: workspace.md, main_plan.md and todos.yaml are
rewritten from what the prompt shows) whose content holds two or more lines of the prompt's
template (configs/prompts/*.md of the worker: its fixed text, not the task or anything else
filled into it - a task may ask for its own words to be copied) that this conversation's
prompt showed is refused as a bad call before it runs, naming the lines, so the model
writes the file's own text instead. A job whose prompts are files of its own is held to
the worker's templates only.
"""

from __future__ import annotations

import functools
import json
import logging
from pathlib import Path

from workflows.contract.layout import MEMORY_FILES

log = logging.getLogger(__name__)

MIN_LINE = 16  # shorter lines ("# Notes", "(none)") are too common to tell a copy
MIN_COPIED = 2  # template lines that make a copy


@functools.cache
def template_lines(folder: Path) -> frozenset[str]:
    """The fixed lines of the prompt templates in `folder` (no `{{slot}}` in them); read
    once per worker, which says so once when there are none."""
    found: set[str] = set()
    for path in sorted(folder.glob("*.md")):
        found |= {ln for ln in lines(path.read_text(errors="replace")) if "{{" not in ln}
    if not found:
        log.warning("no prompt templates in %s: a write that copies the prompt is not "
                    "refused", folder)
    return frozenset(found)


def lines(text: str) -> set[str]:
    return {s for s in (ln.strip() for ln in text.splitlines()) if len(s) >= MIN_LINE}


def written_content(name: str, raw: str) -> str:
    """The content a write_file call's arguments give to a file of the work ("" for any
    other call, a write of the memory, or arguments that do not parse: those are refused
    already)."""
    if name != "write_file":
        return ""
    try:
        args = json.loads(raw or "{}")
    except json.JSONDecodeError:
        return ""
    if not isinstance(args, dict) or str(args.get("path", "")).strip("./") in MEMORY_FILES:
        return ""
    content = args.get("content")
    return content if isinstance(content, str) else ""


def copied_prompt(content: str, system: str, template: frozenset[str]) -> list[str]:
    """The template's lines, shown in this conversation's prompt `system`, that `content`
    copies, in the content's order, when there are MIN_COPIED or more; else []."""
    copied = lines(content) & template
    if len(copied) < MIN_COPIED:
        return []
    copied &= lines(system)
    if len(copied) < MIN_COPIED:
        return []
    ordered = (ln.strip() for ln in content.splitlines())
    return list(dict.fromkeys(ln for ln in ordered if ln in copied))


def problem(copied: list[str]) -> str:
    """What the model reads instead of the write's result."""
    shown = ", ".join(json.dumps(s[:80], ensure_ascii=False) for s in copied[:3])
    more = f" and {len(copied) - 3} more" if len(copied) > 3 else ""
    return (f"write_file not run: its content copies {len(copied)} lines of this "
            f"conversation's prompt ({shown}{more}), not the file's own text. Write only what "
            "instructions.md asks this file to hold")
