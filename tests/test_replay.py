"""Replay: a job's exported history replays against the current code without nondeterminism.

The job here is started with the `temporal` CLI exactly as the README shows, runs on
a worker with no workflow cache (every workflow task replays the whole history),
and is exported with `temporal workflow show --output json`.
"""

from __future__ import annotations

import asyncio
import json

from temporalio.client import WorkflowHistory
from temporalio.worker import Replayer

from switchback.workflows.agent_job import AgentJob
from switchback.workflows.contract import JobResult
from tests.conftest import running_worker
from tests.scripts import full_job
from tests.waits import temporal_cli


async def test_cli_started_job_replays(client, task_queue, model_server, s3):
    job_id = "replay-cli-job"
    model_server.set_script(job_id, full_job(3))
    async with running_worker(client, task_queue, max_cached_workflows=0):
        await asyncio.to_thread(
            temporal_cli, client, "workflow", "start", "--type", "AgentJob", "--task-queue",
            task_queue, "--workflow-id", job_id, "--input",
            json.dumps({"config": "creator", "instructions": "# Task\nDo it.", "documents": []}))
        result = await client.get_workflow_handle(job_id, result_type=JobResult).result()
    assert result.status == "completed" and result.phases == 7

    exported = await asyncio.to_thread(temporal_cli, client, "workflow", "show", "--workflow-id",
                                       job_id, "--output", "json")
    history = WorkflowHistory.from_json(job_id, exported)
    replayer = Replayer(workflows=[AgentJob], data_converter=client.data_converter)
    outcome = await replayer.replay_workflow(history, raise_on_replay_failure=False)
    assert outcome.replay_failure is None, outcome.replay_failure

    # the web UI's activity summaries say which tool ran on which path (workspace tools
    # run as local activities: their summary is on the marker event)
    summaries = [e.user_metadata.summary.data.decode() for e in history.events
                 if e.HasField("activity_task_scheduled_event_attributes")
                 or e.HasField("marker_recorded_event_attributes")]
    assert any('write_file work/p2_3.md' in s for s in summaries)
    assert any("phase 2 tactical step" in s for s in summaries)  # model calls
