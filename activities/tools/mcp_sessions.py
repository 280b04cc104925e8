"""The worker's MCP servers: one session per server and process, opened on first use.

Built on the official `mcp` SDK's `Client` (stdio and Streamable HTTP transports). Each
session is owned by one task for its whole life (an MCP stdio session must be opened and
closed by the same task); calls from any activity go through it concurrently.

- A session that fails (the server died - a SIGKILLed stdio server shows as "Connection
  closed" -, a call timed out, the transport broke) is retired: the call raises a retryable
  `ApplicationError` and the next attempt, under the job's tool retry rules, opens a fresh
  session (a new server process for stdio).
- A server that does not start raises `McpUnavailable` naming it and why; the worker says
  so at start (`check`), a job that needs it fails at its start with the same words.
- What the server answers goes back to the model as a tool result: `isError` results and
  JSON-RPC error responses (e.g. -32602 for an unknown tool or bad arguments, depending on
  the server) become tool errors the model can read (`mcp_tool_error`, `mcp_error`), not
  retries; a malformed answer is `mcp_bad_response`.

temporalio-mcp (Temporal's MCP plugin) has the same ownership rule and error split; it is
not used because its list/call activities carry arguments and results through workflow
history and re-list tools per workflow object, where switchback keeps both out of history
(docs/tools.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TextIO

import mcp_types as types
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from pydantic import ValidationError
from temporalio.exceptions import ApplicationError

from switchback.activities.tools.mcp_config import McpConfig, McpConfigError, McpServer

log = logging.getLogger("switchback.mcp")
BROKEN = {types.CONNECTION_CLOSED, types.REQUEST_TIMEOUT}  # the session is not usable after
MAX_PAGES = 100


class McpUnavailable(Exception):
    """A server could not be reached or started; retried like any infrastructure failure."""


@dataclass
class McpAnswer:
    ok: bool
    text: str
    code: str = "ok"


class _Session:
    """One server connection, opened and closed by its own task."""

    def __init__(self, name: str, spec: McpServer, errlog: TextIO) -> None:
        self.name = name
        self.ready: asyncio.Future[Client] = asyncio.get_running_loop().create_future()
        self._stop = asyncio.Event()
        self.retired = False
        self._task = asyncio.create_task(self._own(spec, errlog), name=f"mcp-{name}")

    async def _own(self, spec: McpServer, errlog: TextIO) -> None:
        try:
            async with contextlib.AsyncExitStack() as stack:
                if spec.command is not None:
                    params = StdioServerParameters(command=spec.executable(), args=spec.args,
                                                   env=spec.environment(self.name) or None,
                                                   cwd=spec.cwd)
                    transport: Any = stdio_client(params, errlog=errlog)
                else:
                    assert spec.url is not None
                    http = await stack.enter_async_context(
                        create_mcp_http_client(headers=spec.header_values(self.name)))
                    transport = streamable_http_client(spec.url, http_client=http)
                client = await stack.enter_async_context(Client(transport, cache=None))
                self.ready.set_result(client)
                await self._stop.wait()
        except BaseException as e:  # noqa: BLE001 - reported to whoever waits for the session
            if not self.ready.done():
                self.ready.set_exception(e)
            elif not self._stop.is_set():
                log.warning("MCP server '%s': session ended: %s", self.name, _why(e))

    @property
    def dead(self) -> bool:
        return self.retired or self._task.done()

    async def close(self) -> None:
        self.retired = True
        self._stop.set()
        if not self.ready.done():
            self._task.cancel()
        with contextlib.suppress(BaseException):
            await asyncio.wait_for(self._task, 10)


class McpServers:
    """The servers of one McpConfig, with their sessions (per process, opened lazily)."""

    def __init__(self, config: McpConfig | None = None, errlog: TextIO | None = None) -> None:
        self.config = config or McpConfig()
        self._errlog = errlog or sys.stderr
        self._sessions: dict[str, _Session] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._closing: set[asyncio.Task[None]] = set()

    def names(self) -> list[str]:
        return list(self.config.servers)

    def spec(self, name: str) -> McpServer:
        return self.config.servers[name]

    async def _session(self, name: str) -> Client:
        spec = self.config.servers[name]
        async with self._locks.setdefault(name, asyncio.Lock()):
            s = self._sessions.get(name)
            if s is not None and not s.dead:
                return await s.ready
            if s is not None:
                await s.close()
            s = self._sessions[name] = _Session(name, spec, self._errlog)
            try:
                return await asyncio.wait_for(asyncio.shield(s.ready),
                                              spec.startup_timeout_seconds)
            except BaseException as e:
                await s.close()
                self._sessions.pop(name, None)
                if isinstance(e, asyncio.CancelledError):
                    raise
                what = (f"did not answer within {spec.startup_timeout_seconds:g}s"
                        if isinstance(e, TimeoutError) else _why(e))
                raise McpUnavailable(f"MCP server '{name}' ({_describe(spec)}) did not start: "
                                     f"{what}") from e

    async def _retire(self, name: str) -> None:
        s = self._sessions.get(name)
        if s is not None and not s.retired:
            s.retired = True
            task = asyncio.get_running_loop().create_task(s.close())
            self._closing.add(task)  # held: the loop keeps only weak references to tasks
            task.add_done_callback(self._closing.discard)

    async def list_tools(self, name: str) -> list[types.Tool]:
        """Every tool of the server (all pages), straight from the server."""
        client = await self._session(name)
        tools: list[types.Tool] = []
        cursor: str | None = None
        try:
            for _ in range(MAX_PAGES):
                page = await client.list_tools(cursor=cursor, cache_mode="bypass")
                tools += page.tools
                cursor = page.next_cursor
                if cursor is None:
                    return tools
        except Exception as e:  # noqa: BLE001 - any failure: a new session next time
            await self._retire(name)
            raise McpUnavailable(f"MCP server '{name}' could not list its tools: {_why(e)}") \
                from e
        raise McpUnavailable(f"MCP server '{name}' lists more than {MAX_PAGES} pages of tools")

    async def call(self, name: str, tool: str, arguments: dict[str, Any],
                   meta: dict[str, Any] | None = None,
                   before_send: Callable[[], Awaitable[None]] | None = None) -> McpAnswer:
        """Call `tool` (`meta`: the request's `_meta`, e.g. its idempotency key;
        `before_send`: awaited once the session is open, right before the call goes out);
        the answer the model reads, or a retryable ApplicationError when the server or the
        connection failed."""
        spec = self.config.servers[name]
        if before_send is not None:  # the session first: a server that does not open was
            try:                     # never sent the call (an at-most-once intent waits)
                await self._session(name)
            except McpUnavailable as e:
                raise _retryable(str(e)) from e
            except McpConfigError as e:
                raise ApplicationError(str(e), type="MCPServerMisconfigured") from e
            await before_send()
        try:
            client = await self._session(name)
            result = await client.call_tool(tool, arguments,
                                            read_timeout_seconds=spec.timeout_seconds,
                                            meta=meta)  # type: ignore[arg-type]
        except McpUnavailable as e:
            raise _retryable(str(e)) from e
        except McpConfigError as e:
            raise ApplicationError(str(e), type="MCPServerMisconfigured") from e
        except MCPError as e:
            if e.code in BROKEN:
                await self._retire(name)
                raise _retryable(f"MCP server '{name}': {_why(e)}; the next attempt opens a "
                                 "new session") from e
            return McpAnswer(False, f"MCP server '{name}' refused the call of '{tool}': "
                             f"{e.message} (JSON-RPC error {e.code})", "mcp_error")
        except ValidationError as e:
            return McpAnswer(False, f"MCP server '{name}' answered '{tool}' with a malformed "
                             f"result: {e.error_count()} validation errors", "mcp_bad_response")
        except Exception as e:  # noqa: BLE001 - a broken transport (OSError, anyio's, a timeout)
            await self._retire(name)
            raise _retryable(f"MCP server '{name}': {_why(e)}; the next attempt opens a new "
                             "session") from e
        text = content_text(result)
        if result.is_error:
            return McpAnswer(False, text, "mcp_tool_error")
        return McpAnswer(True, text)

    async def check(self) -> dict[str, str | None]:
        """Open every server's session and list its tools: {server: None or the problem}.
        The worker runs this at start and prints what it finds."""
        async def one(name: str) -> str | None:
            try:
                tools = await self.list_tools(name)
            except (McpUnavailable, McpConfigError) as e:
                log.error("%s", e)
                return str(e)
            log.info("MCP server '%s': %d tools", name, len(tools))
            return None
        results = await asyncio.gather(*(one(n) for n in self.names()))
        return dict(zip(self.names(), results, strict=True))

    async def close(self) -> None:
        sessions, self._sessions = list(self._sessions.values()), {}
        await asyncio.gather(*(s.close() for s in sessions), *self._closing,
                             return_exceptions=True)


def content_text(result: types.CallToolResult) -> str:
    """The result's content as the text the model reads."""
    parts: list[str] = []
    for block in result.content:
        if isinstance(block, types.TextContent):
            parts.append(block.text)
        elif isinstance(block, types.ImageContent | types.AudioContent):
            size = len(block.data) * 3 // 4
            parts.append(f"[{block.type}: {block.mime_type}, about {size} bytes, not shown]")
        elif isinstance(block, types.ResourceLink):
            about = f": {block.description}" if block.description else ""
            parts.append(f"[resource {block.uri}{about}]")
        elif isinstance(block, types.EmbeddedResource):
            r = block.resource
            parts.append(r.text if isinstance(r, types.TextResourceContents)
                         else f"[binary resource {r.uri}, not shown]")
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False, indent=1))
    return "\n".join(parts) or "(the tool returned no content)"


def _retryable(message: str) -> ApplicationError:
    return ApplicationError(message, type="MCPServerUnavailable")


def _describe(spec: McpServer) -> str:
    return f"stdio: {spec.command}" if spec.command else f"http: {spec.url}"


def _why(e: BaseException) -> str:
    if isinstance(e, BaseExceptionGroup) and e.exceptions:
        return _why(e.exceptions[0])
    text = " ".join(str(e).split())[:300]
    return f"{type(e).__name__}: {text}" if text else type(e).__name__
