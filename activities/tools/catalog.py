"""Every tool the model can be given, core and domain, in one place.

Core tools (workspace, todos, job) are declared in registry.py; each domain
module declares its own `SPECS` and `HANDLERS` (documents, creator, validator,
tool search). Importing this module registers them all in `tool_registry.TOOLS`,
which the model-call activity uses for schemas and argument checks, and builds
`HANDLERS`, which the tool activity dispatches on. A config picks which of these a
job gets (`tools.*` lists); the workflow never imports tool code.
"""

from __future__ import annotations

from activities.tools import creator as creator_tools
from activities.tools import documents as document_tools
from activities.tools import search as tool_search
from activities.tools import validator as validator_tools
from activities.tools import workspace as workspace_tools
from activities.tools.registry import TOOLS

HANDLERS = {
    "read_file": workspace_tools.read_file,
    "write_file": workspace_tools.write_file,
    "list_files": workspace_tools.list_files,
    "search_files": workspace_tools.search_files,
    "delete_file": workspace_tools.delete_file,
    "todo_write": workspace_tools.todo_write,
    "extract_document_text": document_tools.extract_document_text,
    "chunk_document": document_tools.chunk_document,
    "tool_search": tool_search.tool_search,
    **creator_tools.HANDLERS,
    **validator_tools.HANDLERS,
}

for spec in (*creator_tools.SPECS, *validator_tools.SPECS):
    TOOLS.setdefault(spec.name, spec)

missing = sorted(set(HANDLERS) - set(TOOLS))
assert not missing, f"tools without a spec: {missing}"
