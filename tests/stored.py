"""A job's stored conversations as a person (or a test) reads them from S3: each message
object, plus the messages an answer carries (`_meta.inline`, storage/conversations.py)."""

from __future__ import annotations

import json

from switchback.activities.storage.conversations import carried


async def stored_conversations(s3, job_id: str,
                               bucket: str = "switchback") -> dict[str, dict[int, dict]]:
    """{conversation key: {index: message}} of every conversation of the job."""
    prefix = f"{job_id}/.switchback/conversations/"
    out: dict[str, dict[int, dict]] = {}
    for o in await s3.list(bucket, prefix):
        conv, name = o.key[len(prefix):].split("/", 1)
        if not (name.endswith(".json") and name[:-5].isdigit()):
            continue
        message = json.loads(await s3.get(bucket, o.key))
        found = out.setdefault(conv, {})
        found[int(name[:-5])] = message
        found.update(carried(message))
    return out


async def stored_messages(s3, job_id: str, conv: str, bucket: str = "switchback") -> list[dict]:
    """One conversation's messages in order."""
    found = (await stored_conversations(s3, job_id, bucket)).get(conv, {})
    return [found[i] for i in sorted(found)]
