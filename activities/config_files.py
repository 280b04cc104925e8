"""The `load_config` activity: a job config from the worker's configs folder.

A config is a name under configs/ or an inline object, with `extends` chains:

    configs/defaults.yaml                 the base (names no model endpoint)
    configs/<job>/config.yaml             `extends: defaults`, plus the job's own keys
    configs/<job>/instructions.md         the job's instructions (optional)
    configs/prompts/*.md                  prompt templates, referenced by `prompts`

Mappings merge key by key; lists and scalars replace. Every error names the
file(s) and the field, e.g. `config 'creator' (configs/creator/config.yaml <-
configs/defaults.yaml): limits.max_nudgez: Extra inputs are not permitted`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError
from temporalio import activity
from temporalio.exceptions import ApplicationError

from workflows.contract import LOAD_CONFIG, LoadConfigRequest
from workflows.contract.config import JobConfig, ResolvedConfig, StrategicTodos

PROMPTS = ("strategic", "tactical", "kickoff", "nudge", "summarization", "react", "react_kickoff")
DEFAULT_DIR = Path(__file__).resolve().parent.parent / "configs"


class ConfigError(ValueError):
    pass


@activity.defn(name=LOAD_CONFIG)
async def load_config_activity(req: LoadConfigRequest) -> ResolvedConfig:
    """Loaded once per job; the workflow carries the result, so editing a file never
    changes a running job."""
    try:
        return load_config(req.config)
    except ConfigError as e:
        raise ApplicationError(str(e), type="ConfigError", non_retryable=True) from e


def configs_dir() -> Path:
    return Path(os.environ.get("SWITCHBACK_CONFIG_DIR") or DEFAULT_DIR)


def load_config(ref: str | dict[str, Any], root: Path | None = None) -> ResolvedConfig:
    root = root or configs_dir()
    if isinstance(ref, str):
        name, data, files = ref, *_named(root, ref)
    else:
        name, data, files = "inline", dict(ref), ["(inline)"]
        data.setdefault("extends", "defaults")
    job_dir: Path | None = root / name if isinstance(ref, str) else None
    seen = {name}
    merged = data
    parent = data.get("extends")
    while parent:
        chain = f"config '{name}' ({' <- '.join(files)})"
        if not isinstance(parent, str):
            raise ConfigError(f"{chain}: extends: must be a config name, got {parent!r}")
        if parent in seen:
            raise ConfigError(f"config '{name}': 'extends' cycle through '{parent}'")
        seen.add(parent)
        try:
            pdata, pfiles = _named(root, parent)
        except ConfigError as e:
            raise ConfigError(f"{chain}: extends: {e}") from e
        if job_dir is None and parent != "defaults":
            job_dir = root / parent
        files += pfiles
        merged = _merge(pdata, merged)
        parent = pdata.get("extends")
    where = f"config '{name}' ({' <- '.join(files)})"
    try:
        cfg = JobConfig.model_validate(merged)
    except ValidationError as e:
        problems = "; ".join(f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}"
                             for err in e.errors()[:8])
        raise ConfigError(f"{where}: {problems}") from e
    prompts = {k: _read(root, getattr(cfg.prompts, k), where)
               for k in PROMPTS}
    try:
        todos = StrategicTodos.model_validate(
            yaml.safe_load(_read(root, cfg.prompts.strategic_todos, where)))
    except (ValidationError, yaml.YAMLError) as e:
        raise ConfigError(f"{where}: {cfg.prompts.strategic_todos}: {_line(e)}") from e
    instructions = None
    documents: list[str] = []
    if job_dir is not None and job_dir.is_dir():
        inst = job_dir / "instructions.md"
        instructions = inst.read_text(encoding="utf-8") if inst.exists() else None
        for d in cfg.documents:
            path = (job_dir / d).resolve()
            if not path.is_file():
                raise ConfigError(f"{where}: documents: '{d}' not found in {job_dir}")
            documents.append(str(path))
    return ResolvedConfig(name=name, config=cfg, prompts=prompts, strategic_todos=todos,
                          instructions=instructions, documents=documents)


def _named(root: Path, name: str) -> tuple[dict[str, Any], list[str]]:
    if not isinstance(name, str) or not name or "/" in name or "\\" in name or name.startswith("."):
        raise ConfigError(f"config name '{name}' is not a plain name under {root}")
    path = root / "defaults.yaml" if name == "defaults" else root / name / "config.yaml"
    if not path.is_file():
        known = sorted(p.parent.name for p in root.glob("*/config.yaml"))
        raise ConfigError(f"config '{name}' not found: no {path} (known: {', '.join(known)})")
    rel = str(path.relative_to(root.parent)) if root.parent in path.parents else str(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as e:
        raise ConfigError(f"{rel}: not valid YAML: {_line(e)}") from e
    if not isinstance(data, dict):
        raise ConfigError(f"{rel}: must be a mapping of settings")
    return data, [rel]


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in over.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def _read(root: Path, rel: str, where: str) -> str:
    path = (root / rel).resolve()
    if not path.is_file():
        raise ConfigError(f"{where}: prompt file '{rel}' not found under {root}")
    return path.read_text(encoding="utf-8")


def _line(e: Exception) -> str:
    return " ".join(str(e).split())[:300]
