"""S3 as users have it, against the real SeaweedFS server: the endpoint from
AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL, the region from the environment or the AWS profile,
a bucket created outside us-east-1 naming its region, requests through the environment's
proxy (and around it for a NO_PROXY host), path or virtual-hosted addressing by setting."""

from __future__ import annotations

import http.client
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from switchback.activities.storage.s3 import S3Store
from switchback.activities.storage.s3_wire import settings


class ForwardingProxy:
    """A plain HTTP forward proxy (absolute-URI requests), counting what it forwarded."""

    def __init__(self) -> None:
        self.forwarded: list[str] = []
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def _forward(self) -> None:
                target = urlsplit(self.path)
                proxy.forwarded.append(f"{self.command} {target.path}")
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                conn = http.client.HTTPConnection(target.netloc, timeout=10)
                headers = {k: v for k, v in self.headers.items()
                           if k.lower() not in ("proxy-connection", "connection")}
                conn.request(self.command, target.path + (f"?{target.query}" if target.query
                                                          else ""), body or None, headers)
                r = conn.getresponse()
                data = r.read()
                self.send_response(r.status)
                for k, v in r.getheaders():
                    if k.lower() not in ("transfer-encoding", "connection", "content-length"):
                        self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)
                conn.close()

            do_GET = do_PUT = do_HEAD = do_DELETE = do_POST = _forward

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()


@pytest.fixture
def proxy():
    p = ForwardingProxy()
    yield p
    p.close()


def test_endpoint_and_region_from_the_environment_or_profile(monkeypatch, tmp_path: Path):
    monkeypatch.delenv("AWS_ENDPOINT_URL_S3", raising=False)
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://minio.internal:9000")
    monkeypatch.delenv("AWS_REGION", raising=False)
    monkeypatch.delenv("AWS_DEFAULT_REGION", raising=False)
    config = tmp_path / "config"
    config.write_text("[profile work]\nregion = eu-central-1\n", encoding="utf-8")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(config))
    monkeypatch.setenv("AWS_PROFILE", "work")
    assert settings() == ("http://minio.internal:9000", "eu-central-1", "path")
    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", "http://seaweed:8333")
    monkeypatch.setenv("AWS_REGION", "ap-south-1")
    monkeypatch.setenv("SWITCHBACK_S3_ADDRESSING", "virtual")
    assert settings() == ("http://seaweed:8333", "ap-south-1", "virtual")
    monkeypatch.setenv("SWITCHBACK_S3_ADDRESSING", "sideways")
    with pytest.raises(ValueError, match="SWITCHBACK_S3_ADDRESSING='sideways'"):
        settings()


async def test_a_bucket_outside_us_east_1_is_created_in_its_region(s3_server, monkeypatch):
    monkeypatch.setenv("AWS_REGION", "eu-west-1")
    store = S3Store(s3_server.endpoint_url)
    try:
        bucket = f"eu-{uuid.uuid4().hex[:10]}"
        await store.ensure_bucket(bucket)
        await store.put(bucket, "a.md", b"hello")
        assert await store.get(bucket, "a.md") == b"hello"
    finally:
        store.close()


@pytest.mark.parametrize(("no_proxy", "through"), [("", True), ("127.0.0.1,localhost", False)],
                         ids=["proxied", "no-proxy-host"])
async def test_requests_take_the_environments_proxy(s3_server, proxy, monkeypatch, no_proxy,
                                                    through):
    """Through HTTP_PROXY, or straight to a host NO_PROXY names."""
    monkeypatch.setenv("HTTP_PROXY", proxy.url)
    monkeypatch.setenv("NO_PROXY", no_proxy)
    key = f"proxy-{through}/a.md"
    store = S3Store(s3_server.endpoint_url)
    try:
        await store.put("switchback", key, b"some bytes")
        assert await store.get("switchback", key) == b"some bytes"
    finally:
        store.close()
    wanted = [f"PUT /switchback/{key}", f"GET /switchback/{key}"] if through else []
    assert [f for f in proxy.forwarded if key in f or not through] == wanted
