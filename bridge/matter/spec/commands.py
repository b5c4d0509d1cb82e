"""Controller command payloads from ``(cluster, command, payload)``, every field checked.

``build_command`` checks each payload field against the catalogue's declaration of the
command (types, enums, bitmaps, structs, nullables) so a wrong value is an
``INVALID_PARAMS`` before anything reaches the controller, and returns the command as
the controller's ``device_command`` takes it: cluster id, command name and the payload
in the SDK's JSON form (field names as declared, enums and bitmaps as numbers, octet
strings in base64, null for a nullable left empty).
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bridge.errors import InvalidParamsError
from bridge.matter.spec.catalogue import FieldInfo, cluster_info, struct_fields


@dataclass(frozen=True, slots=True, kw_only=True)
class WireCommand:
    """A checked command, ready for the controller's ``device_command``."""

    cluster_id: int
    command_name: str
    payload: dict[str, Any]


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check(value: Any, spec: Any, where: str) -> Any:
    """Return ``value`` as the controller takes it for type ``spec``; raise on a mismatch."""
    if isinstance(spec, str):
        return _check_plain(value, spec, where)
    kind = spec[0]
    if kind == "union":
        _, nullable, optional, options = spec
        if value is None and (nullable or optional):
            return None
        errors: list[str] = []
        for option in options:
            try:
                return _check(value, option, where)
            except InvalidParamsError as err:
                errors.append(err.message)
        raise InvalidParamsError(
            errors[0] if errors else f"{where} must not be null", {"field": where}
        )
    if kind == "list":
        if not isinstance(value, list):
            raise InvalidParamsError(f"{where} must be a list", {"field": where})
        return [_check(v, spec[1], f"{where}[{i}]") for i, v in enumerate(value)]
    if kind == "flags":
        _, name, mask = spec
        if not _is_int(value) or value < 0 or value & ~mask:
            raise InvalidParamsError(
                f"{where} must be a bitmap of {name} (mask {mask})", {"field": where}
            )
        return value
    if kind == "enum":
        _, name, allowed = spec
        if not _is_int(value) or value not in allowed:
            raise InvalidParamsError(
                f"{where} must be one of {sorted(allowed)} ({name})",
                {"field": where, "allowed": sorted(allowed)},
            )
        return value
    if kind == "range":
        _, name, low, high = spec
        if not _is_int(value) or not low <= value <= high:
            raise InvalidParamsError(
                f"{where} must be an integer from {low} to {high} ({name})", {"field": where}
            )
        return value
    if kind == "struct":
        return _build_struct(struct_fields(spec[1]), value, where)
    raise InvalidParamsError(
        f"{where} has a type the bridge cannot send ({spec[1] if len(spec) > 1 else spec})",
        {"field": where},
    )


def _check_plain(value: Any, spec: str, where: str) -> Any:
    if spec == "any":
        return value
    if spec == "bool":
        if not isinstance(value, bool):
            raise InvalidParamsError(f"{where} must be a boolean", {"field": where})
        return value
    if spec in ("str", "bytes"):
        if not isinstance(value, str):
            raise InvalidParamsError(f"{where} must be a string", {"field": where})
        if spec == "bytes":  # an octet string: the text's UTF-8 bytes, base64 on the wire
            return base64.b64encode(value.encode("utf-8")).decode("ascii")
        return value
    if spec == "float":
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise InvalidParamsError(f"{where} must be a number", {"field": where})
        return float(value)
    if spec in ("int", "uint"):
        if not _is_int(value):
            raise InvalidParamsError(f"{where} must be an integer", {"field": where})
        if spec == "uint" and value < 0:
            raise InvalidParamsError(f"{where} must not be negative", {"field": where})
        return value
    raise InvalidParamsError(
        f"{where} has a type the bridge cannot send ({spec})", {"field": where}
    )


def _build_struct(fields: tuple[FieldInfo, ...], value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise InvalidParamsError(f"{where} must be an object", {"field": where})
    unknown = sorted(set(value) - {f.name for f in fields})
    if unknown:
        labels = [f.name for f in fields]
        raise InvalidParamsError(
            f"{where} has unknown field(s) {', '.join(unknown)}; known: {', '.join(labels)}",
            {"field": where, "unknown": unknown, "known": labels},
        )
    out: dict[str, Any] = {}
    for f in fields:
        label = f.name
        if label not in value:
            if not f.optional:
                raise InvalidParamsError(
                    f"{where}.{label} is required", {"field": f"{where}.{label}"}
                )
            continue
        out[label] = _check(value[label], f.type, f"{where}.{label}" if where else label)
    return out


def build_command(cluster: str | int, command: str, payload: Mapping[str, Any]) -> WireCommand:
    """Return the checked controller command for ``cluster.command(payload)``.

    Raises ``InvalidParamsError`` naming the problem when the cluster or command does not
    exist in the catalogue or a payload field is missing, unknown or of the wrong type.
    """
    info = cluster_info(cluster)
    if info is None:
        raise InvalidParamsError(f"unknown Matter cluster '{cluster}'", {"cluster": cluster})
    cmd = info.commands.get(command)
    if cmd is None:
        raise InvalidParamsError(
            f"cluster {info.name} has no command '{command}'",
            {"cluster": info.name, "command": command, "known": sorted(info.commands)},
        )
    try:
        body = _build_struct(cmd.fields, dict(payload), "")
    except InvalidParamsError as err:
        err.details.update({"cluster": info.name, "command": command})
        raise
    return WireCommand(cluster_id=info.id, command_name=command, payload=body)
