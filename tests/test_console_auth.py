"""Who may use the console (operate/console/auth.py): a loopback bind answers only under a
loopback host name; any other bind needs a token, refused at start without one; a request
without the token gets 401, `?token=` sets the cookie once; a control needs the console's
header (no cross-site request forgery). Requests that pass get the page; the ones refused
never reach Temporal."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from starlette.testclient import TestClient

from switchback.operate.console.app import make_app
from switchback.operate.console.auth import COOKIE, HEADER, bind_problem

ROOT = Path(__file__).resolve().parent.parent
TOKEN = "s3cret-token-of-the-operator"
NO_TEMPORAL: Any = None  # the checks come first: a refused request never asks Temporal


def test_the_bind_is_checked() -> None:
    assert bind_problem("127.0.0.1", None) is None and bind_problem("::1", None) is None
    assert "SWITCHBACK_CONSOLE_TOKEN" in (bind_problem("0.0.0.0", None) or "")
    assert bind_problem("0.0.0.0", TOKEN) is None
    assert "16 characters" in (bind_problem("0.0.0.0", "short") or "")
    out = subprocess.run([sys.executable, "starter.py", "console", "--host", "0.0.0.0"],
                         cwd=ROOT, capture_output=True, text=True, timeout=60,
                         env={k: v for k, v in os.environ.items()
                              if k != "SWITCHBACK_CONSOLE_TOKEN"})
    assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
    assert "console: --host 0.0.0.0 is not a loopback address" in out.stderr


def test_a_loopback_console_answers_only_its_own_host_names() -> None:
    web = TestClient(make_app(NO_TEMPORAL, None, loopback=True), base_url="http://127.0.0.1:8765")
    assert web.get("/").status_code == 200 and "switchback" in web.get("/").text
    assert web.get("/", headers={"host": "localhost:8765"}).status_code == 200
    rebound = web.get("/", headers={"host": "evil.example:8765"})
    assert rebound.status_code == 421
    forged = web.post("/api/jobs/job-1/cancel", json={})  # no console header: a forged form
    assert forged.status_code == 403 and HEADER in forged.json()["error"]
    # a control's input is checked before anything is sent
    sent = {HEADER: "1"}
    for body, said in (({"call_id": "c", "approved": "yes"}, "approved: must be true or false"),
                       ([1, 2], "must be a JSON object"),
                       ({"issue": "x", "restore_phase": "2"}, "restore_phase: must be a phase"),
                       ({"text": 5}, "text: must be text")):
        action = {"approved": "approve", "issue": "rewind", "text": "instruct"}.get(
            next(iter(body), "") if isinstance(body, dict) else "", "approve")
        bad = web.post(f"/api/jobs/job-1/{action}", json=body, headers=sent)
        assert bad.status_code == 400 and said in bad.json()["error"], (body, bad.text)
    unknown = web.post("/api/jobs/job-1/explode", json={}, headers=sent)
    assert unknown.status_code == 400 and "unknown control 'explode'" in unknown.json()["error"]


def test_elsewhere_a_token_is_required() -> None:
    web = TestClient(make_app(NO_TEMPORAL, TOKEN, loopback=False),
                     base_url="http://console.example", follow_redirects=False)
    assert web.get("/").status_code == 401
    assert web.get("/api/jobs").status_code == 401
    assert web.get("/", headers={"authorization": "Bearer wrong"}).status_code == 401
    assert web.get("/?token=wrong").status_code == 401
    opened = web.get("/jobs/job-1?token=" + TOKEN)
    assert opened.status_code == 303 and opened.headers["location"].endswith("/jobs/job-1")
    assert COOKIE in opened.headers["set-cookie"] and "HttpOnly" in opened.headers["set-cookie"]
    assert web.get("/jobs/job-1").status_code == 200  # the cookie, from now on
    bearer = TestClient(make_app(NO_TEMPORAL, TOKEN, loopback=False),
                        base_url="http://console.example")
    assert bearer.get("/", headers={"authorization": f"Bearer {TOKEN}"}).status_code == 200
    forged = web.post("/api/jobs/job-1/cancel", json={})  # the cookie alone: no control
    assert forged.status_code == 403
