"""Replay one workflow's history (the application's or an AgentJob it started) against
this code, through the same plugin and codec: `python replay.py WORKFLOW_ID`. Exit 0 when
it replays, 1 with the failure when it does not."""

from __future__ import annotations

import asyncio
import sys

from temporalio.converter import DataConverter
from temporalio.worker import Replayer

from codec import AppCodec
from switchback.plugin import SwitchbackPlugin
from worker import connect
from workflows import Greet, GreetingCard


async def main(workflow_id: str) -> int:
    client = await connect()
    history = await client.get_workflow_handle(workflow_id).fetch_history()
    replayer = Replayer(workflows=[Greet, GreetingCard],
                        data_converter=DataConverter(payload_codec=AppCodec()),
                        plugins=[SwitchbackPlugin()])
    result = await replayer.replay_workflow(history, raise_on_replay_failure=False)
    if result.replay_failure is not None:
        print(f"{workflow_id}: does not replay: {result.replay_failure}", file=sys.stderr)
        return 1
    print(f"{workflow_id}: replays ({len(history.events)} events)")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1])))
