"""Model endpoints by name: the operator declares them, a job picks one.

The worker loads `SWITCHBACK_ENDPOINTS_FILE` (default: `endpoints.yaml` in the configs
folder; without that file, the built-in `default` below):

    allow_job_base_url: false          # true: a job may name a raw URL (it gets no key)
    allow_job_api_key_env: []          # key variables a job may name (sent to declared URLs only)
    endpoints:
      default:                         # what a job gets unless it says `llm.endpoint`
        base_url_env: OPENAI_BASE_URL  # the variable holding the URL (unset: api.openai.com)
        api_key_env: OPENAI_API_KEY
        models: ["*"]                  # fnmatch patterns of the model names it offers
      local:
        base_url_env: SWITCHBACK_LOCAL_BASE_URL  # set: this URL; unset: base_url
        base_url: http://127.0.0.1:8401/v1
        models: [qwen2.5-*]
        timeout_seconds: 1800          # caps llm.timeout_seconds for calls to it
        slow:                          # a slow server: each call's timeout scales with it
          first_token_seconds: 60
          prompt_tokens_per_second: 10
          completion_tokens_per_second: 2

A job config says `llm.endpoint: local` and `llm.model: ...`. `target(llm)` is what the
model activity sends a request with (URL, key, timeout); it is computed here, in the
activity, every call, from the worker's environment, so no URL a credential goes to and
no key ever comes from workflow history. The rules, whoever wrote the config (a
carried config from continue-as-new or a rerun goes through them too):

- `llm.endpoint` must be declared and `llm.model` one of its models;
- `llm.base_url` (old configs) equal to a declared endpoint's URL selects that endpoint;
  any other URL is refused unless `allow_job_base_url`, and then gets no key at all;
- `llm.api_key_env` other than the endpoint's own is refused unless listed in
  `allow_job_api_key_env`, and is sent only to a declared endpoint's URL.

A `slow` endpoint (a local server on a few cores) gets a timeout per call that fits the call:
`first_token_seconds + prompt tokens / prompt_tokens_per_second + max_tokens /
completion_tokens_per_second`, within `timeout_seconds` and the job's `llm.timeout_seconds`;
`load_config` raises a job's `llm.timeout_seconds` to such an endpoint's `timeout_seconds`,
so the longest call it allows fits the model activity's own timeout.

`check_job_llm` refuses, in `load_config`, the raw fields an inline config (job input)
sets, naming the field, before anything runs.
"""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from switchback.activities.config_roots import config_path
from switchback.workflows.contract.config import LlmSettings

OPENAI_DEFAULT_URL = "https://api.openai.com/v1"
NO_KEY = "not-set"  # what the openai client sends when no credential may go


class EndpointError(ValueError):
    """A job's model settings the operator does not offer; `field` names the setting."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field


class SlowEndpoint(BaseModel):
    """How fast a slow server is (measure it: llama-server reports `timings`)."""

    model_config = ConfigDict(extra="forbid")

    first_token_seconds: float = Field(30, ge=0)
    prompt_tokens_per_second: float = Field(gt=0)
    completion_tokens_per_second: float = Field(gt=0)


class RequestShape(BaseModel):
    """What an endpoint's Chat Completions requests look like. OpenAI's reasoning models
    (o1, o3, gpt-5, ...) refuse `max_tokens` (they take `max_completion_tokens`) and any
    `temperature` but the default."""

    model_config = ConfigDict(extra="forbid")

    max_tokens_field: Literal["max_tokens", "max_completion_tokens"] = "max_tokens"
    temperature: bool = True  # false: no temperature is sent, whatever llm.temperature says
    extra: dict[str, Any] = {}  # fields every request carries, e.g. {reasoning_effort: low}

    @field_validator("extra")
    @classmethod
    def _not_ours(cls, v: dict[str, Any]) -> dict[str, Any]:
        taken = sorted(set(v) & {"model", "messages", "tools", "stream", "n", "temperature",
                                 "max_tokens", "max_completion_tokens", "tool_choice"})
        if taken:
            raise ValueError(f"request.extra may not set {', '.join(taken)}: switchback "
                             "sets them")
        return v

    def apply(self, body: dict[str, Any], temperature: float | None,
              max_tokens: int | None) -> dict[str, Any]:
        """`body` with the temperature and token limit as this endpoint takes them."""
        if self.temperature and temperature is not None:
            body["temperature"] = temperature
        if max_tokens is not None:
            body[self.max_tokens_field] = max_tokens
        return {**self.extra, **body}


class EndpointSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    base_url: str | None = None
    base_url_env: str | None = None  # when set (and not empty) it wins over base_url
    api_key_env: str | None = None
    models: list[str] = ["*"]
    timeout_seconds: float | None = Field(None, gt=0)
    slow: SlowEndpoint | None = None
    # the model profile a job on this endpoint takes unless it names its own (llm.profile)
    profile: str = Field("", max_length=100)
    request: RequestShape = RequestShape()
    # variables whose values go as the OpenAI-Organization / OpenAI-Project headers (unset
    # or empty: no header); sent to this endpoint's URL only, like its key
    organization_env: str | None = None
    project_env: str | None = None

    def headers(self) -> dict[str, str]:
        out = {}
        for header, env in (("OpenAI-Organization", self.organization_env),
                            ("OpenAI-Project", self.project_env)):
            value = os.environ.get(env) if env else None
            if value:
                out[header] = value
        return out

    def url(self) -> str:
        env = os.environ.get(self.base_url_env) if self.base_url_env else None
        return _norm(env or self.base_url or OPENAI_DEFAULT_URL)


class EndpointsFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    allow_job_base_url: bool = False
    allow_job_api_key_env: list[str] = []
    endpoints: dict[str, EndpointSpec]


BUILT_IN = EndpointsFile(endpoints={"default": EndpointSpec(
    base_url_env="OPENAI_BASE_URL", api_key_env="OPENAI_API_KEY",
    organization_env="OPENAI_ORG_ID", project_env="OPENAI_PROJECT_ID")})


@dataclass(frozen=True)
class Target:
    """What one model call is sent with. Never leaves the activity."""

    endpoint: str
    base_url: str
    api_key: str
    timeout: float
    slow: SlowEndpoint | None = None
    shape: RequestShape = field(default_factory=RequestShape)
    headers: tuple[tuple[str, str], ...] = ()  # OpenAI-Organization, OpenAI-Project

    def call_timeout(self, prompt_tokens: int, max_tokens: int | None) -> float:
        """Seconds one call may take: `timeout`, or for a slow endpoint what a call of this
        size needs (never more than `timeout`)."""
        if self.slow is None:
            return self.timeout
        s = self.slow
        need = (s.first_token_seconds + prompt_tokens / s.prompt_tokens_per_second
                + (max_tokens or 1024) / s.completion_tokens_per_second)
        return min(self.timeout, need)


_cache: dict[str, tuple[tuple[int, int], EndpointsFile]] = {}


def endpoints_path() -> tuple[Path, bool]:
    """The endpoints file and whether the operator named it explicitly."""
    named = os.environ.get("SWITCHBACK_ENDPOINTS_FILE")
    if named:
        return Path(named), True
    return config_path("endpoints.yaml"), False


def load() -> tuple[EndpointsFile, str]:
    """The operator's endpoints (re-read when the file changes) and where they came from."""
    path, named = endpoints_path()
    try:
        st = path.stat()
    except OSError:
        if named:
            raise EndpointError("SWITCHBACK_ENDPOINTS_FILE", f"{path} does not exist") from None
        return BUILT_IN, "the built-in default (no endpoints.yaml)"
    stamp = (st.st_mtime_ns, st.st_size)
    shown = f"configs/{path.name}" if not named else str(path)
    hit = _cache.get(str(path))
    if hit and hit[0] == stamp:
        return hit[1], shown
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        parsed = EndpointsFile.model_validate(data)
    except (yaml.YAMLError, ValidationError) as e:
        raise EndpointError("SWITCHBACK_ENDPOINTS_FILE",
                            f"{path}: {' '.join(str(e).split())[:300]}") from None
    _cache[str(path)] = (stamp, parsed)
    return parsed, shown


def check_job_llm(llm: Any) -> None:
    """Refuse the raw endpoint fields a job's own input sets (an inline config's `llm`)."""
    if not isinstance(llm, dict):
        return  # the schema check names it
    eps, source = load()
    if llm.get("base_url") is not None and not eps.allow_job_base_url:
        raise EndpointError("llm.base_url", "job input names a model endpoint by name "
                            f"(llm.endpoint: {', '.join(eps.endpoints)}), not by URL; raw URLs "
                            f"are not allowed by the operator (allow_job_base_url in {source})")
    key = llm.get("api_key_env")
    if key is not None and key not in eps.allow_job_api_key_env:
        raise EndpointError("llm.api_key_env", f"job input may not choose the key variable "
                            f"({key!r}); the operator binds keys to endpoints in {source}")


def select(llm: LlmSettings) -> tuple[str, EndpointSpec | None, str, str | None]:
    """(endpoint name, its spec or None for an allowed raw URL, URL, key variable) for
    `llm`, by the rules above; reads no secret."""
    eps, source = load()
    spec = eps.endpoints.get(llm.endpoint)
    if spec is None:
        raise EndpointError("llm.endpoint", f"unknown endpoint {llm.endpoint!r} (declared in "
                            f"{source}: {', '.join(eps.endpoints) or 'none'})")
    name, url = llm.endpoint, spec.url()
    if llm.base_url is not None and _norm(llm.base_url) != url:
        wanted = _norm(llm.base_url)
        same = [(n, s) for n, s in eps.endpoints.items() if s.url() == wanted]
        if same:
            name, spec = same[0]
            url = wanted
        elif not eps.allow_job_base_url:
            raise EndpointError("llm.base_url", f"{llm.base_url!r} is not the URL of an endpoint "
                                f"the operator declared ({source}: {', '.join(eps.endpoints)}); "
                                "pick one with llm.endpoint")
        elif not wanted.startswith(("http://", "https://")):
            raise EndpointError("llm.base_url", f"{llm.base_url!r} is not an http(s) URL")
        else:
            if llm.api_key_env not in (None, spec.api_key_env):
                raise EndpointError("llm.api_key_env", "a key is sent only to the URL of a "
                                    "declared endpoint, not to llm.base_url")
            return "(job URL)", None, wanted, None
    if not any(fnmatch.fnmatchcase(llm.model, p) for p in spec.models):
        raise EndpointError("llm.model", f"{llm.model!r} is not offered by endpoint {name!r} "
                            f"(models: {', '.join(spec.models)})")
    key_env = spec.api_key_env
    if llm.api_key_env is not None and llm.api_key_env != key_env:
        if llm.api_key_env not in eps.allow_job_api_key_env:
            raise EndpointError("llm.api_key_env", f"{llm.api_key_env!r} is not the key "
                                f"variable of endpoint {name!r}; the operator binds keys to "
                                f"endpoints in {source}")
        key_env = llm.api_key_env
    return name, spec, url, key_env


def target(llm: LlmSettings) -> Target:
    """What a model call with `llm` is sent with: URL, key (from the environment), timeout."""
    name, spec, url, key_env = select(llm)
    key = (os.environ.get(key_env) or NO_KEY) if key_env else NO_KEY
    timeout = llm.timeout_seconds
    if spec is not None and spec.timeout_seconds:
        timeout = min(timeout, spec.timeout_seconds)
    if spec is None:  # an allowed raw URL: no key, no headers, the plain shape
        return Target(endpoint=name, base_url=url, api_key=key, timeout=timeout)
    return Target(endpoint=name, base_url=url, api_key=key, timeout=timeout, slow=spec.slow,
                  shape=spec.request, headers=tuple(sorted(spec.headers().items())))


def _norm(url: str) -> str:
    return url.strip().rstrip("/")
