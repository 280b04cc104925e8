"""switchback's public API for people who extend it: tools (switchback.tools) and apps
(switchback.apps).

    from switchback import ToolContext, ToolError, ToolResult, tool

Nothing here imports switchback's internals, so a tool package depends on this API only.
The names are loaded on first use (the CLI imports `switchback.apps` for every start and
must not pay for pydantic there).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from switchback.tools import (
        Delivery,
        FileInfo,
        Files,
        Limits,
        Tool,
        ToolContext,
        ToolError,
        ToolResult,
        tool,
    )

__all__ = ["Delivery", "FileInfo", "Files", "Limits", "Tool", "ToolContext", "ToolError",
           "ToolResult", "tool"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from switchback import tools

        return getattr(tools, name)
    raise AttributeError(f"module 'switchback' has no attribute {name!r}")
