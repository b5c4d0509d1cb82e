"""A device's refusal inside a successful answer: attribute-write statuses, command statuses.

The controller answers a refused attribute write as a normal result
(``[{"Path": ..., "Status": 136}]``, UNSUPPORTED_WRITE) and a refused mode or area
change as a normal command response (``{"status": 1, "statusText": "AreaID 99 is not in
the supported areas list"}``; an operational command's ``commandResponseState.errorStateID``).
``check_result`` turns those into errors so a tool never reports success for something
the device did not do. Status codes: Matter 1.4 core specification 8.10 (interaction
model) and the application clusters' response enums (ModeBase 1.10.7.2, ServiceArea
1.17.7.2, OperationalState 1.14.4.4).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bridge.errors import BridgeError, InvalidParamsError, ToolFailedError
from bridge.matter.spec.models import ActionKind, MatterAction

# Interaction-model statuses that mean "the request was wrong", not "the device failed".
_REQUEST_WRONG = {
    0x85: "INVALID_COMMAND",
    0x86: "UNSUPPORTED_ATTRIBUTE",
    0x87: "CONSTRAINT_ERROR",
    0x88: "UNSUPPORTED_WRITE",
    0x8D: "INVALID_DATA_TYPE",
    0xC3: "UNSUPPORTED_CLUSTER",
}
_OTHER = {
    0x01: "FAILURE",
    0x7E: "UNSUPPORTED_ACCESS",
    0x81: "UNSUPPORTED_COMMAND",
    0x94: "RESOURCE_EXHAUSTED",
    0xC6: "NEEDS_TIMED_INTERACTION",
    0xCB: "INVALID_IN_STATE",
}
# OperationalState ErrorStateEnum (and RVC's): 0 is "no error".
_OPERATION_ERRORS = {
    1: "unable to start or resume",
    2: "unable to complete the operation",
    3: "the command is invalid in this state",
    0x40: "failed to find the charging dock",
    0x41: "stuck",
    0x42: "dust bin missing",
    0x43: "dust bin full",
    0x44: "water tank empty",
    0x45: "water tank missing",
    0x46: "water tank lid open",
    0x47: "mop cleaning pad missing",
}


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def check_result(action: MatterAction, result: Any) -> None:
    """Raise ``InvalidParamsError`` or ``ToolFailedError`` if ``result`` is a refusal."""
    if action.kind is ActionKind.WRITE and isinstance(result, list):
        for entry in result:
            status = _int(entry.get("Status")) if isinstance(entry, Mapping) else None
            if status:
                raise _write_error(action, status)
    elif action.kind is ActionKind.COMMAND and isinstance(result, Mapping):
        status = _int(result.get("status"))
        if status:
            text = result.get("statusText")
            reason = text if isinstance(text, str) and text else f"status {status}"
            raise InvalidParamsError(
                f"{action.cluster}.{action.name} was refused by the device: {reason}",
                {"action": action.to_json(), "status": status},
            )
        state = result.get("commandResponseState")
        if isinstance(state, Mapping):
            error = _int(state.get("errorStateID"))
            if error:
                reason = _OPERATION_ERRORS.get(error, f"error {error}")
                raise ToolFailedError(
                    f"{action.cluster}.{action.name} was refused by the device: {reason}",
                    {"action": action.to_json(), "error_state": error},
                )


def _write_error(action: MatterAction, status: int) -> BridgeError:
    name = _REQUEST_WRONG.get(status) or _OTHER.get(status) or f"0x{status:02X}"
    message = f"writing {action.cluster}.{action.name} was refused by the device: {name}"
    details = {"action": action.to_json(), "status": status}
    if status in _REQUEST_WRONG:
        return InvalidParamsError(message, details)
    return ToolFailedError(message, details)
