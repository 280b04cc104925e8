"""Model endpoints as people use them: an endpoint's requests take its shape (OpenAI's
reasoning models refuse `max_tokens` and a temperature: they get `max_completion_tokens`
and none), fields every request carries, and the OpenAI-Organization / OpenAI-Project
headers from the operator's variables - checked on the requests the scripted endpoint
received from a real job."""

from __future__ import annotations

import uuid

import pytest
import yaml
from pydantic import ValidationError

from switchback.activities.model.endpoints import RequestShape
from tests.conftest import running_worker
from tests.scripts import call, step


def test_a_request_shape() -> None:
    plain = RequestShape()
    assert plain.apply({"model": "m"}, 0.2, 4096) == {
        "model": "m", "temperature": 0.2, "max_tokens": 4096}
    assert plain.apply({"model": "m"}, None, None) == {"model": "m"}
    reasoning = RequestShape(max_tokens_field="max_completion_tokens", temperature=False,
                             extra={"reasoning_effort": "low"})
    assert reasoning.apply({"model": "o3"}, 0.2, 4096) == {
        "reasoning_effort": "low", "model": "o3", "max_completion_tokens": 4096}
    with pytest.raises(ValidationError, match="request.extra may not set messages, model"):
        RequestShape(extra={"model": "x", "messages": []})


async def test_a_reasoning_endpoints_requests(client, task_queue, start_job, model_server, s3,
                                              tmp_path, monkeypatch) -> None:
    endpoints = tmp_path / "endpoints.yaml"
    endpoints.write_text(yaml.safe_dump({"endpoints": {
        "default": {"base_url_env": "OPENAI_BASE_URL", "api_key_env": "OPENAI_API_KEY"},
        "reasoning": {"base_url": model_server.base_url, "api_key_env": "OPENAI_API_KEY",
                      "organization_env": "TEST_OPENAI_ORG", "project_env": "TEST_OPENAI_PROJ",
                      "models": ["o*"], "request": {
                          "max_tokens_field": "max_completion_tokens", "temperature": False,
                          "extra": {"reasoning_effort": "low"}}}}}), encoding="utf-8")
    monkeypatch.setenv("SWITCHBACK_ENDPOINTS_FILE", str(endpoints))
    monkeypatch.setenv("TEST_OPENAI_ORG", "org-123")
    monkeypatch.setenv("TEST_OPENAI_PROJ", "proj-9")
    done = [step(call("job_complete", summary="ok", deliverables=[], confidence=0.9, notes=""))]
    reasoning_id, plain_id = f"job-{uuid.uuid4().hex[:8]}", f"job-{uuid.uuid4().hex[:8]}"
    async with running_worker(client, task_queue):
        reasoning = await start_job(done, model_server, job_id=reasoning_id, instructions="x",
                                    config={"strategy": "react", "llm": {
                                        "endpoint": "reasoning", "model": "o3-mini"}})
        plain = await start_job(done, model_server, job_id=plain_id, instructions="x",
                                config={"strategy": "react"})
        assert (await reasoning.result()).status == "completed"
        assert (await plain.result()).status == "completed"
    sent = model_server.requests(reasoning_id)[0]
    assert sent["max_completion_tokens"] == 4096 and "max_tokens" not in sent
    assert "temperature" not in sent and sent["reasoning_effort"] == "low"
    assert sent["_headers"] == {"openai-organization": "org-123", "openai-project": "proj-9"}
    other = model_server.requests(plain_id)[0]  # the default endpoint: as before, no headers
    assert other["max_tokens"] == 4096 and other["temperature"] == 0.2
    assert "max_completion_tokens" not in other and "_headers" not in other
