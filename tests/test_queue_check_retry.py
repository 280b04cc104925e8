"""The task-queue poller check asks again when the server cuts the call short: in CI a loaded
dev server answered DescribeTaskQueue with "operation was canceled", the check was skipped,
and a typo queue hung the job (tests/test_task_queue_typo.py covers the real server; this
one the answers that cannot be made to happen on it at will)."""

from __future__ import annotations

import pytest
from temporalio.api.taskqueue.v1 import PollerInfo
from temporalio.api.workflowservice.v1 import DescribeTaskQueueResponse
from temporalio.service import RPCError, RPCStatusCode
from temporalio.testing import ActivityEnvironment

from switchback.activities.config_files import _describe


class Server:
    """Answers DescribeTaskQueue with the errors given, then with one poller."""

    def __init__(self, *errors: RPCStatusCode) -> None:
        self.errors, self.calls = list(errors), 0
        self.namespace, self.workflow_service = "default", self

    async def describe_task_queue(self, request, timeout=None):
        self.calls += 1
        if self.errors:
            raise RPCError("operation was canceled", self.errors.pop(0), b"")
        return DescribeTaskQueueResponse(pollers=[PollerInfo(identity="w")])


async def test_a_call_cut_short_is_asked_again():
    server = Server(RPCStatusCode.CANCELLED, RPCStatusCode.UNAVAILABLE)
    found = await ActivityEnvironment(client=server).run(_describe, "q", (0, 0))
    assert [p.identity for p in found.pollers] == ["w"] and server.calls == 3


async def test_it_gives_up_after_its_pauses_and_on_other_errors():
    server = Server(*[RPCStatusCode.CANCELLED] * 5)
    with pytest.raises(RPCError):
        await ActivityEnvironment(client=server).run(_describe, "q", (0, 0))
    assert server.calls == 3
    denied = Server(RPCStatusCode.PERMISSION_DENIED)
    with pytest.raises(RPCError):
        await ActivityEnvironment(client=denied).run(_describe, "q", (0, 0))
    assert denied.calls == 1
