"""Trust policy: allowlist by id, fingerprint or key; TOFU pinning of names to keys."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bridge.errors import UnauthenticatedError
from bridge.mesh.node_id import NodeIdentity
from bridge.mesh.trust import TrustMode, TrustPolicy

from .conftest import make_identity


def test_allowlist_accepts_listed_forms_and_own_key(alice: NodeIdentity, bob: NodeIdentity) -> None:
    carol = make_identity("carol")
    dave = make_identity("dave")
    policy = TrustPolicy(
        "allowlist", (bob.node_id, carol.fingerprint, dave.public_key_b64), alice.public_key_b64
    )
    assert policy.mode is TrustMode.ALLOWLIST
    for ident in (alice, bob, carol, dave):
        assert policy.is_trusted(ident.public_key_b64, ident.name)
        policy.check(ident.public_key_b64, ident.name)
    stranger = make_identity("stranger")
    assert not policy.is_trusted(stranger.public_key_b64, "stranger")
    with pytest.raises(UnauthenticatedError, match="allowlist") as info:
        policy.check(stranger.public_key_b64, "stranger")
    assert info.value.details == {"fingerprint": stranger.fingerprint}


def test_tofu_pins_names_and_persists(tmp_path: Path, alice: NodeIdentity) -> None:
    pins = tmp_path / "pins.json"
    policy = TrustPolicy("tofu", (), alice.public_key_b64, pins)
    garage = make_identity("garage")
    impostor = make_identity("garage")
    policy.check(garage.public_key_b64, "garage")
    assert json.loads(pins.read_text()) == {"garage": garage.public_key_b64}
    assert not policy.is_trusted(impostor.public_key_b64, "garage")
    with pytest.raises(UnauthenticatedError, match="pinned to another key"):
        policy.check(impostor.public_key_b64, "garage")
    reloaded = TrustPolicy("tofu", (), alice.public_key_b64, pins)
    with pytest.raises(UnauthenticatedError, match="pinned"):
        reloaded.check(impostor.public_key_b64, "garage")
    reloaded.check(garage.public_key_b64, "garage")


def test_unknown_mode_is_refused(alice: NodeIdentity) -> None:
    with pytest.raises(ValueError, match="unknown mesh trust mode"):
        TrustPolicy("everyone", (), alice.public_key_b64)
