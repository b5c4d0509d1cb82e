"""Operational instance names (Matter core spec 4.3.2.1) as the recovery watch reads them."""

from __future__ import annotations

from bridge.matter.controller.recovery import instance_name, parse_instance


def test_an_operational_instance_name_is_fabric_dash_node_in_16_hex_digits() -> None:
    # The spec's own example: compressed fabric id 2906C908D115D362, node 8FC7772401CD0696.
    name = "2906C908D115D362-8FC7772401CD0696._matter._tcp.local."
    assert parse_instance(name) == (0x2906C908D115D362, 0x8FC7772401CD0696)
    assert instance_name(0x2906C908D115D362, 0x8FC7772401CD0696) == name
    assert instance_name(0xAB, 1) == "00000000000000AB-0000000000000001._matter._tcp.local."
    assert parse_instance("2906c908d115d362-0000000000000004._matter._tcp.local.") == (
        0x2906C908D115D362,
        4,
    )


def test_other_names_are_not_operational_instances() -> None:
    for name in (
        "2906C908D115D362-8FC7772401CD0696._matterc._udp.local.",  # commissionable
        "2906C908D115D362-8FC77724._matter._tcp.local.",  # short node id
        "2906C908D115D362_8FC7772401CD0696._matter._tcp.local.",
        "_matter._tcp.local.",
        "2906C908D115D362-8FC7772401CD069G._matter._tcp.local.",
    ):
        assert parse_instance(name) is None, name
