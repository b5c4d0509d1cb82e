"""Permission patterns and the checker that decides whether granted patterns cover a tool's needs.

Exact matching rules:

1. A permission is a string of one or more **segments** separated by ``:``, usually
   ``namespace:action:resource``. A segment is either ``*`` or 1-128 characters from
   ``A-Z a-z 0-9 _ . - / @ + #``. Empty segments, partial wildcards (``light-*``) and
   other characters make the pattern invalid.
2. A pattern denotes a set of concrete permissions: a ``*`` segment that is *not* last
   stands for exactly one segment; a ``*`` that *is* last stands for one or more
   segments. So ``*`` alone denotes every permission, ``admin:*`` every permission
   under ``admin`` (``admin:approve``, ``admin:tokens:issue``) but not ``admin``
   itself, ``device:*:light-1`` every action on ``light-1``.
3. A granted pattern **covers** a required permission when every concrete permission
   the requirement denotes is also denoted by the grant. Segment by segment: equal
   segments match; a grant ``*`` matches any single required segment (including a
   required ``*`` that is not last); a grant's last ``*`` matches the rest of the
   requirement when at least one segment is left; a required ``*`` is matched only by a
   grant ``*``. Lengths must agree unless the grant ends in ``*``.
4. Before matching, ``{name}`` templates in a requirement are filled from the call's
   parameters. A value must be a string or an integer (not a boolean) whose text is a
   valid non-wildcard segment. A missing or unusable value makes the call **denied**
   (``PERMISSION_DENIED`` naming the template), never an error of another kind.
5. A call is allowed when every (filled) requirement is covered by at least one grant.
   A tool with no requirements is allowed for any authenticated caller. Invalid granted
   patterns cover nothing.
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
