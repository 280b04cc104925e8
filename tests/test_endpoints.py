"""Model endpoints by name: the operator declares them (configs/endpoints.yaml), job input
picks one; a URL the operator did not declare never gets a credential - not from an inline
config, not when the operator allows job URLs, not from a forged continue-as-new carry."""

from __future__ import annotations

import asyncio
import os
import uuid
from pathlib import Path

import pytest
import yaml
from temporalio.client import WorkflowFailureError
from temporalio.exceptions import ApplicationError

from switchback.activities.config_files import load_config
from switchback.activities.model import endpoints
from switchback.devstack.scripted_model import ScriptedModelServer
from switchback.workflows.contract import LlmSettings
from tests.conftest import running_worker
from tests.forge import forged_job
from tests.recording_server import RecordingServer
from tests.scripts import full_job


def declare(tmp_path: Path, monkeypatch, data: dict) -> None:
    path = tmp_path / "endpoints.yaml"
    path.write_text(yaml.safe_dump(data))
    monkeypatch.setenv("SWITCHBACK_ENDPOINTS_FILE", str(path))


def default_endpoint(**extra) -> dict:
    return {"base_url_env": "OPENAI_BASE_URL", "api_key_env": "OPENAI_API_KEY", **extra}


def error_of(llm: LlmSettings) -> str:
    with pytest.raises(endpoints.EndpointError) as info:
        endpoints.target(llm)
    return str(info.value)


def test_the_rules(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://models.example/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-default")
    monkeypatch.setenv("LOCAL_KEY", "sk-local")
    monkeypatch.setenv("TEAM_KEY", "sk-team")
    declare(tmp_path, monkeypatch, {"endpoints": {
        "default": default_endpoint(),
        "local": {"base_url": "http://127.0.0.1:8080/v1/", "api_key_env": "LOCAL_KEY",
                  "models": ["qwen2.5-*"], "timeout_seconds": 20}}})
    t = endpoints.target(LlmSettings())
    assert (t.endpoint, t.base_url, t.api_key) == ("default", "http://models.example/v1",
                                                   "sk-default")
    t = endpoints.target(LlmSettings(endpoint="local", model="qwen2.5-0.5b"))
    assert (t.base_url, t.api_key, t.timeout) == ("http://127.0.0.1:8080/v1", "sk-local", 20)
    assert "llm.model: 'gpt-4o' is not offered by endpoint 'local'" in error_of(
        LlmSettings(endpoint="local", model="gpt-4o"))
    assert "llm.endpoint: unknown endpoint 'nope'" in error_of(LlmSettings(endpoint="nope"))
    # an old config's base_url that is a declared URL selects that endpoint (and its key)
    t = endpoints.target(LlmSettings(base_url="http://127.0.0.1:8080/v1", model="qwen2.5-7b"))
    assert (t.endpoint, t.api_key) == ("local", "sk-local")
    # any other URL: refused, naming the field
    assert error_of(LlmSettings(base_url="http://attacker.example/v1")).startswith(
        "llm.base_url: 'http://attacker.example/v1' is not the URL of an endpoint")
    assert error_of(LlmSettings(api_key_env="AWS_SECRET_ACCESS_KEY")).startswith(
        "llm.api_key_env: 'AWS_SECRET_ACCESS_KEY' is not the key variable of endpoint")
    # the operator allows job URLs and one job key variable
    declare(tmp_path, monkeypatch, {"allow_job_base_url": True,
                                    "allow_job_api_key_env": ["TEAM_KEY"],
                                    "endpoints": {"default": default_endpoint()}})
    t = endpoints.target(LlmSettings(base_url="http://attacker.example/v1"))
    assert (t.base_url, t.api_key) == ("http://attacker.example/v1", endpoints.NO_KEY)
    assert "a key is sent only to the URL of a declared endpoint" in error_of(
        LlmSettings(base_url="http://attacker.example/v1", api_key_env="TEAM_KEY"))
    assert endpoints.target(LlmSettings(api_key_env="TEAM_KEY")).api_key == "sk-team"
    assert "'AWS_SECRET_ACCESS_KEY' is not the key variable" in error_of(
        LlmSettings(api_key_env="AWS_SECRET_ACCESS_KEY"))
    # an old carried config's api_key_env (the endpoint's own variable) is fine
    assert endpoints.target(LlmSettings(api_key_env="OPENAI_API_KEY")).api_key == "sk-default"
    monkeypatch.setenv("SWITCHBACK_ENDPOINTS_FILE", str(tmp_path / "missing.yaml"))
    assert error_of(LlmSettings()).startswith("SWITCHBACK_ENDPOINTS_FILE: ")


def test_the_shipped_file_is_the_default_endpoint(monkeypatch) -> None:
    monkeypatch.delenv("SWITCHBACK_ENDPOINTS_FILE", raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://models.example/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-default")
    eps, source = endpoints.load()
    # default, and local (the llama-server of docs/local-models.md; SWITCHBACK_LOCAL_BASE_URL)
    assert source == "configs/endpoints.yaml" and list(eps.endpoints) == ["default", "local"]
    assert not eps.allow_job_base_url and eps.allow_job_api_key_env == []
    t = endpoints.target(LlmSettings())
    assert (t.base_url, t.api_key) == ("http://models.example/v1", "sk-default")


async def failure_of(handle) -> str:
    with pytest.raises(WorkflowFailureError) as info:
        await asyncio.wait_for(handle.result(), 60)
    cause = info.value.cause
    assert isinstance(cause, ApplicationError) and cause.type == "SwitchbackJobFailed"
    return str(cause)


async def test_a_job_uses_the_endpoint_it_names(client, task_queue, start_job, model_server,
                                                tmp_path, monkeypatch):
    with ScriptedModelServer() as other:
        monkeypatch.setenv("OTHER_KEY", "sk-other-endpoint")
        declare(tmp_path, monkeypatch, {"endpoints": {
            "default": default_endpoint(),
            "other": {"base_url": other.base_url, "api_key_env": "OTHER_KEY",
                      "models": ["other-*"]}}})
        job_id = f"job-{uuid.uuid4().hex[:10]}"
        other.set_script(job_id, full_job(1))
        async with running_worker(client, task_queue):
            handle = await start_job(None, job_id=job_id, instructions="x", documents=[],
                                     config={"extends": "creator",
                                             "llm": {"endpoint": "other", "model": "other-1"}})
            assert (await handle.result()).status == "completed"
            refused = await start_job(None, instructions="x", documents=[], config={
                "extends": "creator", "llm": {"endpoint": "other", "model": "gpt-4o"}})
            why = await failure_of(refused)
        assert len(other.requests(job_id)) > 10 and model_server.requests(job_id) == []
        assert all(r["model"] == "other-1" for r in other.requests(job_id))
    assert "llm.model: 'gpt-4o' is not offered by endpoint 'other' (models: other-*)" in why


async def test_an_attacker_url_in_job_input_gets_nothing(client, task_queue, start_job,
                                                         model_server):
    secret = os.environ["AWS_SECRET_ACCESS_KEY"]
    with RecordingServer() as attacker:
        async with running_worker(client, task_queue):
            both = await start_job(None, instructions="x", documents=[], config={
                "extends": "creator",
                "llm": {"base_url": attacker.url, "api_key_env": "AWS_SECRET_ACCESS_KEY"}})
            key_only = await start_job(None, instructions="x", documents=[], config={
                "extends": "creator", "llm": {"api_key_env": "AWS_SECRET_ACCESS_KEY"}})
            first, second = await failure_of(both), await failure_of(key_only)
        assert attacker.seen == [] and not attacker.saw(secret)
    assert ("config 'inline': llm.base_url: job input names a model endpoint by name "
            "(llm.endpoint: default, local), not by URL") in first
    assert ("config 'inline': llm.api_key_env: job input may not choose the key variable "
            "('AWS_SECRET_ACCESS_KEY')") in second
    assert model_server.requests(both.id) == model_server.requests(key_only.id) == []


async def test_an_allowed_job_url_gets_no_key(client, task_queue, start_job, model_server,
                                              tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", f"sk-worker-{uuid.uuid4().hex}")
    secrets = [os.environ["OPENAI_API_KEY"], os.environ["AWS_SECRET_ACCESS_KEY"]]
    declare(tmp_path, monkeypatch, {"allow_job_base_url": True,
                                    "endpoints": {"default": default_endpoint()}})
    with RecordingServer() as attacker:
        async with running_worker(client, task_queue):
            plain = await start_job(None, instructions="x", documents=[], config={
                "extends": "creator",
                "llm": {"base_url": attacker.url, "retry": {"maximum_attempts": 1}}})
            await failure_of(plain)  # the stand-in answers 503
            with_key = await start_job(None, instructions="x", documents=[], config={
                "extends": "creator", "llm": {"base_url": attacker.url,
                                              "api_key_env": "AWS_SECRET_ACCESS_KEY"}})
            why = await failure_of(with_key)
        assert len(attacker.seen) == 1  # the allowed URL was called, once ...
        assert b"authorization: bearer not-set" in attacker.seen[0].lower()  # ... no key
        assert not any(attacker.saw(s) for s in secrets)
    assert "llm.api_key_env: job input may not choose the key variable" in why


async def test_a_forged_carry_cannot_send_a_key_elsewhere(client, task_queue, start_job,
                                                          model_server, s3):
    """A job started with a hand-made `carry` skips load_config; the model activity still
    resolves the endpoint by the operator's rules."""
    secret = os.environ["AWS_SECRET_ACCESS_KEY"]
    async with running_worker(client, task_queue):
        done = await start_job(full_job(1), model_server, instructions="x", documents=[])
        await done.result()
        with RecordingServer() as attacker:
            handle = await forged_job(client, s3, task_queue, done.id, llm={
                "base_url": attacker.url, "api_key_env": "AWS_SECRET_ACCESS_KEY"})
            why = await failure_of(handle)
            assert attacker.seen == [] and not attacker.saw(secret)
    assert "llm.base_url: " in why and "is not the URL of an endpoint the operator" in why


def test_load_config_checks_the_endpoint_early() -> None:
    with pytest.raises(ValueError, match=r"llm\.endpoint: unknown endpoint 'gpu'"):
        load_config({"extends": "creator", "llm": {"endpoint": "gpu"}})
    with pytest.raises(ValueError, match=r"llm\.replay_from: no longer a setting \(set by "
                                         r"`starter.py rerun` only"):
        load_config({"extends": "creator", "llm": {"replay_from": "someone-else"}})
