"""The Chat Completions request itself: one pooled HTTP client per endpoint, a plain POST.

The body is JSON the activity built (the prompt is plain dicts already), sent as bytes; the
answer is the raw body, which activities/model/replies.py parses (it is untrusted). The
openai client did the same with more machinery per request - typed-parameter transforms,
per-request header sets, response wrappers: ~14 % of the worker's CPU samples per model
step (bench.step_profile) - and nothing here needs it.

Errors keep the openai client's types and wording, so activities/model/waiting.py
translates them to Temporal retry decisions exactly as before: an HTTP status >= 400 is an
`openai.APIStatusError` of the same message ("Error code: 429 - <its message>") and body;
a timeout `openai.APITimeoutError`; no connection `openai.APIConnectionError`. No retries
here: Temporal owns them.

The connection pool is httpx2's, the HTTP client openai 3 is built on: the request and
response an error carries are the types openai declares for them (openai 2 took httpx's;
switchback needs openai >= 3, as the agent libraries installed beside it do).
"""

from __future__ import annotations

import json
from collections.abc import Callable

import httpx2
import openai

from switchback.activities.model.streaming import ReplyAssembler

RAW_JSON = "\x00raw"  # a body key: fields given as JSON text


class ChatClient:
    """One endpoint (base URL and key), its connections kept open between calls."""

    def __init__(self, base_url: str, api_key: str, timeout: float,
                 headers: tuple[tuple[str, str], ...] = ()) -> None:
        self.api_key = api_key
        self.url = base_url.rstrip("/") + "/chat/completions"
        self._http = httpx2.AsyncClient(
            timeout=timeout, headers={"Authorization": f"Bearer {api_key}",
                                      "Content-Type": "application/json",
                                      "Accept": "application/json", **dict(headers)},
            limits=httpx2.Limits(max_connections=1000, max_keepalive_connections=100))

    async def create(self, body: dict, headers: dict[str, str], timeout: float) -> bytes:
        """POST the request; the answer's body (status 2xx), else the openai client's error.
        `body[RAW_JSON]`: fields already serialized (name -> JSON text), spliced in as they
        are (the prompt, serialized once for its fingerprint)."""
        try:
            r = await self._http.post(self.url, content=_encoded(body), headers=headers,
                                      timeout=timeout)
        except httpx2.TimeoutException as e:
            raise openai.APITimeoutError(request=_request(e, self.url)) from e
        except httpx2.TransportError as e:
            raise openai.APIConnectionError(request=_request(e, self.url)) from e
        if r.status_code >= 400:
            raise status_error(r)
        return r.content

    async def stream(self, body: dict, headers: dict[str, str], timeout: float,
                     on_text: Callable[[str], None]) -> bytes:
        """The same request with `stream: true`: `on_text` gets the reply's text as it is
        written; the answer is returned as the body a plain call would have had
        (activities/model/streaming.py). A server that answers without streaming is read as
        it is; errors are those of `create`."""
        body = {**body, "stream": True, "stream_options": {"include_usage": True}}
        try:
            async with self._http.stream("POST", self.url, content=_encoded(body),
                                         headers={**headers, "Accept": "text/event-stream"},
                                         timeout=timeout) as r:
                if r.status_code >= 400:
                    await r.aread()
                    raise status_error(r)
                if "event-stream" not in r.headers.get("content-type", ""):
                    return await r.aread()
                reply = ReplyAssembler()
                async for line in r.aiter_lines():
                    text = reply.text_of(line)
                    if text:
                        on_text(text)
                return reply.body()
        except httpx2.TimeoutException as e:
            raise openai.APITimeoutError(request=_request(e, self.url)) from e
        except httpx2.TransportError as e:
            raise openai.APIConnectionError(request=_request(e, self.url)) from e

    async def close(self) -> None:
        await self._http.aclose()


def _encoded(body: dict) -> bytes:
    raw = body.get(RAW_JSON) or {}
    text = json.dumps({k: v for k, v in body.items() if k != RAW_JSON})  # ASCII escapes:
    # a lone surrogate cannot break the request
    if raw:
        text = text[:-1] + "".join(f", {json.dumps(k)}: {v}" for k, v in raw.items()) + "}"
    return text.encode()


def _request(e: httpx2.RequestError, url: str) -> httpx2.Request:
    try:
        return e.request
    except RuntimeError:  # raised before a request was made
        return httpx2.Request("POST", url)


def status_error(r: httpx2.Response) -> openai.APIStatusError:
    """What the openai client raises for this answer: its message ("Error code: 500 - " and
    the body's error message, if it has one) and body (the JSON's `error`, or the text)."""
    message = f"Error code: {r.status_code}"
    body: object = r.text.strip()
    try:
        body = json.loads(str(body))
    except ValueError:
        pass
    else:
        error = body.get("error", body) if isinstance(body, dict) else None
        said = error.get("message") if isinstance(error, dict) else None
        if isinstance(said, str) and said:
            message += f" - {said}"
    data = body.get("error", body) if isinstance(body, dict) else body
    return openai.APIStatusError(message, response=r, body=data)
