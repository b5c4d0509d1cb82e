"""Keeping a call's secret parameters out of everything the bridge stores or shows.

Details: docs/modules.md, ``bridge.tools.redaction``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bridge.tools.definition import ToolDefinition

REDACTED = "<redacted>"
MIN_SUBSTRING = 3


def secret_params(defn: ToolDefinition) -> frozenset[str]:
    """Return the names the tool declares secret in ``audit.extra["secret_params"]``."""
    names = defn.audit.extra.get("secret_params", ())
    if isinstance(names, str):
        return frozenset({names})
    if not isinstance(names, list | tuple):
        return frozenset()
    return frozenset(n for n in names if isinstance(n, str))


def _text(value: Any) -> str | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, str | int | float):
        return str(value)
    return None


@dataclass(frozen=True, slots=True, kw_only=True)
class Redactor:
    """What to hide for one call: secret names, their values, whether params may be kept."""

    names: frozenset[str] = frozenset()
    values: tuple[str, ...] = ()
    log_params: bool = True

    @classmethod
    def for_call(cls, defn: ToolDefinition, *param_sets: Mapping[str, Any]) -> Redactor:
        """Return the redactor for a call of ``defn`` with these (raw, validated) params."""
        names = secret_params(defn)
        if not names:  # most tools: nothing to look for in the parameters
            return _KEEP_PARAMS if defn.audit.log_params else _HIDE_PARAMS
        values: set[str] = set()
        for params in param_sets:
            for name in names & set(params):
                text = _text(params[name])
                if text:
                    values.add(text)
        # Longest first, so a secret containing another is replaced whole.
        ordered = tuple(sorted(values, key=lambda v: (-len(v), v)))
        return cls(names=names, values=ordered, log_params=defn.audit.log_params)

    @property
    def active(self) -> bool:
        """Return whether anything needs hiding."""
        return bool(self.names) or not self.log_params

    def params(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """Return ``params`` as they may be stored or shown."""
        if not self.log_params:
            return dict.fromkeys(params, REDACTED)
        return {k: REDACTED if k in self.names else self.scrub(v) for k, v in params.items()}

    def scrub(self, value: Any) -> Any:
        """Return ``value`` with every secret name's value and every secret value hidden."""
        if not self.names:
            return value
        if isinstance(value, Mapping):
            return {k: REDACTED if k in self.names else self.scrub(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.scrub(v) for v in value]
        text = _text(value)
        if text is None:
            return value
        if text in self.values:
            return REDACTED
        if isinstance(value, str):
            for secret in self.values:
                if len(secret) >= MIN_SUBSTRING:
                    value = value.replace(secret, REDACTED)
        return value


_KEEP_PARAMS = Redactor()
_HIDE_PARAMS = Redactor(log_params=False)
