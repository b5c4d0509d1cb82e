"""Private fabric namespaces: creation, lookup, the host link and removal."""

from __future__ import annotations

import os
import subprocess

import pytest

from bridge import netns
from tests.support.real import require

pytestmark = pytest.mark.namespaces


@pytest.fixture
def namespace_name() -> str:
    require(netns.unsupported_reason())
    return f"atm-nstest-{os.getpid()}"


def _links(name: str) -> set[str]:
    out = subprocess.run(
        ["ip", "-n", name, "-o", "link", "show"], capture_output=True, text=True, check=True
    ).stdout
    return {line.split(":")[1].strip().split("@")[0] for line in out.splitlines()}


def test_create_find_and_delete(namespace_name: str) -> None:
    ns = netns.create_namespace(namespace_name)
    try:
        assert ns.name == namespace_name
        assert ns.host_address.rsplit(".", 1)[1] == "1"
        assert ns.ns_address == ns.host_address.rsplit(".", 1)[0] + ".2"
        assert _links(namespace_name) == {"lo", "mdns0", "mdns1", "uplink0"}
        assert netns.find_namespace(namespace_name) == ns
        # The host end of the link carries the host address.
        out = subprocess.run(
            ["ip", "-4", "-o", "addr", "show", "dev", ns.host_interface],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        assert f"inet {ns.host_address}/30" in out
        # The namespace answers on its address from the host (ICMP-free check: a TCP
        # connect to a closed port is refused by the namespace's stack, not timed out).
        proc = subprocess.run(
            [
                "python3",
                "-c",
                "import socket,sys\n"
                "try: socket.create_connection((sys.argv[1], 9), 2)\n"
                "except ConnectionRefusedError: print('refused')\n",
                ns.ns_address,
            ],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        )
        assert proc.stdout.strip() == "refused"
    finally:
        netns.delete_namespace(namespace_name)
    assert netns.find_namespace(namespace_name) is None
    netns.delete_namespace(namespace_name)  # idempotent


def test_invalid_name_is_rejected(namespace_name: str) -> None:
    with pytest.raises(netns.NamespaceError, match="invalid namespace name"):
        netns.create_namespace("bad name; rm -rf /")
