"""Pages in a real browser: Playwright driving the system's Chromium (never a browser Playwright
downloads: the network is closed), with console errors collected and screenshots kept.

Screenshots go to $MICRO_RT_ARTIFACTS/screenshots when set (CI keeps that folder), else to a
pytest temporary folder; the folder is printed at the end of the run.
"""
from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from conftest import CHROMIUM, missing

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
ARTIFACTS_VAR = "MICRO_RT_ARTIFACTS"


def screenshot_dir(tmp_path_factory) -> Path:
    root = os.environ.get(ARTIFACTS_VAR)
    path = Path(root) / "screenshots" if root else tmp_path_factory.mktemp("screenshots")
    path.mkdir(parents=True, exist_ok=True)
    return path


@contextmanager
def chromium() -> Iterator:
    """A headless Chromium browser (the system's), closed afterwards."""
    if CHROMIUM is None:
        missing("chromium not installed")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing("playwright not installed (pip install -e '.[test]')")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        try:
            yield browser
        finally:
            browser.close()


class Page:
    """A page that records console errors and uncaught exceptions, and refuses every request
    that leaves the machine (a self-contained page makes none)."""

    def __init__(self, browser, shots: Path, width: int = 1400, height: int = 900):
        self.page = browser.new_page(viewport={"width": width, "height": height})
        self.errors: list[str] = []
        self.outside: list[str] = []
        self.shots = shots
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.route("**/*", self._route)

    def _route(self, route) -> None:
        url = route.request.url
        if url.startswith(("file:", "data:", "about:", "http://127.0.0.1")):
            route.continue_()
        else:
            self.outside.append(url)
            route.abort()

    def hover_centre(self, locator) -> str:
        """Move the pointer to the middle of an element; returns the tooltip's text."""
        locator.scroll_into_view_if_needed()
        box = locator.bounding_box()
        self.page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        return self.page.inner_text("#tip")

    def shot(self, name: str, full_page: bool = True) -> Path:
        path = self.shots / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=full_page)
        return path

    def close(self) -> None:
        self.page.close()
