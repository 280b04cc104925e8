"""Headless Chromium, driven by playwright, for tests that look at the Temporal web UI.

Contract:
- ``chromium_path()``: ``$SWITCHBACK_CHROMIUM``, else ``/usr/bin/chromium`` (Debian's package),
  else ``chromium`` on PATH, else None. ``skip_reason()``: None when a browser test can run,
  else why not (no ``playwright`` package or no Chromium). Nothing here downloads a browser.
- ``browser()``: async context manager yielding a playwright ``BrowserContext`` of headless
  Chromium with ``FLAGS`` and a fresh empty profile (removed on exit); 1600x1000, UTC.
  ``list_columns()`` on it picks the columns of the UI's workflow list.
- ``open_workflow()`` opens a workflow's page (a tab of it) and returns the ``Page`` once the
  header is shown. It waits for "load", never "networkidle": the page of a running workflow
  polls its history for ever.
- ``page_text()`` is the visible text of the page and of its iframes: the UI renders the summary,
  details and current details as markdown in iframes (``#user-metadata-summary``,
  ``#user-metadata-details``, ``#user-metadata-current-details``).
- ``wait_for_texts()`` waits until every text is in ``page_text()`` and returns it, or raises
  AssertionError naming the missing ones. ``screenshot()`` saves a PNG and returns its path.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import tempfile
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from playwright.async_api import BrowserContext, Page

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def chromium_path() -> str | None:
    for candidate in (os.environ.get("SWITCHBACK_CHROMIUM"), "/usr/bin/chromium"):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return shutil.which("chromium")


def skip_reason() -> str | None:
    try:
        import playwright.async_api  # noqa: F401
    except ImportError:
        return "no browser: the playwright package is not installed (pip install playwright)"
    if chromium_path() is None:
        return ("no browser: Chromium not found (apt-get install -y chromium, "
                "or set SWITCHBACK_CHROMIUM to a Chromium executable)")
    return None


@asynccontextmanager
async def browser(width: int = 1600, height: int = 1000) -> AsyncIterator[BrowserContext]:
    from playwright.async_api import async_playwright

    exe = chromium_path()
    if exe is None:
        raise RuntimeError(skip_reason())
    with tempfile.TemporaryDirectory(prefix="sb-chromium-") as profile:
        async with async_playwright() as p:
            ctx = await p.chromium.launch_persistent_context(
                profile, executable_path=exe, headless=True, args=FLAGS, timezone_id="UTC",
                viewport={"width": width, "height": height})
            try:
                yield ctx
            finally:
                await ctx.close()


async def list_columns(ctx: BrowserContext, labels: Iterable[str],
                       namespace: str = "default") -> None:
    """Columns of the workflow list (the UI keeps them in localStorage, per namespace)."""
    value = json.dumps({namespace: [{"label": label} for label in labels]})
    await ctx.add_init_script(
        f"localStorage.setItem('namespace-workflow-table-columns', {json.dumps(value)});")


async def open_workflow(ctx: BrowserContext, base_url: str, workflow_id: str, tab: str = "",
                        namespace: str = "default", run_id: str | None = None,
                        timeout: float = 30.0) -> Page:
    """``tab``: "" (the timeline), "history", "user-metadata", "memo", "search-attributes", ..."""
    page = ctx.pages[0] if ctx.pages else await ctx.new_page()
    page.set_default_timeout(timeout * 1000)
    url = f"{base_url.rstrip('/')}/namespaces/{namespace}/workflows/{workflow_id}"
    if run_id is None:  # the UI redirects to .../<workflow>/<run>/timeline
        await page.goto(url, wait_until="load")
        await page.wait_for_url(f"{url}/*/*")
        url = page.url.rsplit("/", 1)[0]
    else:
        url = f"{url}/{run_id}"
    if tab or run_id is not None:
        await page.goto(f"{url}/{tab}" if tab else url, wait_until="load")
    await page.locator('[data-testid="workflow-id-heading"]').first.wait_for()
    return page


async def page_text(page: Page) -> str:
    parts = [await page.inner_text("body")]
    for frame in page.frames:
        if frame is not page.main_frame and not frame.is_detached():
            try:
                parts.append(await frame.inner_text("body", timeout=2000))
            except Exception:  # an iframe still loading or gone
                pass
    return "\n".join(parts)


async def wait_for_texts(page: Page, texts: Iterable[str], timeout: float = 20.0) -> str:
    wanted, deadline = list(texts), asyncio.get_running_loop().time() + timeout
    while True:
        text = await page_text(page)
        missing = [t for t in wanted if t not in text]
        if not missing:
            return text
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"not on {page.url} after {timeout}s: {missing!r}\n"
                                 f"page text (last 1500 chars):\n{text[-1500:]}")
        await asyncio.sleep(0.5)


async def screenshot(page: Page, path: str | Path, full_page: bool = False) -> Path:
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    await page.screenshot(path=str(out), full_page=full_page)
    return out
