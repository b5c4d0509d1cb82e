"""Discovery helpers: interface addresses, advertisement parsing rules."""

from __future__ import annotations

import pytest

from bridge.mesh.discovery import DiscoveredPeer, interface_addresses
from bridge.mesh.node_id import node_id_for_fingerprint

from .conftest import make_identity


def test_interface_names_and_literal_addresses() -> None:
    assert interface_addresses(("lo",)) == ["127.0.0.1"]
    assert interface_addresses(("10.9.8.7",)) == ["10.9.8.7"]
    assert "127.0.0.1" not in interface_addresses(())
    with pytest.raises(ValueError, match="neither an interface nor an IP"):
        interface_addresses(("no-such-if0",))


def test_txt_id_must_match_fingerprint() -> None:
    ident = make_identity("x")
    assert node_id_for_fingerprint(ident.fingerprint) == ident.node_id
    assert node_id_for_fingerprint(make_identity("y").fingerprint) != ident.node_id
    assert node_id_for_fingerprint("zz") == ""


def test_peer_urls_put_ipv4_first() -> None:
    peer = DiscoveredPeer(
        instance="a._atmosphere._tcp.local.",
        node_id="a" * 26,
        fingerprint="0" * 64,
        addresses=("fd00::1", "10.0.0.2"),
        port=8765,
        protocol=1,
    )
    assert peer.urls() == ["http://10.0.0.2:8765", "http://[fd00::1]:8765"]
