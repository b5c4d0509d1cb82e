"""Parameter validation: compiled, cached JSON Schema validators with format checks.

``validate_params(schema, params)`` applies the schema's defaults (recursively, for
objects that are present) and checks the result against the Draft 2020-12 schema with
format checking for ``date-time`` (RFC 3339), ``email`` and ``uri`` (our own checks, so
they never silently pass for want of an optional library). On failure it raises
``InvalidParamsError`` whose message names every failing path and whose details list
``{"path", "message"}`` per problem. Validators are compiled once per distinct schema;
``validate_call`` also remembers the validator per tool definition object, so a call
does not re-serialise the schema to find it.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Mapping
from datetime import datetime
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit

import jsonschema
from jsonschema import Draft202012Validator, FormatChecker

from bridge.errors import InvalidParamsError
from bridge.tools.definition import ToolDefinition
from bridge.tools.fastcheck import compile_check

_DATE_TIME_RE = re.compile(
    r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})$"
)
_EMAIL_RE = re.compile(
    r"^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@"
    r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$"
)
_SCHEME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*$")
_MAX_REPORTED = 50


def _is_date_time(value: object) -> bool:
    if not isinstance(value, str):
        return True
    if not _DATE_TIME_RE.match(value):
        return False
    try:
        datetime.fromisoformat(value.replace("z", "Z").replace("t", "T"))
    except ValueError:
        return False
    return True


def _is_email(value: object) -> bool:
    if not isinstance(value, str):
        return True
    local = value.split("@", 1)[0]
    return bool(_EMAIL_RE.match(value)) and len(local) <= 64 and len(value) <= 254


def _is_uri(value: object) -> bool:
    if not isinstance(value, str):
        return True
    if not value or any(c.isspace() or ord(c) < 0x20 for c in value):
        return False
    try:
        parts = urlsplit(value)
    except ValueError:
        return False
    return bool(parts.scheme) and bool(_SCHEME_RE.match(parts.scheme))


def format_checker() -> FormatChecker:
    """Return a format checker with strict ``date-time``, ``email`` and ``uri`` checks."""
    checker = FormatChecker()
    checker.checks("date-time")(_is_date_time)
    checker.checks("email")(_is_email)
    checker.checks("idn-email")(_is_email)
    checker.checks("uri")(_is_uri)
    return checker


_FORMAT_CHECKER = format_checker()
# The same format rules for the compiled yes-check (``bridge.tools.fastcheck``).
_FORMATS = {"date-time": _is_date_time, "email": _is_email, "idn-email": _is_email, "uri": _is_uri}


class ParamValidator:
    """A compiled validator for one parameters schema."""

    def __init__(self, schema: Mapping[str, Any]) -> None:
        self.schema = schema
        self._validator = Draft202012Validator(schema, format_checker=_FORMAT_CHECKER)
        # Proves most calls valid in a fraction of jsonschema's time; anything it cannot
        # prove (a problem, or a keyword it lacks) goes to jsonschema, which words errors.
        self._proven = compile_check(schema, _FORMATS)

    def apply_defaults(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """Return a deep copy of ``params`` with missing defaulted properties filled in."""
        result = {k: _json_copy(v) for k, v in params.items()}
        _fill_defaults(self.schema, result)
        return result

    def errors(self, params: Any) -> list[dict[str, str]]:
        """Return ``{"path", "message"}`` for every problem, sorted by path."""
        problems: list[dict[str, str]] = []
        for err in self._validator.iter_errors(params):
            path = list(err.absolute_path)
            message = _message(err)
            if err.validator == "required" and isinstance(err.validator_value, list):
                # Name the missing property in the path, so every problem has its own path.
                missing = _missing_name(err)
                if missing is not None:
                    path.append(missing)
                    message = "is required"
            problems.append({"path": json_path(path), "message": message})
            if len(problems) >= _MAX_REPORTED:
                break
        problems.sort(key=lambda p: p["path"])
        return problems

    def validate(self, params: Any, *, tool: str | None = None) -> dict[str, Any]:
        """Return ``params`` with defaults applied; raise ``InvalidParamsError`` per path."""
        if not isinstance(params, Mapping):
            details: dict[str, Any] = {"errors": [{"path": "$", "message": "must be an object"}]}
            if tool is not None:
                details["tool"] = tool
            raise InvalidParamsError(
                f"parameters{_for(tool)} must be an object, got {_json_type(params)}", details
            )
        filled = self.apply_defaults(params)
        if self._proven is not None and self._proven(filled):
            return filled
        problems = self.errors(filled)
        if problems:
            listing = "; ".join(f"{p['path']}: {p['message']}" for p in problems)
            details = {"errors": problems}
            if tool is not None:
                details["tool"] = tool
            raise InvalidParamsError(f"invalid parameters{_for(tool)}: {listing}", details)
        return filled


def _message(err: jsonschema.ValidationError) -> str:
    """Return a short message that names the rule broken without echoing the value."""
    rule = err.validator
    expected: Any = err.validator_value
    simple: dict[str, Callable[[], str]] = {
        "type": lambda: (
            "must be of type "
            + (" or ".join(expected) if isinstance(expected, list) else str(expected))
        ),
        "enum": lambda: "must be one of " + ", ".join(json.dumps(v) for v in expected),
        "const": lambda: f"must be {json.dumps(expected)}",
        "format": lambda: f"is not a valid {expected}",
        "pattern": lambda: f"does not match pattern {expected}",
        "minLength": lambda: f"must be at least {expected} characters long",
        "maxLength": lambda: f"must be at most {expected} characters long",
        "minimum": lambda: f"must be >= {expected}",
        "maximum": lambda: f"must be <= {expected}",
        "exclusiveMinimum": lambda: f"must be > {expected}",
        "exclusiveMaximum": lambda: f"must be < {expected}",
        "minItems": lambda: f"must have at least {expected} items",
        "maxItems": lambda: f"must have at most {expected} items",
        "multipleOf": lambda: f"must be a multiple of {expected}",
        "uniqueItems": lambda: "must not contain duplicates",
        "oneOf": lambda: "must match exactly one of the allowed forms",
        "anyOf": lambda: "must match at least one of the allowed forms",
        "not": lambda: "matches a forbidden form",
    }
    make = simple.get(str(rule))
    if make is not None:
        return make()
    if rule == "additionalProperties" and isinstance(err.instance, Mapping):
        props = err.schema.get("properties", {}) if isinstance(err.schema, Mapping) else {}
        unknown = sorted(str(k) for k in err.instance if k not in props)
        return "unknown parameter(s) " + ", ".join(repr(k) for k in unknown)
    return err.message if len(err.message) <= 200 else err.message[:200] + "…"


def _for(tool: str | None) -> str:
    return f" for '{tool}'" if tool else ""


def _missing_name(err: jsonschema.ValidationError) -> str | None:
    match = re.match(r"^'(.+)' is a required property$", err.message)
    return match.group(1) if match else None


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return type(value).__name__


def json_path(parts: Any) -> str:
    """Return a ``$.a[0].b`` path for a sequence of keys and indexes."""
    text = "$"
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else f".{part}"
    return text


def _json_copy(value: Any) -> Any:
    """Return a deep copy of JSON data (dicts, lists, scalars), others by ``deepcopy``."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if type(value) is dict:
        return {k: _json_copy(v) for k, v in value.items()}
    if type(value) is list:
        return [_json_copy(v) for v in value]
    return copy.deepcopy(value)


def _fill_defaults(schema: Any, value: Any) -> None:
    if not isinstance(schema, Mapping) or not isinstance(value, dict):
        return
    properties = schema.get("properties")
    if isinstance(properties, Mapping):
        for name, sub in properties.items():
            if not isinstance(sub, Mapping):
                continue
            if name not in value and "default" in sub:
                value[name] = copy.deepcopy(sub["default"])
            if name in value:
                _fill_defaults(sub, value[name])
    for keyword in ("allOf",):
        for sub in schema.get(keyword, ()) or ():
            _fill_defaults(sub, value)


@lru_cache(maxsize=4096)
def _compiled(canonical: str) -> ParamValidator:
    return ParamValidator(json.loads(canonical))


def validator_for(schema: Mapping[str, Any]) -> ParamValidator:
    """Return the cached compiled validator for ``schema``."""
    return _compiled(json.dumps(schema, sort_keys=True, separators=(",", ":")))


def validate_params(
    schema: Mapping[str, Any], params: Any, *, tool: str | None = None
) -> dict[str, Any]:
    """Return ``params`` with defaults applied; raise ``InvalidParamsError`` naming every path."""
    return validator_for(schema).validate(params, tool=tool)


_BY_DEFINITION_MAX = 4096
# id(definition) -> (definition, validator). The definition is held, so its id cannot be
# reused by another object while the entry lives; definitions are frozen value objects.
_by_definition: dict[int, tuple[ToolDefinition, ParamValidator]] = {}


def validate_call(defn: ToolDefinition, params: Any) -> dict[str, Any]:
    """Return ``params`` for ``defn`` with defaults applied; raise ``InvalidParamsError``."""
    hit = _by_definition.get(id(defn))
    if hit is not None and hit[0] is defn:
        validator = hit[1]
    else:
        validator = validator_for(defn.parameters)
        if len(_by_definition) >= _BY_DEFINITION_MAX:
            _by_definition.clear()
        _by_definition[id(defn)] = (defn, validator)
    return validator.validate(params, tool=defn.key)
