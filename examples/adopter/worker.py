"""The application's worker, with switchback in it through one line: `plugins=[...]`.

    APP_CODEC_KEY=<64 hex digits> python worker.py

Its client keeps its own codec (codec.py); the worker runs the application's workflows and
activities and, on the same task queue (APP_TASK_QUEUE, default my-app), switchback's
`AgentJob` with every activity it needs. switchback's settings (S3, model endpoints, tool
servers) come from the environment as for switchback's own worker (docs/operating.md); job
configs from ./configs, laid over the ones switchback ships.
"""

from __future__ import annotations

import asyncio
import os

from temporalio.client import Client
from temporalio.converter import DataConverter
from temporalio.worker import Worker

from activities import greeting
from codec import AppCodec
from switchback.plugin import SwitchbackPlugin
from workflows import Greet, GreetingCard


async def connect() -> Client:
    return await Client.connect(os.environ.get("TEMPORAL_ADDRESS", "127.0.0.1:7233"),
                                namespace=os.environ.get("TEMPORAL_NAMESPACE", "default"),
                                data_converter=DataConverter(payload_codec=AppCodec()),
                                plugins=[SwitchbackPlugin()])


async def main() -> None:
    client = await connect()
    worker = Worker(client, task_queue=os.environ.get("APP_TASK_QUEUE", "my-app"),
                    workflows=[Greet, GreetingCard], activities=[greeting])
    print("app worker started", flush=True)
    await worker.run()


if __name__ == "__main__":
    asyncio.run(main())
