"""A stand-in for an attacker's server: a real HTTP server that records every request it
gets (request line, headers, body) and answers 503, so a job that reaches it learns
nothing and its call is not retried for long. `echo_auth=True` makes it a careless
provider instead: it answers 401 with the Authorization header it got in the body."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class RecordingServer:
    def __init__(self, echo_auth: bool = False) -> None:
        self.seen: list[bytes] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _any(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                owner.seen.append(self.requestline.encode() + b"\n" + bytes(self.headers)
                                  + body)
                answer = b'{"error": {"message": "nothing here"}}'
                if echo_auth:
                    answer = f"invalid key {self.headers.get('Authorization')}".encode()
                self.send_response(401 if echo_auth else 503)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            do_GET = do_POST = do_PUT = _any

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> RecordingServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def saw(self, secret: str) -> bool:
        return any(secret.encode() in r for r in self.seen)
