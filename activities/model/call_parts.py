"""Two pieces of the model call that need no endpoint: what the workflow learns of one tool
call the model made (`call_info`: its checked arguments, a summary, whether it needs
approval, the profile's refusal) and instructions.md cut to fit the prompt
(`cut_instructions`, the newest follow-up instruction never cut away)."""

from __future__ import annotations

import hashlib

from switchback.activities.tools import record as tool_record
from switchback.activities.tools.registry import TOOLS, argument_summary, parse_arguments
from switchback.workflows.contract import CHECKED_TOOLS, CONTROL_TOOLS, ToolCallInfo, layout

PREVIEW_CHARS = 1000


def call_info(call_id: str, name: str, raw: str, preview: bool,
               record: tool_record.ToolRecord | None = None,
               problem: str | None = None, refusal: str = "") -> ToolCallInfo:
    """What the workflow learns of one tool call; `problem`: what replies.py found wrong;
    `refusal`: why the job's model profile does not let it run."""
    if problem is None and record is not None and name not in TOOLS and name in record.tools:
        info = tool_record.call_info(record, call_id, name, raw, preview)  # MCP tools
        return info.model_copy(update={"profile_refusal": refusal}) if refusal else info
    args, error = (None, f"bad tool call: {problem}") if problem else parse_arguments(name, raw)
    spec = TOOLS.get(name)
    asks = bool(args is not None and spec and spec.needs_approval and spec.needs_approval(args))
    digest = hashlib.sha1(f"{name}\x00{raw}".encode()).hexdigest()[:16]
    return ToolCallInfo(
        id=call_id, name=name, error=error if problem or name in TOOLS else None, digest=digest,
        args=args.model_dump() if args is not None and (
            name in CONTROL_TOOLS or name in CHECKED_TOOLS) else None,
        summary=argument_summary(args, name not in CONTROL_TOOLS),
        preview=raw[:PREVIEW_CHARS] if preview or asks else "",
        needs_approval=asks, profile_refusal=refusal)



def cut_instructions(text: str, limit: int) -> str:
    """instructions.md in at most ~`limit` characters: its start, and its follow-up
    instructions (appended at its end, `layout.FOLLOW_UP_HEADING`) kept from their end -
    the newest instruction is never the part cut away."""
    if len(text) <= limit:
        return text
    at = text.find(f"\n\n{layout.FOLLOW_UP_HEADING}")
    task, follow = (text, "") if at < 0 else (text[:at], text[at:].strip())
    if len(follow) > limit // 2:
        follow = f"[... earlier follow-up instructions cut]\n\n{follow[-(limit // 2):]}"
    keep = max(0, limit - len(follow))
    shown = task if len(task) <= keep else (
        f"{task[:keep]}\n\n[... instructions.md has {len(text):,} characters; read_file it "
        f"from offset {keep} for the rest]")
    return f"{shown}\n\n{follow}" if follow else shown
