import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bridge.auth.permissions import PermissionChecker, covers, fill_template, is_valid_pattern
from bridge.errors import PermissionDeniedError

SEGMENTS = ["a", "b", "c"]
segment = st.sampled_from(SEGMENTS)
pattern_segment = st.sampled_from([*SEGMENTS, "*"])
concrete = st.lists(segment, min_size=1, max_size=4).map(":".join)
pattern = st.lists(pattern_segment, min_size=1, max_size=4).map(":".join)


def oracle(granted: str, concrete_perm: str) -> bool:
    """Rule 2 as a regular expression over the whole string."""
    parts = granted.split(":")
    regex = []
    for i, seg in enumerate(parts):
        if seg == "*":
            regex.append(r"[^:]+(?::[^:]+)*" if i == len(parts) - 1 else r"[^:]+")
        else:
            regex.append(re.escape(seg))
    return re.fullmatch(":".join(regex), concrete_perm) is not None


def instances(pat: str, extra: int = 2) -> list[str]:
    """Every concrete permission over SEGMENTS that ``pat`` denotes (bounded tail)."""
    out = [""]
    parts = pat.split(":")
    for i, seg in enumerate(parts):
        choices = SEGMENTS if seg == "*" else [seg]
        nxt = []
        for prefix in out:
            for c in choices:
                nxt.append(f"{prefix}:{c}" if prefix else c)
                if seg == "*" and i == len(parts) - 1:
                    tails = [f"{prefix}:{c}" if prefix else c]
                    for _ in range(extra):
                        tails = [f"{t}:{s}" for t in tails for s in SEGMENTS]
                        nxt.extend(tails)
        out = nxt
    return out


@settings(max_examples=3000)
@given(granted=pattern, required=concrete)
def test_covers_concrete_matches_oracle(granted: str, required: str) -> None:
    assert covers(granted, required) == oracle(granted, required)


@settings(max_examples=1500)
@given(granted=pattern, required=pattern)
def test_covers_pattern_is_set_inclusion(granted: str, required: str) -> None:
    inst = instances(required)
    included = all(oracle(granted, c) for c in inst)
    assert covers(granted, required) == included


@given(p=pattern)
def test_reflexive(p: str) -> None:
    assert covers(p, p)
    assert covers("*", p)


@settings(max_examples=1000)
@given(a=pattern, b=pattern, c=pattern)
def test_transitive(a: str, b: str, c: str) -> None:
    if covers(a, b) and covers(b, c):
        assert covers(a, c)


def test_hierarchy_examples() -> None:
    assert covers("device:control:*", "device:control:light-1")
    assert not covers("device:control:*", "device:control")
    assert not covers("device:control:*", "device:read:light-1")
    assert covers("admin:*", "admin:approve")
    assert covers("admin:*", "admin:tokens:issue")
    assert not covers("admin:*", "admin")
    assert covers("device:*:light-1", "device:control:light-1")
    assert not covers("device:*:light-1", "device:control:light-2")
    assert not covers("device:control:light-1", "device:control:*")
    assert not covers("device:con*", "device:control")
    assert not covers("", "a")


@given(text=st.text(max_size=20))
def test_invalid_patterns_cover_nothing(text: str) -> None:
    if not is_valid_pattern(text):
        assert not covers(text, "a:b:c")
        assert not covers("*", text)


def test_templates() -> None:
    checker = PermissionChecker()
    assert checker.check(
        ["device:control:light-1"], ["device:control:{device_id}"], {"device_id": "light-1"}
    ) == ("device:control:light-1",)
    assert checker.check(["device:control:*"], ["device:control:{node}"], {"node": 7}) == (
        "device:control:7",
    )
    with pytest.raises(PermissionDeniedError) as info:
        checker.check(["device:control:*"], ["device:control:{device_id}"], {})
    assert info.value.details["missing"] == "device_id"
    for bad in [True, None, 1.5, "a:b", "*", "", ["x"]]:
        with pytest.raises(PermissionDeniedError):
            checker.check(["*"], ["device:control:{device_id}"], {"device_id": bad})
    with pytest.raises(PermissionDeniedError) as info:
        checker.check(["device:control:light-1"], ["device:control:{id}"], {"id": "light-2"})
    assert info.value.details["required"] == "device:control:light-2"
    assert checker.check([], [], {}) == ()
    assert not checker.allows(["a:b"], ["a:b", "c:d"])
    assert checker.allows(["a:b", "c:*"], ["a:b", "c:d"])


@settings(max_examples=1000)
@given(
    value=st.one_of(st.text(max_size=10), st.integers(), st.booleans(), st.none(), st.floats()),
    grant=pattern,
)
def test_template_fill_never_crashes(value: object, grant: str) -> None:
    checker = PermissionChecker()
    try:
        filled = fill_template("a:{v}", {"v": value})
    except PermissionDeniedError:
        assert not checker.allows([grant], ["a:{v}"], {"v": value})
        return
    assert filled == f"a:{value}"
    assert checker.allows([grant], ["a:{v}"], {"v": value}) == covers(grant, filled)
