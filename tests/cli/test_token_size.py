"""``token issue`` refuses a token that no Authorization header could carry."""

from __future__ import annotations

from pathlib import Path

import pytest

from bridge.cli.main import main


def test_issue_refuses_a_token_too_large_to_use(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = str(tmp_path / "state")
    assert main(["keys", "init", "--state-dir", state]) == 0
    capsys.readouterr()
    perms = [arg for i in range(800) for arg in ("--perm", f"device:control:lamp_{i:04d}_x")]
    assert main(["token", "issue", "--state-dir", state, "--agent", "many", *perms]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error [INVALID_REQUEST]: this token would be ")
    assert "fewer, broader permission" in err
    # 250 permissions fit (a ~10 KB header, which the API accepts: 20 KiB by default).
    assert main(["token", "issue", "--state-dir", state, "--agent", "many", *perms[:500]]) == 0
    assert len(capsys.readouterr().out.strip()) > 8190
