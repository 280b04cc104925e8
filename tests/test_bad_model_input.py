"""What the model gets wrong comes back to it as a tool error; nothing is executed or lost."""

from __future__ import annotations

from tests.conftest import running_worker
from tests.scripts import bootstrap, call, finish, step, tactical


def tool_messages(model_server, job_id: str) -> list[str]:
    """Contents of every tool message the model was shown, in order, without repeats."""
    seen: dict[str, str] = {}
    for r in model_server.requests(job_id):
        for m in r["messages"]:
            if m["role"] == "tool":
                seen.setdefault(m["tool_call_id"] + m["content"], m["content"])
    return list(seen.values())


async def test_bad_todos_yaml_rejected_then_accepted(client, task_queue, start_job, model_server,
                                                     s3):
    script = bootstrap()[:-2] + [
        step(call("todo_complete")),  # no todos.yaml yet
        step(call("write_file", path="todos.yaml", content="todos: [oops")),
        step(call("todo_complete")),  # invalid YAML
        step(call("write_file", path="todos.yaml", content="todos:\n  - id: one\n    content: x\n"
                  "  - {id: 2, content: b}\n  - {id: 3, content: c}\n  - {id: 4, content: d}\n"
                  "  - {id: 5, content: e}\n")),
        step(call("todo_complete")),  # id not an int
        *bootstrap()[-2:],
    ] + tactical(5) + finish()
    async with running_worker(client, task_queue):
        handle = await start_job(script, model_server, config="creator", instructions="x",
                                 documents=[])
        result = await handle.result()
    assert result.status == "completed"
    msgs = [m for m in tool_messages(model_server, handle.id) if "rejected" in m]
    assert "todos.yaml not found" in msgs[0]
    assert "not valid YAML" in msgs[1]
    assert "'id' must be an integer" in msgs[2]
    assert len(msgs) == 3


async def test_out_of_phase_unknown_and_malformed_calls(client, task_queue, start_job,
                                                        model_server, s3):
    bad = [
        step(call("job_complete", summary="too early", deliverables=[], confidence=1.0)),
        step(call("todo_write", phase="x", todos=[])),
        step(call("delete_everything", path="")),
        step({"name": "write_file", "arguments": '{"path": "a.md", "content": '}),
        step(call("write_file", path="../other-job/x.md", content="escape")),
        step(call("write_file", path="/etc/passwd", content="escape")),
        step(call("read_file", path="missing.md")),
        step(call("write_file", content="no path")),
    ]
    script = bootstrap() + bad + tactical(5) + finish()
    async with running_worker(client, task_queue):
        handle = await start_job(script, model_server, config="creator", instructions="x",
                                 documents=[])
        result = await handle.result()
    assert result.status == "completed"  # the tactical job_complete did not end the job
    msgs = tool_messages(model_server, handle.id)
    errors = [m for m in msgs if m.startswith("Error [")]
    assert any("[tool_not_allowed]" in m and "job_complete" in m and "tactical" in m
               for m in errors)
    assert any("[tool_not_allowed]" in m and "todo_write" in m for m in errors)
    assert any("[unknown_tool]" in m and "delete_everything" in m for m in errors)
    assert any("[invalid_arguments]" in m and "not valid JSON" in m for m in errors)
    assert any("[path_outside_workspace]" in m and ".." in m for m in errors)
    assert any("[path_outside_workspace]" in m and "absolute" in m for m in errors)
    assert any("[file_not_found]" in m for m in errors)
    assert any("[invalid_arguments]" in m and "path" in m and "Field required" in m
               for m in errors)
    # the whole bucket: an escape would land outside the job's prefix (other tests' jobs
    # write their own a.md, so that one is looked for under this job only)
    keys = {o.key for o in await s3.list("switchback", "")}
    assert not any("other-job" in k or k.endswith("passwd") for k in keys)
    assert not any(k.startswith(f"{handle.id}/") and k.endswith("/a.md") for k in keys)
    assert f"{handle.id}/output/completion.json" in keys


async def test_text_only_turns_are_nudged(client, task_queue, start_job, model_server, s3):
    script = bootstrap() + [step(content="I think I am done.")] * 2 + tactical(5) + finish()
    async with running_worker(client, task_queue):
        handle = await start_job(script, model_server, config="creator", instructions="x",
                                 documents=[])
        assert (await handle.result()).status == "completed"
    nudges = {m["content"] for r in model_server.requests(handle.id) for m in r["messages"]
              if m["role"] == "user" and "without calling a tool" in m["content"]}
    assert len(nudges) == 1  # the same nudge text, sent twice
    assert sum(1 for r in model_server.requests(handle.id)
               for m in r["messages"][-2:-1] if "without calling a tool" in m["content"]) == 2


async def test_too_many_text_turns_end_the_job_stuck(client, task_queue, start_job,
                                                      model_server, s3):
    """A model that stops calling tools has not finished: the job ends `stuck` with why (it
    does not fail: nothing broke), and output/completion.json says so."""
    script = bootstrap() + [step(content="thinking...")] * 3
    async with running_worker(client, task_queue):
        handle = await start_job(script, model_server, instructions="x", documents=[],
                                 config={"extends": "creator", "limits": {"max_nudges": 2}})
        result = await handle.result()
    assert result.status == "stuck" and "without calling a tool" in result.summary
    assert result.completed_by == ""
    done = await s3.get("switchback", f"{handle.id}/output/completion.json")
    assert done is not None and b'"stuck"' in done
    assert await s3.get("switchback", f"{handle.id}/output/error.json") is None
