"""Which tools a token may see: the one listing rule of every face (HTTP, ToolManager, MCP).

A token sees a tool when it could call it with some parameters: every required
permission without a template must be covered by a grant; a templated one
(``device:control:{device_id}``) must be fillable by some value a grant allows (for an
``enum`` parameter, the schema shown is narrowed to the values the token may use).
``visible_schema`` returns that input schema or ``None``; ``may_see`` is the yes/no;
``may_hold`` asks the same of one permission (an HTTP route's, for the OpenAPI view).

Devices follow the same rule, in one place: ``may_read_device`` says whether a token may read a
device's state (its events, an automation watching it), ``may_see_device`` whether it
may know of the device at all (read or control it: voice names, rooms, suggestions).
"""

from __future__ import annotations

import copy
import itertools
import math
from collections.abc import Iterable, Mapping
from typing import Any

from bridge.auth.permissions import PermissionChecker, covers
from bridge.tools.definition import ToolDefinition
from bridge.tools.device_permissions import DEVICE_CONTROL, DEVICE_READ, device_permission

_TEMPLATE_SEGMENT = "{"
_CHECKER = PermissionChecker()


def _template_names(required: str) -> list[str]:
    return [seg[1:-1] for seg in required.split(":") if seg.startswith(_TEMPLATE_SEGMENT)]


def _grant_values(granted: tuple[str, ...], required: str, name: str) -> list[str]:
    """Return values for ``{name}`` that grants name at its position (``*`` → any value)."""
    segments = required.split(":")
    index = segments.index("{" + name + "}")
    values: list[str] = []
    for grant in granted:
        parts = grant.split(":")
        if index < len(parts):
            values.append("x" if parts[index] == "*" else parts[index])
        elif parts and parts[-1] == "*":
            values.append("x")
    return values


_MAX_COMBINATIONS = 4096


def _combinations_allowed(
    checker: PermissionChecker,
    granted: tuple[str, ...],
    required: str,
    names: list[str],
    props: Mapping[str, Any],
) -> bool:
    """Return whether some values of the templates' parameters make ``required`` allowed."""
    choices: list[list[Any]] = []
    for name in names:
        spec = props.get(name)
        enum = spec.get("enum") if isinstance(spec, Mapping) else None
        choices.append(
            list(enum) if isinstance(enum, list) else _grant_values(granted, required, name)
        )
    if math.prod(len(c) for c in choices) > _MAX_COMBINATIONS:
        # Too many to try: list it when some grant could fit (the old, looser rule).
        return any(
            len(g.split(":")) <= len(required.split(":")) or g.endswith("*") for g in granted
        )
    return any(
        checker.allows(granted, [required], dict(zip(names, combo, strict=True)))
        for combo in itertools.product(*choices)
    )


def visible_schema(
    checker: PermissionChecker, granted: tuple[str, ...], defn: ToolDefinition
) -> dict[str, Any] | None:
    """Return the input schema to list for a token, or ``None`` if it may not call the tool."""
    schema: dict[str, Any] = dict(defn.parameters) if defn.parameters else {"type": "object"}
    schema.setdefault("type", "object")
    properties = schema.get("properties")
    props: Mapping[str, Any] = properties if isinstance(properties, Mapping) else {}
    narrowed: dict[str, list[Any]] = {}
    for required in defn.requires.permissions:
        names = _template_names(required)
        if not names:
            if not any(covers(g, required) for g in granted):
                return None
            continue
        if len(names) > 1:
            # Several templates in one permission (``device:{access}:{device_id}``): list
            # it when some combination of values the schema or the grants name is allowed.
            fits = _combinations_allowed(checker, granted, required, names, props)
            if not fits:
                return None
            continue
        (name,) = names
        spec = props.get(name)
        enum = spec.get("enum") if isinstance(spec, Mapping) else None
        candidates = (
            list(enum) if isinstance(enum, list) else _grant_values(granted, required, name)
        )
        allowed = [v for v in candidates if checker.allows(granted, [required], {name: v})]
        if not allowed:
            return None
        if isinstance(enum, list):
            previous = narrowed.get(name)
            narrowed[name] = [v for v in allowed if previous is None or v in previous]
            if not narrowed[name]:
                return None
    if narrowed:
        schema = copy.deepcopy(schema)
        for name, values in narrowed.items():
            prop: dict[str, Any] = schema["properties"][name]
            prop["enum"] = values
    return schema


def may_read_device(granted: Iterable[str], device_id: str) -> bool:
    """Return whether a grant covers reading ``device_id``'s state."""
    wanted = device_permission(DEVICE_READ, device_id)
    return any(covers(g, wanted) for g in granted)


def may_see_device(granted: Iterable[str], device_id: str) -> bool:
    """Return whether a grant covers reading or controlling ``device_id``."""
    wanted = (
        device_permission(DEVICE_READ, device_id),
        device_permission(DEVICE_CONTROL, device_id),
    )
    return any(covers(g, w) for g in granted for w in wanted)


def may_see(granted: tuple[str, ...], defn: ToolDefinition) -> bool:
    """Return whether a token with ``granted`` may list (and so read) ``defn``."""
    return visible_schema(_CHECKER, granted, defn) is not None


def may_hold(granted: tuple[str, ...], required: str) -> bool:
    """Return whether some grant covers ``required`` for some value of its templates."""
    if not _template_names(required):
        return any(covers(g, required) for g in granted)
    segments = required.split(":")
    for grant in granted:
        parts = grant.split(":")
        filled = [
            (parts[i] if i < len(parts) and parts[i] != "*" else "x")
            if seg.startswith(_TEMPLATE_SEGMENT)
            else seg
            for i, seg in enumerate(segments)
        ]
        if covers(grant, ":".join(filled)):
            return True
    return False
