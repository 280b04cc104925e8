"""An adopter's view of switchback: the wheel, installed (not editable) in a clean venv beside
the OpenAI Agents and pydantic-ai Temporal integrations, embedded by a project of the usual
Temporal layout (examples/adopter: its own activities.py, workflows.py, worker.py, codec and
configs folder) with one plugin line.

- the wheel puts nothing at the top level of site-packages but `switchback`: in that venv,
  `import activities` and `import workflows` fail, and the project's own modules of those
  names are the ones imported;
- the three libraries resolve together and import side by side;
- the project's workflow starts an AgentJob as a child on the scripted model; the job uses
  the project's ./configs (laid over the packaged defaults), its payloads in history are
  sealed by the project's codec, and both histories replay through the plugin.

The venv comes from the package index under requirements/dev.lock's pins (pip's cache makes
a second run quick).
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import shutil
import signal
import subprocess
import sys
import uuid
import zipfile
from pathlib import Path

import pytest
from temporalio.client import Client, WorkflowHistory
from temporalio.converter import DataConverter

from switchback.workflows.contract import JobInput, JobResult
from tests.scripts import call, step
from tests.test_durability import wait_started

ROOT = Path(__file__).resolve().parent.parent
PROJECT = ROOT / "examples" / "adopter"
PEERS = ["temporalio-openai-agents", "pydantic-ai-slim[openai,temporal]"]
KEY = "5a" * 32  # the project's codec key (APP_CODEC_KEY)


def run(*argv: str | Path, cwd: Path, timeout: float = 900,
        env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(a) for a in argv], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env=env)


def clean_env(**extra: str) -> dict[str, str]:
    """The environment without anything that would put the checkout on the path or name
    switchback's own configs folder."""
    drop = {"PYTHONPATH", "SWITCHBACK_CONFIG_DIR", "VIRTUAL_ENV", "PYTHONHOME"}
    return {**{k: v for k, v in os.environ.items() if k not in drop}, **extra}


@pytest.fixture(scope="module")
def adopter(tmp_path_factory) -> tuple[Path, Path, Path]:
    """(the clean venv's python, the project's copy, the wheel)."""
    tmp = tmp_path_factory.mktemp("adopter")
    built = run(sys.executable, "-m", "pip", "wheel", "--no-deps",
                "--quiet", "-w", tmp / "dist", ROOT, cwd=tmp)
    assert built.returncode == 0, built.stderr[-3000:]
    (wheel,) = (tmp / "dist").glob("switchback_agents-*.whl")
    made = run(sys.executable, "-m", "venv", tmp / "venv", cwd=tmp)
    assert made.returncode == 0, made.stderr
    python = tmp / "venv" / "bin" / "python"
    installed = run(python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                    "-c", ROOT / "requirements" / "dev.lock", wheel, *PEERS, cwd=tmp,
                    env=clean_env())
    assert installed.returncode == 0, installed.stderr[-3000:]
    project = Path(shutil.copytree(PROJECT, tmp / "project"))
    return python, project, wheel


def test_the_wheel_installs_one_package_beside_the_peers(adopter) -> None:
    python, project, wheel = adopter
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert tops == {"switchback"}, tops
    assert "switchback/configs/defaults.yaml" in names  # the packaged configs
    assert "switchback/configs/prompts/react.md" in names
    checked = run(python, "-m", "pip", "check", cwd=project, env=clean_env())
    assert checked.returncode == 0, checked.stdout + checked.stderr
    elsewhere = project.parent  # no activities.py here: nothing of that name to import
    for name in ("activities", "workflows", "operate", "codec", "worker", "starter"):
        out = run(python, "-c", f"import {name}", cwd=elsewhere, env=clean_env())
        assert out.returncode == 1 and "ModuleNotFoundError" in out.stderr, (name, out.stderr)
    both = run(python, "-c", "import activities, workflows; import switchback.plugin; "
               "import temporalio.contrib.openai_agents, pydantic_ai.durable_exec.temporal; "
               "print(activities.__file__, workflows.__file__)", cwd=project, env=clean_env())
    assert both.returncode == 0, both.stderr[-3000:]
    assert both.stdout.split() == [str(project / "activities.py"), str(project / "workflows.py")]
    version = run(python.parent / "switchback", "--version", cwd=elsewhere, env=clean_env())
    assert version.returncode == 0 and version.stdout.startswith("switchback "), version


def project_converter(project: Path) -> DataConverter:
    spec = importlib.util.spec_from_file_location("adopter_codec", project / "codec.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return DataConverter(payload_codec=module.AppCodec(bytes.fromhex(KEY)))


PAYLOADS = {"workflow_execution_started_event_attributes": "input",
            "activity_task_scheduled_event_attributes": "input",
            "activity_task_completed_event_attributes": "result",
            "workflow_execution_completed_event_attributes": "result"}


def encodings(history: WorkflowHistory) -> set[bytes]:
    found = set()
    for e in history.events:
        kind = e.WhichOneof("attributes")
        if kind in PAYLOADS:
            payloads = getattr(getattr(e, kind), PAYLOADS[kind]).payloads
            found |= {p.metadata["encoding"] for p in payloads}
    return found


async def test_a_project_of_the_usual_layout_runs_an_agent_job_as_its_child(
        adopter, client: Client, s3, model_server, tmp_path) -> None:
    python, project, _ = adopter
    queue, log = f"adopter-{uuid.uuid4().hex[:8]}", tmp_path / "worker.log"
    env = clean_env(PYTHONUNBUFFERED="1", APP_CODEC_KEY=KEY, APP_TASK_QUEUE=queue,
                    TEMPORAL_ADDRESS=client.service_client.config.target_host,
                    TEMPORAL_NAMESPACE=client.namespace)
    proc = subprocess.Popen([str(python), "worker.py"], cwd=project, stdout=log.open("w"),
                            stderr=subprocess.STDOUT, start_new_session=True, env=env)
    card_id = f"card-{uuid.uuid4().hex[:8]}"
    job_id = f"{card_id}-card"
    model_server.set_script(job_id, [
        step(call("write_file", path="card.md", content="# Hello, Ada!\nHave a kind day.\n")),
        step(call("job_complete", summary="wrote card.md", deliverables=["card.md"],
                  confidence=0.9, notes=""))])
    app = await Client.connect(client.service_client.config.target_host,
                               namespace=client.namespace,
                               data_converter=project_converter(project))
    try:
        await wait_started(log)  # "app worker started"
        status = await asyncio.wait_for(app.execute_workflow(
            "GreetingCard", "Ada", id=card_id, task_queue=queue, result_type=str), 180)
        replays = [run(python, "replay.py", wf, cwd=project, env=env, timeout=300)
                   for wf in (card_id, job_id)]
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        await asyncio.to_thread(proc.wait, 20)
    text = log.read_text()
    assert status == "completed", text[-3000:]
    assert await s3.get("switchback", f"{job_id}/card.md") == b"# Hello, Ada!\nHave a kind day.\n"
    # the project's configs folder: `greeting-card` is there only, and its deliverable is
    # what the job was held to (over the packaged defaults it extends)
    job = await app.get_workflow_handle(job_id, result_type=dict).result()
    assert job["status"] == "completed" and job["verified"] == ["card.md"], job
    assert await s3.get("switchback", f"{job_id}/instructions.md") == b"The card says: Hello, Ada!"
    # every payload of both workflows, the AgentJob's included, sealed by the project's codec
    for wf in (card_id, job_id):
        history = await app.get_workflow_handle(wf).fetch_history()
        assert encodings(history) == {b"binary/app-encrypted"}, (wf, encodings(history))
    for out in replays:
        assert out.returncode == 0, out.stdout + out.stderr[-3000:]
        assert "replays" in out.stdout
    assert "Traceback" not in text, text[-3000:]


async def test_the_switchback_worker_of_a_plain_install_runs_a_job(
        adopter, client: Client, s3, model_server, tmp_path) -> None:
    """`switchback worker` from the wheel, in a folder with no configs of its own: the job's
    config extends the packaged defaults and its prompts come from the package."""
    python, _, _ = adopter
    queue, log = f"plain-{uuid.uuid4().hex[:8]}", tmp_path / "worker.log"
    env = clean_env(PYTHONUNBUFFERED="1", SWITCHBACK_TASK_QUEUE=queue,
                    TEMPORAL_ADDRESS=client.service_client.config.target_host,
                    TEMPORAL_NAMESPACE=client.namespace)
    proc = subprocess.Popen([str(python.parent / "switchback"), "worker"], cwd=tmp_path,
                            stdout=log.open("w"), stderr=subprocess.STDOUT,
                            start_new_session=True, env=env)
    job_id = f"plain-{uuid.uuid4().hex[:8]}"
    model_server.set_script(job_id, [
        step(call("write_file", path="hello.md", content="# Hello\n")),
        step(call("job_complete", summary="wrote hello.md", deliverables=["hello.md"],
                  confidence=0.9, notes=""))])
    try:
        await wait_started(log)
        result = await asyncio.wait_for(client.execute_workflow(
            "AgentJob", JobInput(config={"strategy": "react", "deliverables": ["hello.md"]},
                                 instructions="write hello.md"),
            id=job_id, task_queue=queue, result_type=JobResult), 120)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        await asyncio.to_thread(proc.wait, 20)
    assert result.status == "completed" and result.verified == ["hello.md"], log.read_text()
    assert "Traceback" not in log.read_text()
