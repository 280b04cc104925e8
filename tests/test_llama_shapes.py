"""llama-server's recorded answers, read the way the model activity reads them, and replayed
exactly by the scripted model (tests/fixtures/llama_server/, README there).

Every shape a real server sent: structured calls with random ids and `content: ""`, several
calls in one turn, plain text, arguments cut off at `max_tokens`, calls written as fenced JSON
(the GGUF's own template), the 500 on a history it cannot parse, the 400 context error.
"""

from __future__ import annotations

import json

import httpx
import pytest

from switchback.activities.model.replies import CUT_NOTE, assistant_message
from switchback.activities.model.text_calls import find_calls
from switchback.devstack.scripted_model import ScriptedModelServer
from tests.llama import answer, context_limit, fixture, reject_bad_arguments, replay, response

KNOWN = ("read_file", "write_file", "todo_complete")


def stored(case: str, known=KNOWN) -> dict:
    return assistant_message(json.dumps(response(case)["body"]).encode(), 200_000, known)


def test_structured_calls_as_llama_server_sends_them():
    a = stored("a_tool_call")
    assert a["content"] == "" and len(a["tool_calls"]) == 1
    call = a["tool_calls"][0]
    assert len(call["id"]) == 32 and call["function"] == {
        "name": "read_file", "arguments": '{"path": "notes/todo.md"}'}
    assert "call_errors" not in a["_meta"]
    b = stored("b_parallel_tool_calls")
    assert [json.loads(c["function"]["arguments"])["path"] for c in b["tool_calls"]] == [
        "notes/a.md", "notes/b.md", "notes/c.md"]  # three calls in one turn, all kept
    assert len(stored("b2_parallel_tool_calls_false")["tool_calls"]) == 3


def test_text_answers_stay_text():
    for case in ("c_text_no_tool_call", "c2_announces_without_calling"):
        m = stored(case)
        assert "tool_calls" not in m and m["content"] == response(case)["body"]["choices"][0][
            "message"]["content"]


def test_arguments_cut_off_at_max_tokens_are_never_stored():
    """(d): `{"path": "notes/long.md", "content": "1. Apple...` - stored as {} with an error
    the model reads; llama-server would answer every later request carrying it with 500 (e)."""
    raw = response("d_truncated_tool_arguments")["body"]["choices"][0]["message"][
        "tool_calls"][0]["function"]["arguments"]
    assert raw.startswith('{"path": "notes/long.md"') and not raw.endswith("}")
    m = stored("d_truncated_tool_arguments")
    call = m["tool_calls"][0]
    assert call["function"]["arguments"] == "{}"
    error = m["_meta"]["call_errors"][call["id"]]
    assert error.startswith("the arguments of 'write_file' were cut off at the token limit "
                            f"(finish_reason 'length') after {len(raw):,} characters")
    assert "split long content over several calls" in error
    assert m["_meta"]["finish_reason"] == "length"


@pytest.mark.parametrize("path", ["main_plan.md", "workspace.md"])
def test_a_plan_cut_off_at_max_tokens_keeps_its_whole_lines(path):
    """The 1.5B model's main_plan.md, cut at max_tokens, was dropped and written again at the
    same length, twice: a cut-off write of the memory or the plan keeps its whole lines and
    says where it was cut. Any other file's cut-off write is still not run (test above)."""
    raw = response("d_truncated_tool_arguments")["body"]["choices"][0]["message"][
        "tool_calls"][0]["function"]["arguments"].replace("notes/long.md", path)
    body = response("d_truncated_tool_arguments")["body"]
    body["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] = raw
    m = assistant_message(json.dumps(body).encode(), 100_000, known=("write_file",))
    assert "call_errors" not in m["_meta"]
    args = json.loads(m["tool_calls"][0]["function"]["arguments"])
    assert raw.endswith('"1. Apple - A sweet, juicy fruit.\\n2. Banana')  # as recorded
    assert args == {"path": path,
                    "content": f"1. Apple - A sweet, juicy fruit.\n{CUT_NOTE}\n"}


@pytest.mark.parametrize("raw", [
    '{"path": "main_plan.md", "content": "# Plan wi',  # not one whole line
    '{"path": "main_plan.md", "content": "\\n\\n  ',  # nothing but blank lines
    '{"path": "../main_plan.md", "content": "# Plan\\n- a\\n- b',  # not the plan
    '{"content": "# Plan\\n- a\\n", "path": "main_plan.md", "mo',  # cut after the string
])
def test_a_cut_off_write_that_has_no_whole_line_of_the_plan_is_not_run(raw):
    body = response("d_truncated_tool_arguments")["body"]
    body["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] = raw
    m = assistant_message(json.dumps(body).encode(), 100_000, known=("write_file",))
    assert m["tool_calls"][0]["function"]["arguments"] == "{}"
    assert "cut off at the token limit" in m["_meta"]["call_errors"][m["tool_calls"][0]["id"]]


def test_calls_in_tool_response_tags_are_tool_calls():
    """(i) the 1.5B model under react wrote its calls in <tool_response> tags, four turns in a
    row, and was nudged until the job ended with nothing written."""
    m = stored("i_react_tool_response_tags", known=("read_file", "write_file", "job_complete"))
    assert m["_meta"]["text_calls"] == 4 and "call_errors" not in m["_meta"]
    assert [c["function"]["name"] for c in m["tool_calls"]] == [
        "read_file", "read_file", "write_file", "job_complete"]
    assert json.loads(m["tool_calls"][2]["function"]["arguments"]) == {
        "content": "# Summary\n- notes/apples.md: Apples\n- notes/bananas.md: Bananas",
        "path": "output/summary.md"}
    assert m["content"].startswith("Attempt 1 begins.") and "<tool_response>" not in m["content"]


def test_fenced_json_in_content_is_a_tool_call():
    """(g) the GGUF's own template: no tool_calls, the call is a ```json fence in content."""
    body = response("g_own_template_fenced_json")["body"]
    assert "tool_calls" not in body["choices"][0]["message"]
    assert body["choices"][0]["message"]["content"].startswith("```json")
    m = stored("g_own_template_fenced_json")
    assert m["content"] == "" and m["_meta"]["text_calls"] == 1
    assert m["tool_calls"][0]["function"] == {"name": "read_file",
                                              "arguments": '{"path": "notes/todo.md"}'}
    # not offered: the fence stays text (the model is nudged)
    assert "tool_calls" not in stored("g_own_template_fenced_json", known=("write_file",))


def test_a_fenced_call_cut_off_is_answered_with_the_format_that_works():
    m = stored("g2_own_template_truncated")
    call = m["tool_calls"][0]
    assert call["function"] == {"name": "write_file", "arguments": "{}"}
    error = m["_meta"]["call_errors"][call["id"]]
    assert "your call of 'write_file' written as text was cut off at the token limit" in error
    assert '```json\n{"name": "write_file", "arguments": {' in error


def test_usage_keeps_the_tokens_served_from_the_prompt_cache():
    h1, h2, h3 = (stored(c)["_meta"] for c in ("h1_cache_first", "h2_cache_next_step",
                                                  "h3_cache_prefix_changed"))
    assert h2["usage"] == {"prompt_tokens": 1917, "completion_tokens": 29, "cached_tokens": 1884}
    assert h2["timings"]["cache_n"] == 1884 and h2["timings"]["prompt_n"] == 33
    assert h3["usage"]["cached_tokens"] == 3  # one line inserted at the top: all again
    assert h1["timings"]["prompt_n"] == 1826


@pytest.mark.parametrize("content, calls, rest", [
    ('<tool_call>\n{"name": "read_file", "arguments": {"path": "a.md"}}\n</tool_call>',
     [("read_file", {"path": "a.md"})], ""),
    ('I will read it.\n<tool_call>{"name": "read_file", "arguments": {"path": "a.md"}}'
     '</tool_call><tool_call>{"name": "write_file", "arguments": {"path": "b.md", "content": '
     '"x"}}</tool_call>', [("read_file", {"path": "a.md"}),
                          ("write_file", {"path": "b.md", "content": "x"})], "I will read it."),
    ('{"name": "todo_complete", "parameters": {"notes": "done"}}',
     [("todo_complete", {"notes": "done"})], ""),
    ('```\n[{"function": {"name": "read_file", "arguments": "{\\"path\\": \\"a.md\\"}"}}]\n```',
     [("read_file", {"path": "a.md"})], ""),
    ('Here is the data:\n```json\n{"name": "Ann", "age": 3}\n```', [], None),  # not a tool
])
def test_calls_written_as_text(content, calls, rest):
    found, left = find_calls(content, KNOWN)
    assert [(c.name, json.loads(c.arguments)) for c in found] == calls
    assert all(not c.problem for c in found)
    assert left == (content if rest is None else rest)


@pytest.mark.parametrize("raw, kept", [
    ('{"path": "a.md"}}', '{"path": "a.md"}'),  # a stray closing brace
    ('"{\\"path\\": \\"a.md\\"}"', '{"path": "a.md"}'),  # the object's JSON, encoded again
    ('{"path": "a.md"', "{}"),  # cut off: nothing is guessed
    ('["a.md"]', "{}"),
])
def test_arguments_repaired_only_when_nothing_is_lost(raw, kept):
    step = answer([("read_file", raw)])["replay"]["body"]
    m = assistant_message(json.dumps(step).encode(), 200_000, KNOWN)
    assert m["tool_calls"][0]["function"]["arguments"] == kept
    assert ("call_errors" in m["_meta"]) == (kept == "{}")


def test_the_scripted_model_replays_the_recordings_and_the_servers_checks():
    with ScriptedModelServer() as srv:
        def post(job: str, body: dict) -> httpx.Response:
            return httpx.post(f"{srv.base_url}/chat/completions", json=body,
                              headers={"X-Switchback-Job": job}, timeout=10)

        srv.set_script("r", [replay("b_parallel_tool_calls"), replay("f_context_exceeded")])
        first = post("r", {"messages": []})
        assert first.status_code == 200 and first.json() == response("b_parallel_tool_calls")[
            "body"]
        second = post("r", {"messages": []})
        assert second.status_code == 400 and second.json() == response(
            "f_context_exceeded")["body"]

        # a history llama-server cannot parse: its 500, and no step is used up
        broken = fixture("e_history_with_truncated_arguments")["request"]["body"]
        srv.set_script("e", [replay("a_tool_call")], server=reject_bad_arguments())
        refused = post("e", broken)
        assert refused.status_code == 500 and refused.json() == response(
            "e_history_with_truncated_arguments")["body"]
        repaired = fixture("e2_history_with_repaired_arguments")["request"]["body"]
        assert post("e", repaired).json() == response("a_tool_call")["body"]

        # a prompt over the context: the 400 with this request's numbers
        srv.set_script("f", [replay("a_tool_call")], server=context_limit(100))
        big = post("f", {"messages": [{"role": "user", "content": "word " * 500}]})
        err = big.json()["error"]
        assert big.status_code == 400 and err["type"] == "exceed_context_size_error"
        assert err["n_ctx"] == 100 and err["n_prompt_tokens"] > 100
        assert err["message"] == (f"request ({err['n_prompt_tokens']} tokens) exceeds the "
                                  "available context size (100 tokens), try increasing it")
        assert post("f", {"messages": [{"role": "user", "content": "hi"}]}).status_code == 200
