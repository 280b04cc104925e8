"""The operator's MCP servers: a YAML file the worker loads, never job input.

    SWITCHBACK_MCP_FILE (default: <configs>/mcp.yaml; a missing default file is no servers)

    servers:
      time:                                # stdio: the worker starts the command
        command: mcp-server-time
      git:
        command: mcp-server-git
        args: [--repository, /srv/repo]
        env: [GIT_AUTHOR_NAME]             # names of worker variables passed through
        cwd: /srv/repo                     # relative paths: to this file's folder
      tickets:                             # Streamable HTTP
        url: https://tickets.example.com/mcp
        headers: {Authorization: TICKETS_AUTH}   # header: the worker variable holding its value
        timeout_seconds: 30                # one call (default 60)

A job selects tools of these servers by name (`<server>.<tool>`, globs like `git.*`) in
its config's tool lists; it cannot declare a server, name a command, a URL or a variable.
A stdio server gets the MCP SDK's minimal environment (HOME, PATH, ...) plus the listed
names; a command is looked up on PATH, then next to the worker's Python (its venv). Errors
name the file and the field; variables are read when a session opens, and a missing one is
an error naming it.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

ENV = "SWITCHBACK_MCP_FILE"
SERVER_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,31}")
VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class McpConfigError(ValueError):
    pass


class McpServer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    command: str | None = None
    args: list[str] = []
    env: list[str] = []  # variable names passed through to a stdio server
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = {}  # header -> name of the variable holding its value
    timeout_seconds: float = Field(60, gt=0)  # one call
    # tool -> at_least_once | at_most_once: the operator's word on how a call of that tool
    # is delivered, over what the server's annotations say (docs/tools.md)
    delivery: dict[str, Literal["at_least_once", "at_most_once"]] = {}
    startup_timeout_seconds: float = Field(30, gt=0)  # starting and initializing a session

    @model_validator(mode="after")
    def _one_transport(self) -> McpServer:
        if (self.command is None) == (self.url is None):
            raise ValueError("give either 'command' (stdio) or 'url' (Streamable HTTP)")
        if self.url is not None and (self.args or self.env or self.cwd):
            raise ValueError("'args', 'env' and 'cwd' are for stdio servers ('command')")
        if self.command is not None and self.headers:
            raise ValueError("'headers' are for Streamable HTTP servers ('url')")
        if self.url is not None and not self.url.startswith(("http://", "https://")):
            raise ValueError(f"url {self.url!r} is not an http(s) URL")
        bad = [v for v in [*self.env, *self.headers.values()] if not VARIABLE.fullmatch(v)]
        if bad:
            raise ValueError(f"not variable names: {bad} (env and header values name worker "
                             "environment variables)")
        return self

    @property
    def transport(self) -> str:
        return "stdio" if self.command else "http"

    def environment(self, name: str) -> dict[str, str]:
        return {v: _variable(name, "env", v) for v in self.env}

    def header_values(self, name: str) -> dict[str, str]:
        return {h: _variable(name, f"header {h}", v) for h, v in self.headers.items()}

    def executable(self) -> str:
        assert self.command is not None
        if os.sep in self.command:
            return self.command
        beside = str(Path(sys.executable).parent)
        path = os.environ.get("PATH", "")
        return shutil.which(self.command, path=f"{path}{os.pathsep}{beside}") or self.command


class McpConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    servers: dict[str, McpServer] = {}
    source: str = "(none)"  # the file it came from, for messages


def _variable(server: str, what: str, var: str) -> str:
    value = os.environ.get(var)
    if value is None:
        raise McpConfigError(f"MCP server '{server}': {what} names the variable {var}, which "
                             "is not set on this worker")
    return value


def default_path() -> Path:
    from switchback.activities.config_roots import config_path

    return config_path("mcp.yaml")


def load(path: str | Path | None = None) -> McpConfig:
    """The servers of `path`, else of SWITCHBACK_MCP_FILE, else of <configs>/mcp.yaml."""
    explicit = path or os.environ.get(ENV)
    file = Path(explicit) if explicit else default_path()
    if not file.exists():
        if explicit:
            origin = "" if path else f" ({ENV})"
            raise McpConfigError(f"MCP servers file {file}{origin} does not exist")
        return McpConfig()
    try:
        data = yaml.safe_load(file.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as e:
        raise McpConfigError(f"{file}: not valid YAML: {' '.join(str(e).split())}") from e
    return parse(data, str(file))


def parse(data: object, source: str) -> McpConfig:
    if not isinstance(data, dict):
        raise McpConfigError(f"{source}: expected a mapping with 'servers', got "
                             f"{type(data).__name__}")
    try:
        cfg = McpConfig.model_validate({**data, "source": source})
    except ValidationError as e:
        err = e.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "(top)"
        raise McpConfigError(f"{source}: {where}: {err['msg']}") from e
    for name, server in cfg.servers.items():
        if not SERVER_NAME.fullmatch(name) or "__" in name:
            raise McpConfigError(f"{source}: servers.{name}: a server name is 1-32 letters, "
                                 "digits, '_' or '-', starts with a letter, has no '__'")
        if server.cwd and not Path(server.cwd).is_absolute():
            server.cwd = str((Path(source).parent / server.cwd).resolve())
    return cfg
