"""Apps on the engine (switchback/apps.py): the document app arrives through its entry
points - workflows and activities on a workflow worker, its coordinator rule, its CLI
command - and a broken app is named without stopping the others."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import EntryPoint
from pathlib import Path

from switchback.activities import app_loader as apps
from switchback.activities.storage.s3 import S3Store
from switchback.apps import APPS_GROUP
from switchback.worker_parts import WorkerParts

ROOT = Path(__file__).resolve().parent.parent


def test_the_document_app_is_loaded_through_its_entry_point():
    assert apps.load_errors() == ()
    (app,) = [a for a in apps.installed_apps() if a.name == "documents"]
    assert [w.__name__ for w in app.workflows] == ["DocumentPipeline"]
    assert apps.coordinator_types() == frozenset({"DocumentPipeline"})


def test_workflow_workers_register_the_apps_parts_and_others_do_not():
    parts = WorkerParts(S3Store(), encrypted=False)
    (workflows, acts), = parts.plan("q", role="workflows").values()
    assert {w.__name__ for w in workflows} == {"AgentJob", "DocumentPipeline"}
    names = {getattr(a, "__name__", "") for a in acts}
    assert {"read_requirements", "read_decision"} <= names
    for role in ("model", "tools"):
        for workflows, acts in parts.plan("q", role=role).values():
            assert not workflows
            assert "read_requirements" not in {getattr(a, "__name__", "") for a in acts}


def test_a_broken_app_is_named_and_the_others_load(monkeypatch):
    good = EntryPoint("documents", "switchback_documents.app:app", APPS_GROUP)
    missing = EntryPoint("gone", "no_such_module_xyz:app", APPS_GROUP)
    not_app = EntryPoint("odd", "switchback_documents.app:_activities", APPS_GROUP)
    monkeypatch.setattr(apps, "entry_points", lambda group: [missing, good, not_app])
    apps._load.cache_clear()
    try:
        found, errors = apps._load()
    finally:
        apps._load.cache_clear()
    assert [a.name for a in found] == ["documents"]
    assert any("'gone = no_such_module_xyz:app' does not load" in e for e in errors)
    assert any("'odd = switchback_documents.app:_activities' names a function" in e
               for e in errors)


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "starter.py", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)


def test_an_apps_command_is_part_of_the_cli():
    out = cli("--help")
    assert out.returncode == 0 and "pipeline" in out.stdout
    out = cli("pipeline", "--help")
    assert out.returncode == 0 and "--max-concurrent" in out.stdout
    out = cli("pipeline", "--max-concurrent", "many")
    assert out.returncode == 2 and "invalid int value: 'many'" in out.stderr
    assert "Traceback" not in out.stderr
