"""`load_config`: named and inline configs, `extends` chains, deep merge, readable errors."""

from __future__ import annotations

import re
import shutil
from datetime import timedelta
from pathlib import Path

import pytest
import yaml
from temporalio.common import RetryPolicy

from activities.config_files import DEFAULT_DIR, ConfigError, load_config
from workflows.contract.config import (
    RETIRED,
    ContextPolicy,
    JobConfig,
    LlmSettings,
    RetrySettings,
)
from workflows.contract.requests import SEARCH_RESULTS, ToolLimits
from workflows.retry_policies import retry_policy


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return Path(shutil.copytree(DEFAULT_DIR, tmp_path / "configs"))


def write(root: Path, name: str, data: object) -> None:
    path = root / "defaults.yaml" if name == "defaults" else root / name / "config.yaml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(data if isinstance(data, str) else yaml.safe_dump(data), encoding="utf-8")


def test_real_creator_config() -> None:
    r = load_config("creator", DEFAULT_DIR)
    assert r.name == "creator" and r.config.tools.domain[0] == "extract_document_text"
    assert r.config.extends == "defaults"
    assert r.config.tools.domain == ["extract_document_text", "chunk_document",
                                     "identify_requirement_candidates", "cite_document",
                                     "write_requirement"]
    assert r.config.tools.workspace == ["read_file", "write_file", "list_files", "search_files"]
    assert [Path(d).name for d in r.documents] == [
        "gobd_retention.md", "gdpr_erasure.txt", "records_policy.pdf"]
    assert all(Path(d).is_absolute() and Path(d).is_file() for d in r.documents)
    assert r.instructions and r.instructions.startswith("# Requirement extraction")
    # the prompts of its strategy (phase_alternation) only: the config is in history
    assert set(r.prompts) == {"strategic", "tactical", "kickoff", "nudge", "cut_off",
                              "summarization", "echo_nudge"}
    assert r.nested_todos is None
    auto = load_config({"extends": "creator", "strategy": "auto",
                        "auto": {"routes": {"A": "nested", "B": "plan_revise_execute"}}},
                       policy=False)
    # auto: its own and those of every strategy it may route to (C: react by default)
    assert set(auto.prompts) == {"classify", "stage_kickoff", "task_nudge", "nested", "subjob",
                                 "kickoff", "nudge", "plan", "evaluate", "step", "react",
                                 "react_kickoff",
                                 "cut_off", "summarization", "echo_nudge"}
    assert auto.nested_todos is not None
    assert all(r.prompts.values())
    assert r.strategic_todos.bootstrap and r.strategic_todos.transition
    assert r.strategic_todos.rewind


def test_defaults_alone(root: Path) -> None:
    r = load_config("defaults", root)
    assert r.config.phase_settings.min_todos == 1 and r.instructions is None
    assert r.documents == []


def test_inline_config_extends_defaults_implicitly(root: Path) -> None:
    ref = {"llm": {"model": "my-model"}}
    r = load_config(ref, root)
    assert r.name == "inline" and r.config.extends == "defaults"
    assert r.config.llm.model == "my-model" and r.config.llm.max_tokens == 4096
    assert r.instructions is None and r.documents == []
    assert ref == {"llm": {"model": "my-model"}}  # the caller's dict is not changed


def test_inline_config_may_extend_a_named_one(root: Path) -> None:
    r = load_config({"extends": "creator", "limits": {"max_nudges": 1}}, root)
    assert r.config.tools.domain[0] == "extract_document_text" and \
        r.config.limits.max_nudges == 1
    assert r.config.limits.max_steps_per_phase == 150
    assert r.instructions and len(r.documents) == 3


def test_chain_deep_merges_mappings_and_replaces_lists(root: Path) -> None:
    write(root, "base", {"extends": "defaults", "llm": {"model": "base-model", "temperature": 0.5},
                         "tools": {"domain": ["chunk_document", "extract_document_text"]}})
    write(root, "child", {"extends": "base", "llm": {"temperature": 0.0},
                          "tools": {"domain": ["chunk_document"]}})
    cfg = load_config("child", root).config
    assert (cfg.llm.model, cfg.llm.temperature, cfg.llm.max_tokens) == ("base-model", 0.0, 4096)
    assert cfg.tools.domain == ["chunk_document"]
    assert cfg.tools.workspace == ["read_file", "write_file", "list_files", "search_files"]


def test_unknown_field_names_field_and_files(root: Path) -> None:
    write(root, "bad", {"extends": "defaults", "limits": {"max_nudgez": 2}})
    with pytest.raises(ConfigError) as info:
        load_config("bad", root)
    msg = str(info.value)
    assert "limits.max_nudgez" in msg and "Extra inputs are not permitted" in msg
    assert "configs/bad/config.yaml <- configs/defaults.yaml" in msg


def test_bad_value_names_field(root: Path) -> None:
    with pytest.raises(ConfigError,
                       match=r"\(inline\) <- configs/defaults.yaml.*llm\.retry\.maximum_att"):
        load_config({"llm": {"retry": {"maximum_attempts": 0}}}, root)
    with pytest.raises(ConfigError, match=r"phase_settings: .*min_todos \(9\) > max_todos \(3"):
        load_config({"phase_settings": {"min_todos": 9, "max_todos": 3}}, root)


def test_retry_settings_are_temporal_retry_policies(root: Path) -> None:
    """Each activity kind's retry in Temporal's shape; the defaults are the policies the
    flat settings made before (a job's behaviour did not change with the names)."""
    c = load_config({"tools": {"retry": {"maximum_attempts": 7}}}, root).config
    assert retry_policy(c.tools.retry) == RetryPolicy(
        initial_interval=timedelta(seconds=2), backoff_coefficient=3, maximum_attempts=7)
    assert retry_policy(c.llm.retry) == RetryPolicy(
        initial_interval=timedelta(seconds=1), backoff_coefficient=2,
        maximum_interval=timedelta(seconds=60), maximum_attempts=10)
    assert retry_policy(c.workspace.retry) == RetryPolicy(
        initial_interval=timedelta(seconds=1), backoff_coefficient=2,
        maximum_interval=timedelta(seconds=20), maximum_attempts=8)
    assert (c.tools.timeout_seconds, c.workspace.timeout_seconds) == (120, 30)


def test_earlier_names_load_in_their_new_places(root: Path) -> None:
    """A config (or a job's carried state) written with the names before the baseline."""
    c = load_config({"llm": {"max_attempts": 4, "max_retry_interval_seconds": 9,
                             "profile": "small"},
                     "retries": {"tool_attempts": 5, "tool_initial_interval_seconds": 0.5,
                                 "tool_backoff": 1.5, "tool_timeout_seconds": 7,
                                 "workspace_attempts": 6, "workspace_timeout_seconds": 8},
                     "completion": {"max_refusals": 2, "expect_lines": {"a.md": ["x"]},
                                    "plan_after_refusals": 0, "plans_name_deliverables": True},
                     "breakers": {"max_idle_phases": 4, "max_rewinds": 6},
                     "rewind": {"model_may_restore": True}},
                    root).config
    assert (c.llm.retry.maximum_attempts, c.llm.retry.maximum_interval_seconds) == (4, 9)
    assert c.tools.retry == RetrySettings(initial_interval_seconds=0.5, backoff_coefficient=1.5,
                                          maximum_attempts=5)
    assert c.tools.timeout_seconds == 7 and c.workspace.timeout_seconds == 8
    assert (c.workspace.retry.maximum_attempts, c.workspace.retry.maximum_interval_seconds) == (
        6, 20)
    assert c.small.expect_lines == {"a.md": ["x"]} and c.small.plan_after_refusals == 0
    assert c.small.plans_name_deliverables and c.completion.max_refusals == 2
    ps = c.phase_settings  # phase_alternation's own settings, under its own key
    assert (ps.max_idle_phases, ps.max_rewinds, ps.model_may_restore) == (4, 6, True)
    assert "retries" not in c.model_dump() and "rewind" not in c.model_dump()
    assert JobConfig.model_validate(c.model_dump()) == c  # the new shape reads back as itself
    with pytest.raises(ConfigError, match=r"retries\.tool_atempts: not a setting; the retry "
                                          r"policies are llm.retry, tools.retry"):
        load_config({"retries": {"tool_atempts": 5}}, root)
    with pytest.raises(ConfigError, match=r"rewind\.allow: not a setting; the model's "
                                          r"restores are phase_settings.model_may_restore"):
        load_config({"rewind": {"allow": True}}, root)


def test_retired_settings_are_refused_in_configs_and_dropped_from_carried_state(
        root: Path) -> None:
    """A setting the baseline made a fixed rule: a config that sets it is told what it
    became; a job's state or a history that holds it still loads (requests in flight too)."""
    with pytest.raises(ConfigError, match=r"\(inline\): breakers.similarity_threshold: no "
                                          r"longer a setting \(texts 90 % alike"):
        load_config({"breakers": {"similarity_threshold": 0.8, "repetition_window": 4}}, root)
    write(root, "base", {"extends": "defaults", "budget": {"warn_at": [0.5]}})
    with pytest.raises(ConfigError, match=r"base.*budget.warn_at: no longer a setting"):
        load_config({"extends": "base"}, root)
    old = {"breakers": {"similarity_threshold": 0.8, "repetition_window": 4},
           "context": {"clear_min_chars": 10, "window_fraction": 0.5, "keep_tool_results": 2,
                       "keep_recent_messages": 4},
           "llm": {"max_identical_failures": 2, "max_attempts": 4,
                   "local_call_below_seconds": 0.1},
           "limits": {"max_output_chars": 5000, "todo_completes_per_turn": 0},
           "tools": {"search_results": 1, "deferred": ["x"]},
           "budget": {"wrap_up_steps": 2, "max_tokens": 10}}
    c = JobConfig.model_validate(old)
    assert (c.breakers.repetition_window, c.context.keep_tool_results) == (4, 2)
    assert (c.tools.deferred, c.budget.max_tokens) == (["x"], 10)
    assert c.llm.retry.maximum_attempts == 4 and c == JobConfig.model_validate(c.model_dump())
    assert LlmSettings.model_validate({"max_identical_failures": 2}) == LlmSettings()
    assert LlmSettings.model_validate({"local_call_below_seconds": 0.1}) == LlmSettings()
    assert ContextPolicy.model_validate({"window_fraction": 0.5}).threshold() == 76_800
    assert ContextPolicy.model_validate({"keep_recent_messages": 4}) == ContextPolicy()
    # a tool call recorded with the job's tools.search_results reads back as it was sent
    limits = {"read_max_chars": 1, "max_file_bytes": 1, "min_todos": 1, "max_todos": 1}
    assert ToolLimits.model_validate({**limits, "search_results": 1}).search_results == 1
    assert ToolLimits.model_validate(limits).search_results == SEARCH_RESULTS


@pytest.mark.parametrize(("section", "key"), sorted(RETIRED))
def test_each_retired_setting_in_a_config_file_is_refused_with_what_it_became(
        root: Path, section: str, key: str) -> None:
    setting = {section: {key: 1}} if section else {key: 1}  # "": a top-level setting
    write(root, "old", {"extends": "defaults", **setting})
    with pytest.raises(ConfigError, match=re.escape(
            f"{section}.{key}: no longer a setting ({RETIRED[section, key]})".lstrip("."))
    ) as info:
        load_config("old", root)
    assert str(info.value).startswith("configs/old/config.yaml: ")  # the file that sets it
    assert JobConfig.model_validate(setting) == JobConfig()  # carried: dropped


def test_carried_state_keeps_each_kinds_retry_defaults() -> None:
    """A config carried in a job's state before the rename (validated directly, no loader
    and no defaults.yaml under it): the settings it does not name keep their kind's
    defaults (the workspace's longest wait 20 s, the tools' 2 s x 3)."""
    old = {"llm": {"max_attempts": 4}, "retries": {"tool_attempts": 5, "workspace_attempts": 6}}
    c = JobConfig.model_validate(old)
    assert c.llm.retry == RetrySettings(maximum_interval_seconds=60, maximum_attempts=4)
    assert c.llm.retry.longest_wait() == 60
    assert (c.tools.retry.initial_interval_seconds, c.tools.retry.backoff_coefficient) == (2, 3)
    assert c.workspace.retry.maximum_interval_seconds == 20
    assert LlmSettings.model_validate({"retry": {"maximum_attempts": 3}}).retry.longest_wait() \
        == 60


def test_a_new_name_beats_a_bases_old_one_and_both_in_one_file_are_refused(root: Path) -> None:
    write(root, "base", {"extends": "defaults", "retries": {"tool_attempts": 5},
                         "llm": {"max_attempts": 4}})
    c = load_config({"extends": "base", "tools": {"retry": {"maximum_attempts": 9}},
                     "llm": {"retry": {"maximum_attempts": 2}}}, root).config
    assert (c.tools.retry.maximum_attempts, c.llm.retry.maximum_attempts) == (9, 2)
    with pytest.raises(ConfigError, match=r"\(inline\): retries.tool_attempts and "
                       r"tools.retry.maximum_attempts are the same setting"):
        load_config({"retries": {"tool_attempts": 5},
                     "tools": {"retry": {"maximum_attempts": 9}}}, root)
    with pytest.raises(ConfigError, match=r"retries: not a setting"):
        load_config({"retries": None}, root)
    with pytest.raises(ConfigError, match=r"tools: Input should be a valid dictionary"):
        load_config({"tools": "x", "retries": {"tool_attempts": 5}}, root)


def test_a_retry_policy_temporal_refuses_is_refused_when_the_config_loads(root: Path) -> None:
    with pytest.raises(ConfigError, match=r"workspace.retry: .*maximum_interval_seconds \(20"
                                          r"(\.0)?\) is shorter than initial_interval_seconds"):
        load_config({"workspace": {"retry": {"initial_interval_seconds": 30}}}, root)
    one = load_config({"workspace": {"retry": {"initial_interval_seconds": 30,
                                               "maximum_attempts": 1}}}, root).config
    retry_policy(one.workspace.retry)._validate()  # no retries: Temporal checks nothing else
    for c in (JobConfig(), one):
        for settings in (c.llm.retry, c.tools.retry, c.workspace.retry):
            retry_policy(settings)._validate()


def test_prompts_are_replaced_by_name(root: Path) -> None:
    (root / "prompts" / "mine.md").write_text("my react prompt", encoding="utf-8")
    r = load_config({"strategy": "react", "prompts": {"react": "prompts/mine.md"}}, root)
    assert r.prompts["react"] == "my react prompt"
    assert r.prompts["react_kickoff"] == (root / "prompts" / "react_kickoff.md").read_text()
    with pytest.raises(ConfigError, match=r"prompts: unknown prompt 'reactt' \(known: strategic, "):
        load_config({"prompts": {"reactt": "prompts/mine.md"}}, root)


def test_unknown_name_lists_known_configs(root: Path) -> None:
    write(root, "other", {"extends": "defaults"})
    with pytest.raises(ConfigError,
                       match=r"config 'nope' not found.*"
                             r"\(known: creator, eval-check-ref, eval-files, eval-list, eval-sum, "
                             r"eval-two-step, heldout-bottles, heldout-capital, heldout-glossary, "
                             r"heldout-invite, heldout-missing-ini, heldout-todo-turns, "
                             r"heldout-visitors, heldout-weekdays, notes, other, validator\)"):
        load_config("nope", root)


@pytest.mark.parametrize("name", ["", "../creator", "a/b", ".hidden", "a\\b"])
def test_names_must_be_plain(root: Path, name: str) -> None:
    with pytest.raises(ConfigError, match="not a plain name"):
        load_config(name, root)


@pytest.mark.parametrize(("chain", "cycle"), [({"a": "a"}, "a"),
                                              ({"a": "b", "b": "c", "c": "a"}, "a")])
def test_extends_cycle(root: Path, chain: dict[str, str], cycle: str) -> None:
    for name, parent in chain.items():
        write(root, name, {"extends": parent})
    with pytest.raises(ConfigError, match=f"config 'a': 'extends' cycle through '{cycle}'"):
        load_config("a", root)


def test_bad_yaml_names_the_file(root: Path) -> None:
    write(root, "broken", "llm: {model: [unclosed\n")
    with pytest.raises(ConfigError, match=r"configs/broken/config.yaml: not valid YAML"):
        load_config("broken", root)
    (root / "defaults.yaml").write_text("llm:\n  model: x\n bad: indent\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"configs/defaults.yaml: not valid YAML"):
        load_config("creator", root)


def test_config_file_must_be_a_mapping(root: Path) -> None:
    write(root, "listy", "- a\n- b\n")
    with pytest.raises(ConfigError, match=r"configs/listy/config.yaml: must be a mapping"):
        load_config("listy", root)


def test_missing_prompt_file(root: Path) -> None:
    (root / "prompts" / "nudge.md").unlink()
    with pytest.raises(ConfigError, match=r"config 'creator' .*prompt file 'prompts/nudge.md'"):
        load_config("creator", root)


def test_bad_strategic_todos_file(root: Path) -> None:
    (root / "prompts" / "strategic_todos.yaml").write_text("bootstrap: [a]\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"prompts/strategic_todos.yaml: .*transition"):
        load_config("creator", root)


def test_missing_default_document(root: Path) -> None:
    (root / "creator" / "documents" / "gdpr_erasure.txt").unlink()
    with pytest.raises(ConfigError, match=r"documents: 'documents/gdpr_erasure.txt' not found"):
        load_config("creator", root)


def test_missing_parent_is_reported(root: Path) -> None:
    write(root, "orphan", {"extends": "nope"})
    with pytest.raises(ConfigError,
                       match=r"config 'nope' not found.*known: creator, eval-[a-z-, ]*"
                             r"notes, orphan"):
        load_config("orphan", root)


def test_missing_parent_names_the_extending_file_and_field(root: Path) -> None:
    write(root, "orphan", {"extends": "nope"})
    with pytest.raises(ConfigError) as info:
        load_config("orphan", root)
    assert "configs/orphan/config.yaml" in str(info.value)
    assert "extends" in str(info.value)


@pytest.mark.parametrize("parent", [5, ["defaults"], {"name": "defaults"}])
def test_non_string_extends_is_a_config_error(root: Path, parent: object) -> None:
    with pytest.raises(ConfigError, match="extends"):
        load_config({"extends": parent}, root)


def test_a_reruns_carried_state_from_before_keeps_its_source():
    from workflows.contract.config import ResolvedConfig
    old = load_config({"extends": "defaults"}, policy=False).model_dump()
    old["config"]["llm"] |= {"replay_from": "job-1", "replay_on_divergence": "stop"}
    cfg = ResolvedConfig.model_validate(old)
    assert (cfg.replay_from, cfg.replay_on_divergence) == ("job-1", "stop")
    assert "replay_from" not in cfg.config.llm.model_dump()
