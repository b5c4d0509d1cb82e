"""Thread datasets: hex validation and reading the border router's REST API.

The border router here is a STAND-IN: a real aiohttp server on loopback that serves the
OpenThread Border Router's REST path ``/node/dataset/active`` (no Thread radio or
otbr-agent can run on this machine). ``python-otbr-api`` talks to it unchanged.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from aiohttp import web

from bridge.errors import InvalidParamsError
from bridge.matter.controller.thread import (
    NoThreadDatasetError,
    read_active_dataset,
    validate_dataset_hex,
)

DATASET = (
    "0e080000000000010000"  # active timestamp
    "000300000f"  # channel 15
    "0102abcd"  # PAN ID
    "0208dead00beef00cafe"  # extended PAN ID
    "030474657374"  # network name "test"
    "051000112233445566778899aabbccddeeff"  # network key
    "0708fd11223344556677"  # mesh-local prefix
)


class StandInBorderRouter:
    """STAND-IN for otbr-agent's REST API: serves one active dataset (or none)."""

    def __init__(self) -> None:
        self.dataset: str | None = DATASET.upper()
        self.requests: list[str] = []

    async def active(self, request: web.Request) -> web.Response:
        self.requests.append(f"{request.method} {request.path} {request.headers.get('Accept')}")
        if self.dataset is None:
            return web.Response(status=204)
        return web.Response(text=self.dataset, content_type="text/plain")


@pytest.fixture
async def border_router() -> AsyncIterator[tuple[StandInBorderRouter, str]]:
    stand_in = StandInBorderRouter()
    app = web.Application()
    app.router.add_get("/node/dataset/active", stand_in.active)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    yield stand_in, f"http://127.0.0.1:{port}"
    await runner.cleanup()


def test_valid_dataset_is_canonicalised() -> None:
    assert validate_dataset_hex(DATASET.upper()) == DATASET
    assert validate_dataset_hex(" ".join([DATASET[:20], DATASET[20:]])) == DATASET


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("zz", "hexadecimal"),
        ("0e08000000", "truncated"),
        ("0e", "ends inside a TLV header"),
        ("0e080000000000010000", "lacks: channel, PAN ID, extended PAN ID, network name"),
        (
            DATASET.replace(
                "051000112233445566778899aabbccddeeff", "050f00112233445566778899aabbccddee"
            ),
            "network key must be 16 bytes",
        ),
    ],
)
def test_invalid_dataset_says_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(InvalidParamsError, match=message):
        validate_dataset_hex(text)


async def test_reads_the_active_dataset_from_the_border_router(
    border_router: tuple[StandInBorderRouter, str],
) -> None:
    stand_in, url = border_router
    assert await read_active_dataset(url) == DATASET
    assert stand_in.requests == ["GET /node/dataset/active text/plain"]


async def test_border_router_without_dataset_is_a_clear_error(
    border_router: tuple[StandInBorderRouter, str],
) -> None:
    stand_in, url = border_router
    stand_in.dataset = None
    with pytest.raises(NoThreadDatasetError, match="has no active Thread dataset") as info:
        await read_active_dataset(url)
    assert info.value.code.value == "COMMISSIONING_FAILED"


async def test_unreachable_border_router_is_a_clear_error() -> None:
    with pytest.raises(NoThreadDatasetError, match="cannot read the Thread dataset"):
        await read_active_dataset("http://127.0.0.1:1", timeout_s=2)
