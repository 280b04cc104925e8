"""`load_config`: named and inline configs, `extends` chains, deep merge, readable errors."""

from __future__ import annotations

import re
import shutil
from datetime import timedelta
from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError
from temporalio.common import RetryPolicy

from switchback.activities.config_files import ConfigError, load_config
from switchback.activities.config_roots import PACKAGED as DEFAULT_DIR
from switchback.workflows.contract.config import (
    RENAMED,
    RETIRED,
    JobConfig,
    LlmSettings,
    RetrySettings,
)
from switchback.workflows.retry_policies import retry_policy


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


@pytest.mark.parametrize(("section", "key"), sorted(RENAMED))
def test_a_renamed_setting_is_refused_naming_its_new_name(root: Path, section: str,
                                                          key: str) -> None:
    """A config, file or inline, that gives a setting by its earlier name is refused with
    the name it has now (nothing is moved into place silently)."""
    write(root, "old", {"extends": "defaults", section: {key: 1}})
    with pytest.raises(ConfigError, match=re.escape(
            f"{section}.{key}: renamed, now {RENAMED[section, key]}")) as info:
        load_config("old", root)
    assert str(info.value).startswith("configs/old/config.yaml: ")  # the file that gives it
    with pytest.raises(ConfigError, match=re.escape(f"{section}.{key}: renamed, now")):
        load_config({section: {key: 1}}, root)


@pytest.mark.parametrize(("section", "key"), sorted(RETIRED))
def test_each_retired_setting_is_refused_with_what_it_became(
        root: Path, section: str, key: str) -> None:
    setting = {section: {key: 1}} if section else {key: 1}  # "": a top-level setting
    write(root, "old", {"extends": "defaults", **setting})
    with pytest.raises(ConfigError, match=re.escape(
            f"{section}.{key}: no longer a setting ({RETIRED[section, key]})".lstrip("."))
    ) as info:
        load_config("old", root)
    assert str(info.value).startswith("configs/old/config.yaml: ")  # the file that sets it
    with pytest.raises(ValidationError):
        JobConfig.model_validate(setting)


def test_the_small_section_is_gone(root: Path) -> None:
    with pytest.raises(ConfigError, match=r"small: Extra inputs are not permitted"):
        load_config({"small": {"expect_lines": {"a.md": ["x"]}}}, root)
    with pytest.raises(ConfigError, match=r"retries: Extra inputs are not permitted"):
        load_config({"retries": {"tool_atempts": 5}}, root)


def test_carried_state_keeps_each_kinds_retry_defaults() -> None:
    """A config validated directly (no loader, no defaults.yaml under it): the settings it
    does not name keep their kind's defaults (the workspace's longest wait 20 s, the tools'
    2 s x 3)."""
    c = JobConfig.model_validate({"llm": {"retry": {"maximum_attempts": 4}},
                                  "tools": {"retry": {"maximum_attempts": 5}}})
    assert c.llm.retry == RetrySettings(maximum_interval_seconds=60, maximum_attempts=4)
    assert c.llm.retry.longest_wait() == 60
    assert (c.tools.retry.initial_interval_seconds, c.tools.retry.backoff_coefficient) == (2, 3)
    assert c.workspace.retry.maximum_interval_seconds == 20
    assert LlmSettings.model_validate({"retry": {"maximum_attempts": 3}}).retry.longest_wait() \
        == 60


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


def test_a_reruns_source_is_the_resolved_configs_not_the_jobs():
    """`starter.py rerun` sets the source on the job it lays out; a config that names one
    itself is refused (job input never reaches another job's recorded answers)."""
    from switchback.workflows.contract.config import ResolvedConfig
    cfg = load_config({"extends": "defaults"}, policy=False)
    assert ResolvedConfig.model_validate({**cfg.model_dump(), "replay_from": "job-1"}
                                         ).replay_from == "job-1"
    old = cfg.model_dump()
    old["config"]["llm"] |= {"replay_from": "job-1"}
    with pytest.raises(ValidationError, match="llm.replay_from: no longer a setting"):
        ResolvedConfig.model_validate(old)
