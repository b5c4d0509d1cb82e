"""The hub's accounts and permissions, generated from the list of sites (no hand-written ACL).

A sites file names every site, which other sites it may hear (default: all), and
optionally the public nkey the site made itself (``atmosphere-bridge sites
credentials``). ``hub_config`` turns it into a ``nats-server`` configuration where each
site is one user authenticated by its nkey (the hub holds public keys only) that may
publish only on its own announcement and revocation subjects and on the call subjects
of the sites it may reach, and subscribe only to what those sites announce, to calls
addressed to itself and to its own reply inbox. Details: docs/sites.md.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nkeys

from bridge.errors import ConfigInvalidError
from bridge.mesh.sites import (
    MAX_MESSAGE_BYTES,
    PREFIX,
    SITE_RE,
    announce_subject,
    inbox_prefix,
    read_seed,
    revocation_subject,
)

REPLY_WINDOW = "60s"
DEFAULT_LISTEN = "0.0.0.0:4222"


@dataclass(frozen=True, slots=True, kw_only=True)
class Site:
    """One site of the sites file."""

    name: str
    hears: tuple[str, ...]
    nkey: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class HubSettings:
    """Where the hub listens and its optional TLS files."""

    listen: str = DEFAULT_LISTEN
    tls_cert_file: str | None = None
    tls_key_file: str | None = None


def parse_sites(doc: Any) -> tuple[HubSettings, list[Site]]:
    """Return the hub settings and sites of a parsed sites file.

    Raises ``ConfigInvalidError`` naming the entry that is wrong.
    """
    if not isinstance(doc, dict) or not isinstance(doc.get("sites"), list) or not doc["sites"]:
        raise ConfigInvalidError("the sites file needs a non-empty 'sites' list")
    names: list[str] = []
    known: set[str] = set()
    for entry in doc["sites"]:
        name = entry.get("name") if isinstance(entry, dict) else None
        if not isinstance(name, str) or not SITE_RE.match(name) or name in known:
            raise ConfigInvalidError(
                f"site name {name!r} is invalid or repeated", {"key": "sites[].name"}
            )
        names.append(name)
        known.add(name)
    sites: list[Site] = []
    for entry in doc["sites"]:
        hears = entry.get("hears", [n for n in names if n != entry["name"]])
        if not isinstance(hears, list) or any(h not in known for h in hears):
            raise ConfigInvalidError(
                f"site {entry['name']}: 'hears' must list known sites", {"key": "sites[].hears"}
            )
        nkey = entry.get("nkey")
        if nkey is not None and not _is_user_nkey(nkey):
            raise ConfigInvalidError(
                f"site {entry['name']}: 'nkey' is not a user nkey (U...)", {"key": "sites[].nkey"}
            )
        sites.append(
            Site(name=entry["name"], hears=tuple(h for h in hears if h != entry["name"]), nkey=nkey)
        )
    hub = doc.get("hub") or {}
    if not isinstance(hub, dict):
        raise ConfigInvalidError("'hub' must be a mapping")
    settings = HubSettings(
        listen=str(hub.get("listen", DEFAULT_LISTEN)),
        tls_cert_file=hub.get("tls_cert_file"),
        tls_key_file=hub.get("tls_key_file"),
    )
    return settings, sites


def permissions(site: Site, all_sites: list[str]) -> dict[str, Any]:
    """Return what ``site`` may publish and subscribe to on the hub.

    Wildcards allow, short lists deny: it hears announcements and revocations of every
    site and may call every site but itself, except the sites it may not hear (denied,
    so the hub never delivers them). Each user's lists stay as short as the sites it
    may not hear, however many sites there are (the hub keeps them per connection).
    """
    heard = set(site.hears)
    unheard = [s for s in all_sites if s != site.name and s not in heard]
    publish: dict[str, Any] = {
        "allow": [
            announce_subject(site.name),
            revocation_subject(site.name),
            f"{PREFIX}.call.*.*",
        ],
        "deny": [f"{PREFIX}.call.{other}.*" for other in (site.name, *unheard)],
    }
    subscribe: dict[str, Any] = {
        "allow": [
            f"{PREFIX}.ann.*",
            f"{PREFIX}.rev.*",
            f"{PREFIX}.call.{site.name}.*",
            f"{inbox_prefix(site.name)}.>",
        ]
    }
    if unheard:
        subscribe["deny"] = [
            *(announce_subject(other) for other in unheard),
            *(revocation_subject(other) for other in unheard),
        ]
    return {
        "publish": publish,
        "subscribe": subscribe,
        # Answering a call publishes once to the asker's inbox, within the window.
        "allow_responses": {"max": 1, "expires": REPLY_WINDOW},
    }


def hub_config(settings: HubSettings, sites: list[Site], public_keys: dict[str, str]) -> str:
    """Return the ``nats-server`` configuration text for ``sites`` (nkey of each site given)."""
    names = [site.name for site in sites]
    users = [
        {"nkey": public_keys[site.name], "permissions": permissions(site, names)} for site in sites
    ]
    lines = [
        "# Generated by `atmosphere-bridge sites hub-config` from the sites file: do not edit,",
        "# regenerate. One user per site, authenticated by its nkey; see docs/sites.md.",
        f"listen: {json.dumps(settings.listen)}",
        f"max_payload: {MAX_MESSAGE_BYTES}",
        'ping_interval: "5s"',
        "ping_max: 2",
    ]
    if settings.tls_cert_file and settings.tls_key_file:
        lines.append(
            "tls: "
            + json.dumps(
                {"cert_file": settings.tls_cert_file, "key_file": settings.tls_key_file},
                indent=2,
            )
        )
    lines.append("authorization: " + json.dumps({"users": users}, indent=2))
    return "\n".join(lines) + "\n"


def new_seed() -> str:
    """Return a fresh user nkey seed (``SU...``)."""
    seed: bytes = nkeys.encode_seed(os.urandom(32), nkeys.PREFIX_BYTE_USER)
    return seed.decode()


def public_key_of(seed: str) -> str:
    """Return the public user nkey (``U...``) of ``seed``."""
    pair = nkeys.from_seed(bytearray(seed.encode()))
    public: bytes = pair.public_key
    return public.decode()


def write_seed(path: Path) -> str:
    """Create ``path`` (0600) holding a fresh seed unless it exists; return its public nkey."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    if not path.exists():
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="ascii") as out:
            out.write(new_seed() + "\n")
    return public_key_of(read_seed(path))


def _is_user_nkey(value: Any) -> bool:
    if not isinstance(value, str) or len(value) != 56:
        return False
    try:
        raw = base64.b32decode(value + "=" * (-len(value) % 8))
    except (binascii.Error, ValueError):
        return False
    checksum: bytes = bytes(nkeys.crc16_checksum(raw[:-2]))
    return raw[0] == nkeys.PREFIX_BYTE_USER and checksum == raw[-2:]
