"""The labelling planner on hand-made items: categories, doubt and disagreement between judges."""

from __future__ import annotations

import pytest

from evaluation.agreement.estimates import Item, JudgedItems
from evaluation.agreement.matrix import ScaleInfo, Unit
from evaluation.agreement.planner import allocate, item_doubt, plan_labels

YES_NO = ScaleInfo("yes-no", "nominal", ["yes", "no"])


def _items(category: str, start: int, count: int, others: dict[str, float] | None = None) -> list[Item]:
    return [
        Item(Unit("trajectory", start + k), category, 1.0, None, dict(others or {}), start + k) for k in range(count)
    ]


def test_disagreement_draws_labels_to_its_category() -> None:
    calm = _items("calm", 0, 40, {"other": 1.0})  # the other judge agrees everywhere
    torn = _items("torn", 100, 40, {"other": 0.0})  # ... and disagrees everywhere here
    data = JudgedItems(1, "j", YES_NO, "", calm + torn)
    plan = plan_labels(data, 12, seed=3)
    chosen = {s.category: s.chosen for s in plan.strata}
    # prior variance (0.1 + doubt) / 4: calm 0.025, torn 0.275; after one label each (m = 0 first),
    # the greedy Neyman rule hands the rest out by N²·v·(1/m − 1/(m+1))
    assert chosen == allocate(
        {"calm": 40, "torn": 40}, {"calm": 0.025, "torn": 0.275}, {"calm": 0, "torn": 0}, {"calm": 40, "torn": 40}, 12
    )
    assert chosen["torn"] > 2 * chosen["calm"] >= 2
    assert all(p.doubt == 1.0 for p in plan.items if p.category == "torn")
    # inside a category the draw is random and seeded: same seed, same items; another seed, others
    assert plan_labels(data, 12, seed=3).items == plan.items
    assert plan_labels(data, 12, seed=4).items != plan.items


def test_pending_and_labelled_items_are_not_chosen_again() -> None:
    items = _items("a", 0, 6)
    items[0] = Item(items[0].unit, "a", 1.0, 1.0)  # labelled
    data = JudgedItems(1, "j", YES_NO, "", items)
    plan = plan_labels(data, 10, pending={Unit("trajectory", 1)})
    assert sorted(p.unit.id for p in plan.items) == [2, 3, 4, 5]  # only 4 left to give
    assert [(s.labelled, s.pending, s.chosen) for s in plan.strata] == [(1, 1, 4)]


def test_judge_probability_is_uncertainty() -> None:
    data = JudgedItems(1, "j", YES_NO, "", _items("a", 0, 1))
    assert item_doubt(data.items[0], data, 0.5) == 1.0
    assert item_doubt(data.items[0], data, 0.9) == pytest.approx(0.36)
    assert item_doubt(data.items[0], data, None) == 0.0
