"""S3Wire's requests against botocore's, request shape by request shape: the same URL (path
and query encoding, path-style and virtual-hosted), the same body, and, for the same signed
headers, the same SigV4 signature - with and without a session token, in and outside
us-east-1. boto3's own client prepares each request (its `before-send` hook captures it, so
nothing is sent); S3Wire's is captured where it would go on the wire. A key with reserved or
non-ASCII characters, a query with `+`, `/` and `=` in a token, a copy, conditional writes
and a bucket created outside us-east-1 are in the table: what AWS would refuse if the
canonical request differed by a byte."""

from __future__ import annotations

import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

import boto3
import botocore.auth
import pytest
from botocore.config import Config

from switchback.activities.storage import s3_wire
from switchback.activities.storage.s3_wire import S3Wire

WHEN = datetime(2026, 11, 26, 12, 34, 56)
STAMP = "20261126T123456Z"
ENDPOINT = "http://s3.test.example:8333"
BUCKET = "work-bucket"
KEYS = ["notes/a b+c%d.md", "docs/ünïcødé 文件.txt", "x/~tilde=eq&amp?q#h.md", "plain.md"]


class Captured(Exception):
    def __init__(self, request: Any) -> None:
        self.request = request


@dataclass
class Sent:
    method: str
    url: str
    headers: dict[str, str]
    body: bytes


class FakeAnswer:
    status = 200
    headers: dict[str, str] = {"ETag": '"e"'}
    data = b"<ListBucketResult><IsTruncated>false</IsTruncated></ListBucketResult>"


class Recorder:
    """Stands for S3Wire's connection pool: records the request, answers 200."""

    def __init__(self) -> None:
        self.sent: list[Sent] = []

    def urlopen(self, method: str, url: str, body: bytes | None = None,
                headers: dict[str, str] | None = None, **_: Any) -> FakeAnswer:
        self.sent.append(Sent(method, url, dict(headers or {}), body or b""))
        return FakeAnswer()

    def clear(self) -> None:
        pass


@pytest.fixture(params=[("us-east-1", "path", False), ("eu-west-1", "path", True),
                        ("ap-southeast-2", "virtual", False), ("eu-west-1", "virtual", True)],
                ids=lambda p: f"{p[0]}-{p[1]}{'-token' if p[2] else ''}")
def both(request, monkeypatch) -> tuple[Any, S3Wire, Recorder]:
    region, style, token = request.param
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
    if token:
        monkeypatch.setenv("AWS_SESSION_TOKEN", "FwoGZXIvYXdzE//token+with/slashes==")
    else:
        monkeypatch.delenv("AWS_SESSION_TOKEN", raising=False)
    monkeypatch.setattr(botocore.auth, "get_current_datetime", lambda: WHEN)
    monkeypatch.setattr(s3_wire.time, "gmtime", lambda *a: time.struct_time(
        (2026, 11, 26, 12, 34, 56, 3, 330, 0)))
    client = boto3.session.Session().client(
        "s3", endpoint_url=ENDPOINT, region_name=region, config=Config(
            signature_version="s3v4", retries={"max_attempts": 1},
            request_checksum_calculation="when_required",
            s3={"addressing_style": style, "payload_signing_enabled": True}))

    def capture(request: Any, **_: Any) -> None:
        raise Captured(request)

    client.meta.events.register("before-send.s3", capture)
    wire = S3Wire(ENDPOINT, region, 4, addressing=style)
    recorder = Recorder()
    wire._http = recorder  # type: ignore[assignment]
    return client, wire, recorder


def boto(client: Any, operation: str, **params: Any) -> Any:
    with pytest.raises(Captured) as got:
        getattr(client, operation)(**params)
    return got.value.request


def without_x_id(url: str) -> tuple[str, str, list[str]]:
    """(host, path, the query's `name=value` pairs as encoded, sorted) of a URL, less
    botocore's `x-id` marker."""
    parts = urlsplit(url)
    query = [p if "=" in p else f"{p}=" for p in parts.query.split("&") if p]
    return parts.netloc, parts.path, sorted(p for p in query if not p.startswith("x-id="))


def same_signature(wire: S3Wire, prepared: Any) -> None:
    """S3Wire signs what botocore signed - the same headers, path and query - to the same
    Authorization header."""
    auth = prepared.headers["Authorization"]
    auth = auth.decode() if isinstance(auth, bytes) else auth
    names = auth.split("SignedHeaders=")[1].split(",")[0].split(";")
    headers = {k.lower(): (v.decode() if isinstance(v, bytes) else v)
               for k, v in prepared.headers.items()}
    own = {"host", "x-amz-date", "x-amz-content-sha256", "x-amz-security-token",
           "content-length"}
    parts = urlsplit(prepared.url)
    qs = "&".join(sorted(parts.query.split("&"))) if parts.query else ""
    mine = wire.sign(prepared.method, parts.netloc, parts.path, qs,
                     {n: headers[n] for n in names if n not in own},
                     headers["x-amz-content-sha256"],
                     int(headers["content-length"]) if "content-length" in names else None)
    assert mine["authorization"] == auth and mine["Host"] == parts.netloc
    assert set(mine["authorization"].split("SignedHeaders=")[1].split(",")[0].split(";")) \
        == set(names)


def sent_matches(wire: S3Wire, recorder: Recorder, prepared: Any) -> Sent:
    sent = recorder.sent[-1]
    assert sent.method == prepared.method
    assert without_x_id(sent.url) == without_x_id(prepared.url)
    same_signature(wire, prepared)
    return sent


@pytest.mark.parametrize("key", KEYS)
def test_object_requests(both, key: str) -> None:
    client, wire, recorder = both
    body = "hello ✓".encode()
    wire.put(BUCKET, key, body, {"if-none-match": "*", "content-type": "text/markdown"})
    sent = sent_matches(wire, recorder, boto(client, "put_object", Bucket=BUCKET, Key=key,
                                             Body=body, IfNoneMatch="*",
                                             ContentType="text/markdown"))
    assert sent.body == body and sent.headers["if-none-match"] == "*"
    wire.put(BUCKET, key, body, {"if-match": '"abc"'})
    sent_matches(wire, recorder, boto(client, "put_object", Bucket=BUCKET, Key=key, Body=body,
                                      IfMatch='"abc"'))
    wire.get(BUCKET, key)
    sent_matches(wire, recorder, boto(client, "get_object", Bucket=BUCKET, Key=key))
    wire.head(BUCKET, key)
    sent_matches(wire, recorder, boto(client, "head_object", Bucket=BUCKET, Key=key))
    wire.delete(BUCKET, key, {})
    sent_matches(wire, recorder, boto(client, "delete_object", Bucket=BUCKET, Key=key))


@pytest.mark.parametrize("source", KEYS[:3])
def test_copy_names_its_source_as_botocore_does(both, source: str) -> None:
    client, wire, recorder = both
    wire.copy(BUCKET, source, "archive/copy.md", {"x-amz-copy-source-if-match": '"e1"'})
    prepared = boto(client, "copy_object", Bucket=BUCKET, Key="archive/copy.md",
                    CopySource={"Bucket": BUCKET, "Key": source}, CopySourceIfMatch='"e1"')
    sent = sent_matches(wire, recorder, prepared)
    theirs = prepared.headers["x-amz-copy-source"]
    assert sent.headers["x-amz-copy-source"] == (
        theirs.decode() if isinstance(theirs, bytes) else theirs)


@pytest.mark.parametrize("prefix,token", [("notes/", None), ("a b/ü+", "tok+en/==x"),
                                          ("", "1/2&3=4")])
def test_list_pages(both, prefix: str, token: str | None) -> None:
    client, wire, recorder = both
    wire.list_page(BUCKET, prefix, 500, None, token)
    params: dict[str, Any] = {"Bucket": BUCKET, "Prefix": prefix, "MaxKeys": 500,
                              "EncodingType": "url"}
    if token:
        params["ContinuationToken"] = token
    sent_matches(wire, recorder, boto(client, "list_objects_v2", **params))
    wire.list_page(BUCKET, prefix, 10, "after/ü key", None)
    sent_matches(wire, recorder, boto(client, "list_objects_v2", Bucket=BUCKET, Prefix=prefix,
                                      MaxKeys=10, EncodingType="url", StartAfter="after/ü key"))


def test_bucket_created_in_its_region(both) -> None:
    client, wire, recorder = both
    wire.create_bucket(BUCKET)
    params: dict[str, Any] = {"Bucket": BUCKET}
    if wire.region != "us-east-1":
        params["CreateBucketConfiguration"] = {"LocationConstraint": wire.region}
    prepared = boto(client, "create_bucket", **params)
    sent = sent_matches(wire, recorder, prepared)
    theirs = prepared.body or b""
    if wire.region == "us-east-1":
        assert sent.body == b"" == theirs
    else:
        def constraint(xml: bytes) -> str:
            return "".join(ET.fromstring(xml).itertext())
        assert constraint(sent.body) == constraint(theirs) == wire.region
    wire.head(BUCKET, "")
    sent_matches(wire, recorder, boto(client, "head_bucket", Bucket=BUCKET))
