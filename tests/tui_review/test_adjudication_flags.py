"""Adjudication queue and `chainmark disagreements`: raters whose clear yes/no contradicts the run's own
score of the answer are flagged, counted, and can be taken first; blind annotators see no flag for a
target they still owe a rating."""

from __future__ import annotations

import json

from click.testing import CliRunner
from textual.widgets import DataTable, Static

from store import session_scope
from tests.tui_review.conftest import drawn, rate_as, settle
from tui.cli import cli
from tui.screens.review.adjudication import AdjudicationScreen
from tui.screens.review.adjudication_data import QueueFilter, flagged_queue

# run's own scores of trajectories 0..4: right, wrong, right, wrong, right
# judges (a, b): (yes, yes) (no, yes) (no, no) (yes, no) (yes, yes)
ANN = ["yes", "no", "yes", "yes", "no"]
BOB = ["yes", "yes", "no", "no", "no"]
# who contradicts the score: t1 bob + judge-b (2), t2 bob + both judges (3), t3 ann + judge-a (2), t4 ann + bob (2)


def markers(screen: AdjudicationScreen) -> list[str]:
    table = screen.query_one("#adj-queue", DataTable)
    return [str(table.get_row_at(i)[1]) for i in range(table.row_count)]


async def test_queue_flags_contradictions_and_takes_the_most_contradicted_first(make_tui, engine, study) -> None:  # type: ignore[no-untyped-def]
    rate_as(engine, "ann", ANN, study["trajectories"])
    rate_as(engine, "bob", BOB, study["trajectories"])
    t = study["trajectories"]
    app = make_tui(actor="rev")
    async with app.run_test(size=(220, 46)) as pilot:
        await settle(pilot, app)
        app.push_screen(AdjudicationScreen())
        await settle(pilot, app)
        screen = app.screen
        assert isinstance(screen, AdjudicationScreen)
        assert [d.unit.id for d in screen.items] == t[1:]  # largest split first, then target
        assert markers(screen) == ["⚠2", "⚠3", "⚠2", "⚠2"]
        assert "4 contradict the run's score (c: first)" in drawn(screen.query_one("#adj-status", Static))
        item = screen.item
        assert item is not None and item.disagreement.unit.id == t[1] and item.flag is not None
        values = drawn(screen.query_one("#adj-values", Static)).splitlines()
        bob = next(line for line in values if "human:bob = yes" in line)
        ann = next(line for line in values if "human:ann = no" in line)
        judge_b = next(line for line in values if "judge:judge-b = yes" in line)
        assert "⚠ contradicts score" in bob and "⚠ contradicts" in judge_b and "⚠" not in ann
        assert any("run's score wrong (0.00)" in line for line in values)

        await pilot.press("c")
        await settle(pilot, app)
        assert screen.filter.contradicted_first
        assert [d.unit.id for d in screen.items] == [t[2], t[1], t[3], t[4]]  # 3 raters against t2's score
        assert markers(screen) == ["⚠3", "⚠2", "⚠2", "⚠2"]
        assert screen.item is not None and screen.item.disagreement.unit.id == t[1]  # the cursor stays on its item
        assert "(first)" in drawn(screen.query_one("#adj-status", Static))
        await pilot.press("plus")  # the order survives a threshold change
        await settle(pilot, app)
        assert screen.filter.contradicted_first and [d.unit.id for d in screen.items][0] == t[2]
        await pilot.press("c")
        await settle(pilot, app)
        assert [d.unit.id for d in screen.items] == t[1:]


def test_a_blind_annotator_gets_no_flag_on_a_target_they_still_owe(engine, study) -> None:  # type: ignore[no-untyped-def]
    t = study["trajectories"]
    rate_as(engine, "bob", BOB, t)
    with session_scope(engine) as s:
        assert flagged_queue(s, QueueFilter(scale="yes-no"), "ann").flags == {}  # ann owes every target
    rate_as(engine, "ann", ANN[:2], t[:2])  # t0: everyone yes (not queued); t1 rated
    with session_scope(engine) as s:
        queue = flagged_queue(s, QueueFilter(scale="yes-no"), "ann")
        assert [d.unit.id for d in queue.items] == [t[1]]
        assert {k[0].id for k in queue.flags} == {t[1]}
        rev = flagged_queue(s, QueueFilter(scale="yes-no"), "rev")  # the reviewer is not blind
        assert {k[0].id for k in rev.flags} == {t[1], t[3], t[4]}  # t2: bob and both judges say no


def test_disagreements_cli_flags_contradictions(engine, study, db_path) -> None:  # type: ignore[no-untyped-def]
    t = study["trajectories"]
    rate_as(engine, "ann", ANN, t)
    rate_as(engine, "bob", BOB, t)

    def cli_run(*args: str) -> str:
        out = CliRunner().invoke(cli, ["--db", str(db_path), "--as", "rev", *args], catch_exceptions=False)
        assert out.exit_code == 0, out.output
        return out.output

    items = json.loads(cli_run("disagreements", "--scale", "yes-no", "--json"))
    assert [i["target"]["id"] for i in items] == t[1:]
    first = items[0]
    assert (first["run_score"], first["right"]) == ("wrong (0.00)", False)
    assert first["contradictions"] == [
        {"rater": "human:bob", "text": "contradicts answer: scored wrong (0.00)"},
        {"rater": "judge:judge-b", "text": "contradicts answer: scored wrong (0.00)"},
    ]
    ordered = json.loads(cli_run("disagreements", "--scale", "yes-no", "--contradicted-first", "--json"))
    assert [i["target"]["id"] for i in ordered] == [t[2], t[1], t[3], t[4]]
    text = cli_run("disagreements", "--scale", "yes-no")
    assert "contradicts" in text.splitlines()[0]
    line = next(x for x in text.splitlines() if f"trajectory:{t[1]} " in x)
    assert "⚠ human:bob, judge:judge-b vs scored wrong (0.00)" in line


def test_disagreements_cli_as_a_blind_annotator_flags_only_what_they_may_see(engine, study, db_path) -> None:  # type: ignore[no-untyped-def]
    t = study["trajectories"]
    rate_as(engine, "bob", BOB, t)
    rate_as(engine, "ann", ANN[:2], t[:2])  # ann still owes t2..t4

    def as_ann(*args: str) -> str:
        out = CliRunner().invoke(cli, ["--db", str(db_path), "--as", "ann", *args], catch_exceptions=False)
        assert out.exit_code == 0, out.output
        return out.output

    items = json.loads(as_ann("disagreements", "--scale", "yes-no", "--json"))
    assert [(i["target"]["id"], [c["rater"] for c in i["contradictions"]]) for i in items] == [
        (t[1], ["human:bob", "judge:judge-b"])
    ]
    text = as_ann("disagreements", "--scale", "yes-no", "--contradicted-first")
    assert f"trajectory:{t[3]}" not in text and f"trajectory:{t[4]}" not in text
