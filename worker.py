"""switchback worker: connect to Temporal, register AgentJob and its activities, run.

Environment (all optional; defaults suit the embedded stack):
  TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_PROFILE, ...
      Temporal's standard client configuration (env vars and profiles)
  SWITCHBACK_TASK_QUEUE      task queue to poll (default: switchback)
  SWITCHBACK_CONFIG_DIR      configs directory (default: ./configs of this checkout)
  SWITCHBACK_MAX_CACHED_WORKFLOWS   sticky cache size (0 forces replay of every task)
  AWS_ENDPOINT_URL_S3, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION
      the S3-compatible workspace store
  SWITCHBACK_PAYLOAD_BUCKET, SWITCHBACK_PAYLOAD_THRESHOLD
      where payloads above the threshold go instead of history (0: off)
  OPENAI_BASE_URL, OPENAI_API_KEY     the OpenAI-compatible model endpoint
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal

from temporalio.api.enums.v1 import IndexedValueType
from temporalio.api.operatorservice.v1 import (
    AddSearchAttributesRequest,
    ListSearchAttributesRequest,
)
from temporalio.client import Client
from temporalio.envconfig import ClientConfig
from temporalio.worker import Worker

from activities.conversation_store import ConversationStore
from activities.llm import ModelActivities
from activities.payload_storage import data_converter, payload_settings
from activities.s3_store import S3Store
from activities.tools import ToolActivities
from activities.workspace import WorkspaceActivities
from workflows.agent_job import AgentJob
from workflows.types import TASK_QUEUE


async def connect(s3: S3Store | None = None) -> Client:
    """A client from Temporal's standard env/profile configuration; with `s3`, payloads
    above the threshold go to S3 (activities/payload_storage.py)."""
    cfg = ClientConfig.load_client_connect_config()
    cfg.setdefault("target_host", "127.0.0.1:7233")
    return await Client.connect(**cfg, data_converter=data_converter(s3))


SEARCH_ATTRIBUTES = {
    "SwitchbackPhase": IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
    "SwitchbackPhaseNumber": IndexedValueType.INDEXED_VALUE_TYPE_INT,
    "SwitchbackTokens": IndexedValueType.INDEXED_VALUE_TYPE_INT,
    "SwitchbackStatus": IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
}


async def ensure_search_attributes(client: Client) -> None:
    """Register switchback's search attributes where this client may (dev server, self-hosted).

    Where it may not (Temporal Cloud: register them in the namespace settings, or set
    `search_attributes: false` in the job config), it says so and goes on.
    """
    log = logging.getLogger("switchback.worker")
    try:
        have = await client.operator_service.list_search_attributes(
            ListSearchAttributesRequest(namespace=client.namespace))
        missing = {k: v for k, v in SEARCH_ATTRIBUTES.items()
                   if k not in have.custom_attributes}
        if missing:
            await client.operator_service.add_search_attributes(AddSearchAttributesRequest(
                namespace=client.namespace, search_attributes=missing))
            log.info("registered search attributes %s", ", ".join(missing))
    except Exception as e:  # noqa: BLE001 - permissions differ per deployment
        log.warning("could not check/register search attributes (%s); register %s on the "
                    "namespace or set search_attributes: false in job configs",
                    " ".join(str(e).split())[:200], ", ".join(SEARCH_ATTRIBUTES))


def build_worker(client: Client, task_queue: str, s3: S3Store, **options) -> tuple[Worker, list]:
    store = ConversationStore(s3)
    model = ModelActivities(store)
    activities = [*WorkspaceActivities(s3).all(), model.call_model, model.summarize_conversation,
                  ToolActivities(s3, store).run_tool]
    worker = Worker(client, task_queue=task_queue, workflows=[AgentJob], activities=activities,
                    **options)
    return worker, [model]


async def main() -> None:
    logging.basicConfig(level=os.environ.get("SWITCHBACK_LOG_LEVEL", "INFO"),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    s3 = S3Store()
    await s3.ensure_bucket(payload_settings()[0])
    client = await connect(s3)
    await ensure_search_attributes(client)
    task_queue = os.environ.get("SWITCHBACK_TASK_QUEUE", TASK_QUEUE)
    options = {}
    if os.environ.get("SWITCHBACK_MAX_CACHED_WORKFLOWS"):
        options["max_cached_workflows"] = int(os.environ["SWITCHBACK_MAX_CACHED_WORKFLOWS"])
    worker, closers = build_worker(client, task_queue, s3, **options)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    async with worker:
        print(f"switchback worker started: task queue '{task_queue}' on "
              f"{client.service_client.config.target_host}", flush=True)
        await stop.wait()
    for c in closers:
        await c.close()
    s3.close()


if __name__ == "__main__":
    asyncio.run(main())
