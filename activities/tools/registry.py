"""Every model tool: its name, description and argument schema (layer 3 of the context).

The core tools (workspace, todos, job, tool_search) are declared here; the domain tools of
Python packages (switchback's own included) are added by catalog.py from their entry points.

Arguments are pydantic models, so the JSON schema the model sees and the
validation of what it sends come from one place. `parse_arguments` turns the
model's raw argument string into a model instance or a message the model can
act on; it never raises.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, Field, ValidationError

from switchback import ToolResult as PublicToolResult


class PathArgs(BaseModel):
    # no example path: a model copies an example's folder into the paths it writes
    path: str = Field(description="File path relative to the workspace root, as the task "
                                  "or the todo names it")


class ReadFileArgs(PathArgs):
    offset: int = Field(0, ge=0, description="Character offset to start reading from")


class WriteFileArgs(PathArgs):
    content: str = Field(description="The complete new content of the file")


class ListFilesArgs(BaseModel):
    path: str = Field("", description="Folder relative to the workspace root; '' for all")


class SearchFilesArgs(BaseModel):
    query: str = Field(min_length=1, description="Text to look for (case-insensitive)")
    path: str = Field("", description="Folder to search in; '' for the whole workspace")


class TodoCompleteArgs(BaseModel):
    notes: str = Field("", description="What was done; kept in the phase archive")


class TodoItemArgs(BaseModel):
    id: int
    content: str


class TodoWriteArgs(BaseModel):
    phase: str = Field(description="Title of the next phase")
    description: str = Field("", description="What the phase achieves")
    todos: list[TodoItemArgs] = Field(description="The phase's todos, in order")
    deliverables: list[str] = Field(
        default_factory=list, max_length=50, description="The files the task asks the job "
        "to deliver (workspace paths or globs), if any: the job is complete when they exist")


class JobCompleteArgs(BaseModel):
    summary: str = Field(description="What the job achieved")
    deliverables: list[str] = Field(default_factory=list,
                                    description="Workspace paths of the results")
    confidence: float = Field(ge=0, le=1, description=(
        "0..1: how sure you are the task is achieved; 0 says it is not (the job then ends "
        "stuck, not completed)"))
    notes: str = Field("", description="Caveats, open questions, things to review")


class TodoRewindArgs(BaseModel):
    issue: str = Field(min_length=1, description="Why the current todos cannot work")
    restore_phase: int | None = Field(
        None, ge=1, description="Only if the job's config allows it: also put the workspace "
        "files back as they were at the start of this earlier phase (the files it replaces "
        "are archived); omit to keep the files")


class ToolSearchArgs(BaseModel):
    query: str = Field(min_length=1, description="What you want to do, in a few words")


# plan_revise_execute and auto: their arguments travel to the workflow (control tools), so
# they are capped to keep history small

class PlanStepArgs(BaseModel):
    id: int = Field(ge=1, le=1000, description="Step number, unique in the plan")
    name: str = Field(min_length=1, max_length=200, description="The step in a few words")
    detail: str = Field("", max_length=1500,
                        description="What to do, and what its result is when it is done")
    after: list[int] | None = Field(
        None, max_length=30, description="Ids of earlier steps whose results this step needs "
        "(default: all earlier steps)")


class SubmitPlanArgs(BaseModel):
    steps: list[PlanStepArgs] = Field(min_length=1, max_length=30,
                                      description="The steps, in the order they run")
    rationale: str = Field("", max_length=2000, description="Why this plan: the approach")


class SubmitEvaluationArgs(BaseModel):
    score: float = Field(ge=0, le=1, description="0..1: how likely the plan achieves the task "
                         "as it stands")
    reasons: str = Field(min_length=1, max_length=3000,
                         description="What is good, what is missing or wrong, what to change")


class StepResultArgs(BaseModel):
    status: Literal["done", "failed"] = Field(
        description="done: the step's result exists; failed: it cannot be done as planned")
    summary: str = Field(min_length=1, max_length=2000, description="done: what the step "
                         "produced (later steps read this); failed: why, and what you found")
    files: list[str] = Field(default_factory=list, max_length=50,
                             description="Workspace paths the step wrote")


class ClassifyTaskArgs(BaseModel):
    complexity: Literal["A", "B", "C"] = Field(
        description="A: complex, B: complicated, C: routine")
    reasons: str = Field(min_length=1, max_length=2000, description="Why this class")


@dataclass
class ToolResult(PublicToolResult):
    """What a tool handler returns: the text the model sees, the paths it changed, and
    (tool_search) the tools it loaded."""

    tools_added: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    args: type[BaseModel]
    # True for a call that must wait for the `approve` update whatever the config says
    # (e.g. a Cypher query that writes); the tool then runs with `ToolLimits.approved`.
    needs_approval: Callable[[BaseModel], bool] | None = None


_SPECS = [
    ToolSpec("read_file", "Read a text file of the workspace. Long files come in parts: the "
             "answer says which offset to read next.", ReadFileArgs),
    ToolSpec("write_file", "Create or replace a workspace file with the given content. Answers "
             "with a short confirmation.", WriteFileArgs),
    ToolSpec("list_files", "List workspace files (path and size) under a folder.", ListFilesArgs),
    ToolSpec("search_files", "Find lines containing the query in workspace text files.",
             SearchFilesArgs),
    ToolSpec("delete_file", "Delete a workspace file.", PathArgs),
    ToolSpec("todo_complete", "Mark the current todo as done and get the next one. Call it "
             "after finishing each todo.", TodoCompleteArgs),
    ToolSpec("todo_write", "Write the next phase's todos to todos.yaml (validated: ids are "
             "integers, content is text, the count within the configured bounds).",
             TodoWriteArgs),
    ToolSpec("job_complete", "Finish the whole job. Only when the plan is fully executed and "
             "the deliverables exist.", JobCompleteArgs),
    ToolSpec("todo_rewind", "Panic button: the current todos cannot work as planned. Archives "
             "them with your issue and returns to planning.", TodoRewindArgs),
    ToolSpec("tool_search", "Find more tools by what you want to do. The best matches are "
             "loaded and can be called from your next turn on.", ToolSearchArgs),
    ToolSpec("submit_plan", "Submit the plan: its steps in order, each small enough for one "
             "focused conversation.", SubmitPlanArgs),
    ToolSpec("submit_evaluation", "Submit your evaluation of the plan: a score and the "
             "reasons.", SubmitEvaluationArgs),
    ToolSpec("step_result", "Finish the current step: done with what it produced, or failed "
             "with why it cannot be done as planned (the rest of the plan is then revised).",
             StepResultArgs),
    ToolSpec("classify_task", "Record the complexity class of the instructions with your "
             "reasons.", ClassifyTaskArgs),
]
TOOLS: dict[str, ToolSpec] = {s.name: s for s in _SPECS}


@functools.cache
def openai_tool(name: str) -> dict:
    """The tool's Chat Completions schema; built once per name (pydantic's JSON schema
    generation is costly), shared - do not modify the answer."""
    spec = TOOLS[name]
    schema = _strip_titles(spec.args.model_json_schema())
    return {"type": "function",
            "function": {"name": name, "description": spec.description, "parameters": schema}}


MAX_ARGUMENT_CHARS = 1 << 24  # a backstop: model replies cap arguments at max_output_chars


def parse_arguments(name: str, raw: str | None,
                    max_chars: int = MAX_ARGUMENT_CHARS) -> tuple[BaseModel | None, str | None]:
    """(arguments, None) or (None, an error message for the model). Never raises: whatever
    the model sent (too long, nested too deeply, not Unicode, NaN, wrong types) is an
    error it can read."""
    spec = TOOLS.get(name)
    if spec is None:
        return None, f"unknown tool '{name}'"
    data, problem = decode_arguments(name, raw, max_chars)
    if data is None:
        return None, problem
    where = _not_unicode(data)
    if where is not None:
        return None, (f"the arguments of '{name}' contain text that is not valid Unicode (a "
                      f"lone surrogate, in {where!r}); send UTF-8 text")
    try:
        return spec.args.model_validate(data), None
    except ValidationError as e:
        problems = "; ".join(f"{'.'.join(str(p) for p in err['loc'])[:100] or 'arguments'}: "
                             f"{err['msg'][:200]}" for err in e.errors()[:5])
        return None, f"bad arguments for '{name}': {problems}"
    except RecursionError:
        return None, f"the arguments of '{name}' are nested too deeply; send a flat JSON object"


def decode_arguments(name: str, raw: object,
                     max_chars: int = MAX_ARGUMENT_CHARS) -> tuple[dict | None, str | None]:
    """(the arguments as a JSON object, None) or (None, what is wrong with them, for the
    model): any tool's, known here or not (the model's answers are checked with it)."""
    if not isinstance(raw, str | None):
        return None, f"the arguments of '{name}' must be a JSON object encoded as a string"
    if raw is not None and len(raw) > max_chars:
        return None, (f"the arguments of '{name}' are {len(raw):,} characters, over the limit "
                      f"of {max_chars:,}")
    try:
        data = json.loads(raw or "{}", parse_constant=_no_constant)
    except json.JSONDecodeError as e:
        return None, (f"the arguments of '{name}' are not valid JSON ({e.msg} at char {e.pos}); "
                      "send a JSON object")
    except RecursionError:
        return None, f"the arguments of '{name}' are nested too deeply; send a flat JSON object"
    except ValueError as e:  # NaN / Infinity, an integer of more than 4,300 digits
        why = (_one_line(e) if "JSON number" in str(e)
               else "a number has more than 4,300 digits")
        return None, f"the arguments of '{name}' are not valid JSON ({why})"
    if not isinstance(data, dict):
        return None, f"the arguments of '{name}' must be a JSON object"
    return data, None


def _no_constant(name: str) -> object:
    raise ValueError(f"{name} is not a JSON number")


def _not_unicode(data: dict) -> str | None:
    """Where a string (or key) with a lone surrogate is, or None (iterative: any depth)."""
    stack: list[tuple[object, str]] = [(data, "")]
    while stack:
        value, where = stack.pop()
        if isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                return where or "the arguments"
        elif isinstance(value, dict):
            for k, v in value.items():
                key = f"{where}.{k}" if where else str(k)
                stack += [(k, key[:80]), (v, key[:80])]
        elif isinstance(value, list):
            stack += [(v, f"{where}[{i}]"[:80]) for i, v in enumerate(value)]
    return None


def _one_line(e: Exception) -> str:
    return " ".join(str(e).split())[:200]


KEY_ARGUMENTS = ("path", "query", "phase", "issue")
SHORT_VALUE = 24  # a string this short (a regime, a status) is shown whole


def argument_summary(args: BaseModel | None, details: bool = True) -> str:
    """A short label for the UI (activity summaries, `last_step`): the path or query the call
    is about; for a tool without one (with `details`), its ids (`id`, `*_id`, `*_ids`), short
    values and the start of its first text in quotes - `chunk_007 "Aufbewahrungspflicht..."`."""
    if args is None:
        return ""
    data = args.model_dump()
    for name in KEY_ARGUMENTS:
        value = data.get(name)
        if isinstance(value, str) and value:
            return value[:120]
    if not details:
        return ""
    ids, short, text = [], [], ""
    for name, value in sorted(data.items(), key=lambda kv: kv[0] != "id"):
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            value = ",".join(value)
            if not (name == "ids" or name.endswith("_ids")):
                continue
        if not isinstance(value, str) or not value.strip():
            continue
        value = " ".join(value.split())
        if name == "id" or name.endswith(("_id", "_ids")):
            ids.append(value[:60])
        elif len(value) <= SHORT_VALUE:
            short.append(value)
        elif not text:
            text = f'"{value[:60]}..."' if len(value) > 60 else f'"{value}"'
    return " ".join(ids + short + ([text] if text else []))[:120]


def _strip_titles(schema: dict) -> dict:
    if isinstance(schema, dict):
        return {k: _strip_titles(v) for k, v in schema.items()
                if not (k == "title" and isinstance(v, str))}
    if isinstance(schema, list):
        return [_strip_titles(v) for v in schema]
    return schema
