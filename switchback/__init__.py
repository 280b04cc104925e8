"""switchback's public API for people who extend it. Today: tools (switchback.tools).

    from switchback import ToolContext, ToolError, ToolResult, tool

Nothing here imports switchback's internals, so a tool package depends on this API only.
"""

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
