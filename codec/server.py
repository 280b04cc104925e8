"""Codec server: lets the Temporal web UI and CLI show switchback's encrypted payloads.

    SWITCHBACK_CODEC_KEYS=k1:... python -m switchback.codec.server --port 8081 [--host 127.0.0.1]
        [--cors-origin https://temporal.example.com ...]
    temporal workflow show -w job-42 --codec-endpoint http://127.0.0.1:8081
    web UI: Settings -> Codec Server -> http://127.0.0.1:8081 (or the dev server's
        `temporal server start-dev --ui-codec-endpoint http://127.0.0.1:8081`)

Contract (Temporal's codec server protocol):
- `POST .../encode` and `POST .../decode`: body and answer are a `Payloads` message in
  protobuf JSON (`{"payloads": [{"metadata": {...}, "data": "<base64>"}]}`); only the
  last path segment counts, so `/default/decode` works too. The `X-Namespace` header
  the UI and CLI send is accepted (and logged); the same keys serve every namespace.
  Bad JSON, a payload the codec rejects (unknown key id, tampered) -> 400 with
  `{"error": "..."}`; another path -> 404; a body over 64 MiB -> 413.
- CORS for the web UI: a request whose `Origin` is allowed gets it back in
  `Access-Control-Allow-Origin` (with credentials, methods POST/OPTIONS, headers
  content-type, x-namespace, authorization), on the `OPTIONS` preflight and on the
  answer. Allowed by default: http://127.0.0.1:8233 and http://localhost:8233 (the
  dev server's UI); `--cors-origin` (repeatable) replaces that list.
- Auth: off unless `SWITCHBACK_CODEC_AUTH` is set; then every POST needs
  `Authorization: Bearer <that value>` (401 otherwise). The CLI sends it with
  `--codec-auth "Bearer <token>"`; the UI with its "pass access token" setting.
  Preflights are never authenticated (browsers send them without credentials).
- Keys come from `SWITCHBACK_CODEC_KEYS` (codec/aes_gcm.py); without them the server
  refuses to start. Whoever reaches `/decode` reads every payload: bind it to
  localhost or put it behind TLS and auth.

It is the standard library's threading HTTP server (aiohttp is not a dependency of
switchback); each request runs the codec's coroutine on its own short event loop.
`--port 0` picks a free port; the first line on stdout names the address.
"""

from __future__ import annotations

import argparse
import asyncio
import hmac
import json
import logging
import os
import sys
import threading
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from google.protobuf import json_format
from temporalio.api.common.v1 import Payloads
from temporalio.converter import PayloadCodec

from switchback.codec.aes_gcm import ENV_KEYS, CodecError, codec_from_env

ENV_AUTH = "SWITCHBACK_CODEC_AUTH"
DEFAULT_ORIGINS = ("http://127.0.0.1:8233", "http://localhost:8233")
MAX_BODY = 64 * 1024 * 1024
log = logging.getLogger("switchback.codec")


class CodecServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, codec: PayloadCodec, host: str = "127.0.0.1", port: int = 8081,
                 cors_origins: Sequence[str] = DEFAULT_ORIGINS,
                 auth_token: str | None = None) -> None:
        super().__init__((host, port), _Handler)
        self.codec = codec
        self.cors_origins = frozenset(o.rstrip("/") for o in cors_origins)
        self.auth_token = auth_token or None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        assert isinstance(host, str)  # typed str | bytes; an AF_INET socket's name has a str
        return f"http://{host}:{port}"

    def start(self) -> CodecServer:
        """Serve in a background thread (tests, embedding); `stop()` ends it."""
        self._thread = threading.Thread(target=self.serve_forever, name="codec-server",
                                        daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.shutdown()
        self.server_close()
        if self._thread is not None:
            self._thread.join()


class _Handler(BaseHTTPRequestHandler):
    server: CodecServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args) -> None:  # noqa: A002 - the base's name
        log.info("%s %s", self.address_string(), format % args)

    def _cors(self) -> None:
        origin = (self.headers.get("Origin") or "").rstrip("/")
        if origin and origin in self.server.cors_origins:
            self.send_header("Access-Control-Allow-Origin", origin)
            self.send_header("Access-Control-Allow-Credentials", "true")
            self.send_header("Access-Control-Allow-Methods", "POST, OPTIONS")
            self.send_header("Access-Control-Allow-Headers",
                             "content-type, x-namespace, authorization")
            self.send_header("Access-Control-Max-Age", "600")
        self.send_header("Vary", "Origin")

    def _send(self, status: int, body: bytes = b"", content_type: str = "application/json",
              extra: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self._cors()
        for name, value in (extra or {}).items():
            self.send_header(name, value)
        if body:
            self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _error(self, status: int, message: str, extra: dict[str, str] | None = None) -> None:
        self._send(status, json.dumps({"error": message}).encode(), extra=extra)

    def do_OPTIONS(self) -> None:  # noqa: N802 - http.server's naming
        self._send(204)

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY:
            self.close_connection = True
            return self._error(413, f"body of {length} bytes exceeds {MAX_BODY}")
        body = self.rfile.read(length)
        op = self.path.split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1]
        if op not in ("encode", "decode"):
            return self._error(404, f"no endpoint {self.path!r}; POST .../encode or .../decode")
        token = self.server.auth_token
        if token is not None and not hmac.compare_digest(
                (self.headers.get("Authorization") or "").encode(), f"Bearer {token}".encode()):
            return self._error(401, "missing or wrong Authorization: Bearer token",
                               {"WWW-Authenticate": 'Bearer realm="switchback-codec"'})
        try:
            payloads = json_format.Parse(body or b"{}", Payloads())
        except (json_format.ParseError, UnicodeDecodeError) as e:
            return self._error(400, f"body is not Payloads JSON: {e}")
        codec = self.server.codec
        fn = codec.encode if op == "encode" else codec.decode
        try:
            result = asyncio.run(fn(list(payloads.payloads)))
        except CodecError as e:
            return self._error(400, str(e))
        except Exception as e:  # noqa: BLE001 - a bad payload must not kill the server
            log.exception("%s failed", op)
            return self._error(400, f"{op} failed: {type(e).__name__}")
        log.debug("%s %d payloads for namespace %s", op, len(result),
                  self.headers.get("X-Namespace", "-"))
        self._send(200, json_format.MessageToJson(Payloads(payloads=result)).encode())


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m switchback.codec.server",
                                 description="Temporal codec server for switchback payloads")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8081, help="0 picks a free port")
    ap.add_argument("--cors-origin", action="append", metavar="ORIGIN",
                    help="web UI origin allowed by CORS (repeatable; default: "
                         + ", ".join(DEFAULT_ORIGINS) + ")")
    args = ap.parse_args(argv)
    logging.basicConfig(level=os.environ.get("SWITCHBACK_LOG_LEVEL", "INFO"),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        codec = codec_from_env()
    except CodecError as e:
        sys.exit(f"codec server: {e}")
    if codec is None:
        sys.exit(f"codec server: {ENV_KEYS} is not set; it needs the keys the workers use")
    server = CodecServer(codec, args.host, args.port, args.cors_origin or DEFAULT_ORIGINS,
                         os.environ.get(ENV_AUTH))
    auth = "bearer token" if server.auth_token else "off"
    print(f"codec server listening on {server.url} (keys {', '.join(codec.key_ids)}; "
          f"CORS {', '.join(sorted(server.cors_origins))}; auth {auth})", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
