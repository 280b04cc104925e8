"""`small`: a profile for small local models (the `local` llama-server endpoint names it).

Two rules, both at the model boundary (docs/profiles.md; each is a candidate until the
held-out ablation of docs/evals.md measures it):

- **repair**: a path argument that starts with `workspace/` (the workspace root is not a
  folder of that name, yet small models often write it so) is read without it, in the file
  tools' `path` and in `job_complete`'s `deliverables`; the conversation keeps the mended
  call, so the model sees the path that was written;
- **refuse** (`prompt_copy`): a `write_file` of a file of the work whose content copies two
  or more lines of the worker's prompt templates that this conversation's prompt showed is
  not run, naming the lines: such a file holds the prompt, not the work. The memory files
  are exempt (they are rewritten from what the prompt shows), and only the templates' fixed
  text counts, never the task filled into them (a task may ask for its own words).
"""

from __future__ import annotations

import functools
import json
import logging
from pathlib import Path
from typing import Any

from switchback.activities.config_roots import config_path
from switchback.activities.model.profiles import ModelProfile
from switchback.workflows.contract.layout import MEMORY_FILES

log = logging.getLogger(__name__)

WORKSPACE_FOLDER = "workspace/"  # the workspace root, named as a folder it is not
PATH_TOOLS = frozenset({"read_file", "write_file", "list_files", "search_files", "delete_file"})
MIN_LINE = 16  # shorter lines ("# Notes", "(none)") are too common to tell a copy
MIN_COPIED = 2  # template lines that make a copy


class Small(ModelProfile):
    name = "small"

    def repair(self, name: str, arguments: str) -> str:
        args = _object(arguments)
        if args is None:
            return arguments
        changed = False
        if name in PATH_TOOLS and isinstance(args.get("path"), str):
            mended = _root(args["path"])
            changed, args["path"] = mended != args["path"], mended
        if name == "job_complete" and isinstance(args.get("deliverables"), list):
            mended_list = [_root(p) if isinstance(p, str) else p for p in args["deliverables"]]
            changed = changed or mended_list != args["deliverables"]
            args["deliverables"] = mended_list
        return json.dumps(args, ensure_ascii=False) if changed else arguments

    def refuse(self, name: str, arguments: str, prompt: str) -> str | None:
        args = _object(arguments)
        if name != "write_file" or args is None:
            return None
        content, path = args.get("content"), str(args.get("path", "")).strip("./")
        if not isinstance(content, str) or path in MEMORY_FILES:
            return None
        copied = copied_prompt(content, prompt, template_lines(config_path("prompts")))
        if not copied:
            return None
        shown = ", ".join(json.dumps(s[:80], ensure_ascii=False) for s in copied[:3])
        more = f" and {len(copied) - 3} more" if len(copied) > 3 else ""
        return (f"write_file not run: its content copies {len(copied)} lines of this "
                f"conversation's prompt ({shown}{more}), not the file's own text. Write only "
                "what instructions.md asks this file to hold")


def _object(arguments: str) -> dict[str, Any] | None:
    try:
        value = json.loads(arguments or "{}")
    except (json.JSONDecodeError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _root(path: str) -> str:
    """`path` without a leading `workspace/` (a path that is only that folder stays)."""
    rest = path.removeprefix("./").removeprefix(WORKSPACE_FOLDER)
    return rest if rest and rest != path.removeprefix("./") else path


@functools.cache
def template_lines(folder: Path) -> frozenset[str]:
    """The fixed lines of the prompt templates in `folder` (no `{{slot}}` in them), read once
    per worker."""
    found: set[str] = set()
    for path in sorted(folder.glob("*.md")):
        found |= {ln for ln in lines(path.read_text(errors="replace")) if "{{" not in ln}
    if not found:
        log.warning("no prompt templates in %s: a write that copies the prompt is not "
                    "refused", folder)
    return frozenset(found)


def lines(text: str) -> set[str]:
    return {s for s in (ln.strip() for ln in text.splitlines()) if len(s) >= MIN_LINE}


def copied_prompt(content: str, prompt: str, template: frozenset[str]) -> list[str]:
    """The template's lines, shown in `prompt`, that `content` copies, in the content's
    order, when there are MIN_COPIED or more; else []."""
    copied = lines(content) & template & lines(prompt)
    if len(copied) < MIN_COPIED:
        return []
    ordered = (ln.strip() for ln in content.splitlines())
    return list(dict.fromkeys(ln for ln in ordered if ln in copied))
