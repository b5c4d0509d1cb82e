"""Permission patterns and the checker that decides whether granted patterns cover a tool's needs.

Details: docs/modules.md, ``bridge.auth.permissions``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Any

from bridge.errors import InvalidRequestError, PermissionDeniedError

WILDCARD = "*"
_SEGMENT = re.compile(r"[A-Za-z0-9_.\-/@+#]{1,128}")
_TEMPLATE = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


def is_valid_pattern(pattern: str) -> bool:
    """Return whether ``pattern`` is a well-formed permission pattern (rule 1)."""
    if not isinstance(pattern, str) or not pattern or len(pattern) > 1024:
        return False
    return all(seg == WILDCARD or _SEGMENT.fullmatch(seg) for seg in pattern.split(":"))


def validate_pattern(pattern: str) -> str:
    """Return ``pattern`` or raise ``InvalidRequestError`` when it is malformed."""
    if not is_valid_pattern(pattern):
        raise InvalidRequestError(
            f"invalid permission pattern {pattern!r}: expected segments like "
            "'namespace:action:resource' with '*' wildcards",
            {"pattern": pattern if isinstance(pattern, str) else repr(pattern)},
        )
    return pattern


@lru_cache(maxsize=8192)
def _segments(pattern: str) -> tuple[str, ...] | None:
    return tuple(pattern.split(":")) if is_valid_pattern(pattern) else None


def covers(granted: str, required: str) -> bool:
    """Return whether the granted pattern covers the required permission (rule 3)."""
    g = _segments(granted)
    r = _segments(required)
    if g is None or r is None:
        return False
    last = len(g) - 1
    for i, gseg in enumerate(g):
        if i >= len(r):
            return False
        if gseg == WILDCARD:
            if i == last:
                return True
            continue
        if gseg != r[i]:
            return False
    return len(g) == len(r)


def fill_template(required: str, params: Mapping[str, Any]) -> str:
    """Fill ``{name}`` templates from ``params``; raise ``PermissionDeniedError`` if unusable."""
    if "{" not in required:
        return required

    def value_for(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in params:
            raise PermissionDeniedError(
                f"permission '{required}' needs parameter '{name}', which the call lacks",
                {"required": required, "missing": name},
            )
        value = params[name]
        if isinstance(value, bool) or not isinstance(value, str | int):
            raise PermissionDeniedError(
                f"parameter '{name}' cannot fill permission '{required}'",
                {"required": required, "parameter": name},
            )
        text = str(value)
        if not _SEGMENT.fullmatch(text):
            raise PermissionDeniedError(
                f"parameter '{name}' is not a valid permission segment",
                {"required": required, "parameter": name},
            )
        return text

    filled = _TEMPLATE.sub(value_for, required)
    if not is_valid_pattern(filled):
        raise PermissionDeniedError(
            f"required permission '{required}' is malformed", {"required": required}
        )
    return filled


class PermissionChecker:
    """Decide whether granted patterns allow a call (the rules in the module docstring)."""

    def check(
        self,
        granted: Sequence[str],
        required: Iterable[str],
        params: Mapping[str, Any] | None = None,
    ) -> tuple[str, ...]:
        """Return the filled requirements; raise ``PermissionDeniedError`` if any is not covered."""
        values = params or {}
        filled = tuple(fill_template(req, values) for req in required)
        for req in filled:
            if not any(covers(g, req) for g in granted):
                raise PermissionDeniedError(
                    f"token does not grant '{req}'", {"required": req, "granted": list(granted)}
                )
        return filled

    def allows(
        self,
        granted: Sequence[str],
        required: Iterable[str],
        params: Mapping[str, Any] | None = None,
    ) -> bool:
        """Return whether the call would be allowed."""
        try:
            self.check(granted, required, params)
        except PermissionDeniedError:
            return False
        return True
