"""Driving the console in a real headless browser: Debian's chromium through Playwright for Python.

No browser is downloaded: Playwright launches the system's /usr/bin/chromium (installed by
`make install` when missing). Each test gets a fresh browser context, so cookies never leak
between people.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import Iterator
from urllib.parse import quote

from playwright.sync_api import Browser, Page, sync_playwright

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def chromium_path() -> str:
    path = os.environ.get("MEMLOOP_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    if not os.path.exists(path):
        raise RuntimeError("Debian's chromium is required for the console e2e tests: apt-get install -y chromium")
    return path


def launch_browser() -> Iterator[Browser]:
    """Debian's chromium, headless, for one test module (the `browser` fixture in conftest.py).

    Playwright stops its node driver by closing the driver's stdin and does not reap it; when the
    driver is still exiting as its `Popen` is collected, Python warns "subprocess is still running"
    (an error under filterwarnings=error). So the driver is waited for here, after Playwright stops.
    """
    manager = sync_playwright()
    playwright = manager.__enter__()
    driver = _driver_process(manager)
    try:
        launched = playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            launched.close()
    finally:
        manager.__exit__(None, None, None)
        if driver is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                driver.wait(timeout=15)


def _driver_process(manager: object) -> subprocess.Popen[bytes] | None:
    """The driver's Popen inside Playwright's pipe transport (private; None if its shape changes)."""
    process = getattr(getattr(getattr(manager, "_client", None), "_transport", None), "_proc", None)
    popen = getattr(getattr(process, "_transport", None), "_proc", None)
    return popen if isinstance(popen, subprocess.Popen) else None


def new_page(browser: Browser, width: int = 1280, height: int = 900) -> Page:
    context = browser.new_context(viewport={"width": width, "height": height})
    context.set_default_timeout(30_000)
    return context.new_page()


def sign_in(page: Page, base_url: str, token: str, next_path: str = "/review") -> None:
    """Sign in through the login form as a person would (the form's own CSRF token included)."""
    page.goto(f"{base_url}/login?next={quote(next_path, safe='')}")
    page.get_by_label("Token").fill(token)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(f"{base_url}{next_path.split('?')[0]}*")
