"""`extends`, prompt paths and a config's `documents:` are names and paths inside configs/:
'..', absolute paths and symlinks that lead out are refused, naming the field."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest
from temporalio.client import WorkflowFailureError

from switchback.activities.config_files import ConfigError, load_config
from switchback.activities.config_roots import PACKAGED as DEFAULT_DIR
from tests.conftest import running_worker


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = Path(shutil.copytree(DEFAULT_DIR, tmp_path / "configs"))
    (tmp_path / "secret.md").write_text("outside configs/")
    (root / "prompts" / "leak.md").symlink_to(tmp_path / "secret.md")
    (root / "creator" / "documents" / "leak.txt").symlink_to(tmp_path / "secret.md")
    (root / "evil").symlink_to(tmp_path)  # a config folder that is a link out
    (tmp_path / "config.yaml").write_text("extends: defaults\n")
    return root


def error(ref, root: Path) -> str:
    with pytest.raises(ConfigError) as info:
        load_config(ref, root)
    return str(info.value)


@pytest.mark.parametrize(("ref", "expected"), [
    ({"prompts": {"strategic": "../../etc/passwd"}},
     "prompts.strategic: '../../etc/passwd' must be a relative path inside"),
    ({"prompts": {"tactical": "/etc/passwd"}},
     "prompts.tactical: '/etc/passwd' must be a relative path inside"),
    ({"prompts": {"kickoff": "prompts/../../secret.md"}},
     "prompts.kickoff: 'prompts/../../secret.md' must be a relative path inside"),
    ({"prompts": {"nudge": "prompts/leak.md"}},
     "prompts.nudge: 'prompts/leak.md' leads outside"),
    ({"prompts": {"strategic_todos": "~/.ssh/id_rsa"}},
     "prompts.strategic_todos: '~/.ssh/id_rsa' must be a relative path inside"),
    ({"extends": "creator", "documents": ["../../../etc/passwd"]},
     "documents: '../../../etc/passwd' must be a relative path inside"),
    ({"extends": "creator", "documents": ["/proc/self/environ"]},
     "documents: '/proc/self/environ' must be a relative path inside"),
    ({"extends": "creator", "documents": ["documents/leak.txt"]},
     "documents: 'documents/leak.txt' leads outside"),
    ({"extends": "../secret"}, "extends: config name '../secret' is not a plain name"),
    ({"extends": "/etc/passwd"}, "extends: config name '/etc/passwd' is not a plain name"),
    ({"extends": ".."}, "extends: config name '..' is not a plain name"),
    ({"extends": "evil"}, "extends: config 'evil': 'evil/config.yaml' leads outside"),
    ({"extends": 5}, "extends: must be a config name, got 5"),
])
def test_paths_stay_inside_configs(root: Path, ref: dict, expected: str) -> None:
    assert expected in error(ref, root)


def test_named_configs_are_checked_too(root: Path) -> None:
    (root / "leaky").mkdir()
    (root / "leaky" / "config.yaml").write_text(
        "extends: defaults\nprompts:\n  strategic: ../secret.md\n")
    assert "config 'leaky' (configs/leaky/config.yaml <- configs/defaults.yaml): " \
           "prompts.strategic: '../secret.md' must be a relative path inside" in error(
               "leaky", root)
    assert "is not a plain name" in error("../configs/creator", root)


async def test_a_traversing_inline_config_fails_the_job_at_once(client, task_queue, start_job,
                                                                 s3):
    async with running_worker(client, task_queue):
        handle = await start_job(None, instructions="x", documents=[], config={
            "extends": "creator", "prompts": {"strategic": "../../../../etc/passwd"}})
        with pytest.raises(WorkflowFailureError) as info:
            await asyncio.wait_for(handle.result(), 60)
    assert "prompts.strategic: '../../../../etc/passwd' must be a relative path inside " \
           "configs (no '..', not absolute)" in str(info.value.cause)
    assert await s3.list("switchback", f"{handle.id}/") == []
