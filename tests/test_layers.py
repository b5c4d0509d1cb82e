"""The layer contracts in pyproject.toml hold: faces over pipeline over sources over core."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from importlinter.cli import lint_imports

ROOT = Path(__file__).resolve().parent.parent


def test_layer_contracts_hold(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    code = lint_imports(
        config_filename=os.fspath(ROOT / "pyproject.toml"), no_cache=True, no_logo=True
    )
    report = capsys.readouterr().out
    assert code == 0, report
    assert "Contracts: 3 kept, 0 broken." in report, report
