"""DocumentPipeline end to end: the creator, then a validator per requirement, in parallel."""

from __future__ import annotations

import json
import uuid

import pytest
from temporalio.api.enums.v1 import EventType

from switchback.devstack import demo_script
from switchback_documents.graph_store import close_graph_store, graph_store
from switchback_documents.pipeline_contract import PipelineInput, PipelineResult
from tests.conftest import running_worker


@pytest.fixture
async def graph(tmp_path, monkeypatch):
    await close_graph_store()
    monkeypatch.setenv("SWITCHBACK_GRAPH_PATH", str(tmp_path / "graph"))
    yield
    await close_graph_store()


def scripts(model_server, pid: str, broken: str | None = None) -> list[str]:
    ids = []
    for suffix, steps in demo_script.pipeline_map().items():
        if suffix == broken:
            steps = steps[:2] + [{"error": {"status": 400, "message": "bad request"}}]
        model_server.set_script(pid + suffix, steps)
        ids.append(suffix)
    return ids


async def run(client, task_queue, pid: str, max_concurrent: int = 4):
    async with running_worker(client, task_queue):
        handle = await client.start_workflow(
            "DocumentPipeline", PipelineInput(max_concurrent=max_concurrent), id=pid,
            task_queue=task_queue, result_type=PipelineResult)
        return handle, await handle.result()


CLOSED = {EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_COMPLETED: "completed",
          EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_FAILED: "failed",
          EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_CANCELED: "canceled",
          EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_TERMINATED: "terminated",
          EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_TIMED_OUT: "timed_out"}


async def validators_at_once(client, handle) -> tuple[int, int, int]:
    """(most validator jobs running at once as the pipeline's history tells it - a child
    counts from the moment it is initiated until its close is recorded -; the same from the
    validators' own start and close times; how many validators there were)."""
    running = most = 0
    names: dict[int, str] = {}
    async for e in handle.fetch_history_events():
        if e.event_type == EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED:
            wid = e.start_child_workflow_execution_initiated_event_attributes.workflow_id
            names[e.event_id] = wid
            if "-validate-" in wid:
                running += 1
                most = max(most, running)
        elif e.event_type in CLOSED:
            attrs = getattr(e, e.WhichOneof("attributes"))
            if "-validate-" in names[attrs.initiated_event_id]:
                running -= 1
    assert running == 0
    spans = []
    for wid in names.values():
        if "-validate-" in wid:
            d = await client.get_workflow_handle(wid).describe()
            spans += [(d.start_time, 1), (d.close_time, -1)]
    now = by_time = 0
    for _, delta in sorted(spans, key=lambda x: (x[0], x[1])):  # a close before a start
        now += delta
        by_time = max(by_time, now)
    return most, by_time, len(spans) // 2


async def test_pipeline_end_to_end(client, task_queue, model_server, s3, graph):
    pid = f"pipeline-{uuid.uuid4().hex[:6]}"
    scripts(model_server, pid)
    reqs = demo_script.demo_requirements()
    handle, result = await run(client, task_queue, pid)
    assert result.status == "completed", result
    assert result.requirements == len(reqs)
    assert result.decisions == {"accept": len(reqs) - 1, "duplicate": 1}
    report = json.loads(await s3.get("switchback", f"{pid}/output/pipeline.json"))
    assert len(report["outcomes"]) == len(reqs)
    dup = [o for o in report["outcomes"] if o["decision"] == "duplicate"]
    assert dup[0]["duplicate_of"] == "GDPR-002"
    one = report["outcomes"][0]
    decision = json.loads(await s3.get("switchback", f"{one['job_id']}/output/decision.json"))
    assert decision["decision"] in ("accept", "duplicate")
    store = await graph_store()
    rows = await store.query("MATCH (r:Requirement) WHERE r.id STARTS WITH 'req_' "
                             "RETURN count(r) AS n")
    assert rows[0]["n"] == len(reqs)  # in the graph; the duplicate linked DUPLICATE_OF
    dup_rows = await store.query("MATCH (r:Requirement)-[:DUPLICATE_OF]->(o:Requirement) "
                                 "RETURN r.id AS r, o.id AS o")
    assert {(x["r"], x["o"]) for x in dup_rows} >= {(reqs[-1]["id"], "GDPR-002")}
    # each validator is its own job with its own workspace and history
    children = [wf async for wf in client.list_workflows(f'WorkflowId STARTS_WITH "{pid}-"')]
    assert len(children) == len(reqs) + 1
    # max_concurrent=4: never more than 4 validators at once, and 4 did run together
    most, by_time, validators = await validators_at_once(client, handle)
    assert (most, validators) == (4, len(reqs)) and by_time <= 4


async def test_a_failed_validator_does_not_lose_the_others(client, task_queue, model_server, s3,
                                                          graph):
    pid = f"pipeline-{uuid.uuid4().hex[:6]}"
    reqs = demo_script.demo_requirements()
    scripts(model_server, pid, broken=f"-validate-{reqs[1]['id']}")
    handle, result = await run(client, task_queue, pid, max_concurrent=3)
    assert result.status == "completed_with_failures"
    assert result.failed == [reqs[1]["id"]]
    assert sum(result.decisions.values()) == len(reqs) - 1
    report = json.loads(await s3.get("switchback", f"{pid}/output/pipeline.json"))
    failed = [o for o in report["outcomes"] if o["error"]]
    assert len(failed) == 1 and "HTTP 400" in failed[0]["error"]
    most, by_time, validators = await validators_at_once(client, handle)
    assert (most, validators) == (3, len(reqs)) and by_time <= 3
