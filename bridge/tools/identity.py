"""Tool identity ``[namespace:]name[@version]``, semantic versions and version constraints.

``ToolRef.parse("matter:light_hall_on@^1.2")`` splits a reference; ``Version.parse``
reads a semver version; ``VersionConstraint.parse`` reads constraints such as
``>=1.0.0``, ``>=1.0,<2``, ``^1.2``, ``~1.2.3``, ``1.2.3`` (exact) and ``*``.
``VersionConstraint.best(versions)`` picks the highest version that matches.
Pre-release versions only match a constraint that names a pre-release itself.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache, total_ordering

from bridge.errors import InvalidRequestError

NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]{0,127}$")
NAMESPACE_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]{0,63}$")
_VERSION_RE = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*)(?:\.(?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*))*))?"
    r"(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$"
)
_PARTIAL_RE = re.compile(
    r"^v?(0|[1-9]\d*|[xX*])(?:\.(0|[1-9]\d*|[xX*]))?(?:\.(0|[1-9]\d*|[xX*]))?"
    r"(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$"
)
_OP_RE = re.compile(r"^(>=|<=|==|!=|>|<|=|\^|~)?\s*(.+)$")


@total_ordering
@dataclass(frozen=True, slots=True)
class Version:
    """A semantic version ``MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD]`` ordered by semver rules."""

    major: int
    minor: int
    patch: int
    prerelease: tuple[int | str, ...] = ()
    build: str = ""

    @staticmethod
    def parse(text: str) -> Version:
        """Parse a full semver string; raise ``InvalidRequestError`` if it is not one."""
        return _parse_version(text)

    @staticmethod
    def is_valid(text: str) -> bool:
        """Return whether ``text`` is a full semver string."""
        return bool(_VERSION_RE.match(text))

    def _key(self) -> tuple[int, int, int, int, tuple[tuple[int, int | str], ...]]:
        # A release sorts after all of its pre-releases; numeric identifiers before text.
        pre = tuple((0, p) if isinstance(p, int) else (1, p) for p in self.prerelease)
        return (self.major, self.minor, self.patch, 0 if self.prerelease else 1, pre)

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, Version):
            return NotImplemented
        return self._key() < other._key()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Version):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __str__(self) -> str:
        text = f"{self.major}.{self.minor}.{self.patch}"
        if self.prerelease:
            text += "-" + ".".join(str(p) for p in self.prerelease)
        if self.build:
            text += "+" + self.build
        return text


@lru_cache(maxsize=4096)
def _parse_version(text: str) -> Version:
    match = _VERSION_RE.match(text.strip())
    if match is None:
        raise InvalidRequestError(
            f"'{text}' is not a semantic version (expected MAJOR.MINOR.PATCH)",
            {"version": text},
        )
    pre: tuple[int | str, ...] = ()
    if match.group(4):
        pre = tuple(int(p) if p.isdigit() else p for p in match.group(4).split("."))
    return Version(
        int(match.group(1)), int(match.group(2)), int(match.group(3)), pre, match.group(5) or ""
    )


@dataclass(frozen=True, slots=True)
class _Comparator:
    op: str
    version: Version

    def matches(self, v: Version) -> bool:
        if self.op == "=":
            return v == self.version
        if self.op == "!=":
            return v != self.version
        if self.op == ">":
            return v > self.version
        if self.op == ">=":
            return v >= self.version
        if self.op == "<":
            return v < self.version
        return v <= self.version  # "<="


@dataclass(frozen=True, slots=True)
class VersionConstraint:
    """A conjunction of comparators from ``>=1.0.0,<2``, ``^1.2``, ``~1.2.3`` or ``1.2.3``."""

    text: str
    comparators: tuple[_Comparator, ...]

    @staticmethod
    def parse(text: str) -> VersionConstraint:
        """Parse a constraint; raise ``InvalidRequestError`` naming the bad part."""
        return _parse_constraint(text)

    def matches(self, version: Version) -> bool:
        """Return whether ``version`` satisfies every comparator."""
        if version.prerelease and not any(
            c.version.prerelease
            and (c.version.major, c.version.minor, c.version.patch)
            == (version.major, version.minor, version.patch)
            for c in self.comparators
        ):
            return False
        return all(c.matches(version) for c in self.comparators)

    def best(self, versions: Iterable[Version]) -> Version | None:
        """Return the highest matching version or ``None``."""
        best: Version | None = None
        for v in versions:
            if self.matches(v) and (best is None or v > best):
                best = v
        return best

    def __str__(self) -> str:
        return self.text


ANY_VERSION_TEXT = "*"


@lru_cache(maxsize=1024)
def _parse_constraint(text: str) -> VersionConstraint:
    raw = text.strip()
    if not raw:
        raise InvalidRequestError("empty version constraint", {"version": text})
    comparators: list[_Comparator] = []
    for part in re.split(r"\s*,\s*|\s+(?=[<>=!^~])", raw):
        if not part:
            continue
        comparators.extend(_parse_part(part, text))
    return VersionConstraint(raw, tuple(comparators))


def _bad(text: str, part: str) -> InvalidRequestError:
    return InvalidRequestError(
        f"'{part}' in version constraint '{text}' is not valid "
        "(use e.g. 1.2.3, >=1.0.0, ^1.2, ~1.2.3 or *)",
        {"version": text},
    )


def _parse_part(part: str, text: str) -> list[_Comparator]:
    match = _OP_RE.match(part)
    if match is None:
        raise _bad(text, part)
    op, rest = match.group(1) or "", match.group(2).strip()
    if rest in ("*", "x", "X"):
        if op not in ("", "="):
            raise _bad(text, part)
        return []
    pm = _PARTIAL_RE.match(rest)
    if pm is None:
        raise _bad(text, part)
    parts = [pm.group(1), pm.group(2), pm.group(3)]
    wild = [p is None or p in ("x", "X", "*") for p in parts]
    if any(wild[i] and not wild[i + 1] for i in range(2)):
        raise _bad(text, part)
    nums = [0 if w else int(p or 0) for p, w in zip(parts, wild, strict=True)]
    pre: tuple[int | str, ...] = ()
    if pm.group(4):
        if any(wild):
            raise _bad(text, part)
        pre = tuple(int(p) if p.isdigit() else p for p in pm.group(4).split("."))
    base = Version(nums[0], nums[1], nums[2], pre)
    specified = 3 - sum(wild)

    def bump(level: int) -> Version:
        if level == 0:
            return Version(nums[0] + 1, 0, 0)
        if level == 1:
            return Version(nums[0], nums[1] + 1, 0)
        return Version(nums[0], nums[1], nums[2] + 1)

    # Pre-releases of the upper bound (2.0.0-rc.1 for ^1) stay out through ``matches``.
    if op == "^":
        if specified == 0:
            return []
        # ^1.2.3 := >=1.2.3 <2.0.0; ^0.2.3 := <0.3.0; ^0.0.3 := <0.0.4 (left-most non-zero).
        level = 0
        if nums[0] == 0 and specified >= 2:
            level = 1 if nums[1] != 0 or specified == 2 else 2
        return [_Comparator(">=", base), _Comparator("<", bump(level))]
    if op == "~":
        level = 1 if specified >= 2 else 0
        return [_Comparator(">=", base), _Comparator("<", bump(level))]
    if op in ("", "=", "=="):
        if specified == 3:
            return [_Comparator("=", base)]
        return [
            _Comparator(">=", base),
            _Comparator("<", bump(specified - 1)),
        ]
    if op == "!=":
        if specified != 3:
            raise _bad(text, part)
        return [_Comparator("!=", base)]
    if op in (">", "<="):
        if specified == 3:
            return [_Comparator(op, base)]
        # >1.2 means >=1.3.0; <=1.2 means <1.3.0
        upper = bump(specified - 1)
        return [_Comparator(">=" if op == ">" else "<", upper)]
    return [_Comparator(op, base)]  # ">=" or "<" with zero-filled parts


@dataclass(frozen=True, slots=True)
class ToolRef:
    """A parsed reference ``[namespace:]name[@version-constraint]``."""

    name: str
    namespace: str | None = None
    version: str | None = None

    @staticmethod
    def parse(ref: str) -> ToolRef:
        """Split ``ref``; raise ``InvalidRequestError`` if a part is malformed."""
        return _parse_ref(ref)

    @property
    def key(self) -> str | None:
        """Return ``namespace:name`` when the namespace is given."""
        return f"{self.namespace}:{self.name}" if self.namespace else None

    def __str__(self) -> str:
        text = f"{self.namespace}:{self.name}" if self.namespace else self.name
        return f"{text}@{self.version}" if self.version else text


@lru_cache(maxsize=8192)
def _parse_ref(ref: str) -> ToolRef:
    text = ref.strip()
    version: str | None = None
    if "@" in text:
        text, version = text.split("@", 1)
        version = version.strip()
        if not version:
            raise InvalidRequestError(f"tool reference '{ref}' has an empty version", {"tool": ref})
        VersionConstraint.parse(version)
    namespace: str | None = None
    if ":" in text:
        namespace, text = text.split(":", 1)
        if not NAMESPACE_RE.match(namespace):
            raise InvalidRequestError(
                f"tool reference '{ref}' has an invalid namespace '{namespace}'", {"tool": ref}
            )
    if not NAME_RE.match(text):
        raise InvalidRequestError(
            f"tool reference '{ref}' has an invalid name '{text}' "
            "(letters, digits, '_', '.', '-'; starting with a letter)",
            {"tool": ref},
        )
    return ToolRef(name=text, namespace=namespace, version=version)


def make_key(namespace: str, name: str) -> str:
    """Return the key ``namespace:name``."""
    return f"{namespace}:{name}"


def make_identity(namespace: str, name: str, version: str) -> str:
    """Return the identity ``namespace:name@version``."""
    return f"{namespace}:{name}@{version}"
