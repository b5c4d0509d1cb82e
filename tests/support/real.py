"""The real parts a test needs, what happens when one is missing, and the count of real runs.

A test that needs root, network namespaces, Node.js, the controller venv, Chromium or the
installed ``atmosphere-bridge`` script calls ``require(reason)`` (or ``missing(reason)``)
with the reason the part is absent. On a developer's machine that skips the test; with
``ATMOSPHERE_REQUIRE_REAL=1`` — set by ``.ci/run`` and by ``make test`` under ``CI=true`` —
it FAILS with the reason, so CI never passes with the real end-to-end tests skipped.

The hooks below are registered by ``tests/conftest.py`` (and can be loaded alone with
``-p tests.support.real``): under the switch any other skip (a ``skipif`` marker, an
``importorskip``) fails too, and at the end of every run the report prints how many tests
of each real kind (``REAL_MARKERS``) passed, e.g.
``real end-to-end tests passed: fabric 31, controller 143, browser 9, ...``.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections import Counter
from collections.abc import Generator
from pathlib import Path
from typing import Any, NoReturn

import pytest

REQUIRE_ENV = "ATMOSPHERE_REQUIRE_REAL"
BRIDGE_SCRIPT = Path(sys.executable).parent / "atmosphere-bridge"

# Marker -> what a test so marked runs for real (registered in pyproject.toml as well).
REAL_MARKERS = {
    "fabric": "the real Matter controller and matter.js devices in a private network namespace",
    "controller": "the real python-matter-server holding test nodes imported from dumps",
    "browser": "Debian's headless Chromium driven by Selenium",
    "processes": "the installed atmosphere-bridge script run as separate processes",
    "namespaces": "root: network or mount namespaces, tmpfs mounts, another user",
}

_PASSED: pytest.StashKey[Counter[str]] = pytest.StashKey()
_SKIPS_FAILED: pytest.StashKey[list[str]] = pytest.StashKey()


def required() -> bool:
    """Return True when a missing real part must fail the test instead of skipping it."""
    return os.environ.get(REQUIRE_ENV, "").strip() not in ("", "0")


def missing(reason: str) -> NoReturn:
    """Skip the current test because ``reason`` — or fail it under ``ATMOSPHERE_REQUIRE_REAL``."""
    if required():
        pytest.fail(
            f"{reason} [{REQUIRE_ENV}=1: a real end-to-end test may not be skipped]", pytrace=False
        )
    pytest.skip(reason)


def require(reason: str | None) -> None:
    """Call ``missing(reason)`` when ``reason`` says a real part is absent; else do nothing."""
    if reason:
        missing(reason)


def root_reason(what: str) -> str | None:
    """Return why ``what`` cannot run (not root), or None."""
    return None if os.geteuid() == 0 else f"{what} needs root"


def tools_reason(*names: str) -> str | None:
    """Return which of the programs ``names`` are not on PATH, or None."""
    absent = [name for name in names if shutil.which(name) is None]
    return f"{', '.join(absent)} not installed" if absent else None


def bridge_script_reason() -> str | None:
    """Return why the installed ``atmosphere-bridge`` script cannot be run, or None."""
    if BRIDGE_SCRIPT.exists():
        return None
    return f"the installed atmosphere-bridge script {BRIDGE_SCRIPT} is missing (make install)"


def pytest_configure(config: pytest.Config) -> None:
    """Register the real-part markers and the per-run counters."""
    for name, what in REAL_MARKERS.items():
        config.addinivalue_line("markers", f"{name}: runs {what}")
    config.stash[_PASSED] = Counter()
    config.stash[_SKIPS_FAILED] = []


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, Any, None]:
    """Count real tests that passed; under the switch turn every skip into a failure."""
    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    if report.when == "call" and report.passed:
        kinds = {mark.name for mark in item.iter_markers()} & REAL_MARKERS.keys()
        item.config.stash[_PASSED].update(kinds)
        if kinds:
            item.config.stash[_PASSED]["any"] += 1
    if report.skipped and required() and not hasattr(report, "wasxfail"):
        longrepr = report.longrepr
        reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
        report.outcome = "failed"
        report.longrepr = f"skipped under {REQUIRE_ENV}=1, which allows no skip: {reason}"
        item.config.stash[_SKIPS_FAILED].append(item.nodeid)


def pytest_collectreport(report: pytest.CollectReport) -> None:
    """Under the switch, a module that skips itself at import fails instead."""
    if report.skipped and required():
        report.outcome = "failed"
        report.longrepr = f"skipped at collection under {REQUIRE_ENV}=1: {report.longrepr}"


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """Print how many tests of each real kind passed (and any skip the switch failed)."""
    passed = config.stash.get(_PASSED, Counter())
    kinds = ", ".join(f"{name} {passed[name]}" for name in REAL_MARKERS)
    skipped = len(terminalreporter.stats.get("skipped", []))
    switch = "on" if required() else "off"
    terminalreporter.write_line(
        f"real end-to-end tests passed: {passed['any']} ({kinds}); skipped {skipped}; "
        f"{REQUIRE_ENV} {switch}"
    )
    failed_skips = config.stash.get(_SKIPS_FAILED, [])
    if failed_skips:
        terminalreporter.write_line(
            f"{len(failed_skips)} test(s) failed because they would have skipped under "
            f"{REQUIRE_ENV}=1: " + ", ".join(failed_skips[:20]),
            red=True,
        )
