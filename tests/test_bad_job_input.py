"""Wrong-typed job input fails the job at once - in its first workflow task, with a
non-retryable SwitchbackJobFailed that names the field - instead of a workflow task retried
forever. Started with the Temporal CLI, as a user would."""

from __future__ import annotations

import asyncio
import json
import uuid

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowFailureError
from temporalio.exceptions import ApplicationError

from switchback.workflows.contract.inputs import MAX_INSTRUCTIONS_CHARS
from tests.conftest import running_worker
from tests.waits import temporal_cli

CASES = [
    ('{"config": 42}', "job input: 'config' must be a config name (string) or an inline "
                       "config object, got 42"),
    ('{"instructions": 5}', "job input: 'instructions' must be a string of markdown (at most "
                            "200000 characters), got 5"),
    ('{"documents": "x"}', "job input: 'documents' must be a list of documents, each a path "
                           "(string) or an object {name, text} or {name, base64} (at most "
                           "200), got \"x\""),
    ('{"confg": "creator"}', 'job input: unknown key "confg" (known: config, instructions, '
                             'documents, deliverables)'),
    ("42", 'job input must be a JSON object (e.g. {"config": "creator", "instructions": '
           '"..."}), got 42'),
    ('["creator"]', "job input must be a JSON object"),
    ('{"documents": [7]}', "job input: 'documents[0]' must be a path (string) or an object"),
    ('{"documents": [{"name": "a.md", "txt": "x"}]}',
     "job input: 'documents[0].txt': unknown key (known: name, path, text, base64)"),
    ('{"documents": [{"text": "x"}]}',
     "job input: 'documents[0]': an inline document needs a 'name'"),
    ('{"documents": [{"name": "a", "path": "a", "text": "x"}]}',
     "job input: 'documents[0]' must give exactly one of 'path', 'text' or 'base64' "
     "(got path, text)"),
    ('{"carry": {"cfg": 5}}', "job input: 'carry.cfg': "),
    ('{"config": {"limits": {"max_nudgez": 1}}}',
     "limits.max_nudgez: Extra inputs are not permitted"),
    ('{"config": {"extends": "creator", "limits": {"max_nudges": "many"}}}',
     "limits.max_nudges: Input should be a valid integer"),
    ('{"config": "no-such-config"}', "config 'no-such-config' not found"),
    ('{"config": ""}', "job input: 'config' must be a config name (string) or an inline "
                       "config object, got \"\""),
]


async def failed_at_once(client: Client, workflow_id: str) -> str:
    handle = client.get_workflow_handle(workflow_id)
    with pytest.raises(WorkflowFailureError) as info:
        await asyncio.wait_for(handle.result(), 60)
    cause = info.value.cause
    assert isinstance(cause, ApplicationError) and cause.type == "SwitchbackJobFailed"
    assert cause.non_retryable
    events = [e.event_type async for e in handle.fetch_history_events()]
    assert EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED not in events  # no task retried
    assert events[-1] == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED
    return str(cause)


async def test_wrong_typed_input_from_the_cli_fails_at_once(client, task_queue):
    ids = {raw: f"bad-{uuid.uuid4().hex[:8]}" for raw, _ in CASES}
    async with running_worker(client, task_queue):
        for raw, _ in CASES:
            temporal_cli(client, "workflow", "start", "--type", "AgentJob", "--task-queue",
                         task_queue, "--workflow-id", ids[raw], "--input", raw)
        no_input = f"bad-{uuid.uuid4().hex[:8]}"
        temporal_cli(client, "workflow", "start", "--type", "AgentJob", "--task-queue",
                     task_queue, "--workflow-id", no_input)
        whys = {raw: await failed_at_once(client, ids[raw]) for raw, _ in CASES}
        why_none = await failed_at_once(client, no_input)
    for raw, expected in CASES:
        assert expected in whys[raw], (raw, whys[raw])
    assert "job input must be a JSON object" in why_none and "got null" in why_none


async def test_oversized_instructions_and_the_state_after(client, task_queue):
    job_id = f"bad-{uuid.uuid4().hex[:8]}"
    async with running_worker(client, task_queue):
        handle = await client.start_workflow(
            "AgentJob", {"config": "creator", "instructions": "x" * (MAX_INSTRUCTIONS_CHARS + 1)},
            id=job_id, task_queue=task_queue)
        why = await failed_at_once(client, job_id)
        state = await handle.query("state")
    assert "job input: 'instructions' must be a string of markdown (at most 200000 " \
           "characters), got \"xxxx" in why
    assert state["status"] == "failed" and state["last_error"].startswith(
        "job input: 'instructions' must be")


@pytest.mark.parametrize(("raw", "expected"), [
    ({"max_concurrent": 0}, "pipeline input: 'max_concurrent' must be a whole number from 1 "
                            "to 100, got 0"),
    ({"creator_config": 42}, "pipeline input: 'creator_config' must be a config name"),
    ({"documents": "x"}, "pipeline input: 'documents' must be a list of documents"),
    ({"validators": 3}, 'pipeline input: unknown key "validators"'),
])
async def test_bad_pipeline_input_fails_at_once(client, task_queue, raw, expected):
    pid = f"pipe-{uuid.uuid4().hex[:8]}"
    async with running_worker(client, task_queue):
        temporal_cli(client, "workflow", "start", "--type", "DocumentPipeline", "--task-queue",
                     task_queue, "--workflow-id", pid, "--input", json.dumps(raw))
        why = await failed_at_once(client, pid)
    assert expected in why
