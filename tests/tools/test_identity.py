"""Tool references, semantic versions and version constraints."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bridge.errors import InvalidRequestError
from bridge.tools.identity import ToolRef, Version, VersionConstraint

VERSIONS = [
    Version.parse(v)
    for v in ["0.1.0", "0.2.5", "1.0.0", "1.2.0", "1.2.3", "1.3.0", "2.0.0-rc.1", "2.0.0"]
]


@pytest.mark.parametrize(
    ("ref", "expected"),
    [
        ("notify", ToolRef(name="notify")),
        ("matter:turn_on_light", ToolRef(name="turn_on_light", namespace="matter")),
        ("custom:my_analyzer@1.2.0", ToolRef("my_analyzer", "custom", "1.2.0")),
        ("notify@>=1.0.0", ToolRef("notify", None, ">=1.0.0")),
    ],
)
def test_parse_refs(ref: str, expected: ToolRef) -> None:
    assert ToolRef.parse(ref) == expected
    assert str(ToolRef.parse(ref)) == ref


@pytest.mark.parametrize("ref", ["", "1abc", "ns:", ":x", "a b", "x@", "x@1.2.3.4", "n s:x"])
def test_bad_refs(ref: str) -> None:
    with pytest.raises(InvalidRequestError):
        ToolRef.parse(ref)


def test_version_ordering_follows_semver() -> None:
    ordered = [
        "1.0.0-alpha",
        "1.0.0-alpha.1",
        "1.0.0-alpha.beta",
        "1.0.0-beta",
        "1.0.0-beta.2",
        "1.0.0-beta.11",
        "1.0.0-rc.1",
        "1.0.0",
        "1.0.1",
        "1.10.0",
    ]
    parsed = [Version.parse(v) for v in ordered]
    assert sorted(reversed(parsed)) == parsed
    assert str(Version.parse("1.2.3-rc.1+build.5")) == "1.2.3-rc.1+build.5"


@pytest.mark.parametrize(
    ("constraint", "best"),
    [
        ("*", "2.0.0"),
        ("1.2.3", "1.2.3"),
        ("=1.2.0", "1.2.0"),
        (">=1.0.0", "2.0.0"),
        (">=1.0.0,<2", "1.3.0"),
        (">=1.0.0 <1.3", "1.2.3"),
        ("^1.2", "1.3.0"),
        ("^1.2.3", "1.3.0"),
        ("^0.2", "0.2.5"),
        ("~1.2", "1.2.3"),
        ("~1.2.3", "1.2.3"),
        ("~1", "1.3.0"),
        ("1.2", "1.2.3"),
        (">1.2", "2.0.0"),
        ("<=1.2", "1.2.3"),
        ("<1.0.0", "0.2.5"),
        ("!=2.0.0", "1.3.0"),
        ("2.0.0-rc.1", "2.0.0-rc.1"),
        ("^3", None),
    ],
)
def test_constraints_pick_highest_match(constraint: str, best: str | None) -> None:
    found = VersionConstraint.parse(constraint).best(VERSIONS)
    assert (str(found) if found else None) == best


def test_prerelease_excluded_from_ranges() -> None:
    c = VersionConstraint.parse(">=1.0.0")
    assert not c.matches(Version.parse("2.0.0-rc.1"))
    assert VersionConstraint.parse(">=2.0.0-rc.1").matches(Version.parse("2.0.0-rc.1"))


@pytest.mark.parametrize("text", ["", ">=", "^x.1", "1.x.3", "~>1.0", ">= banana", "!=1.2"])
def test_bad_constraints_name_the_part(text: str) -> None:
    with pytest.raises(InvalidRequestError):
        VersionConstraint.parse(text)


@given(
    st.tuples(
        st.integers(0, 50),
        st.integers(0, 50),
        st.integers(0, 50),
        st.lists(
            st.one_of(st.integers(0, 9), st.sampled_from(["alpha", "beta", "rc"])), max_size=2
        ),
    )
)
def test_version_text_round_trips_and_caret_contains_itself(
    parts: tuple[int, int, int, list[int | str]],
) -> None:
    major, minor, patch, pre = parts
    text = f"{major}.{minor}.{patch}" + ("-" + ".".join(str(p) for p in pre) if pre else "")
    v = Version.parse(text)
    assert str(v) == text
    if not pre:
        assert VersionConstraint.parse(f"^{text}").matches(v)
        assert VersionConstraint.parse(f"~{text}").matches(v)
        assert not VersionConstraint.parse(f">{text}").matches(v)
        assert Version.parse(f"{major}.{minor}.{patch + 1}") > v
