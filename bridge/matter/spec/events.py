"""Matter events → the bridge's ``device.event``: a stable type and human fields per event.

The controller forwards every event a device reports (``node_event``: node, endpoint,
cluster, event id, event number, and the event's fields keyed by their specification
names). This module is the table of the events the bridge names — Switch presses,
door lock alarms and operations, smoke/CO alarms, boolean state changes, operational
errors, valve changes — with the specification's enum values turned into words. An
event it does not know still goes out, as ``matter.event`` with its ids and raw fields,
so nothing a device says is silent.

Event and field ids: Matter 1.4 application cluster specification (Switch 1.13.7,
BooleanState 1.7.5, SmokeCoAlarm 2.11.7, DoorLock 5.2.11, OperationalState 1.14.7,
RvcOperationalState 7.4, ValveConfigurationAndControl 4.6.7, BooleanStateConfiguration 1.8.7).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

SWITCH, BOOLEAN_STATE, SMOKE_CO_ALARM, OPERATIONAL_STATE = 59, 69, 92, 96
RVC_OPERATIONAL_STATE, BOOLEAN_STATE_CONFIGURATION, VALVE, DOOR_LOCK = 97, 128, 129, 257

UNKNOWN_EVENT = "matter.event"

_ALARM_LEVEL = {0: "normal", 1: "warning", 2: "critical"}
_LOCK_ALARM = {
    0: "lock_jammed",
    1: "factory_reset",
    3: "radio_power_cycled",
    4: "wrong_code_entry_limit",
    5: "front_escutcheon_removed",
    6: "door_forced_open",
    7: "door_ajar",
    8: "forced_user",
}
_DOOR_STATE = {
    0: "open",
    1: "closed",
    2: "jammed",
    3: "forced_open",
    4: "unspecified_error",
    5: "ajar",
}
_LOCK_OPERATION = {
    0: "lock",
    1: "unlock",
    2: "non_access_user_event",
    3: "forced_user_event",
    4: "unlatch",
}
_OPERATION_SOURCE = {
    0: "unspecified",
    1: "manual",
    2: "proprietary_remote",
    3: "keypad",
    4: "auto",
    5: "button",
    6: "schedule",
    7: "remote",
    8: "rfid",
    9: "biometric",
    10: "aliro",
}
_OPERATION_ERROR = {
    0: "unspecified",
    1: "invalid_credential",
    2: "disabled_user_denied",
    3: "restricted",
    4: "insufficient_battery",
}
_ERROR_STATE = {
    0: "no_error",
    1: "unable_to_start_or_resume",
    2: "unable_to_complete_operation",
    3: "command_invalid_in_state",
    0x40: "failed_to_find_charging_dock",
    0x41: "stuck",
    0x42: "dust_bin_missing",
    0x43: "dust_bin_full",
    0x44: "water_tank_empty",
    0x45: "water_tank_missing",
    0x46: "water_tank_lid_open",
    0x47: "mop_cleaning_pad_missing",
}
_VALVE_STATE = {0: "closed", 1: "open", 2: "transitioning"}


@dataclass(frozen=True, slots=True, kw_only=True)
class DeviceEvent:
    """One Matter event in the bridge's terms."""

    type: str  # stable: "switch.initial_press", "door_lock.alarm", "matter.event" …
    summary: str  # a short English sentence for people and logs
    fields: dict[str, Any]  # human fields (words for enum values, counts, levels)


def _word(table: Mapping[int, str], value: Any) -> Any:
    return table.get(value, value) if isinstance(value, int) else value


def _pick(data: Mapping[str, Any], *names: str) -> dict[str, Any]:
    return {name: data[name] for name in names if name in data}


def _switch(kind: str, words: str) -> Callable[[Mapping[str, Any]], DeviceEvent]:
    def convert(data: Mapping[str, Any]) -> DeviceEvent:
        fields: dict[str, Any] = {}
        position = data.get("newPosition", data.get("previousPosition"))
        if position is not None:
            fields["position"] = position
        count = data.get("totalNumberOfPressesCounted", data.get("currentNumberOfPressesCounted"))
        if count is not None:
            fields["count"] = count
        summary = words if count is None else f"{words} ({count} press{'es' * (count != 1)})"
        return DeviceEvent(type=f"switch.{kind}", summary=summary, fields=fields)

    return convert


def _alarm(kind: str, words: str) -> Callable[[Mapping[str, Any]], DeviceEvent]:
    def convert(data: Mapping[str, Any]) -> DeviceEvent:
        fields: dict[str, Any] = {}
        if "alarmSeverityLevel" in data:
            fields["level"] = _word(_ALARM_LEVEL, data["alarmSeverityLevel"])
        summary = f"{words}: {fields['level']}" if "level" in fields else words
        return DeviceEvent(type=f"smoke_co.{kind}", summary=summary, fields=fields)

    return convert


def _boolean_state(data: Mapping[str, Any]) -> DeviceEvent:
    state = data.get("stateValue")
    return DeviceEvent(
        type="boolean_state.changed",
        summary=f"state is now {'on' if state else 'off'}",
        fields={"state": state},
    )


def _lock_alarm(data: Mapping[str, Any]) -> DeviceEvent:
    alarm = _word(_LOCK_ALARM, data.get("alarmCode"))
    return DeviceEvent(
        type="door_lock.alarm", summary=f"lock alarm: {alarm}", fields={"alarm": alarm}
    )


def _door_state(data: Mapping[str, Any]) -> DeviceEvent:
    state = _word(_DOOR_STATE, data.get("doorState"))
    return DeviceEvent(type="door_lock.door_state", summary=f"door {state}", fields={"door": state})


def _lock_operation(kind: str) -> Callable[[Mapping[str, Any]], DeviceEvent]:
    def convert(data: Mapping[str, Any]) -> DeviceEvent:
        fields = {
            "operation": _word(_LOCK_OPERATION, data.get("lockOperationType")),
            "source": _word(_OPERATION_SOURCE, data.get("operationSource")),
            **_pick(data, "userIndex"),
        }
        if kind == "operation_error":
            fields["error"] = _word(_OPERATION_ERROR, data.get("operationError"))
            summary = f"{fields['operation']} failed ({fields['error']}) from {fields['source']}"
        else:
            summary = f"{fields['operation']} from {fields['source']}"
        return DeviceEvent(type=f"door_lock.{kind}", summary=summary, fields=fields)

    return convert


def _lock_user_change(data: Mapping[str, Any]) -> DeviceEvent:
    return DeviceEvent(
        type="door_lock.user_change",
        summary="lock users or credentials changed",
        fields=_pick(data, "lockDataType", "dataOperationType", "userIndex"),
    )


def _operational_error(data: Mapping[str, Any]) -> DeviceEvent:
    state = data.get("errorState")
    code = state.get("errorStateID") if isinstance(state, Mapping) else state
    error = _word(_ERROR_STATE, code)
    fields: dict[str, Any] = {"error": error}
    if isinstance(state, Mapping) and state.get("errorStateLabel"):
        fields["label"] = state["errorStateLabel"]
    return DeviceEvent(type="operation.error", summary=f"operational error: {error}", fields=fields)


def _operation_completion(data: Mapping[str, Any]) -> DeviceEvent:
    error = _word(_ERROR_STATE, data.get("completionErrorCode"))
    fields = {"error": error, **_pick(data, "totalOperationalTime", "pausedTime")}
    return DeviceEvent(
        type="operation.completed", summary=f"operation finished ({error})", fields=fields
    )


def _valve_state(data: Mapping[str, Any]) -> DeviceEvent:
    state = _word(_VALVE_STATE, data.get("valveState"))
    fields = {"valve": state, **_pick(data, "valveLevel")}
    return DeviceEvent(type="valve.state_changed", summary=f"valve {state}", fields=fields)


def _plain(kind: str, summary: str, *names: str) -> Callable[[Mapping[str, Any]], DeviceEvent]:
    def convert(data: Mapping[str, Any]) -> DeviceEvent:
        return DeviceEvent(type=kind, summary=summary, fields=_pick(data, *names))

    return convert


# (cluster id, event id) → converter of the event's fields.
_EVENTS: dict[tuple[int, int], Callable[[Mapping[str, Any]], DeviceEvent]] = {
    (SWITCH, 0): _switch("latched", "switch moved"),
    (SWITCH, 1): _switch("initial_press", "button pressed"),
    (SWITCH, 2): _switch("long_press", "button held"),
    (SWITCH, 3): _switch("short_release", "button released"),
    (SWITCH, 4): _switch("long_release", "button released after a long press"),
    (SWITCH, 5): _switch("multi_press_ongoing", "button pressed again"),
    (SWITCH, 6): _switch("multi_press_complete", "button press finished"),
    (BOOLEAN_STATE, 0): _boolean_state,
    (SMOKE_CO_ALARM, 0): _alarm("smoke_alarm", "smoke alarm"),
    (SMOKE_CO_ALARM, 1): _alarm("co_alarm", "carbon monoxide alarm"),
    (SMOKE_CO_ALARM, 2): _alarm("low_battery", "alarm battery low"),
    (SMOKE_CO_ALARM, 3): _plain("smoke_co.hardware_fault", "alarm hardware fault"),
    (SMOKE_CO_ALARM, 4): _plain("smoke_co.end_of_service", "alarm at end of service"),
    (SMOKE_CO_ALARM, 5): _plain("smoke_co.self_test_complete", "alarm self-test complete"),
    (SMOKE_CO_ALARM, 6): _plain("smoke_co.alarm_muted", "alarm muted"),
    (SMOKE_CO_ALARM, 7): _plain("smoke_co.mute_ended", "alarm mute ended"),
    (SMOKE_CO_ALARM, 8): _alarm("interconnect_smoke_alarm", "smoke alarm elsewhere"),
    (SMOKE_CO_ALARM, 9): _alarm("interconnect_co_alarm", "carbon monoxide alarm elsewhere"),
    (SMOKE_CO_ALARM, 10): _plain("smoke_co.all_clear", "all alarms clear"),
    (DOOR_LOCK, 0): _lock_alarm,
    (DOOR_LOCK, 1): _door_state,
    (DOOR_LOCK, 2): _lock_operation("operation"),
    (DOOR_LOCK, 3): _lock_operation("operation_error"),
    (DOOR_LOCK, 4): _lock_user_change,
    (OPERATIONAL_STATE, 0): _operational_error,
    (OPERATIONAL_STATE, 1): _operation_completion,
    (RVC_OPERATIONAL_STATE, 0): _operational_error,
    (RVC_OPERATIONAL_STATE, 1): _operation_completion,
    (BOOLEAN_STATE_CONFIGURATION, 0): _plain(
        "sensor.alarms_changed", "sensor alarms changed", "alarmsActive", "alarmsSuppressed"
    ),
    (BOOLEAN_STATE_CONFIGURATION, 1): _plain("sensor.fault", "sensor fault", "sensorFault"),
    (VALVE, 0): _valve_state,
    (VALVE, 1): _plain("valve.fault", "valve fault", "valveFault"),
}


def describe(cluster_id: int, event_id: int, data: Any) -> DeviceEvent:
    """Return the bridge's view of one Matter event (``matter.event`` for an unknown one)."""
    fields: Mapping[str, Any] = data if isinstance(data, Mapping) else {}
    convert = _EVENTS.get((cluster_id, event_id))
    if convert is None:
        return DeviceEvent(
            type=UNKNOWN_EVENT,
            summary=f"event {event_id} of cluster {cluster_id}",
            fields={"raw": dict(fields)},
        )
    return convert(fields)


def known_types() -> list[str]:
    """Return every stable event type this table can produce (for schemas and docs)."""
    types = {describe(cluster, event, {}).type for cluster, event in _EVENTS}
    return sorted(types)


def described_clusters() -> frozenset[int]:
    """Return the clusters whose events this table words (their events can be waited for)."""
    return frozenset(cluster for cluster, _event in _EVENTS)
