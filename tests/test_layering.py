"""The architecture's rules, checked on the source (docs/architecture.md).

- activities/ imports nothing from workflows/ but the contract (workflows/contract/);
- workflows/ imports no activity, client or I/O library;
- strategies import no Temporal API (they only decide) and never define coroutines;
- starter.py imports only the standard library at load time (the CLI stays fast), and the
  client side (operate/) never imports the worker or the model/tool activities.
"""

from __future__ import annotations

import ast
import inspect
import subprocess
import sys
from pathlib import Path

import workflows.strategies as strategies
from workflows.strategies.base import Strategy

ROOT = Path(__file__).resolve().parent.parent


def imports(path: Path) -> list[str]:
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out.append(node.module)
    return out


def files(folder: str) -> list[Path]:
    return sorted((ROOT / folder).rglob("*.py"))


def test_activities_import_only_the_contract_from_workflows() -> None:
    bad = [(str(p.relative_to(ROOT)), m) for p in files("activities") for m in imports(p)
           if m.startswith("workflows") and not m.startswith("workflows.contract")]
    assert not bad, bad


def test_workflows_import_no_activity_client_or_io_library() -> None:
    banned = ("activities", "operate", "worker", "starter", "boto3", "botocore", "openai",
              "httpx", "requests", "socket", "subprocess", "threading", "os", "time", "random")
    bad = [(str(p.relative_to(ROOT)), m) for p in files("workflows") for m in imports(p)
           if m.split(".")[0] in banned]
    assert not bad, bad


def test_strategies_only_decide() -> None:
    for p in files("workflows/strategies"):
        assert not [m for m in imports(p) if m.startswith("temporalio")], p
    assert strategies.REGISTRY, "no strategy registered"
    for name, cls in strategies.REGISTRY.items():
        assert cls.name == name and issubclass(cls, Strategy)
        coroutines = [n for n, f in inspect.getmembers(cls, inspect.isfunction)
                      if inspect.iscoroutinefunction(f)]
        assert not coroutines, f"{name} awaits: {coroutines}"


def test_the_cli_loads_only_the_standard_library() -> None:
    code = ("import sys; sys.argv = ['starter.py']; import starter; "
            "print(sorted(m.split('.')[0] for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout
    loaded = set(eval(out))  # noqa: S307 - our own output
    assert not loaded & {"temporalio", "pydantic", "boto3", "openai", "activities",
                         "workflows", "operate", "worker"}, loaded


# `starter.py tools` shows what a worker on this machine offers: it loads the worker's tool
# catalog (entry points, the MCP servers file), inside that command only
TOOLS_COMMAND = ("operate/tools.py", ("activities.tools.listing", "activities.tools.mcp_config",
                                      "activities.tools.mcp_sessions"))


def test_the_client_side_never_imports_the_worker() -> None:
    bad = [(str(p.relative_to(ROOT)), m) for p in [*files("operate"), ROOT / "starter.py"]
           for m in imports(p) if m == "worker" or m.startswith(("activities.model",
                                                                   "activities.tools"))]
    assert not [b for b in bad if b[0] != TOOLS_COMMAND[0] or b[1] not in TOOLS_COMMAND[1]], bad
