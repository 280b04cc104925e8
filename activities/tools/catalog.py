"""Every Python tool the model can be given, core and domain, in one place.

Core tools (workspace, todos, job, tool_search) are declared in registry.py and carried out
here (workspace.py, search.py) or by the workflow (the control tools). Domain tools come
from the entry point group `switchback.tools` (packages.py): switchback's own (documents,
creator, validator, web_search) and any installed package's. Importing this module registers
them all in `registry.TOOLS`, which the model-call activity uses for schemas and argument
checks, and builds `HANDLERS`, which the tool activity dispatches on; `SOURCES` says where
each came from. MCP servers' tools are listed per job instead (mcp_sessions.py, listing.py).
A config picks which of these a job gets (`tools.*` lists); the workflow never imports tool
code.
"""

from __future__ import annotations

from switchback.activities.tools import file_tools as workspace_tools
from switchback.activities.tools import packages
from switchback.activities.tools import search as tool_search
from switchback.activities.tools.registry import TOOLS

HANDLERS: dict[str, packages.Handler] = {
    "read_file": workspace_tools.read_file,
    "write_file": workspace_tools.write_file,
    "list_files": workspace_tools.list_files,
    "search_files": workspace_tools.search_files,
    "delete_file": workspace_tools.delete_file,
    "todo_write": workspace_tools.todo_write,
    "tool_search": tool_search.tool_search,
}
SOURCES: dict[str, str] = {name: "built-in" for name in TOOLS}

for name, found in packages.python_tools().items():
    TOOLS[name] = packages.spec(found.tool)
    HANDLERS[name] = packages.handler(found.tool)
    SOURCES[name] = found.source

missing = sorted(set(HANDLERS) - set(TOOLS))
assert not missing, f"tools without a spec: {missing}"
