"""The doctor's value objects: check status, one check's result, the whole report."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class Status(StrEnum):
    """Outcome of one check, from best to worst."""

    OK = "ok"
    WARN = "warn"
    FAIL = "fail"

    @property
    def rank(self) -> int:
        """Return 0 for ok, 1 for warn, 2 for fail."""
        return (Status.OK, Status.WARN, Status.FAIL).index(self)


def worst(statuses: list[Status]) -> Status:
    """Return the worst of the statuses (ok when there are none)."""
    return max(statuses, key=lambda s: s.rank, default=Status.OK)


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckResult:
    """What one check found: ``fix`` is empty when the status is ok."""

    name: str
    title: str
    status: Status
    found: str
    fix: str = ""
    details: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """Return the JSON form used by ``doctor --json``."""
        return {
            "name": self.name,
            "title": self.title,
            "status": self.status.value,
            "found": self.found,
            "fix": self.fix,
            "details": self.details,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class DoctorReport:
    """All check results in the order they ran."""

    results: tuple[CheckResult, ...]

    @property
    def status(self) -> Status:
        """Return the worst status of all checks."""
        return worst([r.status for r in self.results])

    def get(self, name: str) -> CheckResult:
        """Return the result of the named check; raise ``KeyError`` if it did not run."""
        for result in self.results:
            if result.name == name:
                return result
        raise KeyError(name)

    def to_json(self) -> dict[str, Any]:
        """Return ``{"status", "counts", "checks"}``."""
        counts = {s.value: sum(1 for r in self.results if r.status is s) for s in Status}
        return {
            "status": self.status.value,
            "counts": counts,
            "checks": [r.to_json() for r in self.results],
        }
