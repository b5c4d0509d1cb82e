"""SDK command objects from ``(cluster, command, payload)``, every field checked.

``build_command`` returns the SDK's own command object for a tool's call, checking each
payload field against the SDK's descriptors (types, enums, bitmaps, structs, nullables)
so a wrong value is an ``INVALID_PARAMS`` before anything reaches the controller.
"""

from __future__ import annotations

import dataclasses
import enum
import types
import typing
from collections.abc import Mapping
from functools import cache
from typing import Any

from chip.clusters import Objects as Clusters
from chip.clusters.Types import Nullable, NullValue

from bridge.errors import (
    InvalidParamsError,
)
from bridge.matter.catalogue import cluster_info, field_optional


def _check(value: Any, hint: Any, where: str) -> Any:
    """Return ``value`` converted to what ``hint`` asks for; raise on a mismatch."""
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(hint)
        if value is None and (Nullable in args):
            return NullValue
        if value is None and type(None) in args:
            return None
        errors: list[str] = []
        for arg in args:
            if arg in (Nullable, type(None)):
                continue
            try:
                return _check(value, arg, where)
            except InvalidParamsError as err:
                errors.append(err.message)
        raise InvalidParamsError(
            errors[0] if errors else f"{where} must not be null", {"field": where}
        )
    if origin is list:
        if not isinstance(value, list):
            raise InvalidParamsError(f"{where} must be a list", {"field": where})
        (item,) = typing.get_args(hint) or (Any,)
        return [_check(v, item, f"{where}[{i}]") for i, v in enumerate(value)]
    if hint is Any:
        return value
    if isinstance(hint, type):
        if issubclass(hint, enum.IntFlag):
            mask = _flag_mask(hint)
            if not _is_int(value) or value < 0 or value & ~mask:
                raise InvalidParamsError(
                    f"{where} must be a bitmap of {hint.__name__} (mask {mask})", {"field": where}
                )
            return value
        if issubclass(hint, enum.IntEnum):
            allowed = _enum_values(hint)
            if not _is_int(value) or value not in allowed:
                raise InvalidParamsError(
                    f"{where} must be one of {sorted(allowed)} ({hint.__name__})",
                    {"field": where, "allowed": sorted(allowed)},
                )
            return allowed[value]
        if hint is bool:
            if not isinstance(value, bool):
                raise InvalidParamsError(f"{where} must be a boolean", {"field": where})
            return value
        if hint is str:
            if not isinstance(value, str):
                raise InvalidParamsError(f"{where} must be a string", {"field": where})
            return value
        if hint is bytes:
            if not isinstance(value, str):
                raise InvalidParamsError(f"{where} must be a string", {"field": where})
            return value.encode("utf-8")
        if issubclass(hint, float):
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise InvalidParamsError(f"{where} must be a number", {"field": where})
            return float(value)
        if issubclass(hint, int):
            if not _is_int(value):
                raise InvalidParamsError(f"{where} must be an integer", {"field": where})
            if hint.__name__ == "uint" and value < 0:
                raise InvalidParamsError(f"{where} must not be negative", {"field": where})
            return value
        if dataclasses.is_dataclass(hint):
            return _build_struct(hint, value, where)
    raise InvalidParamsError(
        f"{where} has a type the bridge cannot send ({hint})", {"field": where}
    )


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@cache
def _flag_mask(hint: type[enum.IntFlag]) -> int:
    mask = 0
    for member in hint:
        mask |= int(member.value)
    return mask


@cache
def _enum_values(hint: type[enum.IntEnum]) -> dict[int, enum.IntEnum]:
    return {int(m.value): m for m in hint if m.name != "kUnknownEnumValue"}


@cache
def _struct_fields(cls: Any) -> tuple[tuple[str, Any, bool], ...]:
    """Return ``(label, type hint, optional)`` of each field of an SDK struct or command.

    Resolving the hints (``typing.get_type_hints`` on the SDK's string annotations) costs
    hundreds of microseconds, so it is done once per class, not on every command sent.
    """
    hints = typing.get_type_hints(cls)
    fields = []
    for f in cls.descriptor.Fields:
        hint = hints.get(f.Label, Any)
        fields.append((f.Label, hint, field_optional(hint)))
    return tuple(fields)


def _build_struct(cls: Any, value: Any, where: str) -> Any:
    if not isinstance(value, dict):
        raise InvalidParamsError(f"{where} must be an object", {"field": where})
    fields = _struct_fields(cls)
    unknown = sorted(set(value) - {label for label, _, _ in fields})
    if unknown:
        labels = [label for label, _, _ in fields]
        raise InvalidParamsError(
            f"{where} has unknown field(s) {', '.join(unknown)}; known: {', '.join(labels)}",
            {"field": where, "unknown": unknown, "known": labels},
        )
    kwargs: dict[str, Any] = {}
    for label, hint, optional in fields:
        if label not in value:
            if not optional:
                raise InvalidParamsError(
                    f"{where}.{label} is required", {"field": f"{where}.{label}"}
                )
            continue
        kwargs[label] = _check(value[label], hint, f"{where}.{label}" if where else label)
    return cls(**kwargs)


def build_command(cluster: str | int, command: str, payload: Mapping[str, Any]) -> Any:
    """Return the SDK command object for ``cluster.command(payload)``.

    Raises ``InvalidParamsError`` naming the problem when the cluster or command does not
    exist in ``chip.clusters`` or a payload field is missing, unknown or of the wrong type.
    """
    info = cluster_info(cluster)
    if info is None:
        raise InvalidParamsError(f"unknown Matter cluster '{cluster}'", {"cluster": cluster})
    cmd_cls = getattr(getattr(Clusters, info.name).Commands, command, None)
    if command not in info.commands or cmd_cls is None:
        raise InvalidParamsError(
            f"cluster {info.name} has no command '{command}'",
            {"cluster": info.name, "command": command, "known": sorted(info.commands)},
        )
    return _build_struct_command(cmd_cls, dict(payload), info.name, command)


def _build_struct_command(
    cls: type[Any], payload: dict[str, Any], cluster: str, command: str
) -> Any:
    try:
        return _build_struct(cls, payload, "")
    except InvalidParamsError as err:
        err.details.update({"cluster": cluster, "command": command})
        raise
