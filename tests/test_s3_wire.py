"""S3Wire (activities/storage/s3_wire.py) where SeaweedFS answers well in every other test: a
wrong secret, an endpoint that is down, a server that throttles or fails once, a session
token. S3Store sorts what comes back into the errors activities know."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from temporalio.exceptions import ApplicationError

from switchback.activities.storage.s3 import S3Store, StorageUnavailable

B = "switchback"


class Flaky(BaseHTTPRequestHandler):
    """Answers each request with the next of `answers` [(status, body)], then 200."""
    answers: list[tuple[int, bytes]] = []
    seen: list[dict[str, str]] = []

    def _answer(self) -> None:
        type(self).seen.append({k.lower(): v for k, v in self.headers.items()})
        n = int(self.headers.get("content-length") or 0)
        self.rfile.read(n)
        status, body = type(self).answers.pop(0) if type(self).answers else (200, b"")
        self.send_response(status)
        self.send_header("ETag", '"abc"')
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    do_GET = do_PUT = do_HEAD = do_DELETE = _answer

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def flaky() -> Iterator[str]:
    Flaky.answers, Flaky.seen = [], []
    server = ThreadingHTTPServer(("127.0.0.1", 0), Flaky)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def slow_down(status: int = 503) -> tuple[int, bytes]:
    return status, b"<Error><Code>SlowDown</Code><Message>Please reduce your rate</Message></Error>"


async def test_a_wrong_secret_is_refused_once_and_named(s3_server, monkeypatch) -> None:
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "not-the-secret")
    store = S3Store(s3_server.endpoint_url)
    try:
        with pytest.raises(ApplicationError) as refused:
            await store.put(B, "wire/x.md", b"x")
    finally:
        store.close()
    assert refused.value.type == "StorageRejected" and refused.value.non_retryable
    assert "403 SignatureDoesNotMatch" in refused.value.message


async def test_an_endpoint_that_is_down_is_unavailable_after_one_retry(flaky) -> None:
    store = S3Store("http://127.0.0.1:9")  # discard port: nothing listens
    started = time.monotonic()
    try:
        with pytest.raises(StorageUnavailable) as down:
            await store.get(B, "wire/x.md")
    finally:
        store.close()
    assert "S3 connection" in str(down.value) and time.monotonic() - started < 5


async def test_throttling_and_5xx_are_retried_once(flaky) -> None:
    store = S3Store(flaky)
    try:
        Flaky.answers = [slow_down()]  # once: the retry answers
        assert await store.put(B, "wire/a.md", b"x") == "abc"
        assert len(Flaky.seen) == 2
        Flaky.answers, Flaky.seen = [slow_down(), (500, b"")], []  # twice: retryable error
        with pytest.raises(StorageUnavailable) as failed:
            await store.head(B, "wire/a.md")
        assert len(Flaky.seen) == 2 and "HTTP 500" in str(failed.value)
        Flaky.answers, Flaky.seen = [slow_down(400)], []  # a 400 that throttles: retried too
        assert await store.get(B, "wire/a.md") == b""
        assert len(Flaky.seen) == 2
        Flaky.answers, Flaky.seen = [(403, b"<Error><Code>AccessDenied</Code></Error>")], []
        with pytest.raises(ApplicationError) as denied:  # not retried
            await store.delete(B, "wire/a.md")
        assert len(Flaky.seen) == 1 and "AccessDenied" in denied.value.message
        Flaky.answers, Flaky.seen = [(301, b"<Error><Code>PermanentRedirect</Code><Message>"
                                          b"use the bucket's region</Message></Error>")], []
        with pytest.raises(ApplicationError) as moved:  # AWS: a bucket in another region
            await store.get(B, "wire/a.md")
        assert moved.value.non_retryable and "301 PermanentRedirect" in moved.value.message
        assert len(Flaky.seen) == 1
    finally:
        store.close()


async def test_a_session_token_is_sent_and_signed(flaky, monkeypatch) -> None:
    monkeypatch.setenv("AWS_SESSION_TOKEN", "tok-123")
    store = S3Store(flaky)
    try:
        await store.put(B, "wire/ü b.md", b"x", "text/markdown", if_none_match=True)
    finally:
        store.close()
    [headers] = Flaky.seen
    assert headers["x-amz-security-token"] == "tok-123"
    signed = headers["authorization"].split("SignedHeaders=")[1].split(",")[0].split(";")
    assert {"x-amz-security-token", "if-none-match", "content-type", "host",
            "x-amz-content-sha256"} <= set(signed)
