"""The demo: the creator config over the sample documents, driven by the committed script."""

from __future__ import annotations

import json

from switchback.devstack import demo_script
from switchback.devstack.scripted_model import load_script
from switchback.workflows.contract import JobResult
from tests.conftest import running_worker


def test_committed_demo_script_is_current():
    """The YAML is generated from the sample documents; it must match them."""
    assert load_script(str(demo_script.OUT)) == demo_script.build()


async def test_creator_demo_job(client, task_queue, start_job, model_server, s3):
    async with running_worker(client, task_queue):
        handle = await start_job(load_script(str(demo_script.OUT)), model_server,
                                 config="creator")
        result: JobResult = await handle.result()
    assert result.status == "completed", result
    assert result.phases == 7 and result.deliverables == ["output/requirements.json"]
    job = handle.id

    async def read(path: str) -> str:
        data = await s3.get("switchback", f"{job}/{path}")
        assert data is not None, path
        return data.decode()

    manifest = json.loads(await read("chunks/manifest.json"))["chunks"]
    assert {m["source"] for m in manifest} == {f"documents/{d}" for d in demo_script.DOCS}
    assert any(m["page"] == 2 for m in manifest)  # the PDF's second page
    reqs = json.loads(await read("output/requirements.json"))["requirements"]
    assert len(reqs) >= 8 and {r["regime"] for r in reqs} == {"GoBD", "GDPR"}
    for r in reqs:
        for cit in r["citations"]:
            assert cit["quote"] in await read(f"chunks/{cit['chunk_id']}.md")
    extracted = await read("extracted/records_policy.txt")
    assert "ten years" in extracted
    # the todos.yaml written with write_file was rejected once, with the reason, then the one
    # todo_write wrote was accepted
    rejected = [m for r in model_server.requests(job) for m in r["messages"]
                if m["role"] == "tool" and "Phase transition rejected" in m.get("content", "")]
    assert rejected and ("todos.yaml was changed after todo_write wrote it (by write_file?)"
                         in rejected[0]["content"])
    assert not [m for r in model_server.requests(job) for m in r["messages"]
                if m["role"] == "tool" and "[todo_not_done]" in m.get("content", "")]
    for n in (2, 4, 6):
        await read(f"archive/phase_{n}.yaml")
