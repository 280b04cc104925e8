"""Tests for the scripted OpenAI-compatible model server, driven by the real openai client."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import openai
import pytest
from openai import OpenAI
from openai.types.chat import ChatCompletionMessageParam

from switchback.devstack.scripted_model import ScriptedModelServer, load_script

ROOT = Path(__file__).resolve().parents[1]
MESSAGES: list[ChatCompletionMessageParam] = [{"role": "user", "content": "go"}]


@pytest.fixture
def server() -> Iterator[ScriptedModelServer]:
    srv = ScriptedModelServer().start()
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture
def client(server: ScriptedModelServer) -> Iterator[OpenAI]:
    with OpenAI(base_url=server.base_url, api_key="x", max_retries=0,
                default_headers={"X-Switchback-Job": "j1"}) as c:
        yield c


def chat(client: OpenAI, key: str | None = None, **kwargs):
    headers = {"X-Switchback-Call": key} if key else {}
    return client.chat.completions.create(model="m1", messages=MESSAGES,
                                          extra_headers=headers, **kwargs)


def test_tool_calls_are_parsed(server: ScriptedModelServer, client: OpenAI) -> None:
    server.set_script("j1", [{"tool_calls": [
        {"name": "write_file", "arguments": {"path": "notes.md", "content": "héllo"}},
        {"name": "read_file", "arguments": {"path": "notes.md"}, "id": "call_custom"},
    ], "content": "writing"}])
    resp = chat(client, "p1.s1")
    choice = resp.choices[0]
    assert resp.object == "chat.completion" and resp.model == "m1"
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content == "writing"
    calls = choice.message.tool_calls
    assert [c.function.name for c in calls] == ["write_file", "read_file"]
    assert json.loads(calls[0].function.arguments) == {"path": "notes.md", "content": "héllo"}
    assert calls[0].id.startswith("call_") and calls[1].id == "call_custom"
    assert resp.usage.prompt_tokens > 0 and resp.usage.completion_tokens > 0
    assert resp.usage.total_tokens == resp.usage.prompt_tokens + resp.usage.completion_tokens


def test_text_only_and_usage_override(server: ScriptedModelServer, client: OpenAI) -> None:
    server.set_script("j1", [{"content": "done", "usage": {"prompt_tokens": 10,
                                                            "completion_tokens": 5}}])
    resp = chat(client)
    assert resp.choices[0].finish_reason == "stop"
    assert resp.choices[0].message.content == "done"
    assert resp.choices[0].message.tool_calls is None
    assert (resp.usage.prompt_tokens, resp.usage.total_tokens) == (10, 15)


def test_malformed_arguments_pass_through(server: ScriptedModelServer, client: OpenAI) -> None:
    server.set_script("j1", [{"tool_calls": [{"name": "read_file",
                                              "arguments": '{"path": broken'}]}])
    resp = chat(client)
    assert resp.choices[0].message.content is None
    assert resp.choices[0].message.tool_calls[0].function.arguments == '{"path": broken'


def test_rate_limit_and_server_error(server: ScriptedModelServer, client: OpenAI) -> None:
    server.set_script("j1", [{"error": {"status": 429, "retry_after": 2,
                                        "message": "slow down"}},
                             {"error": {"status": 500}}])
    with pytest.raises(openai.RateLimitError) as rate:
        chat(client)
    assert rate.value.response.headers["retry-after"] == "2"
    assert "slow down" in str(rate.value)
    with pytest.raises(openai.InternalServerError):
        chat(client)


def test_same_call_key_replays_identical_response(server: ScriptedModelServer,
                                                  client: OpenAI) -> None:
    server.set_script("j1", [{"tool_calls": [{"name": "a", "arguments": {}}]},
                             {"content": "second"}])
    first = chat(client, "p1.s1")
    again = chat(client, "p1.s1")
    assert again.model_dump() == first.model_dump()
    assert chat(client, "p1.s2").choices[0].message.content == "second"


def test_error_step_then_retry_with_same_key_advances(server: ScriptedModelServer,
                                                      client: OpenAI) -> None:
    server.set_script("j1", [{"error": {"status": 500}}, {"content": "recovered"}])
    with pytest.raises(openai.InternalServerError):
        chat(client, "p1.s1")
    assert chat(client, "p1.s1").choices[0].message.content == "recovered"
    assert chat(client, "p1.s1").choices[0].message.content == "recovered"


def test_default_script_has_a_cursor_per_job() -> None:
    steps = [{"content": "zero"}, {"content": "one"}]
    with ScriptedModelServer(default_script=steps) as srv:
        for job in ("a", "b"):
            with OpenAI(base_url=srv.base_url, api_key="x", max_retries=0,
                        default_headers={"X-Switchback-Job": job}) as c:
                assert chat(c).choices[0].message.content == "zero"
                assert chat(c).choices[0].message.content == "one"


def test_exhausted_script_is_bad_request(server: ScriptedModelServer, client: OpenAI) -> None:
    server.set_script("j1", [{"content": "only"}])
    chat(client)
    with pytest.raises(openai.BadRequestError) as exc:
        chat(client)
    assert "script for job 'j1' exhausted after 1 steps" in str(exc.value)


def test_no_script_is_bad_request(client: OpenAI) -> None:
    with pytest.raises(openai.BadRequestError, match="no script for job 'j1'"):
        chat(client)


def test_requests_are_recorded(server: ScriptedModelServer, client: OpenAI) -> None:
    server.set_script("j1", [{"content": "a"}, {"content": "b"}])
    chat(client, "k1", temperature=0.5)
    chat(client)
    recorded = server.requests("j1")
    assert [r["_call_key"] for r in recorded] == ["k1", None]
    assert recorded[0]["messages"] == MESSAGES and recorded[0]["temperature"] == 0.5
    assert server.requests("other") == []
    server.set_script("j1", [{"content": "c"}])
    assert server.requests("j1") == []


@pytest.mark.parametrize(("steps", "problem"), [
    ([{"content": "ok"}, {}], "step 1: a step needs tool_calls, content or error"),
    ([{"tool_calls": [{"arguments": {}}]}], "step 0: tool call 0 has no name"),
    ([{"content": "x"}, {"content": "y", "error": {"status": 500}}], "step 1"),
    ([{"error": {"status": 200}}], "step 0: error.status"),
    (["text"], "step 0: expected a mapping"),
])
def test_invalid_steps_are_rejected(steps: list, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        ScriptedModelServer().set_script("j", steps)


def test_models_admin_and_404(server: ScriptedModelServer) -> None:
    root = server.base_url.removesuffix("/v1")
    with httpx.Client(base_url=root) as http:
        models = http.get("/v1/models").json()
        assert models["data"][0]["id"] == "scripted" and models["object"] == "list"
        ok = http.post("/_admin/script", json={"job_id": "j9", "steps": [{"content": "hi"}]})
        assert ok.status_code == 200
        bad = http.post("/_admin/script", json={"job_id": "j9", "steps": [{"x": 1}]})
        assert bad.status_code == 400 and "step 0" in bad.json()["error"]["message"]
        resp = http.post("/v1/chat/completions", headers={"X-Switchback-Job": "j9"},
                         json={"model": "m", "messages": MESSAGES})
        assert resp.json()["choices"][0]["message"]["content"] == "hi"
        recorded = http.get("/_admin/requests", params={"job_id": "j9"}).json()
        assert len(recorded) == 1 and recorded[0]["_call_key"] is None
        assert http.post("/_admin/reset").status_code == 200
        assert http.get("/_admin/requests", params={"job_id": "j9"}).json() == []
        missing = http.get("/v1/nothing")
        assert missing.status_code == 404 and set(missing.json()["error"]) == {
            "message", "type", "code"}


def test_latency_is_applied(server: ScriptedModelServer, client: OpenAI) -> None:
    server.set_script("j1", [{"content": "a"}, {"content": "b", "latency_ms": 150}])
    server.set_latency(150)
    start = time.monotonic()
    chat(client)
    assert time.monotonic() - start >= 0.15
    server.set_latency(0)
    start = time.monotonic()
    chat(client)
    assert time.monotonic() - start >= 0.15


def test_load_script_forms(tmp_path: Path) -> None:
    listed = tmp_path / "list.yaml"
    listed.write_text("- content: hi\n- error: {status: 429, retry_after: 1}\n")
    mapped = tmp_path / "map.yaml"
    mapped.write_text("steps:\n  - tool_calls:\n      - name: f\n        arguments: {a: 1}\n")
    assert load_script(str(listed))[1]["error"]["status"] == 429
    assert load_script(str(mapped))[0]["tool_calls"][0]["name"] == "f"
    broken = tmp_path / "broken.yaml"
    broken.write_text("- content: ok\n- tool_calls: [{arguments: {}}]\n")
    with pytest.raises(ValueError, match="step 1"):
        load_script(str(broken))


def test_cli_serves_until_sigterm(tmp_path: Path) -> None:
    script = tmp_path / "s.yaml"
    script.write_text("- content: from cli\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "switchback.devstack.scripted_model", "--port", "0", "--script",
         str(script)],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None  # stdout=PIPE
    try:
        line = proc.stdout.readline().strip()
        assert line.startswith("scripted model server on http://127.0.0.1:")
        with OpenAI(base_url=line.rsplit(" ", 1)[1], api_key="x", max_retries=0) as c:
            assert chat(c).choices[0].message.content == "from cli"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()


def test_concurrent_requests_consume_distinct_steps(server: ScriptedModelServer,
                                                     client: OpenAI) -> None:
    server.set_script("j1", [{"content": str(i)} for i in range(40)])
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda i: chat(client, f"k{i % 20}"), range(40)))
    by_key: dict[str, set[str]] = {}
    for i, resp in enumerate(answers):
        by_key.setdefault(f"k{i % 20}", set()).add(resp.choices[0].message.content)
    assert all(len(contents) == 1 for contents in by_key.values())
    assert len(set().union(*by_key.values())) == 20
    assert len(server.requests("j1")) == 40


def test_reanswer_gives_a_repeated_call_new_tool_call_ids() -> None:
    srv = ScriptedModelServer(reanswer=True).start()
    try:
        with OpenAI(base_url=srv.base_url, api_key="x", max_retries=0,
                    default_headers={"X-Switchback-Job": "j1"}) as c:
            srv.set_script("j1", [{"tool_calls": [{"name": "list_files", "id": "c1"}]},
                                  {"content": "next"}])
            ids = [chat(c, "k1").choices[0].message.tool_calls[0].id for _ in range(3)]
            assert ids == ["c1", "c1r1", "c1r2"]  # the same step, asked again
            assert chat(c, "k2").choices[0].message.content == "next"
    finally:
        srv.stop()


def test_raw_and_unbound_steps(server: ScriptedModelServer, client: OpenAI) -> None:
    server.set_script("j1", [{"raw": "<html>not json</html>", "bind": False},
                             {"raw": {"choices": []}}])
    r1 = client.chat.completions.with_raw_response.create(
        model="m", messages=MESSAGES, extra_headers={"X-Switchback-Call": "k"})
    assert r1.content == b"<html>not json</html>"
    r2 = client.chat.completions.with_raw_response.create(  # unbound: the retry moves on
        model="m", messages=MESSAGES, extra_headers={"X-Switchback-Call": "k"})
    assert json.loads(r2.content) == {"choices": []}
