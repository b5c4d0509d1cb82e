"""``matter.controller_key_file``: the key an external guarded controller demands."""

from __future__ import annotations

from pathlib import Path

import pytest

from bridge.config import BridgeConfig, MatterConfig
from bridge.errors import ConfigInvalidError
from bridge.matter import KEY_HEADER
from bridge.matter.component import external_controller_headers

KEY = "k" * 43


def _config(path: Path | None) -> BridgeConfig:
    return BridgeConfig(
        matter=MatterConfig(
            controller_url="ws://127.0.0.1:5580/ws",
            controller_key_file=str(path) if path is not None else None,
        )
    )


def test_the_key_file_becomes_the_header(tmp_path: Path) -> None:
    key_file = tmp_path / "controller.key"
    key_file.write_text(KEY + "\n")
    key_file.chmod(0o600)
    assert external_controller_headers(_config(key_file)) == {KEY_HEADER: KEY}
    assert external_controller_headers(_config(None)) == {}


@pytest.mark.parametrize(
    ("mode", "text", "why"),
    [
        (0o644, KEY, "must be a regular 0600 file"),
        (0o600, "short", "holds no key"),
        (None, KEY, "cannot open"),
    ],
)
def test_an_open_short_or_missing_key_file_is_config_invalid(
    tmp_path: Path, mode: int | None, text: str, why: str
) -> None:
    key_file = tmp_path / "controller.key"
    if mode is not None:
        key_file.write_text(text)
        key_file.chmod(mode)
    with pytest.raises(ConfigInvalidError, match=why) as info:
        external_controller_headers(_config(key_file))
    assert info.value.details == {"key": "matter.controller_key_file"}
