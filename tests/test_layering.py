"""The architecture's rules, checked on the source (docs/architecture.md).

- activities/ imports nothing from workflows/ but the contract (workflows/contract/);
- workflows/ imports no activity, client or I/O library;
- strategies import no Temporal API and no asyncio: they decide, and await only their port
  (`self.port`), themselves, or the strategy they compose;
- the engine imports no app: the document app (examples/documents) plugs in through the
  entry points every app uses, and its workflows only through switchback.apps;
- starter.py imports only the standard library at load time (the CLI stays fast), and the
  client side (operate/) never imports the worker or the model/tool activities.
"""

from __future__ import annotations

import ast
import inspect
import subprocess
import sys
from pathlib import Path

import switchback.workflows.strategies as strategies
from switchback.workflows.strategies.base import Strategy

ROOT = Path(__file__).resolve().parent.parent
# the repository's folders (and scripts) installed as switchback.<name> (pyproject.toml)
MAPPED = ("workflows", "activities", "operate", "codec", "telemetry", "devstack", "bench",
          "worker", "starter")


def imports(path: Path) -> list[str]:
    """The modules `path` imports, named as the repository's folders are (`workflows.x` for
    `switchback.workflows.x`; `from switchback import worker` is `worker`)."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module == "switchback" and not node.level:
            out += [f"switchback.{a.name}" for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out.append(node.module)
    return [m.removeprefix("switchback.") if m.split(".")[1:2] and m.split(".")[1] in MAPPED
            else m for m in out]


def files(folder: str) -> list[Path]:
    return sorted(p for p in (ROOT / folder).rglob("*.py") if not p.is_symlink())


def test_activities_import_only_the_contract_from_workflows() -> None:
    bad = [(str(p.relative_to(ROOT)), m) for p in files("activities") for m in imports(p)
           if m.startswith("workflows") and not m.startswith("workflows.contract")]
    assert not bad, bad


def test_the_engine_imports_no_app() -> None:
    engine = [*files("activities"), *files("workflows"), *files("switchback"),
              *files("operate"), *files("codec"), *files("telemetry"), ROOT / "worker.py",
              ROOT / "starter.py"]
    bad = [(str(p.relative_to(ROOT)), m) for p in engine for m in imports(p)
           if m.startswith(("switchback_documents", "switchback_wordcount"))]
    assert not bad, bad
    apps = [imports(p) for p in files("examples/documents/switchback_documents")]
    assert any("switchback.apps" in found for found in apps)  # the check looks where it should


def test_workflows_import_no_activity_client_or_io_library() -> None:
    banned = ("activities", "operate", "worker", "starter", "boto3", "botocore", "openai",
              "httpx", "requests", "socket", "subprocess", "threading", "os", "time", "random")
    bad = [(str(p.relative_to(ROOT)), m) for p in files("workflows") for m in imports(p)
           if m.split(".")[0] in banned]
    assert not bad, bad


def awaited_roots(path: Path) -> list[tuple[int, str]]:
    """What each `await` in `path` awaits: the name its call starts from (`self.port.x()`:
    self.port; `super().x()`: super; `pending()`: pending)."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Await):
            continue
        target = node.value.func if isinstance(node.value, ast.Call) else node.value
        parts = []
        while isinstance(target, ast.Attribute):
            parts.append(target.attr)
            target = target.value
        if isinstance(target, ast.Call) and isinstance(target.func, ast.Name):
            root = target.func.id  # super()
        else:
            root = target.id if isinstance(target, ast.Name) else type(target).__name__
        out.append((node.lineno, ".".join([root, *reversed(parts)][:2])))
    return out


def test_strategies_only_decide_and_await_their_port() -> None:
    for p in files("workflows/strategies"):
        bad = [m for m in imports(p) if m.startswith(("temporalio", "asyncio"))]
        assert not bad, (p, bad)
        strays = [(line, root) for line, root in awaited_roots(p)
                  if root.split(".")[0] not in ("self", "super", "inner", "pending")]
        assert not strays, (p, strays)
    assert strategies.REGISTRY, "no strategy registered"
    for name, cls in strategies.REGISTRY.items():
        assert cls.name == name and issubclass(cls, Strategy)
        seam = [n for n in ("begin", "resume", "after_model", "own_tool", "after_tools",
                            "interrupt") if not inspect.iscoroutinefunction(getattr(cls, n))]
        assert not seam, f"{name}: not async: {seam}"


def test_the_layering_check_sees_a_stray_await(tmp_path: Path) -> None:
    stray = tmp_path / "s.py"
    stray.write_text("async def f(self, t):\n    await self.port.read_memory()\n"
                     "    await super().begin()\n    await t.sleep(1)\n", encoding="utf-8")
    assert awaited_roots(stray) == [(2, "self.port"), (3, "super.begin"), (4, "t.sleep")]


def test_the_cli_loads_only_the_standard_library() -> None:
    code = ("import sys; sys.argv = ['starter.py']; from switchback import starter; "
            "starter.parser(); "
            "print(sorted({m.removeprefix('switchback.').split('.')[0] for m in sys.modules}))")
    # (with the apps' commands)
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout
    loaded = set(eval(out))  # noqa: S307 - our own output
    assert not loaded & {"temporalio", "pydantic", "boto3", "openai", "activities",
                         "workflows", "operate", "worker", "bfcl_eval"}, loaded
    assert "switchback_documents" in loaded  # the apps' commands were loaded


# `starter.py tools` shows what a worker on this machine offers: it loads the worker's tool
# catalog (entry points, the MCP servers file), inside that command only
TOOLS_COMMAND = ("operate/tools_command.py", ("activities.tools.listing",
                                              "activities.tools.mcp_config",
                                              "activities.tools.mcp_sessions"))


# `switchback worker` is the worker: starter.py imports it in that command's branch only
WORKER_COMMAND = ("starter.py", "worker")


def test_the_client_side_never_imports_the_worker() -> None:
    bad = [(str(p.relative_to(ROOT)), m) for p in [*files("operate"), ROOT / "starter.py"]
           for m in imports(p) if m == "worker" or m.startswith(("activities.model",
                                                                   "activities.tools"))]
    allowed = {(TOOLS_COMMAND[0], m) for m in TOOLS_COMMAND[1]} | {WORKER_COMMAND}
    assert not [b for b in bad if b not in allowed], bad
