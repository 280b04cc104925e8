"""Tool names: what a config says, what the model sees on the wire, and globs.

- A Python tool (core, built-in or from a package) has one name, e.g. `cite_document`.
- An MCP tool is `<server>.<tool>` in configs (`time.get_current_time`). OpenAI function
  names must match ^[a-zA-Z0-9_-]{1,64}$, so on the wire - in the schemas the model sees,
  in its calls, approvals, the `state` query, the web UI - it is `<server>__<tool>`
  (`time__get_current_time`). A name that would not fit (other characters, too long) is
  made to fit and gets 8 hex digits of a hash of the config name, so it stays unique.
- A config entry is a name (either form) or a glob (`git.*`, `git.git_diff*`, `*_file`).
  An entry with a `.` selects MCP tools, one without selects Python tools.

`resolve` turns a config's entries into wire names, or problems that say what is offered.
"""

from __future__ import annotations

import difflib
import fnmatch
import hashlib
import re
from dataclasses import dataclass

WIRE = re.compile(r"[a-zA-Z0-9_-]{1,64}")
_NOT_WIRE = re.compile(r"[^a-zA-Z0-9_-]")
GLOB = re.compile(r"[*?\[]")


def wire_name(server: str, tool: str) -> str:
    """The name the model calls an MCP tool by."""
    name = f"{server}__{tool}"
    if WIRE.fullmatch(name):
        return name
    digest = hashlib.sha1(f"{server}.{tool}".encode()).hexdigest()[:8]
    return f"{_NOT_WIRE.sub('_', name)[:55]}_{digest}"


def config_name(server: str, tool: str) -> str:
    return f"{server}.{tool}"


@dataclass(frozen=True)
class Offered:
    """A tool this worker offers a job."""

    name: str  # as configs name it
    wire: str  # as the model calls it
    source: str  # "built-in" | "package <distribution>" | "mcp server <name>"
    server: str | None = None  # MCP only
    tool: str | None = None  # MCP only: the server's own name for it


def resolve(entries: list[str], offered: list[Offered],
            servers: list[str]) -> tuple[dict[str, list[str]], list[str]]:
    """({entry: [wire names]}, problems). `servers` are the MCP servers declared on this
    worker (to tell an unknown server from an unknown tool)."""
    by_name = {o.name: o for o in offered} | {o.wire: o for o in offered}
    out: dict[str, list[str]] = {}
    problems: list[str] = []
    for entry in dict.fromkeys(entries):
        if entry in by_name:
            out[entry] = [by_name[entry].wire]
            continue
        mcp = "." in entry
        pool = [o for o in offered if (o.server is not None) == mcp]
        hits = [o.wire for o in pool if GLOB.search(entry)
                and fnmatch.fnmatchcase(o.name, entry)]
        if hits:
            out[entry] = hits
        else:
            problems.append(_problem(entry, pool, servers))
    return out, problems


def servers_named(entries: list[str], servers: list[str]) -> list[str]:
    """The MCP servers the entries may select tools of (to list only those)."""
    heads = {e.split(".", 1)[0] for e in entries if "." in e}
    return [s for s in servers if any(fnmatch.fnmatchcase(s, h) for h in heads)]


def _problem(entry: str, pool: list[Offered], servers: list[str]) -> str:
    if "." not in entry:
        close = difflib.get_close_matches(entry, [o.name for o in pool], n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        kind = "glob matches no" if GLOB.search(entry) else "unknown"
        return f"'{entry}': {kind} tool on this worker{hint} (starter.py tools lists them)"
    server, tool = entry.split(".", 1)
    named = [s for s in servers if fnmatch.fnmatchcase(s, server)]
    if not named:
        declared = ", ".join(servers) or "none"
        return (f"'{entry}': no MCP server '{server}' is declared on this worker (declared: "
                f"{declared}; servers are the operator's, in SWITCHBACK_MCP_FILE)")
    has = sorted(o.tool or "" for o in pool if o.server in named)
    return (f"'{entry}': MCP server '{named[0]}' has no tool matching '{tool}' (it has: "
            f"{', '.join(has[:30]) or 'none'})")
