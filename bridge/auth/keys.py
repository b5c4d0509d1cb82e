"""The node's ed25519 key: creation, loading (file mode 0600), signing and verification.

The key file holds the 32-byte seed as base64url text plus a newline. It is created
with ``O_EXCL`` and mode 0600 in a temporary file and renamed into place, so a crash
never leaves a half-written or world-readable key. Public keys and signatures travel
as unpadded base64url text.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from nacl.exceptions import BadSignatureError, CryptoError
from nacl.signing import SigningKey, VerifyKey

from bridge.auth.canonical import b64d, b64e
from bridge.errors import ConflictError, InvalidRequestError

KEY_FILE_NAME = "node.key"


class NodeKey:
    """An ed25519 signing key with its base64url public key."""

    def __init__(self, signing_key: SigningKey) -> None:
        self._signing_key = signing_key
        self.public_key_b64: str = b64e(bytes(signing_key.verify_key))

    @classmethod
    def generate(cls) -> NodeKey:
        """Return a fresh key kept only in memory."""
        return cls(SigningKey.generate())

    @classmethod
    def create(cls, path: Path, *, force: bool = False) -> NodeKey:
        """Create a key file at ``path``; raise ``ConflictError`` if it exists and not ``force``."""
        if path.exists() and not force:
            raise ConflictError(
                f"key file {path} already exists; use --force to replace it",
                {"path": str(path)},
            )
        key = cls.generate()
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, (b64e(bytes(key._signing_key)) + "\n").encode("ascii"))
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
        return key

    @classmethod
    def load(cls, path: Path) -> NodeKey:
        """Load a key file; raise ``InvalidRequestError`` when it is not a valid key."""
        text = path.read_text(encoding="ascii").strip()
        try:
            seed = b64d(text)
        except ValueError as err:
            raise InvalidRequestError(f"key file {path} is not valid base64url") from err
        if len(seed) != 32:
            raise InvalidRequestError(f"key file {path} does not hold a 32-byte ed25519 seed")
        if path.stat().st_mode & 0o077:
            path.chmod(0o600)
        return cls(SigningKey(seed))

    @classmethod
    def load_or_create(cls, path: Path) -> NodeKey:
        """Load the key at ``path``, creating it first when missing."""
        if path.exists():
            return cls.load(path)
        return cls.create(path)

    def sign(self, data: bytes) -> str:
        """Return the base64url ed25519 signature of ``data``."""
        return b64e(self._signing_key.sign(data).signature)


def verify(public_key_b64: str, data: bytes, signature: str) -> bool:
    """Return whether ``signature`` is a valid signature of ``data`` by ``public_key_b64``."""
    try:
        key_bytes = b64d(public_key_b64)
        sig_bytes = b64d(signature)
    except ValueError:
        return False
    if len(key_bytes) != 32 or len(sig_bytes) != 64:
        return False
    try:
        VerifyKey(key_bytes).verify(data, sig_bytes)
    except (BadSignatureError, CryptoError, ValueError):
        return False
    return True
