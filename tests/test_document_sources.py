"""Where a job's documents may come from: inline, the job's config folder, or a root the
operator listed (SWITCHBACK_DOCUMENT_ROOTS). Resolved paths are checked (symlinks too);
/proc, /etc, '..', s3:// and other buckets or jobs are refused before anything is written."""

from __future__ import annotations

import asyncio
import base64
import os
import shutil
import uuid

import pytest
from temporalio.client import WorkflowFailureError

from switchback.activities import document_sources
from switchback.activities.config_roots import PACKAGED as DEFAULT_DIR
from switchback.activities.document_sources import DocumentRefused, local_document
from tests.conftest import running_worker
from tests.scripts import full_job

BIG = 1 << 20


def refused(path: str, folder: str | None = "creator", max_bytes: int = BIG) -> str:
    with pytest.raises(DocumentRefused) as info:
        local_document(path, folder, max_bytes)
    return str(info.value)


def test_what_a_document_path_may_name(tmp_path, monkeypatch) -> None:
    root = tmp_path / "shared"
    root.mkdir()
    (root / "contract.md").write_text("# Contract\n")
    (root / "sub").mkdir()
    outside = tmp_path / "private.txt"
    outside.write_text("not for jobs")
    (root / "escape.txt").symlink_to(outside)
    (root / "etc").symlink_to("/etc")
    monkeypatch.setenv("SWITCHBACK_DOCUMENT_ROOTS", str(root))
    # allowed: the config folder (relative or absolute) and the operator's root
    sample = local_document("documents/gdpr_erasure.txt", "creator", BIG)
    assert sample == (DEFAULT_DIR / "creator/documents/gdpr_erasure.txt").resolve()
    assert local_document(str(sample), "creator", BIG) == sample
    assert local_document(str(root / "contract.md"), None, BIG) == root / "contract.md"
    # refused, each saying why
    where = f"the job's config folder (configs/creator) or a document root the operator " \
            f"listed (SWITCHBACK_DOCUMENT_ROOTS: {root})"
    assert refused("/proc/self/environ") == f"'/proc/self/environ' is not inside {where}"
    assert refused("/etc/passwd") == f"'/etc/passwd' is not inside {where}"
    assert refused(str(root / "escape.txt")).endswith("is not inside " + where)  # symlink
    assert refused(str(root / "etc" / "passwd")).endswith("is not inside " + where)
    assert "may not contain '..'" in refused("../../../etc/passwd")
    assert "may not contain '..'" in refused(f"{root}/../private.txt")
    assert "s3:// references are not accepted" in refused("s3://switchback/other-job/a.md")
    assert "URLs and s3://" in refused("http://example.com/a.pdf")
    assert "does not exist" in refused("documents/nope.txt")
    assert "is not a regular file" in refused(str(root / "sub"))
    assert "more than limits.max_file_bytes (5)" in refused(str(root / "contract.md"),
                                                            max_bytes=5)
    assert "this config has none" in refused("contract.md", folder=None)
    assert "/proc/self/environ" in refused("/proc/self/environ", folder=None)
    # a symlink in a config folder that leads out of it
    configs = tmp_path / "configs"
    shutil.copytree(DEFAULT_DIR, configs, symlinks=True)
    (configs / "creator" / "documents" / "link.txt").symlink_to(outside)
    monkeypatch.setenv("SWITCHBACK_CONFIG_DIR", str(configs))
    assert refused("documents/link.txt").startswith("'documents/link.txt' is not inside")
    # a config folder under a refused system folder (k8s mounts configs at /etc/switchback)
    monkeypatch.setattr(document_sources, "NEVER", (configs.resolve(),))
    assert local_document("documents/gdpr_erasure.txt", "creator", BIG).is_file()
    monkeypatch.setattr(document_sources, "NEVER", document_sources.NEVER + (root,))
    assert "is not inside" in refused(str(root / "contract.md"))  # not via the root, though
    monkeypatch.undo()
    monkeypatch.setenv("SWITCHBACK_CONFIG_DIR", str(configs))
    # even an operator who lists / gets nothing from /proc or /etc
    monkeypatch.setenv("SWITCHBACK_DOCUMENT_ROOTS", "/")
    assert "is not inside" in refused("/proc/self/environ")
    assert "is not inside" in refused("/etc/hostname")


async def failure(handle) -> str:
    with pytest.raises(WorkflowFailureError) as info:
        await asyncio.wait_for(handle.result(), 60)
    return str(info.value.cause)


async def test_hostile_documents_fail_the_job_before_anything_is_written(
        client, task_queue, start_job, model_server, s3):
    victim = f"victim-{uuid.uuid4().hex[:8]}"
    await s3.put("switchback", f"{victim}/secret.md", b"VICTIM-SECRET")
    cases = {"/proc/self/environ": "is not inside the job's config folder (configs/creator)",
             "../../etc/passwd": "may not contain '..'",
             f"s3://switchback/{victim}/secret.md": "s3:// references are not accepted",
             "documents/../../defaults.yaml": "may not contain '..'"}
    async with running_worker(client, task_queue):
        handles = {doc: await start_job(None, instructions="x", documents=[doc])
                   for doc in cases}
        whys = {doc: await failure(h) for doc, h in handles.items()}
    for doc, expected in cases.items():
        assert expected in whys[doc] and "BadDocument" in whys[doc], whys[doc]
        assert await s3.list("switchback", f"{handles[doc].id}/") == []  # nothing written
        assert model_server.requests(handles[doc].id) == []
    assert [o.key for o in await s3.list("switchback", f"{victim}/")] == [f"{victim}/secret.md"]


async def test_documents_from_every_allowed_source(client, task_queue, start_job, model_server,
                                                   s3, tmp_path, monkeypatch):
    root = tmp_path / "operator-docs"
    root.mkdir()
    (root / "policy.md").write_text("# Operator's policy\n")
    monkeypatch.setenv("SWITCHBACK_DOCUMENT_ROOTS", f"/nonexistent:{root}")
    pdf = b"%PDF-1.4 not really\x00\xff"
    async with running_worker(client, task_queue):
        handle = await start_job(full_job(1), model_server, instructions="x", documents=[
            "documents/gdpr_erasure.txt",  # the config folder's own
            str(root / "policy.md"),
            {"name": "notes.md", "text": "# Inline\n"},
            {"name": "scan.pdf", "base64": base64.b64encode(pdf).decode()}])
        assert (await handle.result()).status == "completed"
    got = {name: await s3.get("switchback", f"{handle.id}/documents/{name}")
           for name in ("gdpr_erasure.txt", "policy.md", "notes.md", "scan.pdf")}
    assert got["gdpr_erasure.txt"] == (DEFAULT_DIR / "creator/documents/gdpr_erasure.txt"
                                       ).read_bytes()
    assert got["policy.md"] == b"# Operator's policy\n"
    assert got["notes.md"] == b"# Inline\n" and got["scan.pdf"] == pdf
    assert os.environ["AWS_SECRET_ACCESS_KEY"].encode() not in b"".join(got.values())
