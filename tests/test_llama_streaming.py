"""llama-server streams: a Chat Completions call with `stream: true` against the real local
model (llama.cpp's server) puts back together the answer a plain call gets - its text and
tool calls, usage, timings - and hands the text over as it is written
(activities/model/streaming.py).

Marked `realmodel`: it runs with `pytest -m realmodel` when `make real-model` has installed
the model, and is skipped otherwise."""

from __future__ import annotations

import json

import pytest

from switchback.activities.model.chat import ChatClient
from switchback.activities.model.replies import assistant_message
from switchback.devstack.local_model_spec import (
    DEFAULT_MODEL,
    MODELS,
    Layout,
    LlamaServer,
    cache_dir,
)
from switchback.devstack.real_stack import llama_port
from tests.test_real_model import installed

pytestmark = pytest.mark.realmodel

TOOLS = [{"type": "function", "function": {
    "name": "read_file", "description": "Read a file of the workspace.",
    "parameters": {"type": "object", "properties": {"path": {"type": "string"}},
                   "required": ["path"]}}}]


@pytest.fixture
def wanted(request) -> None:
    if "realmodel" not in (request.config.getoption("markexpr") or ""):
        pytest.skip("needs llama-server and the local model: run it with `pytest -m realmodel`")
    missing = installed()
    if missing:
        pytest.skip(missing)


@pytest.mark.timeout(1800)
async def test_a_streamed_answer_is_the_plain_answer(wanted, tmp_path) -> None:
    with LlamaServer(Layout(cache_dir()), MODELS[DEFAULT_MODEL], llama_port(),
                     tmp_path / "llama-server.log") as llama:
        client = ChatClient(llama.base_url, "local", 600)
        try:
            for prompt, tools in (("Say hello in five words.", []),
                                  ("Read the file notes.md, please.", TOOLS)):
                body = {"model": "local", "temperature": 0, "seed": 1, "max_tokens": 64,
                        "messages": [{"role": "user", "content": prompt}],
                        **({"tools": tools} if tools else {})}
                plain = assistant_message(await client.create(body, {}, 600), 10_000,
                                          ("read_file",))
                pieces: list[str] = []
                raw = await client.stream(body, {}, 600, pieces.append)
                streamed = assistant_message(raw, 10_000, ("read_file",))
                assert streamed["content"] == plain["content"]
                assert "".join(pieces) == (json.loads(raw)["choices"][0]["message"]["content"]
                                           or "")
                calls = [(c["function"]["name"], c["function"]["arguments"])
                         for c in streamed.get("tool_calls") or []]
                assert calls == [(c["function"]["name"], c["function"]["arguments"])
                                 for c in plain.get("tool_calls") or []]
                assert streamed["_meta"]["usage"]["completion_tokens"] > 0
                if not tools:
                    assert len(pieces) > 1  # the text came in pieces, as written
        finally:
            await client.close()
