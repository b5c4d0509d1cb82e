"""Route scoring: 0.95^hops, prefer_local x1.2, prefer_nodes x1.1, filters, unreachable last."""

from __future__ import annotations

import pytest

from bridge.mesh.router import Exclusion, Offer, exclusion, no_capable_node, rank

OFFERS = [
    Offer(node_id="local", hops=0, urls=()),
    Offer(node_id="near", hops=1, urls=("http://n",)),
    Offer(node_id="far", hops=2, urls=("http://f",)),
]


def scores(**kwargs: object) -> list[tuple[str, float]]:
    return [(c.node_id, round(c.score, 6)) for c in rank(OFFERS, local_node_id="local", **kwargs)]  # type: ignore[arg-type]


def test_hops_decay() -> None:
    assert scores() == [("local", 1.0), ("near", 0.95), ("far", 0.9025)]


def test_prefer_local_and_prefer_nodes_multiply() -> None:
    assert scores(prefer_local=True) == [("local", 1.2), ("near", 0.95), ("far", 0.9025)]
    # 0.9025 * 1.1 = 0.99275 beats near's 0.95 but not local's 1.0.
    assert scores(prefer_nodes=("far",)) == [("local", 1.0), ("far", 0.99275), ("near", 0.95)]
    assert scores(prefer_local=True, prefer_nodes=("local",)) == [
        ("local", 1.32),
        ("near", 0.95),
        ("far", 0.9025),
    ]


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({"exclude_nodes": ("local", "near")}, ["far"]),
        ({"node_affinity": ("near", "far")}, ["near", "far"]),
        ({"allowed_nodes": ("far",)}, ["far"]),
        ({"node_affinity": ("near",), "allowed_nodes": ("far",)}, []),
    ],
)
def test_filters(kwargs: dict[str, tuple[str, ...]], expected: list[str]) -> None:
    assert [c.node_id for c in rank(OFFERS, local_node_id="local", **kwargs)] == expected  # type: ignore[arg-type]


def test_unreachable_nodes_sort_last_but_stay() -> None:
    ranked = rank(OFFERS, local_node_id="local", down=frozenset({"local"}))
    assert [(c.node_id, c.down) for c in ranked] == [
        ("near", False),
        ("far", False),
        ("local", True),
    ]


def test_ties_break_by_node_id() -> None:
    offers = [Offer(node_id=n, hops=1, urls=()) for n in ("zeta", "alpha", "mid")]
    assert [c.node_id for c in rank(offers, local_node_id="x")] == ["alpha", "mid", "zeta"]


RELAYED = [
    Offer(node_id="a", hops=1, urls=("http://a",), name="garage"),
    Offer(node_id="b", hops=2, urls=("http://b",), relay=True, name="hall"),
]


def test_relays_only_while_an_offering_node_is_allowed() -> None:
    # The offering node a is allowed: the relay b stays as a fallback.
    ranked = rank(RELAYED, local_node_id="c", node_affinity=("a",))
    assert [(c.node_id, c.relay) for c in ranked] == [("a", False), ("b", True)]
    # Affinity, exclude_nodes, the token or the path rule out a: b could only fail further on.
    assert rank(RELAYED, local_node_id="c", node_affinity=("x",)) == []
    assert rank(RELAYED, local_node_id="c", exclude_nodes=("a",)) == []
    assert rank(RELAYED, local_node_id="c", allowed_nodes=("b",)) == []
    assert rank(RELAYED, local_node_id="c", path=("a",)) == []
    # An unreachable offering node is not ruled out: the relay may still reach it.
    ranked = rank(RELAYED, local_node_id="c", down=frozenset({"a"}))
    assert [(c.node_id, c.down) for c in ranked] == [("b", False), ("a", True)]


def test_exclusion_names_the_first_rule_that_applies() -> None:
    a = RELAYED[0]
    assert exclusion(a) is None
    assert exclusion(a, exclude_nodes=("a",), node_affinity=("x",)) is Exclusion.EXCLUDE_NODES
    assert exclusion(a, path=("a",)) is Exclusion.PATH
    assert exclusion(a, allowed_nodes=("b",)) is Exclusion.ALLOWED_NODES
    assert exclusion(a, node_affinity=("x",)) is Exclusion.NODE_AFFINITY
    assert exclusion(RELAYED[1], node_affinity=("x",)) is None  # relays are not pinned


def test_no_capable_node_names_the_tool_the_rule_and_the_excluded_nodes() -> None:
    a_id, b_id, d_id, x_id = ("a" * 26, "b" * 26, "d" * 26, "x" * 26)
    offers = [
        Offer(node_id=d_id, hops=1, urls=(), name="shed"),
        Offer(node_id=a_id, hops=1, urls=(), name="garage"),
        Offer(node_id=b_id, hops=2, urls=(), relay=True, name="hall"),
    ]
    err = no_capable_node("core:t@1.0.0", offers, node_affinity=(x_id,), exclude_nodes=(d_id,))
    assert err.code.value == "NO_CAPABLE_NODE"
    assert err.message == (
        f"no mesh node may run 'core:t@1.0.0': the tool's routing.node_affinity ['{x_id}'] "
        f"rules out {a_id}; exclude_nodes ['{d_id}'] rules out {d_id}"
    )
    assert err.details == {
        "tool": "core:t@1.0.0",
        "offered_by": [a_id, d_id],
        "excluded": {a_id: "node_affinity", d_id: "exclude_nodes"},
        "node_affinity": [x_id],
        "exclude_nodes": [d_id],
        "tried": [],
    }
    # Nobody offers it at all (only a relay): the plain message, nothing excluded.
    err = no_capable_node("core:t@1.0.0", offers[2:])
    assert err.message == "no reachable mesh node offers 'core:t@1.0.0'"
    assert err.details["offered_by"] == []
    assert err.details["excluded"] == {}


def test_affinity_by_node_name_fails_with_the_node_id_to_use() -> None:
    a_id, d_id = "a" * 26, "d" * 26
    offers = [
        Offer(node_id=a_id, hops=1, urls=(), name="garage"),
        Offer(node_id=d_id, hops=1, urls=(), name="shed"),
    ]
    assert rank(offers, local_node_id="c", node_affinity=("garage",)) == []
    err = no_capable_node("core:t@1.0.0", offers, node_affinity=("garage", "attic"))
    assert err.details["affinity_names"] == {"garage": [a_id], "attic": []}
    assert err.details["excluded"] == {a_id: "node_affinity", d_id: "node_affinity"}
    assert err.message == (
        f"no mesh node may run 'core:t@1.0.0': the tool's routing.node_affinity "
        f"['garage', 'attic'] rules out {a_id}, {d_id} (node_affinity holds mesh node ids, "
        f"not node names: 'garage' is {a_id}, 'attic' names no offering node)"
    )
