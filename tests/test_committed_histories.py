"""The committed histories of representative jobs replay against the current code.

A change to workflow code that running jobs would see must keep these green by
guarding it with `workflow.patched`; see README "Changing workflow code".
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from temporalio.client import WorkflowHistory
from temporalio.contrib.pydantic import pydantic_data_converter

from operate.replay import replay

FILES = sorted((Path(__file__).parent / "histories").glob("*.json"))


def test_there_are_histories_of_each_kind():
    names = {f.stem.split("-run")[0] for f in FILES}
    assert {"plain", "rewind", "approval", "continue-as-new", "failure"} <= names


@pytest.mark.parametrize("path", FILES, ids=[f.stem for f in FILES])
async def test_history_replays(path: Path):
    history = WorkflowHistory.from_json(path.stem, json.loads(path.read_text()))
    [report] = await replay([history], pydantic_data_converter)
    assert report.ok, report.detail
