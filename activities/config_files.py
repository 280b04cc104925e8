"""The `load_config` activity: a job config from the worker's configs folder.

A config is a name under configs/ or an inline object, with `extends` chains:

    configs/defaults.yaml                 the base (names no model endpoint)
    configs/<job>/config.yaml             `extends: defaults`, plus the job's own keys
    configs/<job>/instructions.md         the job's instructions (optional)
    configs/prompts/*.md                  prompt templates, referenced by `prompts`

Mappings merge key by key; lists and scalars replace. Every error names the
file(s) and the field, e.g. `config 'creator' (configs/creator/config.yaml <-
configs/defaults.yaml): limits.max_nudgez: Extra inputs are not permitted`.

The trust boundary (docs/security.md) is checked here first, so a job that asks for what
the operator does not offer fails at once, naming the field: an inline config (job input)
may not set `llm.base_url` or `llm.api_key_env` (unless the operator allows them), and no
config may name a job to replay (`starter.py rerun` sets that); `llm.endpoint` and
`llm.model` must be declared (activities/model/endpoints.py), and a job on a `slow`
endpoint gets its timeout; `workspace.bucket` must be a listed workspace bucket
(activities/storage/buckets.py); `extends`, prompt paths and `documents:` stay inside
configs/ (resolved, symlinks too); separate `task_queues` must have a worker polling them.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import os
from datetime import timedelta
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError
from temporalio import activity
from temporalio.api.enums.v1 import TaskQueueType
from temporalio.api.taskqueue.v1 import TaskQueue
from temporalio.api.workflowservice.v1 import (
    DescribeTaskQueueRequest,
    DescribeTaskQueueResponse,
)
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError, RPCStatusCode

from switchback.activities.config_roots import config_roots
from switchback.activities.config_roots import configs_dir as configs_dir  # (its old home)
from switchback.activities.model import profiles
from switchback.activities.model.endpoints import EndpointError, check_job_llm, select
from switchback.activities.storage.buckets import bucket_problem
from switchback.workflows.contract import LOAD_CONFIG, LoadConfigRequest
from switchback.workflows.contract.config import (
    JobConfig,
    ResolvedConfig,
    StrategicTodos,
    prompt_file,
    refuse_old_names,
)

PROMPTS = ("strategic", "tactical", "kickoff", "nudge", "cut_off", "summarization", "react",
           "react_kickoff", "task_nudge", "stage_kickoff", "plan", "evaluate", "step", "nested",
           "subjob", "classify", "echo_nudge", "verify", "react_actions", "tactical_actions")
# the prompts each strategy uses (the resolved config, in history, carries only those)
PROMPTS_OF = {
    "phase_alternation": ("strategic", "tactical", "kickoff", "nudge", "cut_off", "echo_nudge",
                          "tactical_actions"),
    "react": ("react", "react_kickoff", "task_nudge", "cut_off", "echo_nudge", "react_actions"),
    "plan_revise_execute": ("plan", "evaluate", "step", "stage_kickoff", "task_nudge", "react",
                            "react_actions"),
    "nested": ("nested", "subjob", "kickoff", "nudge", "cut_off", "echo_nudge"),
    "auto": ("classify", "stage_kickoff", "task_nudge"),
}
log = logging.getLogger(__name__)


class ConfigError(ValueError):
    pass


@activity.defn(name=LOAD_CONFIG)
async def load_config_activity(req: LoadConfigRequest) -> ResolvedConfig:
    """Loaded once per job; the workflow carries the result, so editing a file never
    changes a running job."""
    try:
        cfg = load_config(req.config)
    except ConfigError as e:
        raise ApplicationError(str(e), type="ConfigError", non_retryable=True) from e
    await check_task_queues(cfg)
    return cfg


class ConfigActivities:
    """`load_config` as a worker runs it: `encrypted` (the worker's payloads go through a
    codec) is told to the job, which then keeps free text out of its search attributes -
    the server stores those in plain text. `model_calls_local`: this worker's queue runs
    call_model too, so a fast endpoint's calls may run as local activities.
    `search_attributes` False: the operator turned them off (SWITCHBACK_SEARCH_ATTRIBUTES):
    no job upserts any, whatever its config says."""

    def __init__(self, encrypted: bool = False, model_calls_local: bool = False,
                 search_attributes: bool = True) -> None:
        self.encrypted = encrypted
        self.model_calls_local = model_calls_local
        self.search_attributes = search_attributes

    @activity.defn(name=LOAD_CONFIG)
    async def load_config(self, req: LoadConfigRequest) -> ResolvedConfig:
        cfg = await load_config_activity(req)
        if not self.search_attributes and cfg.config.search_attributes:
            cfg = cfg.model_copy(update={"config": cfg.config.model_copy(
                update={"search_attributes": False})})
        return cfg.model_copy(update={"payloads_encrypted": self.encrypted,
                                      "model_calls_local": self.model_calls_local,
                                      "live_retain": live_retain()})


LIVE_RETAIN = "SWITCHBACK_LIVE_RETAIN"  # events a job's live stream keeps (docs/live.md)


def live_retain(default: int = 1000) -> int:
    """The operator's SWITCHBACK_LIVE_RETAIN, 0 (no live stream) or 10-20,000 (else the
    default)."""
    try:
        n = int(os.environ.get(LIVE_RETAIN) or default)
    except ValueError:
        return default
    return n if n == 0 or 10 <= n <= 20_000 else default


async def check_task_queues(cfg: ResolvedConfig) -> None:
    """A separate model or tool queue that no worker polls would leave the job waiting
    forever: refuse it (retried a few times, so a worker that is starting can catch up)."""
    info = activity.info()
    queues = cfg.config.task_queues
    for field, queue in (("model", queues.model), ("tools", queues.tools)):
        if not queue or queue == info.task_queue:
            continue
        try:
            found = await _describe(queue)
        except Exception as e:  # noqa: BLE001 - not allowed to look: the backstop timeout
            log.warning("cannot check the pollers of task queue %r: %s", queue, e)
            continue
        if not found.pollers:
            role = "model" if field == "model" else "tools"
            raise ApplicationError(
                f"config '{cfg.name}': task_queues.{field}: no worker polls task queue "
                f"{queue!r} (start one with SWITCHBACK_WORKER_ROLE={role} "
                f"SWITCHBACK_{'MODEL' if field == 'model' else 'TOOL'}_TASK_QUEUE={queue}, "
                "or fix the config)", type="NoWorkerForQueue")


_TRANSIENT = (RPCStatusCode.CANCELLED, RPCStatusCode.DEADLINE_EXCEEDED,
              RPCStatusCode.UNAVAILABLE)


async def _describe(queue: str, pauses: tuple[float, ...] = (0.5, 1, 2, 4)
                    ) -> DescribeTaskQueueResponse:
    """The server's description of activity queue `queue`. A call the server cut short (a
    loaded dev server answered "operation was canceled" in CI, and the skipped check let a
    typo queue hang the job) is asked again after each of `pauses`; other errors raise."""
    client = activity.client()
    request = DescribeTaskQueueRequest(namespace=client.namespace,
                                       task_queue=TaskQueue(name=queue),
                                       task_queue_type=TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY)
    for pause in (*pauses, None):
        try:
            return await client.workflow_service.describe_task_queue(
                request, timeout=timedelta(seconds=10))
        except RPCError as e:
            if pause is None or e.status not in _TRANSIENT:
                raise
            log.info("asking again for the pollers of task queue %r in %s s: %s", queue,
                     pause, e)
            await asyncio.sleep(pause)
    raise AssertionError("unreachable")


def load_config(ref: str | dict[str, Any], root: Path | None = None,
                policy: bool = True) -> ResolvedConfig:
    """The resolved config, from `root` or else the operator's configs laid over the packaged
    ones (activities/config_roots.py). `policy=False` (starter.py's check before it starts a
    job) skips what only the worker's environment decides: endpoints and buckets."""
    roots = [root] if root else config_roots()
    job_dir: Path | None = None
    if isinstance(ref, str):
        name, data, files, home = ref, *_named(roots, ref)
        job_dir = home / name
    else:
        name, data, files = "inline", dict(ref), ["(inline)"]
        data.setdefault("extends", "defaults")
        try:
            if policy:
                check_job_llm(data.get("llm"))
        except EndpointError as e:
            raise ConfigError(f"config 'inline': {e}") from None
    seen = {name}
    merged = _current_names(data, files[0])
    parent = data.get("extends")
    while parent:
        chain = f"config '{name}' ({' <- '.join(files)})"
        if not isinstance(parent, str):
            raise ConfigError(f"{chain}: extends: must be a config name, got {parent!r}")
        if parent in seen:
            raise ConfigError(f"config '{name}': 'extends' cycle through '{parent}'")
        seen.add(parent)
        try:
            pdata, pfiles, home = _named(roots, parent)
        except ConfigError as e:
            raise ConfigError(f"{chain}: extends: {e}") from e
        if job_dir is None and parent != "defaults":
            job_dir = home / parent
        files += pfiles
        merged = _merge(_current_names(pdata, pfiles[0]), merged)
        parent = pdata.get("extends")
    where = f"config '{name}' ({' <- '.join(files)})"
    try:
        cfg = JobConfig.model_validate(merged)
    except ValidationError as e:
        problems = "; ".join(f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}"
                             for err in e.errors()[:8])
        raise ConfigError(f"{where}: {problems}") from e
    try:
        if policy:
            _, spec, _, _ = select(cfg.llm)
            if spec is not None and spec.slow and spec.timeout_seconds \
                    and cfg.llm.timeout_seconds < spec.timeout_seconds:
                # a slow endpoint's calls scale up to its timeout: the model activity's own
                # timeout (llm.timeout_seconds + 30) must let the longest one finish
                cfg.llm.timeout_seconds = spec.timeout_seconds
            if spec is not None and spec.profile and not cfg.llm.profile:
                cfg.llm.profile = spec.profile  # the endpoint's model family's profile
    except EndpointError as e:
        raise ConfigError(f"{where}: {e}") from None
    c = cfg.completion
    if c.check is not None and c.check.command is not None and (job_dir is None or not _inside(
            job_dir, c.check.command, f"{where}: completion.check").is_file()):
        raise ConfigError(f"{where}: completion.check: '{c.check.command}' is not a file of "
                          "the job's config folder")
    if bad_profile := profiles.problem(cfg.llm.profile):
        raise ConfigError(f"{where}: llm.profile: {bad_profile}")
    bad_bucket = bucket_problem(cfg.workspace.bucket) if policy else None
    if bad_bucket:
        raise ConfigError(f"{where}: workspace.bucket: {bad_bucket}")
    strategies = strategies_of(cfg)

    def used(k: str) -> bool:
        if k == "react_actions" and not cfg.acts_only():
            return False  # react's prompt for a job that cannot write files (react.py)
        if k == "tactical_actions" and "write_file" in cfg.tools.for_phase(
                "tactical", cfg.phase_settings.tactical_workspace):
            return False  # a tactical phase's that cannot (phase_alternation.py)
        return k == "summarization" or (
            k == "verify" and cfg.completion.check is not None
            and cfg.completion.check.model) or any(
            k in PROMPTS_OF.get(s, PROMPTS) for s in strategies)

    prompts = {k: _read(roots, prompt_file(cfg.prompts, k), where, f"prompts.{k}")
               for k in PROMPTS if used(k)}
    todos = _todos(roots, prompt_file(cfg.prompts, "strategic_todos"), where,
                   "prompts.strategic_todos")
    nested_todos = (_todos(roots, prompt_file(cfg.prompts, "nested_todos"), where,
                           "prompts.nested_todos")
                    if "nested" in strategies else None)
    instructions = None
    documents: list[str] = []
    if job_dir is not None and job_dir.is_dir():
        inst = job_dir / "instructions.md"
        instructions = inst.read_text(encoding="utf-8") if inst.exists() else None
        for d in cfg.documents:
            path = _inside(job_dir, d, f"{where}: documents")
            if not path.is_file():
                raise ConfigError(f"{where}: documents: '{d}' not found in {job_dir}")
            documents.append(str(path))
    return ResolvedConfig(name=name, config=cfg, prompts=prompts, strategic_todos=todos,
                          nested_todos=nested_todos, instructions=instructions,
                          documents=documents, source=ref,
                          folder=job_dir.name if job_dir is not None else None)


def strategies_of(cfg: JobConfig) -> list[str]:
    """The strategies a job may run: its own, and for auto every one it may route to."""
    r = cfg.auto.routes
    return [cfg.strategy, *((r.A, r.B, r.C) if cfg.strategy == "auto" else ())]


def _todos(roots: list[Path], rel: str, where: str, field: str) -> StrategicTodos:
    try:
        return StrategicTodos.model_validate(_parsed(_file(roots, rel, where, field)))
    except (ValidationError, yaml.YAMLError) as e:
        raise ConfigError(f"{where}: {rel}: {_line(e)}") from e


def _named(roots: list[Path], name: str) -> tuple[dict[str, Any], list[str], Path]:
    """A named config's mapping, its file (as shown) and the folder it was found in: the first
    of `roots` that has it."""
    if not isinstance(name, str) or not name or "/" in name or "\\" in name or name.startswith("."):
        raise ConfigError(f"config name '{name}' is not a plain name under {_shown(roots[0])}")
    rel = "defaults.yaml" if name == "defaults" else f"{name}/config.yaml"
    root = next((r for r in roots if (r / rel).is_file()), None)
    if root is None:
        known = sorted({p.parent.name for r in roots for p in r.glob("*/config.yaml")})
        raise ConfigError(f"config '{name}' not found: no {_shown((roots[0] / rel).parent)}/"
                          f"{Path(rel).name} (known: {', '.join(known)})")
    path = _inside(root, rel, f"config '{name}'")  # symlinks too
    shown = str(path.relative_to(root.resolve().parent)) \
        if root.resolve().parent in path.parents else str(path)
    try:
        data = _parsed(path) or {}
    except yaml.YAMLError as e:
        raise ConfigError(f"{shown}: not valid YAML: {_line(e)}") from e
    if not isinstance(data, dict):
        raise ConfigError(f"{shown}: must be a mapping of settings")
    return data, [shown], root


_PARSED: dict[tuple[str, int, int, bool], Any] = {}  # (path, mtime, size) -> its YAML, parsed


def _parsed(path: Path, parse: bool = True) -> Any:
    """The YAML of `path` (`parse=False`: its text), read and parsed once per version of
    the file (a job's start loads the same few files every time; parsing them was most of
    `load_config`): a copy, so that no caller changes what the next one gets."""
    st = path.stat()
    key = (str(path), st.st_mtime_ns, st.st_size, parse)
    if key not in _PARSED:
        if len(_PARSED) > 256:
            _PARSED.clear()
        text = path.read_text(encoding="utf-8")
        _PARSED[key] = yaml.safe_load(text) if parse else text
    return copy.deepcopy(_PARSED[key])


def _current_names(data: dict[str, Any], where: str) -> dict[str, Any]:
    """One file's mapping, refused (naming the file) when it gives a retired or renamed
    setting: what the setting is now."""
    try:
        return refuse_old_names(data)  # type: ignore[no-any-return]
    except ValueError as e:
        raise ConfigError(f"{where}: {e}") from None


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in over.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def _file(roots: list[Path], rel: str, where: str, field: str) -> Path:
    for root in roots:
        path = _inside(root, rel, f"{where}: {field}")
        if path.is_file():
            return path
    raise ConfigError(f"{where}: {field}: prompt file '{rel}' not found under "
                      f"{' or '.join(str(r) for r in roots)}")


def _read(roots: list[Path], rel: str, where: str, field: str) -> str:
    return _parsed(_file(roots, rel, where, field), parse=False)


def _inside(folder: Path, rel: str, where: str) -> Path:
    """`folder/rel`, resolved (symlinks too), or ConfigError unless it stays in `folder`."""
    parts = rel.replace("\\", "/").split("/")
    if not rel or rel.startswith(("/", "~", "\\")) or ".." in parts or ":" in parts[0]:
        raise ConfigError(f"{where}: '{rel}' must be a relative path inside {_shown(folder)} "
                          "(no '..', not absolute)")
    path = (folder / rel).resolve()
    if not path.is_relative_to(folder.resolve()):
        raise ConfigError(f"{where}: '{rel}' leads outside {_shown(folder)} (a symlink)")
    return path


def _shown(folder: Path) -> str:
    """configs/<job> rather than the worker's absolute path."""
    root = next((r for r in config_roots() if folder.is_relative_to(r)), None)
    if root is None:
        return str(folder)
    return f"configs/{folder.relative_to(root)}".removesuffix("/.")


def _line(e: Exception) -> str:
    return " ".join(str(e).split())[:300]
