import stat
from pathlib import Path

import pytest

from bridge.auth.keys import NodeKey, verify
from bridge.errors import ConflictError


def test_create_writes_0600_and_refuses_overwrite(tmp_path: Path) -> None:
    path = tmp_path / "state" / "node.key"
    key = NodeKey.create(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    with pytest.raises(ConflictError):
        NodeKey.create(path)
    assert NodeKey.load(path).public_key_b64 == key.public_key_b64
    replaced = NodeKey.create(path, force=True)
    assert replaced.public_key_b64 != key.public_key_b64
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert list(path.parent.iterdir()) == [path]


def test_load_or_create_is_stable(tmp_path: Path) -> None:
    path = tmp_path / "node.key"
    first = NodeKey.load_or_create(path)
    assert NodeKey.load_or_create(path).public_key_b64 == first.public_key_b64


def test_sign_and_verify() -> None:
    key = NodeKey.generate()
    other = NodeKey.generate()
    sig = key.sign(b"hello")
    assert verify(key.public_key_b64, b"hello", sig)
    assert not verify(key.public_key_b64, b"hellO", sig)
    assert not verify(other.public_key_b64, b"hello", sig)
    assert not verify("not-a-key", b"hello", sig)
    assert not verify(key.public_key_b64, b"hello", "AAAA")
