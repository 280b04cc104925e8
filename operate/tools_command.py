"""`starter.py tools [PATTERN ...] [--json] [--mcp-file FILE]`: the tools a worker here offers.

One line per tool: the name a config uses (and, for an MCP tool, the name the model calls
it by), its source (`built-in`, `package <distribution>`, `mcp server <name>`) and its
arguments (`?`: optional); `--json` prints the full schemas. It loads what a worker on this
machine loads - the tool packages' entry points and the MCP servers file (SWITCHBACK_MCP_FILE,
else configs/mcp.yaml), starting each server to list its tools - so this one command of the
client side imports the worker's tool catalog (tests/test_layering.py allows exactly it).
Exit status 1 when a server does not start or a package does not load (each is named).
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import sys
from typing import Any

from switchback.operate import CliError


async def tools(a: argparse.Namespace) -> int:
    from switchback.activities.tools.listing import inventory
    from switchback.activities.tools.mcp_config import McpConfigError, load
    from switchback.activities.tools.mcp_sessions import McpServers

    try:
        cfg = load(a.mcp_file)
    except McpConfigError as e:
        raise CliError(str(e), 2) from None
    with open(os.devnull, "w") as quiet:  # the servers' own logging
        mcp = McpServers(cfg, errlog=quiet)
        try:
            listed, problems = await inventory(mcp)
        finally:
            await mcp.close()
    rows = [t for t in listed if not a.patterns or any(
        fnmatch.fnmatchcase(t.offered.name, p) or fnmatch.fnmatchcase(t.offered.wire, p)
        for p in a.patterns)]
    if a.json:
        print(json.dumps([{"name": t.offered.name, "called_as": t.offered.wire,
                           "source": t.offered.source, "schema": t.schema} for t in rows],
                         indent=1, ensure_ascii=False))
    else:
        names = [t.offered.name + (f" ({t.offered.wire})" if t.offered.wire != t.offered.name
                                   else "") for t in rows]
        width = max([len(n) for n in names] + [4])
        source = max([len(t.offered.source) for t in rows] + [6])
        print(f"{'TOOL':<{width}}  {'SOURCE':<{source}}  ARGUMENTS")
        for name, t in zip(names, rows, strict=True):
            print(f"{name:<{width}}  {t.offered.source:<{source}}  "
                  f"{arguments(t.schema['function'].get('parameters') or {})}")
        print(f"{len(rows)} tools; from MCP servers in {cfg.source}" if cfg.servers
              else f"{len(rows)} tools; no MCP servers ({cfg.source})")
    for p in problems:
        print(f"starter.py tools: {p}", file=sys.stderr)
    return 1 if problems else 0


def arguments(schema: dict[str, Any]) -> str:
    """`path: string, offset?: integer` from a JSON schema."""
    required = set(schema.get("required") or [])
    props = schema.get("properties") or {}
    return ", ".join(f"{k}{'' if k in required else '?'}: {_type(v)}" for k, v in props.items())


def _type(s: Any) -> str:
    if not isinstance(s, dict):
        return "any"
    if "enum" in s:
        return "|".join(json.dumps(v) for v in s["enum"])
    if "anyOf" in s or "oneOf" in s:
        return "|".join(_type(v) for v in s.get("anyOf") or s.get("oneOf") or [])
    if s.get("type") == "array":
        return f"list[{_type(s.get('items'))}]"
    if "$ref" in s:
        return s["$ref"].rsplit("/", 1)[-1]
    t = s.get("type", "any")
    return "|".join(t) if isinstance(t, list) else str(t)
