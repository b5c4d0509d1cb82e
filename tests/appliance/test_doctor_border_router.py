"""Border-router checks against a loopback stand-in for otbr-agent's REST API."""

from __future__ import annotations

import pytest

from bridge.doctor.border_router import (
    check_border_router,
    check_thread_credentials,
    check_thread_dataset,
    check_thread_network,
    probe_border_router,
)
from bridge.doctor.controller_check import ServerInfo
from bridge.doctor.models import Status
from tests.appliance.otbr_standin import (
    DATASET,
    NETWORK_KEY,
    BorderRouterState,
    border_router_standin,
    free_loopback_port,
)

SUMMARY = {
    "network_name": "Atmosphere-1",
    "channel": "15",
    "pan_id": "0x1234",
    "ext_pan_id": "dead00beef00cafe",
}


def _info(thread_set: bool) -> ServerInfo:
    return ServerInfo(
        schema_version=11,
        min_supported_schema_version=9,
        sdk_version="x",
        fabric_id=1,
        thread_credentials_set=thread_set,
    )


async def test_healthy_border_router() -> None:
    state = BorderRouterState()
    async with border_router_standin(state) as url:
        probe = await probe_border_router(url + "/", 2.0)
    assert probe.url == url
    assert probe.role == "leader"
    assert probe.dataset_tlvs == DATASET
    assert probe.summary == SUMMARY
    assert state.requests == [
        "GET /node/state",
        "GET /api/actions",
        "GET /node/dataset/active Accept=text/plain",
    ]
    br = check_border_router(url, probe)
    assert br.status is Status.OK
    assert br.found == f"{url} answers; Thread role leader"
    assert check_thread_network(probe).status is Status.OK
    ds = check_thread_dataset(probe, None)
    assert ds.status is Status.OK
    assert ds.found == (
        "network Atmosphere-1, channel 15, PAN ID 0x1234, extended PAN ID dead00beef00cafe"
    )
    # The report never carries the network key.
    assert NETWORK_KEY.hex() not in repr(ds.to_json()).lower()
    assert check_thread_dataset(probe, DATASET.hex()).status is Status.OK


@pytest.mark.parametrize(
    ("role", "status"),
    [
        ("router", Status.OK),
        ("child", Status.OK),
        ("detached", Status.FAIL),
        ("disabled", Status.FAIL),
        ("bogus", Status.WARN),
    ],
)
async def test_thread_roles(role: str, status: Status) -> None:
    async with border_router_standin(BorderRouterState(role=role)) as url:
        probe = await probe_border_router(url, 2.0)
    result = check_thread_network(probe)
    assert result.status is status
    assert result.found == f"border router role: {role}"


async def test_no_active_dataset_fails() -> None:
    async with border_router_standin(BorderRouterState(role="detached", dataset=None)) as url:
        probe = await probe_border_router(url, 2.0)
    assert probe.dataset_tlvs is None
    result = check_thread_dataset(probe, None)
    assert result.status is Status.FAIL
    assert result.found == "the border router has no active dataset"
    assert "dataset init new" in result.fix
    handed = check_thread_credentials(probe, _info(False))
    assert handed.status is Status.WARN
    assert handed.found == "not checked: no active dataset to hand over"


async def test_dataset_differing_from_configuration_warns() -> None:
    other = DATASET.replace(b"Atmosphere-1", b"Atmosphere-2")
    async with border_router_standin(BorderRouterState()) as url:
        probe = await probe_border_router(url, 2.0)
    result = check_thread_dataset(probe, other.hex())
    assert result.status is Status.WARN
    assert result.found.endswith("differs from thread.dataset_hex in the configuration")


async def test_dataset_handed_to_controller() -> None:
    async with border_router_standin(BorderRouterState()) as url:
        probe = await probe_border_router(url, 2.0)
    assert check_thread_credentials(probe, _info(True)).status is Status.OK
    missing = check_thread_credentials(probe, _info(False))
    assert missing.status is Status.WARN
    assert missing.found == (
        "the controller holds no Thread dataset yet (it has none after each start)"
    )
    unknown = check_thread_credentials(probe, None)
    assert unknown.status is Status.WARN
    assert unknown.found == "not checked: the controller cannot be reached"


async def test_server_error_fails() -> None:
    async with border_router_standin(BorderRouterState(state_status=500)) as url:
        probe = await probe_border_router(url, 2.0)
    result = check_border_router(url, probe)
    assert result.status is Status.FAIL
    assert result.found == f"GET {url}/node/state answered HTTP 500"


async def test_unreachable_border_router_fails() -> None:
    url = f"http://127.0.0.1:{free_loopback_port()}"
    probe = await probe_border_router(url, 2.0)
    result = check_border_router(url, probe)
    assert result.status is Status.FAIL
    assert result.found.startswith(f"cannot read {url}/node/state: Cannot connect to host")
    for check in (check_thread_network(probe), check_thread_dataset(probe, None)):
        assert check.status is Status.WARN
        assert check.found == "not checked: the border router cannot be read"


def test_no_border_router_configured_warns() -> None:
    result = check_border_router(None, None)
    assert result.status is Status.WARN
    assert result.found == "no border router configured (thread.otbr_url is empty)"
