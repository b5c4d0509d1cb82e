"""The real-part switch (tests/support/real.py) run on a small suite in a child pytest.

With ``ATMOSPHERE_REQUIRE_REAL`` unset a missing part skips; with it set to 1 (what
``.ci/run`` and ``make test`` under ``CI=true`` do) the same tests fail with the reason,
and so does any other skip. Every run ends with the count of real tests that passed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

SUITE = """
import pytest
from tests.support.real import missing, require

@pytest.mark.browser
def test_needs_a_browser():
    missing("/nowhere/chromium not installed")

@pytest.mark.namespaces
def test_needs_root():
    require("a tmpfs mount needs root")

@pytest.mark.skipif(True, reason="some other skip")
def test_other_skip():
    pass

@pytest.mark.fabric
@pytest.mark.controller
def test_real_and_passing():
    require(None)

@pytest.mark.browser
def test_real_and_passing_too():
    pass

def test_plain():
    pass
"""


def run_suite(tmp_path: Path, switch: str | None) -> subprocess.CompletedProcess[str]:
    (tmp_path / "test_suite.py").write_text(SUITE)
    (tmp_path / "pytest.ini").write_text(
        "[pytest]\nasyncio_default_fixture_loop_scope = function\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("ATMOSPHERE_REQUIRE_REAL", "CI")}
    env["PYTHONPATH"] = str(REPO)
    if switch is not None:
        env["ATMOSPHERE_REQUIRE_REAL"] = switch
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "tests.support.real",
            "-p",
            "no:cacheprovider",
            "-rA",
            str(tmp_path / "test_suite.py"),
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize("switch", [None, "0"])
def test_without_the_switch_a_missing_part_skips(tmp_path: Path, switch: str | None) -> None:
    done = run_suite(tmp_path, switch)
    assert done.returncode == 0, done.stdout
    assert "3 passed, 3 skipped" in done.stdout
    assert (
        "real end-to-end tests passed: 2 (fabric 1, controller 1, browser 1, processes 0, "
        "namespaces 0); skipped 3; ATMOSPHERE_REQUIRE_REAL off"
    ) in done.stdout


def test_with_the_switch_every_skip_fails_with_its_reason(tmp_path: Path) -> None:
    done = run_suite(tmp_path, "1")
    assert done.returncode == 1, done.stdout
    # The skipif marker is evaluated in set-up, so that one reports as an error.
    assert "2 failed, 3 passed, 1 error" in done.stdout
    for reason in (
        "/nowhere/chromium not installed",
        "a tmpfs mount needs root",
        "some other skip",
    ):
        assert reason in done.stdout
    assert "a real end-to-end test may not be skipped" in done.stdout
    assert (
        "real end-to-end tests passed: 2 (fabric 1, controller 1, browser 1, processes 0, "
        "namespaces 0); skipped 0; ATMOSPHERE_REQUIRE_REAL on"
    ) in done.stdout
    assert "1 test(s) failed because they would have skipped" in done.stdout
