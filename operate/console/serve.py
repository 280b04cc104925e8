"""`switchback console`: connect to Temporal and serve the console with uvicorn until
interrupted. The bind is checked first (operate/console/auth.py): a non-loopback address
needs SWITCHBACK_CONSOLE_TOKEN."""

from __future__ import annotations

import os

from switchback.operate import CliError
from switchback.operate.console.auth import bind_problem, is_loopback

TOKEN = "SWITCHBACK_CONSOLE_TOKEN"


async def serve(host: str, port: int) -> int:
    import uvicorn

    from switchback.activities.storage.s3 import S3Store
    from switchback.operate.client import connect
    from switchback.operate.console.app import make_app

    token = os.environ.get(TOKEN) or None
    if problem := bind_problem(host, token):
        raise CliError(f"console: {problem}", 2)
    client = await connect(S3Store())
    app = make_app(client, token, loopback=is_loopback(host))
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", access_log=False,
                            lifespan="off")
    server = uvicorn.Server(config)
    shown = f"[{host}]" if ":" in host else host
    print(f"switchback console on http://{shown}:{port}/ (Temporal: "
          f"{client.service_client.config.target_host}, namespace {client.namespace})",
          flush=True)
    await server.serve()
    return 0
