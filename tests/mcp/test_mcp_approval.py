"""An MCP tool listed in `approval_required` (by its config name) waits for `approve`, shown
under the name the model called it by; granted, it runs on the server."""

from __future__ import annotations

from switchback.workflows.contract import ApproveRequest
from tests.conftest import running_worker
from tests.scripts import bootstrap, call, finish, step
from tests.waits import wait_state


async def test_an_mcp_tool_waits_for_approval(client, task_queue, start_job, model_server, s3,
                                              mcp):
    config = {"tools": {"domain": ["time.*"]}, "approval_required": ["time.convert_time"]}
    script = bootstrap() + [
        step(call("time__get_current_time", timezone="UTC")),  # not gated
        step(call("time__convert_time", source_timezone="UTC", time="12:00",
                  target_timezone="Asia/Tokyo")),
        step(call("write_file", path="tokyo.json", content="{{last_tool_result}}")),
    ] + [step(call("todo_complete", notes=f"t{i}")) for i in range(5)] + finish()
    async with running_worker(client, task_queue, mcp=mcp):
        handle = await start_job(script, model_server, config=config, instructions="x",
                                 documents=[])
        st = await wait_state(handle, lambda s: bool(s.pending_approvals))
        [pending] = st.pending_approvals
        assert st.status == "waiting_approval"
        assert pending.tool == "time__convert_time" and "Asia/Tokyo" in pending.arguments
        assert await s3.get("switchback", f"{handle.id}/tokyo.json") is None
        assert "approved time__convert_time" in await handle.execute_update(
            "approve", ApproveRequest(call_id=pending.call_id, approved=True), result_type=str)
        assert (await handle.result()).status == "completed"
    converted = await s3.get("switchback", f"{handle.id}/tokyo.json")
    assert converted is not None and b'"Asia/Tokyo"' in converted and b"21:00" in converted
