"""The model request's errors on the installed openai (3.x): activities/model/chat.py builds
openai's error types by hand, on the request and response types openai declares (httpx2's),
and activities/model/waiting.py turns them into the same Temporal retry decisions as before."""

from __future__ import annotations

import socket
from datetime import timedelta

import httpx2
import openai
import pytest
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from switchback.activities.model.chat import ChatClient
from switchback.activities.model.waiting import ContextExceeded, with_heartbeat


def answering(status: int, body: bytes, headers: dict[str, str] | None = None) -> ChatClient:
    """A ChatClient whose endpoint answers every request with `status` and `body`."""
    chat = ChatClient("http://model.invalid/v1", "sk-test", 5.0)
    chat._http = httpx2.AsyncClient(transport=httpx2.MockTransport(
        lambda request: httpx2.Response(status, content=body, headers=headers or {})))
    return chat


async def translated(chat: ChatClient) -> BaseException:
    """What the activity raises for this endpoint's answer (in an activity's context)."""
    async def call() -> bytes:
        return await with_heartbeat(chat.create({"model": "m", "messages": []}, {}, 5.0),
                                    max_delay=30)
    with pytest.raises(Exception) as caught:
        await ActivityEnvironment().run(call)
    await chat.close()
    return caught.value


async def test_an_http_error_is_openais_status_error_with_httpx2_objects() -> None:
    chat = answering(429, b'{"error": {"message": "slow down", "type": "rate"}}',
                     {"retry-after": "7"})
    with pytest.raises(openai.APIStatusError) as caught:
        await chat.create({"model": "m", "messages": []}, {}, 5.0)
    e = caught.value
    assert e.status_code == 429 and e.message == "Error code: 429 - slow down"
    assert e.body == {"message": "slow down", "type": "rate"} and e.type == "rate"
    assert isinstance(e.response, httpx2.Response) and isinstance(e.request, httpx2.Request)
    assert e.request.url == "http://model.invalid/v1/chat/completions"
    await chat.close()


async def test_429_is_retried_after_the_servers_delay() -> None:
    e = await translated(answering(429, b'{"error": {"message": "slow down"}}',
                                   {"retry-after": "7"}))
    assert isinstance(e, ApplicationError) and e.type == "ModelRateLimited"
    assert e.next_retry_delay == timedelta(seconds=7) and not e.non_retryable
    assert "HTTP 429: slow down" in e.message


async def test_5xx_is_retried_and_other_4xx_fail_once() -> None:
    e = await translated(answering(503, b"upstream gone"))
    assert isinstance(e, ApplicationError) and e.type == "ModelUnavailable"
    assert e.message == "model endpoint answered HTTP 503: Error code: 503"
    e = await translated(answering(401, b'{"error": {"message": "bad key"}}'))
    assert isinstance(e, ApplicationError) and e.type == "ModelRequestRejected"
    assert e.non_retryable and "bad key" in e.message


async def test_a_prompt_too_long_is_context_exceeded() -> None:
    e = await translated(answering(400, b'{"error": {"message": "the request exceeds the '
                                        b'available context size"}}'))
    assert isinstance(e, ContextExceeded)


async def test_no_connection_and_timeouts_are_unavailable() -> None:
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    chat = ChatClient(f"http://127.0.0.1:{port}/v1", "sk-test", 5.0)
    with pytest.raises(openai.APIConnectionError) as caught:
        await chat.create({"model": "m", "messages": []}, {}, 5.0)
    assert isinstance(caught.value.request, httpx2.Request)
    e = await translated(chat)
    assert isinstance(e, ApplicationError) and e.type == "ModelUnavailable"
    assert "APIConnectionError" in e.message

    def slow(request: httpx2.Request) -> httpx2.Response:
        raise httpx2.ReadTimeout("timed out", request=request)
    chat = ChatClient("http://model.invalid/v1", "sk-test", 5.0)
    chat._http = httpx2.AsyncClient(transport=httpx2.MockTransport(slow))
    with pytest.raises(openai.APITimeoutError):
        await chat.create({"model": "m", "messages": []}, {}, 5.0)
    e = await translated(chat)
    assert isinstance(e, ApplicationError) and e.type == "ModelUnavailable"
    assert "APITimeoutError" in e.message
