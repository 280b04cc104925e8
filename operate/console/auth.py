"""Who may use the console. On a loopback address, whoever can reach it (and only under a
loopback host name: a page elsewhere cannot rebind its DNS to it); on any other address a
token is required (SWITCHBACK_CONSOLE_TOKEN), compared in constant time, sent as
`Authorization: Bearer <token>` or the cookie the page sets from `?token=` once. A control
(POST) must also carry the header `X-Switchback-Console`, which a cross-site form or fetch
cannot send without the console's consent (none given): no request forgery."""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response

COOKIE = "switchback_console"
HEADER = "x-switchback-console"
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]", "::1")


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def bind_problem(host: str, token: str | None) -> str | None:
    """Why the console may not listen on `host`, or None."""
    if not is_loopback(host) and not token:
        return (f"--host {host} is not a loopback address: set SWITCHBACK_CONSOLE_TOKEN to a "
                "secret (e.g. `python -c \"import secrets;print(secrets.token_urlsafe())\"`) "
                "and open the console with ?token=<it> once")
    if token is not None and len(token) < 16:
        return "SWITCHBACK_CONSOLE_TOKEN: use at least 16 characters"
    return None


class Guard:
    """The checks above, as the `dispatch` of Starlette's BaseHTTPMiddleware."""

    def __init__(self, token: str | None, loopback: bool) -> None:
        self.token = token
        self.loopback = loopback

    def _has_token(self, request: Request) -> bool:
        if self.token is None:
            return True
        given = request.headers.get("authorization", "").removeprefix("Bearer ").strip() \
            or request.cookies.get(COOKIE, "")
        return hmac.compare_digest(given.encode(), self.token.encode())

    async def dispatch(self, request: Request,
                       call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        host = (request.headers.get("host") or "").rsplit(":", 1)[0]
        if self.loopback and host not in LOOPBACK_NAMES:
            return JSONResponse({"error": f"host {host!r} is not this console's"}, 421)
        offered = request.query_params.get("token")
        if self.token is not None and offered is not None:
            if not hmac.compare_digest(offered.encode(), self.token.encode()):
                return JSONResponse({"error": "wrong token"}, 401)
            back = RedirectResponse(request.url.remove_query_params("token"), 303)
            back.set_cookie(COOKIE, offered, httponly=True, samesite="strict")
            return back
        if not self._has_token(request):
            return JSONResponse({"error": "a token is required (open the console with "
                                 "?token=<SWITCHBACK_CONSOLE_TOKEN> once)"}, 401)
        if request.method == "POST" and HEADER not in request.headers:
            return JSONResponse({"error": f"a control needs the header {HEADER}"}, 403)
        return await call_next(request)
