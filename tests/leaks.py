"""Where a job could leak a credential, and a search through all of it.

`places(...)` gathers everything a job left behind that someone other than the operator
can read: every request body the scripted model received for it, its history as raw JSON
(what `temporal workflow show --output json` prints - with every base64 string decoded too,
since payloads are base64 there), its `state`, and every object under its workspace prefix,
`.switchback/` included. `leaks(secrets, places)` lists each (secret, place) where a
secret's value appears. `tests/test_hostile_table.py` plants a secret to show that the
search finds one wherever a job could put it.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from temporalio.client import WorkflowHandle


def decoded_strings(tree: Any) -> list[bytes]:
    """Every string in a JSON tree, and what each base64 one decodes to."""
    out: list[bytes] = []
    stack = [tree]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            stack += list(value.keys()) + list(value.values())
        elif isinstance(value, list):
            stack += value
        elif isinstance(value, str):
            out.append(value.encode("utf-8", "surrogatepass"))
            if len(value) >= 8 and len(value) % 4 == 0:
                try:
                    out.append(base64.b64decode(value, validate=True))
                except (binascii.Error, ValueError):
                    pass
    return out


def history_places(history_json: str) -> dict[str, bytes]:
    """The raw JSON of a history, and each decoded payload of it, as places to search."""
    data = json.loads(history_json)
    found = {"history (raw JSON)": history_json.encode("utf-8", "surrogatepass")}
    for n, blob in enumerate(decoded_strings(data)):
        found[f"history (decoded string {n})"] = blob
    return found


async def places(client, s3, model_server, job_id: str, bucket: str = "switchback",
                 handle: WorkflowHandle | None = None) -> dict[str, bytes]:
    """Everything of job `job_id` a leak could hide in: model requests, history, state,
    workspace files."""
    found: dict[str, bytes] = {}
    for n, request in enumerate(model_server.requests(job_id)):
        found[f"model request {n}"] = json.dumps(request, ensure_ascii=False).encode(
            "utf-8", "surrogatepass")
    handle = handle or client.get_workflow_handle(job_id)
    found.update(history_places((await handle.fetch_history()).to_json()))
    try:
        found["state query"] = json.dumps(await handle.query("state")).encode()
    except Exception as e:  # noqa: BLE001 - a job refused before it ran still answers; say so
        found["state query"] = f"(no state: {e})".encode()
    for obj in await s3.list(bucket, f"{job_id}/"):
        found[f"s3://{bucket}/{obj.key}"] = await s3.get(bucket, obj.key) or b""
    return found


def leaks(secrets: dict[str, str], where: dict[str, bytes]) -> list[tuple[str, str]]:
    """(secret name, place) for every place that holds a secret's value."""
    return [(name, place) for name, value in secrets.items() for place, data in where.items()
            if value.encode() in data]
