"""Tool sets by phase (`ToolSets.for_phase`) and the phase bounds validator."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from switchback.workflows.contract.config import PhaseSettings, ToolSets

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
    tools = ToolSets(workspace=["b", "todo_rewind", "b"], domain=["c", "d", "b"])
    assert tools.for_phase("tactical") == ["b", "todo_rewind", "todo_complete", "c", "d"]
    assert ToolSets(workspace=["job_complete"]).for_phase("strategic") == [
        "job_complete", "todo_complete", "todo_write"]


def test_a_tactical_phase_may_have_fewer_workspace_tools() -> None:
    """phase_settings.tactical_workspace: the tactical phases' share of the workspace tools
    (BFCL's runner: none, so the only file system there is the API's); the strategic set
    keeps all."""
    from switchback.workflows.contract.config import JobConfig
    tools = ToolSets(domain=["ls", "cd"])
    assert tools.for_phase("tactical", []) == ["todo_complete", "todo_rewind", "ls", "cd"]
    assert tools.for_phase("strategic", []) == [*WORKSPACE, "todo_complete", "todo_write",
                                                "job_complete"]
    assert ToolSets().for_phase("tactical", ["read_file"]) == [
        "read_file", "todo_complete", "todo_rewind"]
    with pytest.raises(ValidationError, match="phase_settings.tactical_workspace: delete_file "
                                              "not among tools.workspace"):
        JobConfig.model_validate({"phase_settings": {"tactical_workspace": ["delete_file"]}})


def test_a_tactical_share_named_by_glob_follows_the_resolved_names() -> None:
    """tool_listing.apply: phase_settings.tactical_workspace is resolved like tools.workspace
    (a glob or an MCP server's tools), so the tactical set keeps them and the resolved config
    still validates when decoded again (continue-as-new)."""
    from switchback.activities.config_files import load_config
    from switchback.workflows.contract import ResolvedConfig
    from switchback.workflows.contract.requests import ToolListing
    from switchback.workflows.tool_listing import apply
    cfg = load_config({"extends": "defaults", "tools": {"workspace": ["read_file", "fs.*"]},
                       "phase_settings": {"tactical_workspace": ["fs.*"]}}, policy=False)
    done = apply(cfg, ToolListing(record="r", names={"read_file": ["read_file"],
                                                      "fs.*": ["fs_read", "fs_list"]}))
    c = done.config
    assert c.tools.for_phase("tactical", c.phase_settings.tactical_workspace)[:2] == [
        "fs_read", "fs_list"]
    assert ResolvedConfig.model_validate(done.model_dump()).config == c


def test_the_control_tool_sets_are_no_settings() -> None:
    """tools.strategic and tools.tactical are fixed: a config that sets one is refused with
    what they are."""
    from pydantic import ValidationError

    from switchback.workflows.contract.config import JobConfig, retired
    assert retired({"tools": {"strategic": ["x"]}}) == [
        "tools.strategic: no longer a setting (a strategic phase's control tools are "
        "todo_complete, todo_write and job_complete)"]
    with pytest.raises(ValidationError, match="tools.tactical: no longer a setting"):
        JobConfig.model_validate({"tools": {"tactical": ["todo_complete"]}})
    assert JobConfig.model_validate({"tools": {"domain": ["d"]}}).tools.for_phase(
        "tactical") == [*WORKSPACE, "todo_complete", "todo_rewind", "d"]


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
