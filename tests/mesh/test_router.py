"""Route scoring: 0.95^hops, prefer_local x1.2, prefer_nodes x1.1, filters, unreachable last."""

from __future__ import annotations

import pytest

from bridge.mesh.router import Offer, rank

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
