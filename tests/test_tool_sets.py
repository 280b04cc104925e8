"""Tool sets by phase (`ToolSets.for_phase`) and the phase bounds validator."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from workflows.contract.config import PhaseSettings, ToolSets

WORKSPACE = ["read_file", "write_file", "list_files", "search_files"]


def test_default_strategic_set() -> None:
    assert ToolSets().for_phase("strategic") == [
        *WORKSPACE, "todo_complete", "todo_write", "job_complete"]


def test_default_tactical_set_includes_domain_tools() -> None:
    tools = ToolSets(domain=["extract_document_text", "chunk_document"])
    assert tools.for_phase("tactical") == [
        *WORKSPACE, "todo_complete", "todo_rewind", "extract_document_text", "chunk_document"]
    assert "extract_document_text" not in tools.for_phase("strategic")
    assert "todo_write" not in tools.for_phase("tactical")
    assert "job_complete" not in tools.for_phase("tactical")


def test_duplicates_are_dropped_and_first_order_kept() -> None:
    tools = ToolSets(workspace=["b", "a", "b"], tactical=["a", "c"], domain=["c", "d", "b"])
    assert tools.for_phase("tactical") == ["b", "a", "c", "d"]
    assert ToolSets(workspace=["x"], strategic=["x", "y"]).for_phase("strategic") == ["x", "y"]


def test_for_phase_returns_a_fresh_list() -> None:
    tools = ToolSets()
    tools.for_phase("strategic").append("delete_file")
    assert "delete_file" not in tools.for_phase("strategic")


def test_phase_bounds() -> None:
    assert PhaseSettings(min_todos=3, max_todos=3).max_todos == 3
    with pytest.raises(ValidationError, match=r"min_todos \(6\) > max_todos \(5\)"):
        PhaseSettings(min_todos=6, max_todos=5)
    with pytest.raises(ValidationError, match="min_todos"):
        PhaseSettings(min_todos=0)
    with pytest.raises(ValidationError, match="Extra inputs"):
        PhaseSettings.model_validate({"max_todo": 3})  # the constructor's validation
