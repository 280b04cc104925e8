"""The operator's configs folder laid over the packaged one (activities/config_roots.py):
SWITCHBACK_CONFIG_DIR, else ./configs, first match wins - a job config's folder whole, and
defaults, prompts and endpoints file by file; the CLI's check reads the same."""

from __future__ import annotations

from pathlib import Path

import pytest

from switchback.activities.config_files import ConfigError, load_config
from switchback.activities.config_roots import PACKAGED, config_path, config_roots, configs_dir
from switchback.activities.model.endpoints import endpoints_path
from switchback.operate import CliError
from switchback.operate.commands import check_config


@pytest.fixture
def operator(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An operator's folder with one job of its own, its own `notes` and one prompt."""
    monkeypatch.delenv("SWITCHBACK_CONFIG_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    own = tmp_path / "configs"
    (own / "card").mkdir(parents=True)
    (own / "card" / "config.yaml").write_text("extends: defaults\nstrategy: react\n"
                                              "deliverables: [card.md]\n")
    (own / "card" / "instructions.md").write_text("Write card.md.\n")
    (own / "notes").mkdir()
    (own / "notes" / "config.yaml").write_text("extends: defaults\nstrategy: react\n")
    (own / "prompts").mkdir()
    (own / "prompts" / "react.md").write_text("Operator's own react prompt.\n")
    return own


def test_a_folder_here_is_laid_over_the_packaged_configs(operator: Path) -> None:
    assert configs_dir() == operator and config_roots() == [operator, PACKAGED]
    card = load_config("card", policy=False)
    assert card.instructions == "Write card.md.\n" and card.config.deliverables == ["card.md"]
    assert card.prompts["react"] == "Operator's own react prompt.\n"  # the operator's file
    assert card.prompts["react_kickoff"] == (PACKAGED / "prompts" / "react_kickoff.md").read_text()
    notes = load_config("notes", policy=False)  # the operator's `notes`, whole
    assert notes.instructions is None and notes.config.deliverables == []
    assert load_config("creator", policy=False).folder == "creator"  # only in the package
    assert config_path("creator/requirement.schema.json") == PACKAGED / \
        "creator/requirement.schema.json"


def test_the_environment_names_the_folder(operator: Path, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    other = tmp_path / "elsewhere"
    other.mkdir()
    (other / "endpoints.yaml").write_text("endpoints:\n  default:\n    models: ['x']\n")
    monkeypatch.setenv("SWITCHBACK_CONFIG_DIR", str(other))
    assert config_roots() == [other, PACKAGED]
    assert endpoints_path() == (other / "endpoints.yaml", False)
    with pytest.raises(ConfigError, match="config 'card' not found"):
        load_config("card", policy=False)  # ./configs is not read when the variable is set


def test_without_a_folder_the_packaged_configs_alone(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SWITCHBACK_CONFIG_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    assert configs_dir() == PACKAGED and config_roots() == [PACKAGED]
    assert endpoints_path() == (PACKAGED / "endpoints.yaml", False)
    assert load_config("notes", policy=False).config.deliverables  # the packaged notes
    assert check_config("a-remote-workers-job") is None  # the worker's to say
    with pytest.raises(CliError, match="strategy"):
        check_config({"extends": "defaults", "strategy": "nope"})


def test_the_cli_refuses_a_name_its_own_folder_lacks(operator: Path) -> None:
    assert check_config("card") is not None
    with pytest.raises(CliError, match="config 'crad' not found.*known: .*card"):
        check_config("crad")
