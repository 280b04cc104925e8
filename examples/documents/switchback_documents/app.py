"""The document app's part of a workflow worker (entry point group `switchback.apps`)."""

from __future__ import annotations

from typing import Any

from switchback.apps import App
from switchback_documents.graph_store import close_graph_store
from switchback_documents.pipeline import DocumentPipeline
from switchback_documents.pipeline_activities import PipelineActivities
from switchback_documents.pipeline_contract import PIPELINE_TYPE


def _activities(s3: Any) -> list[Any]:
    pipeline = PipelineActivities(s3)
    return [pipeline.read_requirements, pipeline.read_decision]


app = App(name="documents", workflows=[DocumentPipeline], activities=_activities,
          coordinators=[PIPELINE_TYPE], close=close_graph_store)
