"""Fixtures for appliance tests: run scripts/install.sh into temporary roots."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
INSTALL = REPO / "scripts" / "install.sh"
# The interpreter behind the project venv: >= 3.12, as the install script requires.
PYTHON = getattr(sys, "_base_executable", sys.executable)

Installer = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def run_install() -> Installer:
    """Return a function that runs install.sh offline into a root and returns the result."""

    def run(root: Path, *extra: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(
            ["bash", str(INSTALL), "--root", str(root), "--offline", "--python", PYTHON, *extra],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        if check:
            assert result.returncode == 0, result.stdout + result.stderr
        return result

    return run
