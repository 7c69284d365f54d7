"""Adjudication queue: disagreements listed with every rater's value; recording one stores provenance."""

from __future__ import annotations

from sqlmodel import select

from store import session_scope
from store.models import Adjudication, HumanRating, Verdict
from tests.tui_review.conftest import rate_as, settle
from tui.screens.review.adjudication import AdjudicationScreen
from tui.screens.runs.trajectory import TrajectoryScreen
from tui.widgets.review.panels import JudgementsPanel, VerdictCard

ANN = ["yes", "no", "yes", "yes", "no"]
BOB = ["yes", "yes", "no", "no", "no"]


async def test_adjudicate_one_disagreement(make_tui, engine, study) -> None:  # type: ignore[no-untyped-def]
    rate_as(engine, "ann", ANN, study["trajectories"])
    rate_as(engine, "bob", BOB, study["trajectories"])
    t = study["trajectories"]
    app = make_tui(actor="rev")
    async with app.run_test(size=(150, 46)) as pilot:
        await settle(pilot, app)
        app.push_screen(AdjudicationScreen())
        await settle(pilot, app)
        screen = app.screen
        assert isinstance(screen, AdjudicationScreen)
        # trajectory 1: everyone says yes → not queued; the other four split
        assert [d.unit.id for d in screen.items] == t[1:]
        item = screen.item
        assert item is not None and item.disagreement.unit.id == t[1]
        assert item.disagreement.values == {
            "human:ann": "no",
            "human:bob": "yes",
            "judge:judge-a": "no",
            "judge:judge-b": "yes",
        }
        cards = screen.query_one(JudgementsPanel).query(VerdictCard)
        texts = [str(c.render()) for c in cards]
        assert len(cards) == 4 and any("differs from the reference" in x for x in texts)  # rationales shown
        await pilot.press("v", *"yes", "enter", *"the count of 3 is right", "enter")
        await settle(pilot, app)
        assert [d.unit.id for d in screen.items] == t[2:]
        await pilot.press("t")  # the disputed trajectory in full
        await settle(pilot, app)
        assert isinstance(app.screen, TrajectoryScreen) and app.screen.trajectory_id == t[2]
    with session_scope(engine) as s:
        adj = s.exec(select(Adjudication)).one()
        assert (adj.target_kind, adj.target_id, adj.scale, adj.final_value) == ("trajectory", t[1], "yes-no", "yes")
        assert adj.rationale == "the count of 3 is right"
        on_t1 = {r.value: r.id for r in s.exec(select(HumanRating).where(HumanRating.target_id == t[1])).all()}
        verdicts = {v.label: v.id for v in s.exec(select(Verdict).where(Verdict.target_id == t[1])).all()}
        ann_id, bob_id, va, vb = on_t1["no"], on_t1["yes"], verdicts["no"], verdicts["yes"]
        assert adj.overrides["ratings"] == [ann_id] and adj.overrides["verdicts"] == [va]
        assert adj.overrides["confirmed"] == {"ratings": [bob_id], "verdicts": [vb]}
        assert len(s.exec(select(HumanRating)).all()) == 10  # originals untouched


async def test_threshold_and_missing_rationale(make_tui, engine, study) -> None:  # type: ignore[no-untyped-def]
    rate_as(engine, "ann", ANN, study["trajectories"])
    app = make_tui(actor="rev")
    async with app.run_test(size=(150, 46)) as pilot:
        await settle(pilot, app)
        app.push_screen(AdjudicationScreen())
        await settle(pilot, app)
        screen = app.screen
        assert len(screen.items) == 4  # ann vs the judges
        await pilot.press("v", *"no", "enter", "enter")  # no rationale: refused, nothing written
        await settle(pilot, app)
        await pilot.press("escape")
        await pilot.press("plus")
        await settle(pilot, app)
        assert screen.filter.threshold == 0.1 and len(screen.items) == 4  # nominal splits are all 1.0
    with session_scope(engine) as s:
        assert s.exec(select(Adjudication)).all() == []


async def test_an_adjudication_is_undone_with_ctrl_z_and_withdrawn_in_the_cli(make_tui, engine, study, db_path) -> None:  # type: ignore[no-untyped-def]
    """Decisions can be revisited: ctrl+z takes the last adjudication back (audited), the target is
    queued again; the CLI withdraws one by id."""
    from click.testing import CliRunner

    from store.models import AuditEvent
    from tui.cli import cli

    rate_as(engine, "ann", ANN, study["trajectories"])
    rate_as(engine, "bob", BOB, study["trajectories"])
    t = study["trajectories"]
    app = make_tui(actor="rev")
    async with app.run_test(size=(150, 46)) as pilot:
        await settle(pilot, app)
        app.push_screen(AdjudicationScreen())
        await settle(pilot, app)
        screen = app.screen
        await pilot.press("v", *"yes", "enter", *"three is right", "enter")
        await settle(pilot, app)
        assert [d.unit.id for d in screen.items] == t[2:]
        await pilot.press("ctrl+z")
        await settle(pilot, app)
        assert [d.unit.id for d in screen.items] == t[1:]  # queued again
    with session_scope(engine) as s:
        assert s.exec(select(Adjudication)).all() == []
        gone = s.exec(
            select(AuditEvent).where(AuditEvent.entity == "adjudication", AuditEvent.action == "delete")
        ).one()
        assert gone.actor == "rev" and (gone.before or {}).get("rationale") == "three is right"

    def cli_run(*args: str) -> str:
        out = CliRunner().invoke(cli, ["--db", str(db_path), "--as", "rev", *args], catch_exceptions=False)
        assert out.exit_code == 0, out.output
        return out.output

    cli_run(
        "adjudicate",
        "--reviewer",
        "rev",
        "--target-kind",
        "trajectory",
        "--target-id",
        str(t[1]),
        "--scale",
        "yes-no",
        "--value",
        "no",
        "--rationale",
        "on reflection",
    )
    with session_scope(engine) as s:
        adj_id = s.exec(select(Adjudication.id)).one()
    assert "withdrawn" in cli_run("withdraw-adjudication", str(adj_id), "--reviewer", "rev")
    refused = CliRunner().invoke(cli, ["--db", str(db_path), "withdraw-adjudication", str(adj_id), "--reviewer", "rev"])
    assert refused.exit_code == 1 and f"no adjudication {adj_id}" in refused.output


def _offered(screen) -> set[str]:  # type: ignore[no-untyped-def]
    """The actions the footer offers on this screen (hidden and disabled ones left out)."""
    return {b.action for _, b, enabled, _ in screen.active_bindings.values() if enabled and b.show}


async def test_an_emptied_queue_offers_no_form_for_an_item_that_is_gone(make_tui, engine, study) -> None:  # type: ignore[no-untyped-def]
    from textual.widgets import DataTable, Input

    app = make_tui(actor="rev")  # only the judges split, on trajectories 2 and 4
    async with app.run_test(size=(150, 46)) as pilot:
        await settle(pilot, app)
        app.push_screen(AdjudicationScreen())
        await settle(pilot, app)
        screen = app.screen
        assert len(screen.items) == 2 and {"focus_value", "open_trajectory", "record"} <= _offered(screen)
        for value in ("yes", "no"):
            await pilot.press("v", *value, "enter", *"decided", "enter")
            await settle(pilot, app)
        assert screen.items == [] and screen.item is None
        box = screen.query_one("#final-value", Input)
        assert box.value == "" and box.disabled and box.placeholder == "nothing to adjudicate"  # was "no"
        assert not {"focus_value", "open_trajectory", "record"} & _offered(screen)
        await pilot.press("v", *"yes", "enter")  # nothing to type into: the keys change nothing
        await settle(pilot, app)
        assert isinstance(app.focused, DataTable) and box.value == ""
        await pilot.press("a")  # the adjudicated items again: the form is back for the first
        await settle(pilot, app)
        assert screen.item is not None and not box.disabled and "focus_value" in _offered(screen)
    with session_scope(engine) as s:
        assert len(s.exec(select(Adjudication)).all()) == 2
