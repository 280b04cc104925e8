"""Context assembly: what one model call carries, as a pure function of state and policy.

    1 system prompt     the system message - protected, never cut
    3 tool schemas      the request's `tools` - protected, never cut
    4 running summary   a user message, when earlier turns were folded into one
    5 recent messages   the conversation since the summary, old tool results cleared
    2 todo block        the last message (a user message) - protected, never cut

The order keeps what changes at the end: within a phase, each call's prompt is the previous
call's prompt minus its todo block plus the new turn, so a server's prompt cache reuses all
of it (llama-server measured: one line inserted at the top of the system message made it
process the whole prompt again, 3 of 1,930 tokens reused; tests/fixtures/llama_server/h*).
The todo block changes at every todo_complete; in the system message it moved the prefix.

Tool-call arguments that are not a JSON object (stored before the arguments were checked)
are sent as `{}`: a server that parses the history (llama-server) refuses the whole request
otherwise.

Compaction, cheapest first: old tool results are replaced by a placeholder that
says where the content lives (`clear_tool_results`); oversized results were already
cut by the tool activity with a pointer to the full text; when the prompt still
passes the policy's threshold, the orchestrator has older turns summarized
(`summary_cut` picks where) and calls again.
"""

from __future__ import annotations

import json
import re

from switchback.activities.model.text_memo import TextMemo
from switchback.workflows.contract.config import ContextPolicy

_POINTER = re.compile(r"(tool_outputs/\S+?\.txt)")


TODO_HEADER = "[switchback] Your todo list, as of now:"


def assemble(system: str, todo_block: str, summary: str | None, messages: list[dict],
             start: int, policy: ContextPolicy) -> list[dict]:
    """The messages of one model call (layers 1, 4, 5 and then 2)."""
    out: list[dict] = [{"role": "system", "content": system.strip()}]
    todo = ([{"role": "user", "content": f"{TODO_HEADER}\n\n{todo_block}"}]
            if todo_block.strip() else [])
    messages = [_public(m) for m in messages]
    if not policy.enabled:
        return out + messages + todo
    if summary and start > 0:
        out.append({"role": "user", "content": "Summary of the earlier part of this phase "
                    f"(the messages it replaces are gone):\n\n{summary}"})
    recent = messages[start:]
    return (out + clear_tool_results(recent, policy.keep_tool_results)
            + todo)


def _public(m: dict) -> dict:
    """Drop switchback's own bookkeeping keys (`_meta`) before a message is sent; tool-call
    arguments that are not a JSON object go as `{}`."""
    if "_meta" in m:
        m = {k: v for k, v in m.items() if not k.startswith("_")}
    calls = m.get("tool_calls")
    if calls and not all(_json_object(tc.get("function", {}).get("arguments")) for tc in calls):
        m = {**m, "tool_calls": [
            tc if _json_object(tc.get("function", {}).get("arguments"))
            else {**tc, "function": {**tc.get("function", {}), "arguments": "{}"}}
            for tc in calls]}
    return m


def _json_object(arguments: object) -> bool:
    return isinstance(arguments, str) and _decodes_to_object(arguments)


def _parses_to_object(text: str, _: str) -> bool:
    try:
        return isinstance(json.loads(text), dict)
    except (ValueError, RecursionError):
        return False


_decodes_to_object = TextMemo(_parses_to_object, 4096)  # (arguments kept by hash, not held)


CLEAR_MIN_CHARS = 300  # tool results shorter than this are never cleared (not worth a placeholder)


def clear_tool_results(messages: list[dict], keep: int,
                       min_chars: int = CLEAR_MIN_CHARS) -> list[dict]:
    """All but the last `keep` tool results longer than `min_chars` become placeholders."""
    tool_at = [i for i, m in enumerate(messages) if m.get("role") == "tool"]
    old = set(tool_at[:-keep] if keep else tool_at)
    if not old:
        return messages
    calls = _calls_by_id(messages)
    out = []
    for i, m in enumerate(messages):
        content = m.get("content") or ""
        if i in old and len(content) > min_chars:
            m = {**m, "content": placeholder(calls.get(m.get("tool_call_id", "")), content)}
        out.append(m)
    return out


def placeholder(call: tuple[str, dict] | None, content: str) -> str:
    name, args = call or ("a tool", {})
    arg = args.get("path") or args.get("query") or ""
    label = f"{name}({arg!r})" if arg else name
    pointer = _POINTER.search(content)
    if pointer:
        where = f"The full text is in {pointer.group(1)}."
    elif name == "read_file" and arg:
        where = f"It is the content of {arg}: read_file it again if you need it."
    else:
        where = "Call the tool again if you need it."
    return f"[Result of {label} cleared to keep the context small ({len(content)} chars). {where}]"


def safe_cut(messages: list[dict], target: int) -> int:
    """The first index >= target that does not start with a tool result (no orphans)."""
    i = max(0, target)
    while i < len(messages) and messages[i].get("role") == "tool":
        i += 1
    return i


def summary_cut(messages: list[dict], done: int, keep_recent: int) -> int:
    """Where a new summary should end: keep the last `keep_recent` messages raw."""
    cut = safe_cut(messages, len(messages) - keep_recent)
    return cut if cut > done else done


def transcript(messages: list[dict], per_message: int = 3000) -> str:
    """Messages as plain text for the summarization call."""
    calls = _calls_by_id(messages)
    lines = []
    for m in messages:
        role, content = m.get("role"), (m.get("content") or "")[:per_message]
        if role == "tool":
            name = (calls.get(m.get("tool_call_id", "")) or ("tool", {}))[0]
            lines.append(f"[{name} result]\n{content}")
        elif role == "assistant":
            made = ", ".join(f"{tc['function']['name']}({tc['function']['arguments'][:300]})"
                             for tc in m.get("tool_calls") or [])
            lines.append(f"[assistant]\n{content}" + (f"\n(calls: {made})" if made else ""))
        else:
            lines.append(f"[{role}]\n{content}")
    return "\n\n".join(lines)


def fallback_summary(messages: list[dict]) -> str:
    """When the model returns no summary: at least the calls that were made, in order."""
    calls = _calls_by_id(messages)
    made = [f"- {name}({args.get('path') or args.get('query') or ''})"
            for name, args in calls.values()]
    return ("(The model returned no summary; these are the tool calls of the folded "
            "messages, in order.)\n" + "\n".join(made[-100:]))


def _calls_by_id(messages: list[dict]) -> dict[str, tuple[str, dict]]:
    out: dict[str, tuple[str, dict]] = {}
    for m in messages:
        for tc in m.get("tool_calls") or []:
            fn = tc.get("function", {})
            try:
                args = json.loads(fn.get("arguments") or "{}")
            except (ValueError, RecursionError):  # the model's JSON: anything goes
                args = {}
            out[tc.get("id", "")] = (fn.get("name", "?"), args if isinstance(args, dict) else {})
    return out
