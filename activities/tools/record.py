"""A job's tool record: the tools it may use, as the model sees them, written once per job.

`list_tools` (listing.py) writes it at the job's start under `.switchback/tools/`; the
workflow keeps its key in the resolved config (`ResolvedConfig.tool_record`), so every run
of the job, its continuations and its reruns read the same schemas: replay is stable, a
model-only worker needs no MCP connection and no tool package, and a server that changes
its tools mid-job changes nothing for the job.

    {"tools": {"<wire name>": {"name": "<config name>", "source": "...",
                               "schema": {<Chat Completions tool>},
                               "server": "<MCP server>", "tool": "<its name there>"}}}

`Records` reads records through a small per-process cache (a record never changes).
`call_info` checks a call of a tool this worker has no Python code for (an MCP tool, or a
package installed only on tool workers) against the recorded JSON schema.
"""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from typing import Any

import jsonschema
from pydantic import BaseModel, Field

from switchback.activities.storage.s3 import S3Store
from switchback.workflows.contract import ToolCallInfo

PREVIEW_CHARS = 1000
SUMMARY_KEYS = ("path", "query", "phase", "issue")


class RecordedTool(BaseModel):
    name: str  # as configs name it
    source: str
    schema_: dict[str, Any] = Field(alias="schema")  # the Chat Completions tool
    server: str | None = None
    tool: str | None = None
    # how a failed attempt is handled (switchback.tools.Delivery; None: at_least_once)
    delivery: str | None = None

    model_config = {"populate_by_name": True}

    @property
    def description(self) -> str:
        return str(self.schema_["function"].get("description") or "")


class ToolRecord(BaseModel):
    tools: dict[str, RecordedTool] = {}

    def dump(self) -> bytes:
        return json.dumps(self.model_dump(by_alias=True, exclude_none=True), ensure_ascii=False,
                          indent=1).encode()

    def schemas(self, names: list[str]) -> list[dict[str, Any]]:
        return [self.tools[n].schema_ for n in names if n in self.tools]

    def descriptions(self) -> dict[str, str]:
        return {n: t.description for n, t in self.tools.items()}


class Records:
    """Tool records by S3 key, cached (they are written once and never change)."""

    def __init__(self, s3: S3Store, size: int = 256) -> None:
        self.s3 = s3
        self._cache: OrderedDict[tuple[str, str], ToolRecord] = OrderedDict()
        self._size = size

    async def get(self, bucket: str, key: str) -> ToolRecord:
        hit = self._cache.get((bucket, key))
        if hit is not None:
            self._cache.move_to_end((bucket, key))
            return hit
        raw = await self.s3.get(bucket, key)
        if raw is None:
            raise FileNotFoundError(f"tool record {key} is missing from bucket {bucket}")
        record = ToolRecord.model_validate_json(raw)
        self._cache[(bucket, key)] = record
        if len(self._cache) > self._size:
            self._cache.popitem(last=False)
        return record


def check_arguments(record: ToolRecord, name: str,
                    raw: str | None) -> tuple[dict[str, Any] | None, str | None]:
    """(arguments, None) or (None, a message for the model), by the recorded schema."""
    try:
        data = json.loads(raw or "{}")
    except json.JSONDecodeError as e:
        return None, (f"the arguments of '{name}' are not valid JSON ({e.msg} at char {e.pos}); "
                      "send a JSON object")
    if not isinstance(data, dict):
        return None, f"the arguments of '{name}' must be a JSON object"
    schema = record.tools[name].schema_["function"].get("parameters") or {}
    try:
        errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(data),
                        key=lambda e: list(map(str, e.path)))
    except jsonschema.SchemaError:
        return data, None  # a server's schema we cannot check: the server checks
    if errors:
        problems = "; ".join(f"{'.'.join(map(str, e.path)) or 'arguments'}: {e.message}"
                             for e in errors[:5])
        return None, f"bad arguments for '{name}': {problems}"
    return data, None


def summary_of(args: dict[str, Any] | None) -> str:
    """A short label for the UI: the path or query the call is about, else its first text."""
    if not args:
        return ""
    for key in (*SUMMARY_KEYS, *args):
        value = args.get(key)
        if isinstance(value, str) and value:
            return value[:120]
    return ""


def call_info(record: ToolRecord, call_id: str, name: str, raw: str,
              preview: bool) -> ToolCallInfo:
    args, error = check_arguments(record, name, raw)
    return ToolCallInfo(id=call_id, name=name, error=error, summary=summary_of(args),
                        digest=hashlib.sha1(f"{name}\x00{raw}".encode()).hexdigest()[:16],
                        preview=raw[:PREVIEW_CHARS] if preview else "")
