"""A compiled yes-check for the plain JSON Schemas tools use, in front of ``jsonschema``.

``compile_check(schema)`` returns a function that answers ``True`` only when an
instance certainly satisfies ``schema`` (types, properties, required, enums, ranges,
lengths, patterns, items, the bridge's formats), or ``None`` when the schema uses a
keyword it does not implement (``$ref``, ``anyOf``, ``if`` …). ``False`` means "not
proven": the caller then asks ``jsonschema``, which also words the errors — so this
check may only ever be stricter than Draft 2020-12, never looser (tested against
``jsonschema`` on generated schemas and instances in tests/tools/test_fastcheck.py).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from typing import Any

Check = Callable[[Any], bool]

# Validation keywords this module does not implement: a schema using one is left to
# jsonschema. Other keywords (title, description, default, examples, x-…) annotate only.
_UNSUPPORTED = frozenset(
    {
        "$ref",
        "$dynamicRef",
        "$recursiveRef",
        "allOf",
        "oneOf",
        "not",
        "if",
        "then",
        "else",
        "dependentRequired",
        "dependentSchemas",
        "dependencies",
        "prefixItems",
        "contains",
        "minContains",
        "maxContains",
        "patternProperties",
        "propertyNames",
        "minProperties",
        "maxProperties",
        "unevaluatedProperties",
        "unevaluatedItems",
        "multipleOf",
        "additionalItems",
    }
)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _is_integer(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    return isinstance(value, float) and math.isfinite(value) and value.is_integer()


_TYPES: dict[str, Check] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": _is_integer,
    "number": _is_number,
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def _same(a: Any, b: Any) -> bool:
    """Return whether two JSON scalars are equal as JSON Schema compares them."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if _is_number(a) and _is_number(b):
        return bool(a == b)
    return type(a) is type(b) and a == b


def compile_check(schema: Any, formats: Mapping[str, Callable[[object], bool]]) -> Check | None:
    """Return a yes-check for ``schema``, or ``None`` when it needs ``jsonschema``."""
    if schema is True or schema == {}:
        return lambda _v: True
    if not isinstance(schema, Mapping) or _UNSUPPORTED & schema.keys():
        return None
    checks: list[Check] = []
    if "anyOf" in schema:
        branches = schema["anyOf"]
        if not isinstance(branches, list) or not branches:
            return None
        compiled = [compile_check(b, formats) for b in branches]
        if any(c is None for c in compiled):
            return None
        alternatives = [c for c in compiled if c is not None]
        checks.append(lambda v: any(c(v) for c in alternatives))
    kind = schema.get("type")
    if kind is not None:
        names = [kind] if isinstance(kind, str) else kind
        if not isinstance(names, list) or not all(n in _TYPES for n in names):
            return None
        tests = [_TYPES[n] for n in names]
        checks.append(lambda v: any(t(v) for t in tests))
    if "enum" in schema:
        allowed = schema["enum"]
        if not isinstance(allowed, list) or any(isinstance(a, dict | list) for a in allowed):
            return None
        checks.append(lambda v: any(_same(v, a) for a in allowed))
    if "const" in schema:
        wanted = schema["const"]
        if isinstance(wanted, dict | list):
            return None
        checks.append(lambda v: _same(v, wanted))
    number = _number_checks(schema)
    if number is None:
        return None
    checks.extend(number)
    text = _string_checks(schema, formats)
    if text is None:
        return None
    checks.extend(text)
    structure = _structure_checks(schema, formats)
    if structure is None:
        return None
    checks.extend(structure)
    if not checks:
        return lambda _v: True
    if len(checks) == 1:
        return checks[0]
    return lambda v: all(c(v) for c in checks)


def _bound(key: str, bound: float) -> Check:
    if key == "minimum":
        return lambda v: not _is_number(v) or v >= bound
    if key == "maximum":
        return lambda v: not _is_number(v) or v <= bound
    if key == "exclusiveMinimum":
        return lambda v: not _is_number(v) or v > bound
    return lambda v: not _is_number(v) or v < bound


def _length(kind: type[str] | type[list[Any]], at_least: bool, limit: int) -> Check:
    if at_least:
        return lambda v: not isinstance(v, kind) or len(v) >= limit
    return lambda v: not isinstance(v, kind) or len(v) <= limit


def _number_checks(schema: Mapping[str, Any]) -> list[Check] | None:
    out: list[Check] = []
    for key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        if key in schema:
            bound = schema[key]
            if not _is_number(bound):
                return None
            out.append(_bound(key, bound))
    return out


def _string_checks(
    schema: Mapping[str, Any], formats: Mapping[str, Callable[[object], bool]]
) -> list[Check] | None:
    out: list[Check] = []
    for key, at_least in (("minLength", True), ("maxLength", False)):
        if key in schema:
            limit = schema[key]
            if not _is_integer(limit):
                return None
            out.append(_length(str, at_least, int(limit)))
    if "pattern" in schema:
        try:
            pattern = re.compile(schema["pattern"])
        except (re.error, TypeError):
            return None
        out.append(lambda v: not isinstance(v, str) or pattern.search(v) is not None)
    if "format" in schema:
        check = formats.get(schema["format"]) if isinstance(schema["format"], str) else None
        if check is None:
            return None
        out.append(check)
    return out


def _additional(
    schema: Mapping[str, Any], formats: Mapping[str, Callable[[object], bool]]
) -> Check | None:
    """Return the check of properties not named in ``properties``."""
    if "additionalProperties" not in schema:
        return lambda _v: True
    if schema["additionalProperties"] is False:
        return lambda _v: False
    return compile_check(schema["additionalProperties"], formats)


def _structure_checks(
    schema: Mapping[str, Any], formats: Mapping[str, Callable[[object], bool]]
) -> list[Check] | None:
    out: list[Check] = []
    properties = schema.get("properties", {})
    if not isinstance(properties, Mapping):
        return None
    compiled: dict[str, Check] = {}
    for name, sub in properties.items():
        check = compile_check(sub, formats)
        if check is None:
            return None
        compiled[name] = check
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        return None
    others = _additional(schema, formats)
    if others is None:
        return None

    def object_ok(value: Any) -> bool:
        if not isinstance(value, dict):
            return True
        for name in required:
            if name not in value:
                return False
        for key, item in value.items():
            check = compiled.get(key)
            if check is None:
                if not others(item):
                    return False
            elif not check(item):
                return False
        return True

    if compiled or required or "additionalProperties" in schema:
        out.append(object_ok)
    for key, at_least in (("minItems", True), ("maxItems", False)):
        if key in schema:
            limit = schema[key]
            if not _is_integer(limit):
                return None
            out.append(_length(list, at_least, int(limit)))
    if "items" in schema:
        item_check = compile_check(schema["items"], formats)
        if item_check is None:
            return None
        out.append(lambda v: not isinstance(v, list) or all(item_check(i) for i in v))
    if "uniqueItems" in schema:
        if not isinstance(schema["uniqueItems"], bool):
            return None
        if schema["uniqueItems"]:
            out.append(lambda v: not isinstance(v, list) or _unique(v))
    return out


def _unique(items: list[Any]) -> bool:
    """Return whether no two items are equal as JSON values (1 == 1.0, True != 1)."""
    seen = set()
    for item in items:
        key = _json_key(item)
        if key in seen:
            return False
        seen.add(key)
    return True


def _json_key(value: Any) -> Any:
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return (type(value).__name__, value)
    if isinstance(value, int | float):
        return ("number", value)  # 1 and 1.0 are one JSON number
    if isinstance(value, list):
        return ("array", tuple(_json_key(v) for v in value))
    if isinstance(value, dict):
        return ("object", frozenset((k, _json_key(v)) for k, v in value.items()))
    return ("other", repr(value))
