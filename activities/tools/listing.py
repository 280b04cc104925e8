"""`list_tools`: at a job's start, resolve the tool names of its config and record the tools.

Input: every entry of the config's tool lists (names and globs, `tools.*`,
`approval_required`, `breakers.exempt_tools`). The activity, on the tools queue (where the
MCP servers are):

1. lists the tools of the MCP servers the entries may name (only those), through the
   worker's sessions, and takes the Python tools (core, built-in, packages) from the catalog;
2. resolves each entry to wire names (tool_names.py); an entry that names nothing fails the job
   at once, saying what this worker offers;
3. writes the job's tool record (record.py) to `.switchback/tools/<run>_<attempt>.json`
   and answers with its key and the resolved names, which the workflow puts in its config.

A server that does not start is retried under the tool retry rules, then fails the job
naming the server. `inventory` is the same view for `starter.py tools`: every tool this
worker offers, with its source and schema.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from mcp import types
from temporalio import activity
from temporalio.exceptions import ApplicationError

from switchback.activities.storage.s3 import S3Store
from switchback.activities.tools import catalog, packages
from switchback.activities.tools.mcp_config import McpConfigError
from switchback.activities.tools.mcp_sessions import McpServers, McpUnavailable
from switchback.activities.tools.record import RecordedTool, ToolRecord
from switchback.activities.tools.registry import TOOLS, openai_tool
from switchback.activities.tools.tool_names import (
    Offered,
    config_name,
    resolve,
    servers_named,
    wire_name,
)
from switchback.workflows.contract import LIST_TOOLS, ListToolsRequest, ToolListing, layout


@dataclass(frozen=True)
class Listed:
    offered: Offered
    schema: dict[str, Any]  # the Chat Completions tool, under its wire name
    delivery: str = "at_least_once"  # switchback.tools.Delivery


def python_tools() -> list[Listed]:
    packaged = packages.python_tools()
    return [Listed(Offered(name, name, catalog.SOURCES.get(name, "built-in")), openai_tool(name),
                   packaged[name].tool.delivery if name in packaged else "at_least_once")
            for name in TOOLS]


def mcp_delivery(t: types.Tool, override: str | None) -> str:
    """How a call of an MCP tool is delivered: the operator's word (configs/mcp.yaml
    `delivery:`), else the server's annotations - read-only or idempotent: at_least_once
    (a repeat changes nothing); marked destructive or not idempotent: at_most_once - else
    (no such annotation) at_least_once, as before: a server that says nothing is retried."""
    if override:
        return override
    a = t.annotations
    if a is None or a.read_only_hint:
        return "at_least_once"
    marked = {k for k, v in a.model_dump(exclude_unset=True).items() if v is not None}
    if not marked & {"destructive_hint", "idempotent_hint"}:
        return "at_least_once"
    return "at_least_once" if a.idempotent_hint else "at_most_once"


async def mcp_tools(mcp: McpServers, server: str) -> list[Listed]:
    out = []
    overrides = mcp.config.servers[server].delivery
    for t in await mcp.list_tools(server):
        wire = wire_name(server, t.name)
        parameters = _untitled(t.input_schema or {"type": "object", "properties": {}})
        out.append(Listed(Offered(config_name(server, t.name), wire, f"mcp server {server}",
                                  server, t.name),
                          {"type": "function", "function": {
                              "name": wire, "description": t.description or t.title or "",
                              "parameters": parameters}},
                          mcp_delivery(t, overrides.get(t.name))))
    return out


class ToolListingActivities:
    def __init__(self, s3: S3Store, mcp: McpServers) -> None:
        self.s3 = s3
        self.mcp = mcp

    @activity.defn(name=LIST_TOOLS)
    async def list_tools(self, req: ListToolsRequest) -> ToolListing:
        servers = servers_named(req.entries, self.mcp.names())
        try:
            listed = python_tools() + [t for group in await asyncio.gather(
                *(mcp_tools(self.mcp, s) for s in servers)) for t in group]
        except McpUnavailable as e:
            raise ApplicationError(str(e), type="MCPServerUnavailable") from e
        except McpConfigError as e:
            raise ApplicationError(str(e), type="MCPServerMisconfigured",
                                   non_retryable=True) from e
        names, problems = resolve(req.entries, [t.offered for t in listed], self.mcp.names())
        if problems:
            raise ApplicationError("; ".join(problems), type="ToolConfigError",
                                   non_retryable=True)
        wanted = {w for wires in names.values() for w in wires}
        record = ToolRecord(tools={t.offered.wire: RecordedTool(
            name=t.offered.name, source=t.offered.source, schema_=t.schema,
            server=t.offered.server, tool=t.offered.tool,
            delivery=None if t.delivery == "at_least_once" else t.delivery)
            for t in listed if t.offered.wire in wanted})
        info = activity.info()
        ws = req.workspace
        turn = f"t{req.turn}_" if req.turn > 1 else ""
        key = layout.key(ws.job_id, layout.tool_record_path(
            f"{(info.workflow_run_id or 'run')[:13]}_{turn}{info.attempt}"))
        await self.s3.ensure_bucket(ws.bucket)
        await self.s3.put(ws.bucket, key, record.dump(), "application/json")
        return ToolListing(record=key, names=names)


async def inventory(mcp: McpServers) -> tuple[list[Listed], list[str]]:
    """Every tool this worker offers (Python tools, each MCP server's) and the problems
    (servers that do not start, packages that do not load)."""
    listed = python_tools()
    problems = list(catalog.packages.load_errors())
    for server in mcp.names():
        try:
            listed += await mcp_tools(mcp, server)
        except (McpUnavailable, McpConfigError) as e:
            problems.append(str(e))
    return listed, problems


def _untitled(schema: Any) -> Any:
    """The schema without pydantic's `title`s (tokens the model does not need)."""
    if isinstance(schema, dict):
        return {k: _untitled(v) for k, v in schema.items()
                if not (k == "title" and isinstance(v, str))}
    if isinstance(schema, list):
        return [_untitled(v) for v in schema]
    return schema
