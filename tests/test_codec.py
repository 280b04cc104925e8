"""Payload encryption: the AES-GCM codec (round trip, rotation, unknown key, tampering),
external storage keeping ciphertext in S3, and a job run with the codec whose history
holds no plaintext, read back through the codec server and `temporal workflow show`."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import sys
import uuid
from collections.abc import Iterator

import httpx
import pytest
from google.protobuf import json_format
from google.protobuf.message import Message
from temporalio.api.common.v1 import Payload, Payloads
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowFailureError

from switchback.activities.storage.payloads import data_converter, payload_settings
from switchback.activities.storage.s3 import S3Store
from switchback.codec import (
    ENV_KEYS,
    AesGcmCodec,
    CodecError,
    DecryptionError,
    UnknownKeyError,
    codec_from_env,
    parse_keys,
    with_codec,
)
from switchback.codec.aes_gcm import ENCODING, KEY_ID
from switchback.codec.bounded_failures import BoundedFailureConverterWithEncodedAttributes
from switchback.devstack.processes import venv_bin
from switchback.worker import build_worker
from switchback.workflows.contract import JobInput, JobResult
from tests.scripts import call, full_job, step

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def new_key() -> str:
    return base64.b64encode(os.urandom(32)).decode()


def plain(value: str) -> Payload:
    return Payload(metadata={"encoding": b"json/plain"}, data=json.dumps(value).encode())


def payloads_in(msg: Message) -> Iterator[Payload]:
    """Every Payload inside a proto message (fields, repeated fields, maps), depth first."""
    if isinstance(msg, Payload):
        yield msg
        return
    for fd, value in msg.ListFields():
        if fd.type != fd.TYPE_MESSAGE:
            continue
        assert fd.message_type is not None  # a message field has its message type
        if fd.message_type.GetOptions().map_entry:
            if fd.message_type.fields_by_name["value"].type != fd.TYPE_MESSAGE:
                continue
            values = list(value.values())
        else:
            values = list(value) if fd.is_repeated else [value]
        for v in values:
            yield from payloads_in(v)


# --- the codec -------------------------------------------------------------------------------

async def test_round_trip_hides_plaintext_and_keeps_metadata():
    codec = codec_from_env({ENV_KEYS: f"k1:{new_key()}"})
    originals = [plain("alpha secret"), Payload(metadata={"encoding": b"binary/null"}),
                 Payload(metadata={"encoding": b"json/plain", "messageType": b"x.Y"},
                         data=b"\x00" * 70_000)]
    encoded = await codec.encode(originals)
    assert len(encoded) == 3
    for e in encoded:
        assert dict(e.metadata) == {"encoding": ENCODING, KEY_ID: b"k1"}
        assert b"alpha" not in e.data and b"json/plain" not in e.data
    assert await codec.decode(encoded) == originals
    # a fresh nonce per encode: equal payloads never give equal ciphertext
    again = await codec.encode(originals[:1])
    assert again[0].data != encoded[0].data and again[0].data[:12] != encoded[0].data[:12]


async def test_unencrypted_payloads_pass_through_decode():
    codec = codec_from_env({ENV_KEYS: f"k1:{new_key()}"})
    legacy = [plain("written before encryption was on"), Payload()]
    assert await codec.decode(legacy) == legacy


async def test_rotation_new_first_key_encrypts_old_keys_still_decode():
    k1, k2 = new_key(), new_key()
    old = codec_from_env({ENV_KEYS: f"k1:{k1}"})
    written_before = await old.encode([plain("from last month")])
    rotated = codec_from_env({ENV_KEYS: f" k2:{k2} , k1:{k1} "})
    assert rotated.key_ids == ["k2", "k1"]
    assert await rotated.decode(written_before) == [plain("from last month")]
    written_after = await rotated.encode([plain("from today")])
    assert written_after[0].metadata[KEY_ID] == b"k2"
    # once k1 is dropped, its payloads fail loudly, naming the missing id
    only_new = codec_from_env({ENV_KEYS: f"k2:{k2}"})
    assert await only_new.decode(written_after) == [plain("from today")]
    with pytest.raises(UnknownKeyError, match="key id 'k1'") as err:
        await only_new.decode(written_before)
    assert err.value.key_id == "k1" and "k2" in str(err.value)


async def test_unknown_key_id_is_a_clear_error():
    payload = (await AesGcmCodec([("ops-2025", os.urandom(32))]).encode([plain("x")]))[0]
    codec = AesGcmCodec([("ops-2026", os.urandom(32))])
    with pytest.raises(UnknownKeyError) as err:
        await codec.decode([payload])
    assert "'ops-2025'" in str(err.value) and ENV_KEYS in str(err.value)


async def test_tampering_is_detected():
    codec = codec_from_env({ENV_KEYS: f"a:{new_key()},b:{new_key()}"})
    good = (await codec.encode([plain("pay 10 EUR")]))[0]
    for i in (0, 12, len(good.data) // 2, len(good.data) - 1):  # nonce, body, tag
        bad = Payload()
        bad.CopyFrom(good)
        bad.data = good.data[:i] + bytes([good.data[i] ^ 1]) + good.data[i + 1:]
        with pytest.raises(DecryptionError, match="key id 'a' failed authentication"):
            await codec.decode([bad])
    swapped = Payload()
    swapped.CopyFrom(good)
    swapped.metadata[KEY_ID] = b"b"  # a known id, but not the key it was sealed with
    with pytest.raises(DecryptionError, match="key id 'b'"):
        await codec.decode([swapped])
    truncated = Payload(metadata=dict(good.metadata), data=good.data[:20])
    with pytest.raises(DecryptionError, match="truncated"):
        await codec.decode([truncated])
    assert await codec.decode([good]) == [plain("pay 10 EUR")]


def test_key_configuration():
    assert codec_from_env({}) is None and codec_from_env({ENV_KEYS: "  "}) is None
    raw = os.urandom(32)
    url_safe = base64.urlsafe_b64encode(raw).decode().rstrip("=")
    assert parse_keys(f"x:{url_safe}") == [("x", raw)]
    short = base64.b64encode(os.urandom(16)).decode()
    for spec, message in [(f"k1:{short}", "'k1' must be 32 bytes.*got 16 bytes"),
                          ("k1:not*base64", "not base64"),
                          (f"k1:{new_key()},k1:{new_key()}", "'k1' appears twice"),
                          (new_key(), "entry 1: expected 'id:base64key'"),
                          (f"bad id:{new_key()}", "entry 1"),
                          (",", "names no key")]:
        with pytest.raises(CodecError, match=message) as err:
            parse_keys(spec)
        assert short not in str(err.value)  # key material never lands in a message


def test_with_codec_encrypts_failures_too():
    base = data_converter(None)
    assert with_codec(base, None) is base
    codec = codec_from_env({ENV_KEYS: f"k1:{new_key()}"})
    conv = with_codec(base, codec)
    assert conv.payload_codec is codec
    assert conv.payload_converter_class is base.payload_converter_class
    assert isinstance(conv.failure_converter, BoundedFailureConverterWithEncodedAttributes)


async def test_externally_stored_payloads_are_ciphertext_in_s3(s3):
    """Codec first, external storage second: S3 holds the encrypted payload."""
    bucket, threshold = payload_settings()
    codec = codec_from_env({ENV_KEYS: f"k1:{new_key()}"})
    store = S3Store()
    try:
        await store.ensure_bucket(bucket)
        conv = with_codec(data_converter(store), codec)
        marker = f"EXTERNAL-{uuid.uuid4().hex}"
        value = marker + "x" * threshold
        [ref] = await conv.encode([value])
        assert ref.ByteSize() < 10_000 and marker.encode() not in ref.SerializeToString()
        claim = json.loads(ref.data)["claimData"]
        obj = await s3.get(claim["bucket"], claim["key"])
        assert obj is not None and marker.encode() not in obj
        stored = Payload.FromString(obj)
        assert stored.metadata["encoding"] == ENCODING and stored.metadata[KEY_ID] == b"k1"
        assert await conv.decode([ref], [str]) == [value]
    finally:
        store.close()


# --- a job with the codec ----------------------------------------------------------------------

async def start_codec_server(env: dict[str, str]) -> tuple[asyncio.subprocess.Process, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "switchback.codec.server", "--port", "0", cwd=ROOT, env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
    assert proc.stdout is not None  # stdout=PIPE
    line = (await asyncio.wait_for(proc.stdout.readline(), 30)).decode()
    assert "listening on http://" in line, line
    return proc, line.split("listening on ", 1)[1].split()[0]


async def temporal_show(target: str, namespace: str, job_id: str, *extra: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TEMPORAL_")}
    proc = await asyncio.create_subprocess_exec(
        venv_bin("temporal"), "workflow", "show", "--workflow-id", job_id, "--address", target,
        "--namespace", namespace, *extra, env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0, err.decode()
    return out.decode()


async def encrypted_client(client: Client, codec: AesGcmCodec) -> Client:
    """A second client on the test server whose converter adds `codec` to the usual one."""
    return await Client.connect(client.service_client.config.target_host,
                                namespace=client.namespace,
                                data_converter=with_codec(client.data_converter, codec))


async def run_job(enc_client: Client, task_queue: str, job_id: str, instructions: str):
    """Start a job through `enc_client` on a worker using it; return its result."""
    store = S3Store()
    worker, closers = build_worker(enc_client, task_queue, store)
    try:
        async with worker:
            handle = await enc_client.start_workflow(
                "AgentJob", JobInput(config="creator", instructions=instructions, documents=[]),
                id=job_id, task_queue=task_queue, result_type=JobResult)
            return await handle.result()
    finally:
        for c in closers:
            await c.close()
        store.close()


async def test_job_history_is_encrypted_and_readable_through_codec_server(
        client, task_queue, model_server, s3):
    marker = f"ZEBRA-{uuid.uuid4().hex}"  # in the instructions
    said = f"OKAPI-{uuid.uuid4().hex}"  # in what the model says
    keys, token = f"k2:{new_key()},k1:{new_key()}", uuid.uuid4().hex
    codec = codec_from_env({ENV_KEYS: keys})
    target = client.service_client.config.target_host
    script = full_job(1)
    script[0] = step(call("list_files"), content=f"Let me look around. {said}")
    job_id = f"job-{uuid.uuid4().hex[:10]}"
    model_server.set_script(job_id, script)
    result = await run_job(await encrypted_client(client, codec), task_queue, job_id,
                           f"# Task\n{marker}\n")
    assert result.status == "completed"
    assert any(said in (m.get("content") or "") for r in model_server.requests(job_id)
               for m in r["messages"])  # the model's text went round the loop

    # history as the server holds it, read by a client without the codec
    history = await client.get_workflow_handle(job_id).fetch_history()
    raw = b"".join(e.SerializeToString() for e in history.events)
    assert marker.encode() not in raw and said.encode() not in raw
    desc = await client.get_workflow_handle(job_id).describe()
    assert marker.encode() not in desc.raw_description.SerializeToString()
    # every payload is ciphertext except search attributes (the server must index them) and
    # the SDK's marker bookkeeping (patch ids; a local activity's sequence number, type and
    # times - its result is encrypted)
    bookkeeping = [p for e in history.events if e.HasField("marker_recorded_event_attributes")
                   for p in payloads_in(e) if p.metadata.get("encoding") != ENCODING]
    fields = {k for p in bookkeeping for k in json.loads(p.data)}
    assert fields <= {"id", "deprecated", "seq", "attempt", "activity_id", "activity_type",
                      "complete_time", "backoff", "original_schedule_time",
                      "activation_index"}, fields
    unencrypted = [p for e in history.events for p in payloads_in(e)
                   if p.metadata.get("encoding") != ENCODING and p not in bookkeeping]
    assert unencrypted and all(p.metadata.get("type") for p in unencrypted), \
        [dict(p.metadata) for p in unencrypted if not p.metadata.get("type")][:5]
    # ... and with the keys it is all there
    decrypted = b"".join(codec.decrypt(p).data for e in history.events for p in payloads_in(e))
    assert marker.encode() in decrypted and said.encode() in decrypted

    started = history.events[0]
    assert started.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED
    body = json_format.MessageToJson(started.workflow_execution_started_event_attributes.input)
    server_env = {**os.environ, ENV_KEYS: keys, "SWITCHBACK_CODEC_AUTH": token}
    proc, url = await start_codec_server(server_env)
    try:
        async with httpx.AsyncClient(base_url=url, timeout=30) as http:
            headers = {"Content-Type": "application/json", "X-Namespace": client.namespace}
            denied = await http.post("/decode", content=body, headers=headers)
            assert denied.status_code == 401
            auth = {**headers, "Authorization": f"Bearer {token}"}
            r = await http.post(f"/{client.namespace}/decode", content=body, headers=auth)
            assert r.status_code == 200, r.text
            [decoded] = json_format.Parse(r.content, Payloads()).payloads
            assert decoded.metadata["encoding"] == b"json/plain"
            assert json.loads(decoded.data)["instructions"] == f"# Task\n{marker}\n"
            # the web UI's preflight, from its origin only
            pre = await http.request("OPTIONS", "/decode", headers={
                "Origin": "http://localhost:8233", "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "content-type,x-namespace"})
            assert pre.status_code == 204
            assert pre.headers["access-control-allow-origin"] == "http://localhost:8233"
            assert "x-namespace" in pre.headers["access-control-allow-headers"]
            evil = await http.request("OPTIONS", "/decode", headers={"Origin": "http://evil.test"})
            assert "access-control-allow-origin" not in evil.headers
            # a payload under a key the server lacks: 400 naming the id
            alien = (await AesGcmCodec([("k0", os.urandom(32))]).encode([plain("x")]))[0]
            r = await http.post("/decode", headers=auth,
                                content=json_format.MessageToJson(Payloads(payloads=[alien])))
            assert r.status_code == 400 and "'k0'" in r.json()["error"]
            # encode goes the other way
            r = await http.post("/encode", headers=auth,
                                content=json_format.MessageToJson(Payloads(payloads=[plain("y")])))
            [enc] = json_format.Parse(r.content, Payloads()).payloads
            assert enc.metadata[KEY_ID] == b"k2" and codec.decrypt(enc) == plain("y")

        shown = await temporal_show(target, client.namespace, job_id, "--output", "json")
        assert marker not in shown and said not in shown
        assert base64.b64encode(ENCODING).decode() in shown
        shown = await temporal_show(target, client.namespace, job_id, "--codec-endpoint", url,
                                    "--codec-auth", f"Bearer {token}", "--detailed")
        assert marker in shown and said in shown
    finally:
        proc.terminate()
        await proc.wait()


async def test_failure_messages_are_encrypted_too(client, task_queue, model_server, s3):
    codec = codec_from_env({ENV_KEYS: f"k1:{new_key()}"})
    job_id = f"job-{uuid.uuid4().hex[:10]}"
    model_server.set_script(job_id, [step(call("list_files"))])  # then the script runs out
    with pytest.raises(WorkflowFailureError) as err:
        await run_job(await encrypted_client(client, codec), task_queue, job_id, "# Task\n")
    assert "exhausted" in str(err.value.cause)  # a client with the codec reads the message
    raw = b"".join(e.SerializeToString()
                   for e in (await client.get_workflow_handle(job_id).fetch_history()).events)
    assert b"Encoded failure" in raw and b"exhausted" not in raw
