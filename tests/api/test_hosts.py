"""The Host policy's remembered answers: the same answer on every ask, whatever came between."""

from __future__ import annotations

from bridge.api.hosts import KNOWN_HOSTS_MAX, HostPolicy

ALLOWED = ["127.0.0.1:8080", "localhost", "[::1]:8080", "bridge.home.arpa", "BRIDGE.home.arpa."]
REFUSED = [
    "evil.example",
    "evil.example:8080",
    "bridge.home.arpa.evil.example",
    "x" * 400 + ".example",
]


def test_a_remembered_answer_is_the_answer() -> None:
    policy = HostPolicy(["bridge.home.arpa"])
    for _ in range(3):  # the first ask decides, the next ones are remembered
        assert [policy.allows(h) for h in ALLOWED] == [True] * len(ALLOWED)
        assert [policy.allows(h) for h in REFUSED] == [False] * len(REFUSED)
        # More distinct names than the policy keeps: it starts over, answers unchanged.
        for i in range(KNOWN_HOSTS_MAX + 10):
            assert policy.allows(f"rebound-{i}.example") is False
    assert policy.allows(None) is True
    assert policy.allows("  ") is True
