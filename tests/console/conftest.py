"""Fixtures of the console tests: one real worker (embedded broker + standalone worker with
its REST API) for the package, and Debian's Chromium driven by Playwright.

Screenshots go to ``test-artifacts/console/`` at the top of the checkout.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from playwright.sync_api import Browser, ConsoleMessage, Page, Playwright, sync_playwright

from sluiceway.embedded import EmbeddedConnect
from tests.support import free_port

CHROMIUM = Path("/usr/bin/chromium")  # Debian's package (make system-deps), not a Playwright download
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "console"


@pytest.fixture(scope="package")
def worker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedConnect]:
    # With a Schema Registry inside it, for the Schemas view.
    settings = {"embedded.schema.registry.listeners": f"http://127.0.0.1:{free_port()}"}
    with EmbeddedConnect(tmp_path_factory.mktemp("console-worker"), settings) as connect:
        yield connect


# Package scope, not session: Playwright's sync API keeps an event loop marked running in
# the main thread while it lives, and later tests that call asyncio.run() would fail.
@pytest.fixture(scope="package")
def playwright() -> Iterator[Playwright]:
    with sync_playwright() as pw:
        yield pw


@pytest.fixture(scope="package")
def browser(playwright: Playwright) -> Iterator[Browser]:
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: install Debian's chromium package (make system-deps)")
    chromium = playwright.chromium.launch(executable_path=str(CHROMIUM))
    yield chromium
    chromium.close()


@dataclass
class ConsoleLog:
    """What the page wrote to its console at level error, and the exceptions it did not catch."""

    errors: list[str] = field(default_factory=list)

    def on_console(self, message: ConsoleMessage) -> None:
        if message.type == "error":
            self.errors.append(message.text)

    def on_page_error(self, error: Exception) -> None:
        self.errors.append(f"uncaught: {error}")


@dataclass
class Console:
    """A browser page on the worker's console, with its console errors and screenshots."""

    page: Page
    url: str
    log: ConsoleLog
    shots: Path

    def open(self, hash_route: str = "") -> None:
        self.page.goto(f"{self.url}/ui{hash_route}")

    def shot(self, name: str) -> Path:
        self.shots.mkdir(parents=True, exist_ok=True)
        path = self.shots / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=True)
        return path


@pytest.fixture
def console(worker: EmbeddedConnect, browser: Browser, request: pytest.FixtureRequest) -> Iterator[Console]:
    shots = ARTIFACTS / re.sub(r"[^A-Za-z0-9_.-]+", "_", request.node.name)
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(30_000)
    log = ConsoleLog()
    page.on("console", log.on_console)
    page.on("pageerror", log.on_page_error)
    yield Console(page, worker.url.rstrip("/"), log, shots)
    context.close()
