"""A refusal inside a successful controller answer becomes an error, never a success.

The answers are those measured on python-matter-server 8.1.2 with matter.js devices
(shared/reference/matter-new-kinds.md): a refused attribute write is a result entry with
``Status`` 136 (UNSUPPORTED_WRITE); an unknown service area is a SelectAreasResponse with
``status`` 1 and a statusText; an operational command the device cannot do answers
``commandResponseState.errorStateID``.
"""

from __future__ import annotations

import pytest

from bridge.errors import InvalidParamsError, ToolFailedError
from bridge.matter.controller.responses import check_result
from bridge.matter.spec.models import ActionKind, MatterAction


def write(attribute: str = "PercentCurrent") -> MatterAction:
    return MatterAction(
        kind=ActionKind.WRITE,
        node_id=3,
        endpoint_id=1,
        cluster="FanControl",
        cluster_id=514,
        name=attribute,
        value=50,
        attribute_ids=(3,),
    )


def command(cluster: str, cluster_id: int, name: str) -> MatterAction:
    return MatterAction(
        kind=ActionKind.COMMAND,
        node_id=3,
        endpoint_id=1,
        cluster=cluster,
        cluster_id=cluster_id,
        name=name,
        payload={},
    )


def test_a_refused_write_is_an_error_naming_the_status() -> None:
    answer = [{"Path": {"EndpointId": 1, "ClusterId": 514, "AttributeId": 3}, "Status": 136}]
    with pytest.raises(InvalidParamsError) as info:
        check_result(write(), answer)
    assert info.value.message == (
        "writing FanControl.PercentCurrent was refused by the device: UNSUPPORTED_WRITE"
    )
    assert info.value.details["status"] == 136


def test_an_accepted_write_and_a_plain_command_answer_pass() -> None:
    check_result(write("PercentSetting"), [{"Path": {"AttributeId": 2}, "Status": 0}])
    check_result(command("OnOff", 6, "On"), None)
    check_result(command("RvcRunMode", 84, "ChangeToMode"), {"status": 0, "statusText": ""})
    check_result(
        command("RvcOperationalState", 97, "Pause"), {"commandResponseState": {"errorStateID": 0}}
    )


def test_an_unknown_area_is_refused_with_the_devices_words() -> None:
    answer = {"status": 1, "statusText": "AreaID 99 is not in the supported areas list"}
    with pytest.raises(InvalidParamsError) as info:
        check_result(command("ServiceArea", 336, "SelectAreas"), answer)
    assert info.value.message == (
        "ServiceArea.SelectAreas was refused by the device: "
        "AreaID 99 is not in the supported areas list"
    )


def test_an_operational_error_state_is_a_failed_tool() -> None:
    # ErrorStateEnum 0x41 = Stuck (RVC Operational State 7.4.4.2).
    answer = {"commandResponseState": {"errorStateID": 0x41, "errorStateLabel": None}}
    with pytest.raises(ToolFailedError) as info:
        check_result(command("RvcOperationalState", 97, "Resume"), answer)
    assert info.value.message == "RvcOperationalState.Resume was refused by the device: stuck"
