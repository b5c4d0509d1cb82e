"""Thread operational datasets: read from a border router's REST API or given as hex TLVs.

Before a Thread device is commissioned the controller needs the network's active
operational dataset. ``read_active_dataset`` asks the OpenThread Border Router's REST
API through ``python-otbr-api``; ``validate_dataset_hex`` checks a dataset given by
hand. Both return the dataset as lowercase hex TLVs, ready for ``set_thread_dataset``.
"""

from __future__ import annotations

import aiohttp
import python_otbr_api
from python_otbr_api import tlv_parser
from python_otbr_api.tlv_parser import MeshcopTLVType

from bridge.errors import BridgeError, ErrorCode, InvalidParamsError

# MeshCoP TLV types an active dataset must carry to join a network.
REQUIRED_TLVS = {
    MeshcopTLVType.ACTIVETIMESTAMP: "active timestamp",
    MeshcopTLVType.CHANNEL: "channel",
    MeshcopTLVType.PANID: "PAN ID",
    MeshcopTLVType.EXTPANID: "extended PAN ID",
    MeshcopTLVType.NETWORKNAME: "network name",
    MeshcopTLVType.NETWORKKEY: "network key",
    MeshcopTLVType.MESHLOCALPREFIX: "mesh-local prefix",
}


class NoThreadDatasetError(BridgeError):
    """No Thread dataset is available for commissioning a Thread device."""

    http_status = 409
    code = ErrorCode.COMMISSIONING_FAILED


def parse_tlvs(data: bytes) -> dict[MeshcopTLVType | int, tlv_parser.MeshcopTLVItem]:
    """Return a dataset's TLVs by type (python-otbr-api's parser); raise ``InvalidParamsError``."""
    try:
        return tlv_parser.parse_tlv(data.hex())
    except tlv_parser.TLVError as err:
        text = str(err)
        if text.startswith("truncated tlv header"):
            raise InvalidParamsError("the Thread dataset ends inside a TLV header") from err
        if text.startswith("expected"):
            raise InvalidParamsError(f"the Thread dataset has a truncated TLV: {text}") from err
        raise InvalidParamsError(f"the Thread dataset has an invalid TLV: {text}") from err


def validate_dataset_hex(text: str) -> str:
    """Return a dataset given as hex TLVs in canonical form, or raise ``InvalidParamsError``."""
    clean = "".join(text.split()).lower()
    try:
        data = bytes.fromhex(clean)
    except ValueError as err:
        raise InvalidParamsError("the Thread dataset must be hexadecimal TLVs") from err
    tlvs = parse_tlvs(data)
    missing = [name for kind, name in REQUIRED_TLVS.items() if kind not in tlvs]
    if missing:
        raise InvalidParamsError(
            f"the Thread dataset lacks: {', '.join(missing)}", {"missing": missing}
        )
    if len(tlvs[MeshcopTLVType.NETWORKKEY].data) != 16:
        raise InvalidParamsError("the Thread dataset's network key must be 16 bytes")
    return data.hex()


async def read_active_dataset(otbr_url: str, *, timeout_s: int = 10) -> str:
    """Return the border router's active dataset as hex TLVs.

    Raises ``NoThreadDatasetError`` when the border router has no active dataset or
    cannot be reached.
    """
    async with aiohttp.ClientSession() as session:
        otbr = python_otbr_api.OTBR(otbr_url, session, timeout=timeout_s)
        try:
            tlvs = await otbr.get_active_dataset_tlvs()
        except (python_otbr_api.OTBRError, aiohttp.ClientError, TimeoutError) as err:
            raise NoThreadDatasetError(
                f"cannot read the Thread dataset from the border router at {otbr_url}: {err}",
                {"otbr_url": otbr_url},
            ) from err
    if not tlvs:
        raise NoThreadDatasetError(
            f"the border router at {otbr_url} has no active Thread dataset; form a network first",
            {"otbr_url": otbr_url},
        )
    return validate_dataset_hex(bytes(tlvs).hex())
