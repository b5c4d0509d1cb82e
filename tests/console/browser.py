"""Debian's headless Chromium driven by Selenium, for the console's browser tests.

``chromium()`` starts the browser with a fresh profile and no background network
traffic; it skips the test when ``chromium``/``chromedriver`` are not installed (fails
under ATMOSPHERE_REQUIRE_REAL=1; ``make test`` installs them).
Screenshots go to ``tests/output/console/`` (git-ignored).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.support.real import missing

# Overridable so a run can prove that a missing browser fails under ATMOSPHERE_REQUIRE_REAL.
CHROMIUM = os.environ.get("ATMOSPHERE_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("ATMOSPHERE_CHROMEDRIVER", "/usr/bin/chromedriver")
OUTPUT = Path(__file__).resolve().parents[1] / "output" / "console"
DESKTOP = (1280, 900)
PHONE = (390, 844)


@contextmanager
def chromium() -> Iterator[Any]:
    """Yield a Selenium driver on a headless Chromium with a fresh profile."""
    absent = [path for path in (CHROMIUM, CHROMEDRIVER) if not Path(path).exists()]
    if absent:
        missing(
            f"{' and '.join(absent)} not installed (make test installs chromium and "
            "chromium-driver)"
        )
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="atm-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        f"--user-data-dir={profile}",
    ):
        options.add_argument(arg)
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    driver.set_window_size(*DESKTOP)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def wait_for(check: Callable[[], Any], timeout_s: float = 20.0, what: str = "") -> Any:
    """Return ``check()``'s first truthy value, polling; fail after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    last: Any = None
    while time.monotonic() < deadline:
        try:
            last = check()
        except Exception as err:
            last = err
        if last and not isinstance(last, Exception):
            return last
        time.sleep(0.05)
    pytest.fail(f"timed out waiting for {what or check}: last {last!r}")


def screenshot(driver: Any, name: str) -> Path:
    """Write a PNG of the page under ``tests/output/console/``; return its path."""
    OUTPUT.mkdir(parents=True, exist_ok=True)
    path = OUTPUT / f"{name}.png"
    driver.save_screenshot(str(path))
    return path


UNLABELLED_JS = """
const out = [];
const controls = 'button, input:not([type=hidden]), textarea, select, a';
for (const el of document.querySelectorAll(controls)) {
  const name = (el.getAttribute('aria-label') || '').trim()
    || (el.id && document.querySelector(`label[for="${el.id}"]`)?.textContent.trim())
    || (el.tagName === 'BUTTON' || el.tagName === 'A' ? el.textContent.trim() : '');
  if (!name) out.push(el.outerHTML.slice(0, 120));
}
return out;
"""
