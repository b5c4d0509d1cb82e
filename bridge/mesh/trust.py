"""Whose announcements and forwarded calls count: the mesh trust policy.

Details: docs/modules.md, ``bridge.mesh.trust``.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
from enum import StrEnum
from pathlib import Path

from bridge.errors import ConflictError, InvalidParamsError, NotFoundError, UnauthenticatedError
from bridge.mesh.node_id import NODE_ID_RE, fingerprint_for, node_id_for

MAX_ADDED = 256
_FINGERPRINT_RE = re.compile(r"^[0-9a-f]{64}$")  # hex SHA-256 of the public key

_LOGGER = logging.getLogger(__name__)


class TrustMode(StrEnum):
    """The closed set of trust policies."""

    ALLOWLIST = "allowlist"
    TOFU = "tofu"


class TrustPolicy:
    """Decide whether a node key is trusted; pin names to keys in TOFU mode."""

    def __init__(
        self,
        mode: TrustMode | str,
        trusted: tuple[str, ...],
        own_public_key: str,
        pins_path: Path | None = None,
    ) -> None:
        try:
            self.mode = TrustMode(mode)
        except ValueError as err:
            raise ValueError(f"unknown mesh trust mode {mode!r}") from err
        self._configured = {entry.strip() for entry in trusted if entry.strip()}
        self._own = own_public_key
        self._pins_path = pins_path
        self._added_path = pins_path.with_name("trusted.json") if pins_path else None
        self._added: set[str] = self._load_added()
        self._trusted: set[str] = set()
        self._listed_ids: set[str] = set()
        self._recompute()
        self._pins: dict[str, str] = self._load_pins()

    def _recompute(self) -> None:
        self._listed_keys: dict[str, bool] = {}  # public key -> is_listed, until a change
        self._trusted = self._configured | self._added
        self._listed_ids = set(self._trusted)
        for entry in self._trusted:
            if NODE_ID_RE.match(entry) or _FINGERPRINT_RE.match(entry):
                continue  # an id or fingerprint is listed as it is; only a key derives both
            with contextlib.suppress(ValueError):
                self._listed_ids |= {node_id_for(entry), fingerprint_for(entry)}

    def _load_added(self) -> set[str]:
        if self._added_path is None or not self._added_path.exists():
            return set()
        try:
            data = json.loads(self._added_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            _LOGGER.warning("ignoring unreadable mesh trust file %s", self._added_path)
            return set()
        if not isinstance(data, list):
            return set()
        return {str(e) for e in data if isinstance(e, str) and _valid_entry(e)}

    def _save_added(self) -> None:
        if self._added_path is None:
            return
        self._added_path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = self._added_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(sorted(self._added), indent=1), encoding="utf-8")
        tmp.chmod(0o600)
        os.replace(tmp, self._added_path)

    def entries(self) -> list[dict[str, str]]:
        """Return every trusted entry and where it comes from (configuration or a person)."""
        rows = [{"entry": e, "source": "config"} for e in sorted(self._configured)]
        rows += [{"entry": e, "source": "added"} for e in sorted(self._added - self._configured)]
        return rows

    def add(self, entry: str) -> bool:
        """Trust ``entry`` (node id, fingerprint or public key); return whether it is new.

        Raises ``InvalidParamsError`` for something that is none of those.
        """
        entry = entry.strip()
        if not _valid_entry(entry):
            raise InvalidParamsError(
                "a trusted node is its node id, key fingerprint or base64 public key",
                {"field": "entry"},
            )
        if entry in self._trusted:
            return False
        if len(self._added) >= MAX_ADDED:
            raise ConflictError(f"at most {MAX_ADDED} nodes can be trusted from here")
        self._added.add(entry)
        self._save_added()
        self._recompute()
        return True

    def remove(self, entry: str) -> None:
        """Stop trusting an entry added at run time.

        Raises ``ConflictError`` for one the configuration lists (edit it there) and
        ``NotFoundError`` for one that is not trusted.
        """
        entry = entry.strip()
        if entry in self._configured:
            raise ConflictError(
                "this node is trusted by mesh.trusted_nodes in the configuration; remove it there",
                {"entry": entry[:128], "source": "config"},
            )
        if entry not in self._added:
            raise NotFoundError("this node is not trusted from here", {"entry": entry[:128]})
        self._added.discard(entry)
        self._save_added()
        self._recompute()

    def _load_pins(self) -> dict[str, str]:
        if self._pins_path is None or not self._pins_path.exists():
            return {}
        try:
            data = json.loads(self._pins_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            _LOGGER.warning("ignoring unreadable mesh pin file %s", self._pins_path)
            return {}
        if not isinstance(data, dict):
            return {}
        return {str(k): str(v) for k, v in data.items()}

    def _save_pins(self) -> None:
        if self._pins_path is None:
            return
        self._pins_path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = self._pins_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self._pins, sort_keys=True, indent=1), encoding="utf-8")
        tmp.chmod(0o600)
        os.replace(tmp, self._pins_path)

    def is_listed(self, public_key: str) -> bool:
        """Return whether ``public_key`` is this node's own or on the allowlist."""
        if public_key == self._own or public_key in self._trusted:
            return True
        listed = self._listed_keys.get(public_key)
        if listed is None:
            try:
                ids = {node_id_for(public_key), fingerprint_for(public_key)}
            except ValueError:
                return False
            listed = bool(ids & self._trusted)
            if len(self._listed_keys) >= 4096:
                self._listed_keys.clear()
            self._listed_keys[public_key] = listed
        return listed

    def may_trust(self, node_id: str, fingerprint: str | None) -> bool:
        """Return whether a peer advertising this id and fingerprint could be trusted."""
        if self.mode is TrustMode.TOFU:
            return True
        return node_id in self._listed_ids or (fingerprint or "") in self._listed_ids

    def is_trusted(self, public_key: str, node_name: str | None = None) -> bool:
        """Return whether a key (claiming ``node_name``) would be accepted, without pinning."""
        if self.is_listed(public_key):
            return True
        if self.mode is TrustMode.ALLOWLIST:
            return False
        pinned = self._pins.get(node_name) if node_name else None
        return pinned is None or pinned == public_key

    def check(self, public_key: str, node_name: str | None = None) -> None:
        """Accept a key or raise ``UnauthenticatedError``; in TOFU mode pin a new name."""
        if self.is_listed(public_key):
            return
        if self.mode is TrustMode.ALLOWLIST:
            raise UnauthenticatedError(
                "node key is not on this node's mesh allowlist",
                {"fingerprint": _safe_fingerprint(public_key)},
            )
        if node_name:
            pinned = self._pins.get(node_name)
            if pinned is None:
                self._pins[node_name] = public_key
                self._save_pins()
                _LOGGER.info("pinned mesh node name %r to key %s", node_name, public_key)
            elif pinned != public_key:
                raise UnauthenticatedError(
                    f"node name {node_name!r} is pinned to another key",
                    {"fingerprint": _safe_fingerprint(public_key)},
                )


def _valid_entry(entry: str) -> bool:
    """Return whether ``entry`` can name a node: its id, key fingerprint or public key."""
    if not 0 < len(entry) <= 128 or not entry.isascii():
        return False
    if NODE_ID_RE.match(entry) or _FINGERPRINT_RE.match(entry):
        return True
    try:
        node_id_for(entry)
    except ValueError:
        return False
    return True


def _safe_fingerprint(public_key: str) -> str:
    try:
        return fingerprint_for(public_key)
    except ValueError:
        return ""
