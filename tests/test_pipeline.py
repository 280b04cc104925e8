"""DocumentPipeline end to end: the creator, then a validator per requirement, in parallel."""

from __future__ import annotations

import json
import uuid

import pytest

from activities.graph_store import close_graph_store, graph_store
from devstack import demo_script
from tests.conftest import running_worker
from workflows.contract import PipelineInput, PipelineResult


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
