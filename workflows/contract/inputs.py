"""What a person sends a job, checked: the job input, the `rewind` signal and the
`approve` update (and, with the same checks and messages, an app's own input:
`input_object`, `config_field`, `text_field`, `documents_field`).

Payloads arrive undecoded (the handlers' parameters are typed `RawValue`), because a
payload the data converter cannot decode - JSON nested deeper than its parser allows, a
number of more than 4,300 digits, an escaped lone surrogate (`"\ud800"`) - makes the SDK
retry the workflow task forever (the job input) or drop the signal without a trace.
`from_raw` decodes them here: JSON of at most MAX_DEPTH levels, every string valid
Unicode. Each function then turns the JSON into the typed value or raises `InputError`
with one line that names the field, e.g.
`job input: 'instructions' must be a string of markdown (at most 200000 characters),
got 5`. Unknown keys are errors. starter.py uses the same functions before it starts
anything, so the CLI and the workflow say the same thing.

Pure functions of their argument: safe in workflow code.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError
from temporalio.api.common.v1 import Payload
from temporalio.common import RawValue

from switchback.workflows.contract import layout
from switchback.workflows.contract.job import ApproveRequest, DocumentSpec, JobInput, RewindRequest

MAX_INSTRUCTIONS_CHARS = 200_000  # longer material belongs in `documents`
MAX_FOLLOW_UP_CHARS = 20_000  # a follow-up instruction (`instruct`)
MAX_ADDED_TOOLS = 50  # tools one follow-up instruction may add
TOOL_ENTRY = re.compile(r"[A-Za-z0-9_*?\[][A-Za-z0-9_.*?!\[\]-]{0,199}")
MAX_DOCUMENTS = 200
MAX_REWIND_CHARS = 2_000
MAX_NOTE_CHARS = 2_000
MAX_CALL_ID_CHARS = 200
MAX_DEPTH = 100  # levels of JSON nesting; a job config needs five
_SURROGATE = re.compile("[\ud800-\udfff]")
NO_INPUT = RawValue(Payload(metadata={"encoding": b"binary/null"}))  # a handler's default

JOB_ID = re.compile(r"[A-Za-z0-9._-]{1,200}")
CONFIG = "a config name (string) or an inline config object"
DOCUMENTS = ("a list of documents, each a path (string) or an object {name, text} or "
             "{name, base64}")


class InputError(ValueError):
    """A payload that does not fit: the message names the field."""


def shown(value: object, limit: int = 60) -> str:
    """A short rendering of a bad value for an error message."""
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except ValueError:  # circular or otherwise odd: never from JSON input
        text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


def from_raw(value: object, what: str) -> object:
    """A payload as plain JSON: `value` is what a handler got (a RawValue, or JSON that is
    already decoded). InputError, naming `what`, for anything else."""
    if not isinstance(value, RawValue):
        data = value
    else:
        encoding = value.payload.metadata.get("encoding", b"").decode("utf-8", "replace")
        if encoding == "binary/null":
            return None
        if encoding != "json/plain":
            raise InputError(f"{what} must be JSON, got a payload encoded as {encoding!r}")
        try:
            data = json.loads(value.payload.data, parse_constant=_no_constant)
        except RecursionError:
            raise InputError(f"{what}: JSON nested too deeply (more than {MAX_DEPTH} "
                             "levels)") from None
        except json.JSONDecodeError as e:
            raise InputError(f"{what} is not JSON ({e.msg} at char {e.pos})") from None
        except ValueError as e:  # NaN, a number of more than 4,300 digits, not UTF-8
            why = (str(e) if "JSON number" in str(e) else "not UTF-8"
                   if isinstance(e, UnicodeDecodeError) else "a number has more than 4,300 "
                   "digits")
            raise InputError(f"{what} is not JSON switchback can read ({why})") from None
    _check_tree(data, what)
    return data


def _no_constant(name: str) -> object:
    raise ValueError(f"{name} is not a JSON number")


def _check_tree(data: object, what: str) -> None:
    """At most MAX_DEPTH levels, no lone surrogate in a string or key (iterative: any depth)."""
    stack: list[tuple[object, str, int]] = [(data, "", 0)]
    while stack:
        value, where, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise InputError(f"{what}: JSON nested too deeply (more than {MAX_DEPTH} levels)")
        if isinstance(value, str):
            if _SURROGATE.search(value):
                field = f"'{_SURROGATE.sub('?', where)}'" if where else "the payload"
                raise InputError(f"{what}: {field} contains text that is not valid Unicode (a "
                                 "lone surrogate); send UTF-8 text")
        elif isinstance(value, Mapping):
            for k, v in value.items():
                key = f"{where}.{k}" if where else str(k)
                stack += [(k, key[:100], depth + 1), (v, key[:100], depth + 1)]
        elif isinstance(value, list):
            stack += [(v, f"{where}[{i}]"[:100], depth + 1) for i, v in enumerate(value)]


def job_id_problem(job_id: str) -> str | None:
    """Why `job_id` cannot name a job (its S3 prefix), or None."""
    if JOB_ID.fullmatch(job_id) and not job_id.startswith("."):
        return None
    return (f"job id {job_id!r} cannot name a workspace: use 1-200 letters, digits, '.', '_' "
            "or '-', not starting with '.' (the id is the job's S3 prefix)")


def job_input(raw: object) -> JobInput:
    """The AgentJob input `{config, instructions, documents, deliverables}` from raw JSON."""
    d = _object(raw, "job input", ("config", "instructions", "documents", "deliverables"),
                'e.g. {"config": "creator", "instructions": "..."}')
    deliverables = d.get("deliverables", [])
    problem = layout.deliverables_problem(deliverables)
    if problem:
        raise InputError(f"job input: 'deliverables': {problem}")
    return JobInput(config=_config(d, "config", "job input"),
                    instructions=_text(d, "instructions", "job input"),
                    documents=_documents(d, "documents", "job input"),
                    deliverables=deliverables)


def instruction(raw: object) -> str:
    """The `instruct` update or signal: the job's next instruction, markdown (or
    {"instruction": markdown, "tools": [...]})."""
    return follow_up(raw)[0]


def follow_up(raw: object) -> tuple[str, list[str]]:
    """The `instruct` update or signal: (the instruction, markdown; the tools it adds to the
    job's domain tools, names or globs among the worker's, as `tools.domain` takes them)."""
    tools: list[str] = []
    if isinstance(raw, Mapping):
        d = _object(raw, "instruct", ("instruction", "tools"),
                    'e.g. {"instruction": "Now add ...", "tools": ["notes.send"]}')
        raw, tools = d.get("instruction"), d.get("tools", [])
        if not isinstance(tools, list) or len(tools) > MAX_ADDED_TOOLS or not all(
                isinstance(t, str) and TOOL_ENTRY.fullmatch(t) for t in tools):
            raise InputError(f"instruct: 'tools' must be a list of at most {MAX_ADDED_TOOLS} "
                             "tool names or globs (letters, digits, '_', '-', '.', '*', '?', "
                             "'[', ']', '!'), "
                             f"got {shown(tools)}")
    if not isinstance(raw, str) or not raw.strip() or len(raw) > MAX_FOLLOW_UP_CHARS:
        raise InputError(f"instruct: the instruction must be a non-empty string of markdown "
                         f"(at most {MAX_FOLLOW_UP_CHARS} characters; longer material belongs "
                         f"in a workspace document), got {shown(raw)}")
    if _SURROGATE.search(raw):
        raise InputError("instruct: the instruction is not valid Unicode")
    return raw.strip(), list(dict.fromkeys(tools))


def rewind_request(raw: object, restore: bool = True) -> RewindRequest:
    """The `rewind` signal: an issue string, or `{"issue": string, "restore_phase": N}`
    (`restore_phase` optional, a phase number >= 1; `restore=False`: not a known key, as
    before the restore existed). Longer issues are cut to MAX_REWIND_CHARS (with a note of
    the full length)."""
    restore_phase = None
    if isinstance(raw, Mapping):
        known = tuple(RewindRequest.model_fields) if restore else ("issue",)
        d = _object(raw, "rewind", known, '{"issue": "...", "restore_phase": 2}' if restore
                    else '{"issue": "..."}')
        if not isinstance(d.get("issue"), str):
            raise InputError(f"rewind: 'issue' must be a string, got {shown(d.get('issue'))}")
        restore_phase = d.get("restore_phase")
        if restore_phase is not None and (type(restore_phase) is not int or restore_phase < 1):
            raise InputError("rewind: 'restore_phase' must be a phase number (a whole number "
                             f">= 1) or null, got {shown(restore_phase)}")
        raw = d["issue"]
    if not isinstance(raw, str):
        raise InputError(f"rewind: the payload must be an issue string or "
                         f'{{"issue": string, "restore_phase": N}}, got {shown(raw)}')
    issue = raw.strip()
    if len(issue) > MAX_REWIND_CHARS:
        issue = (f"{issue[:MAX_REWIND_CHARS]} [... cut: the issue had {len(issue)} "
                 f"characters, at most {MAX_REWIND_CHARS} are kept]")
    return RewindRequest(issue=issue, restore_phase=restore_phase)


def approve_request(raw: object) -> ApproveRequest:
    """The `approve` update: `{call_id: string, approved: bool, note?: string}`."""
    d = _object(raw, "approve", tuple(ApproveRequest.model_fields),
                '{"call_id": "call_3", "approved": true, "note": "ok"}')
    call_id, approved, note = d.get("call_id"), d.get("approved"), d.get("note", "")
    if not isinstance(call_id, str) or not call_id or len(call_id) > MAX_CALL_ID_CHARS:
        raise InputError(f"approve: 'call_id' must be the id of the waiting call (a string "
                         f"of 1-{MAX_CALL_ID_CHARS} characters), got {shown(call_id)}")
    if not isinstance(approved, bool):
        raise InputError(f"approve: 'approved' must be true or false, got {shown(approved)}")
    if note is None:
        note = ""
    if not isinstance(note, str) or len(note) > MAX_NOTE_CHARS:
        raise InputError(f"approve: 'note' must be a string of at most {MAX_NOTE_CHARS} "
                         f"characters, got {shown(note)}")
    return ApproveRequest(call_id=call_id, approved=approved, note=note)


# -- the parts ------------------------------------------------------------------------


def _object(raw: object, what: str, known: tuple[str, ...], example: str) -> dict[str, Any]:
    if not isinstance(raw, Mapping):
        raise InputError(f"{what} must be a JSON object ({example}), got {shown(raw)}")
    unknown = [k for k in raw if k not in known]
    if unknown:
        raise InputError(f"{what}: unknown key {shown(unknown[0])} (known: {', '.join(known)})")
    return dict(raw)


def _config(d: dict[str, Any], key: str, what: str) -> str | dict[str, Any]:
    if key not in d:
        return "creator"
    value = d[key]
    if isinstance(value, str) and value:
        return value
    if isinstance(value, Mapping) and all(isinstance(k, str) for k in value):
        return dict(value)
    raise InputError(f"{what}: '{key}' must be {CONFIG}, got {shown(value)}")


def _text(d: dict[str, Any], key: str, what: str) -> str | None:
    value = d.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or len(value) > MAX_INSTRUCTIONS_CHARS:
        raise InputError(f"{what}: '{key}' must be a string of markdown (at most "
                         f"{MAX_INSTRUCTIONS_CHARS} characters), got {shown(value)}")
    return value


def _documents(d: dict[str, Any], key: str, what: str) -> list[str | DocumentSpec] | None:
    value = d.get(key)
    if value is None:
        return None
    if not isinstance(value, list) or len(value) > MAX_DOCUMENTS:
        raise InputError(f"{what}: '{key}' must be {DOCUMENTS} (at most {MAX_DOCUMENTS}), "
                         f"got {shown(value)}")
    return [_document(item, f"{key}[{i}]", what) for i, item in enumerate(value)]


def _document(item: object, where: str, what: str) -> str | DocumentSpec:
    if isinstance(item, str):
        if not item.strip():
            raise InputError(f"{what}: '{where}' is an empty path")
        return item
    if not isinstance(item, Mapping):
        raise InputError(f"{what}: '{where}' must be a path (string) or an object {{name, "
                         f"text}} / {{name, base64}}, got {shown(item)}")
    try:
        spec = DocumentSpec.model_validate(dict(item), strict=True)
    except ValidationError as e:
        err = e.errors()[0]
        field = ".".join(str(p) for p in err["loc"])
        why = ("unknown key (known: name, path, text, base64)"
               if err["type"] == "extra_forbidden" else err["msg"])
        raise InputError(f"{what}: '{where}.{field}': {why}") from None
    given = [k for k in ("path", "text", "base64") if getattr(spec, k) is not None]
    if len(given) != 1:
        raise InputError(f"{what}: '{where}' must give exactly one of 'path', 'text' or "
                         f"'base64' (got {', '.join(given) or 'none'})")
    if given[0] != "path" and not spec.name:
        raise InputError(f"{what}: '{where}': an inline document needs a 'name'")
    return spec


# An app's own workflow input (examples/documents: the pipeline's) is checked with these:
# the same rules and the same messages as the job input's fields.
input_object, config_field, text_field, documents_field = _object, _config, _text, _documents
