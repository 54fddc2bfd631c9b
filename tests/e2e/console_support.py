"""Driving the console in a real headless browser: Debian's chromium through Playwright for Python.

No browser is downloaded: Playwright launches the system's /usr/bin/chromium (installed by
`make install` when missing). Each test gets a fresh browser context, so cookies never leak
between people.
"""

from __future__ import annotations

import os
import shutil
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
    """Debian's chromium, headless, for one test module (the `browser` fixture in conftest.py)."""
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            launched.close()


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
