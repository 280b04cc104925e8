"""Context assembly and compaction steps on their own (pure functions)."""

from __future__ import annotations

import json

from switchback.activities.model.prompt import (
    TODO_HEADER,
    assemble,
    clear_tool_results,
    safe_cut,
    summary_cut,
    transcript,
)
from switchback.workflows.contract.config import ContextPolicy


def assistant(i: int, name: str = "read_file", **args) -> dict:
    return {"role": "assistant", "content": f"step {i}",
            "tool_calls": [{"id": f"c{i}", "type": "function",
                            "function": {"name": name, "arguments": json.dumps(args)}}]}


def tool(i: int, content: str) -> dict:
    return {"role": "tool", "tool_call_id": f"c{i}", "content": content}


def conversation(n: int, size: int = 1000) -> list[dict]:
    msgs: list[dict] = [{"role": "user", "content": "Phase 2 begins"}]
    for i in range(n):
        msgs += [assistant(i, path=f"doc_{i}.md"), tool(i, f"text {i} " + "x" * size)]
    return msgs


def test_old_tool_results_become_placeholders_naming_the_file():
    out = clear_tool_results(conversation(8), keep=5, min_chars=300)
    tools = [m for m in out if m["role"] == "tool"]
    assert all(m["content"].startswith("[Result of read_file('doc_") for m in tools[:3])
    assert "It is the content of doc_0.md: read_file it again" in tools[0]["content"]
    assert all(m["content"].startswith("text ") for m in tools[3:])  # the last 5 intact
    assert len(out) == len(conversation(8))  # nothing dropped, order kept


def test_short_results_and_pointers():
    msgs = conversation(7, size=10)
    assert clear_tool_results(msgs, keep=1, min_chars=300) == msgs  # all short
    msgs = [assistant(0, "search_files", query="must"),
            tool(0, "a" * 500 + " [... cut. The full result is in tool_outputs/p/000002.txt; "
                 "read_file it]"), assistant(1), tool(1, "b" * 500)]
    out = clear_tool_results(msgs, keep=1, min_chars=300)
    assert "search_files('must')" in out[1]["content"]
    assert "The full text is in tool_outputs/p/000002.txt." in out[1]["content"]


def test_assemble_layers_and_policy_off():
    msgs = conversation(8)
    policy = ContextPolicy(keep_tool_results=2)
    out = assemble("SYSTEM", "TODOS", "SUMMARY TEXT", msgs, 5, policy)
    assert out[0] == {"role": "system", "content": "SYSTEM"}
    assert out[1]["role"] == "user" and "SUMMARY TEXT" in out[1]["content"]
    assert out[2:-1] == clear_tool_results(msgs[5:], 2)
    assert out[-1] == {"role": "user", "content": f"{TODO_HEADER}\n\nTODOS"}  # last
    off = assemble("SYSTEM", "TODOS", "SUMMARY TEXT", msgs, 5, ContextPolicy(enabled=False))
    assert off[1:-1] == msgs  # whole conversation, no summary, nothing cleared


def test_within_a_phase_each_prompt_extends_the_one_before():
    """What changes comes last: the next call's prompt starts with the whole previous prompt
    but its todo block (a server's prompt cache reuses all of it)."""
    policy = ContextPolicy()
    before = assemble("SYSTEM", "[ ] 1 CURRENT", None, conversation(3), 0, policy)
    after = assemble("SYSTEM", "[x] 1\n[ ] 2 CURRENT", None, conversation(4), 0, policy)
    assert after[:len(before) - 1] == before[:-1]
    assert before[-1] != after[-1]


def test_tool_call_arguments_that_are_not_json_are_sent_as_an_empty_object():
    """A conversation stored before the replies were checked may hold cut-off arguments;
    llama-server refuses the whole request with HTTP 500 if they are sent again."""
    msgs = conversation(2)
    msgs[1]["tool_calls"][0]["function"]["arguments"] = '{"path": "notes/long.md", "content": "1.'
    out = assemble("SYSTEM", "", None, msgs, 0, ContextPolicy())
    assert out[2]["tool_calls"][0]["function"]["arguments"] == "{}"
    assert out[4] == msgs[3]  # the rest as stored
    assert msgs[1]["tool_calls"][0]["function"]["arguments"].endswith("1.")  # not changed


def test_cuts_never_orphan_a_tool_result():
    msgs = conversation(4)
    assert msgs[2]["role"] == "tool"
    assert safe_cut(msgs, 2) == 3
    assert safe_cut(msgs, 0) == 0
    assert msgs[summary_cut(msgs, 0, keep_recent=3)]["role"] != "tool"
    assert summary_cut(msgs, done=8, keep_recent=3) == 8  # nothing new to fold


def test_threshold_is_the_smaller_of_tokens_and_window_share():
    assert ContextPolicy(summarize_at_tokens=80_000, context_window=128_000).threshold() == 76_800
    assert ContextPolicy(summarize_at_tokens=20_000).threshold() == 20_000


def test_transcript_names_calls_and_results():
    text = transcript(conversation(1, size=5))
    assert "[user]\nPhase 2 begins" in text
    assert 'read_file({"path": "doc_0.md"})' in text
    assert "[read_file result]\ntext 0" in text


def test_fallback_summary_lists_the_calls():
    from switchback.activities.model.prompt import fallback_summary

    text = fallback_summary(conversation(2))
    assert "- read_file(doc_0.md)" in text and "- read_file(doc_1.md)" in text
