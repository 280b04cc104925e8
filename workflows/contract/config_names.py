"""Settings renamed or taken out of the job config: a config that gives one is refused with
what it is now (activities/config_files.py for config files, the model validators of
workflows/contract/config.py for inline configs)."""

from __future__ import annotations

from typing import Any

# Settings renamed or moved since the first release: a config that gives one is refused with
# the new name (activities/config_files.py; the model validators below for inline configs).
RENAMED: dict[tuple[str, str], str] = {
    ("llm", "max_attempts"): "llm.retry.maximum_attempts",
    ("llm", "max_retry_interval_seconds"): "llm.retry.maximum_interval_seconds",
    ("retries", "tool_attempts"): "tools.retry.maximum_attempts",
    ("retries", "tool_initial_interval_seconds"): "tools.retry.initial_interval_seconds",
    ("retries", "tool_backoff"): "tools.retry.backoff_coefficient",
    ("retries", "tool_timeout_seconds"): "tools.timeout_seconds",
    ("retries", "workspace_attempts"): "workspace.retry.maximum_attempts",
    ("retries", "workspace_timeout_seconds"): "workspace.timeout_seconds",
    ("breakers", "max_idle_phases"): "phase_settings.max_idle_phases",
    ("breakers", "max_rewinds"): "phase_settings.max_rewinds",
    ("rewind", "model_may_restore"): "phase_settings.model_may_restore",
    ("workspace", "within_parent"): "nested.within_parent",
}


# Settings taken out of the job config (at the 0.x baseline and since): fixed rules of the
# engine, and a rerun's source, which `starter.py rerun` sets on the job it lays out
# (ResolvedConfig) (docs/configs.md, "Names before 0.x"). A config file that sets one is
# refused with what it became (activities/config_files.py); job state and histories that
# hold one still load, the value dropped.
RETIRED: dict[tuple[str, str], str] = {
    ("llm", "max_identical_failures"): "the same HTTP 500 three times in a row ends the retries",
    ("phase_settings", "archive_on_transition"): "every phase is archived",
    ("limits", "workspace_md_max_chars"): "workspace.md is shown up to 12,000 characters",
    ("limits", "max_output_chars"): "a model answer is cut at 200,000 characters",
    ("limits", "todo_completes_per_turn"): "one todo_complete counts per model turn",
    ("context", "clear_min_chars"): "tool results under 300 characters are never cleared",
    ("context", "window_fraction"): "a summary comes at 60 % of context_window at the latest",
    ("budget", "warn_at"): "the model is told at 80 % and 95 % of the budget",
    ("breakers", "similarity_threshold"): "texts 90 % alike count as the same",
    ("llm", "replay_from"): "set by `starter.py rerun` only, not by job input",
    ("llm", "replay_on_divergence"): "set by `starter.py rerun --stop-at-divergence`",
    ("", "job_type"): "nothing read it; the web UI shows the task's title",
    ("", "display_name"): "nothing read it; the web UI shows the task's title",
    ("llm", "local_call_below_seconds"):
        "a model call may run locally only after one that answered in under 2 s",
    ("tools", "search_results"): "a tool_search query loads at most 3 tools",
    ("context", "keep_recent_messages"): "a summary keeps the last 6 messages",
    ("budget", "wrap_up_steps"): "the wrap-up phase may take 12 model steps",
    ("tools", "strategic"): "a strategic phase's control tools are todo_complete, todo_write "
                            "and job_complete",
    ("tools", "tactical"): "a tactical phase's control tools are todo_complete and todo_rewind",
    ("limits", "max_tool_calls_per_step"):
        "the first 16 tool calls of a model turn run; the rest are refused",
}
# the control tools of phase_alternation's phases (tools.strategic and tools.tactical before)
STRATEGIC_TOOLS = ["todo_complete", "todo_write", "job_complete"]
TACTICAL_TOOLS = ["todo_complete", "todo_rewind"]
MAX_TOOL_CALLS_PER_STEP = 16  # limits.max_tool_calls_per_step before
WINDOW_FRACTION = 0.6  # context.window_fraction before 0.x


def retired(data: Any) -> list[str]:
    """The retired settings a raw config sets, each as `section.key: what it is now` (a
    top-level setting's section is "")."""
    if not isinstance(data, dict):
        return []
    return [f"{section}.{key}: no longer a setting ({now})".lstrip(".")
            for (section, key), now in RETIRED.items() if key in _section(data, section)]


def _section(data: dict[str, Any], section: str) -> dict[str, Any]:
    """`data`'s mapping `section` ("": data itself; {} when it is none)."""
    found = data.get(section) if section else data
    return found if isinstance(found, dict) else {}


def renamed(data: Any) -> list[str]:
    """The renamed settings a raw config gives, each as `section.key: now <new name>`."""
    if not isinstance(data, dict):
        return []
    return [f"{section}.{key}: renamed, now {now}"
            for (section, key), now in RENAMED.items() if key in _section(data, section)]


def refuse_old_names(data: Any) -> Any:
    """`data` as it is, or ValueError naming each retired or renamed setting it gives."""
    old = retired(data) + renamed(data)
    if old:
        raise ValueError("; ".join(old))
    return data
