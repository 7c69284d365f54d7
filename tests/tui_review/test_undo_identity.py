"""Undo by identity: an undo takes away only the row its edit made, never one that took its id.

The repro of issue 32: a reviewer adjudicates trajectory 2 in the TUI (adjudication #1), withdraws it
from the CLI, adjudicates trajectory 3 from the CLI; ctrl+z in the TUI must leave trajectory 3's
decision alone and say why it undid nothing.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from click.testing import CliRunner
from sqlmodel import select

from annotation.review.adjudication import adjudicate
from annotation.review.targets import Target
from store import session_scope
from store.models import Adjudication, UndoEntry
from tests.tui_review.conftest import rate_as, settle
from tui.cli import cli
from tui.screens.review.adjudication import AdjudicationScreen
from tui.undo import Edit, UndoRefused, made_row

ANN = ["yes", "no", "yes", "yes", "no"]
BOB = ["yes", "yes", "no", "no", "no"]


def _cli(db_path: Any, *args: str) -> str:
    out = CliRunner().invoke(cli, ["--db", str(db_path), "--as", "rev", *args], catch_exceptions=False)
    assert out.exit_code == 0, out.output
    return out.output


def _adjudicate_from_cli(db_path: Any, trajectory_id: int) -> None:
    _cli(
        db_path,
        *("adjudicate", "--reviewer", "rev", "--target-kind", "trajectory", "--target-id", str(trajectory_id)),
        *("--scale", "yes-no", "--value", "no", "--rationale", "decided at the command line"),
    )


async def test_ctrl_z_after_the_cli_withdrew_and_adjudicated_again_leaves_the_new_decision(  # type: ignore[no-untyped-def]
    make_tui, engine, study, db_path
) -> None:
    t = study["trajectories"]
    rate_as(engine, "ann", ANN, t)
    rate_as(engine, "bob", BOB, t)
    app = make_tui(actor="rev")
    async with app.run_test(size=(150, 46)) as pilot:
        await settle(pilot, app)
        app.push_screen(AdjudicationScreen())
        await settle(pilot, app)
        await pilot.press("v", *"yes", "enter", *"three is right", "enter")
        await settle(pilot, app)
        with session_scope(engine) as s:
            first = s.exec(select(Adjudication)).one()
        assert first.target_id == t[1]
        assert "withdrawn" in _cli(db_path, "withdraw-adjudication", str(first.id), "--reviewer", "rev")
        _adjudicate_from_cli(db_path, t[2])
        with session_scope(engine) as s:
            second = s.exec(select(Adjudication)).one()
        assert second.id != first.id  # the id is never handed out again
        notes: list[str] = []
        app.notify = lambda message, *a, **k: notes.append(str(message))  # type: ignore[method-assign]
        await pilot.press("ctrl+z")
        await settle(pilot, app)
    with session_scope(engine, "rev") as s:
        left = s.exec(select(Adjudication)).all()
        stored = s.exec(select(UndoEntry).where(UndoEntry.actor == "rev")).all()
    assert [(a.id, a.target_id, a.rationale) for a in left] == [(second.id, t[2], "decided at the command line")]
    assert any(f"not undone: adjudication #{first.id}" in n and "gone already" in n for n in notes), notes
    assert stored == []  # the refused entry is off the stack for good, not offered again after a restart


def test_an_undo_refuses_a_row_that_only_shares_the_id(engine, study, db_path) -> None:  # type: ignore[no-untyped-def]
    """Databases whose ids were reused before migration 0010: the stored identity tells the rows apart."""
    t = study["trajectories"]
    rate_as(engine, "ann", ANN, t)
    rate_as(engine, "bob", BOB, t)
    _adjudicate_from_cli(db_path, t[1])
    with session_scope(engine, "rev") as s:
        row = s.exec(select(Adjudication)).one()
        made = made_row(s, Adjudication, row.id or 0)
        edit = Edit(f"adjudication #{row.id}", "withdraw_adjudication", {"reviewer": "rev", "adjudication_id": row.id})
        edit.made = made
    with session_scope(engine) as s:  # another trajectory's decision now carries that id
        s.connection().execute(
            sa.update(Adjudication.__table__).values(target_id=t[3])  # type: ignore[attr-defined]
        )
    refused = None
    try:
        with session_scope(engine, "rev") as s:
            edit.undo(s)
    except UndoRefused as exc:
        refused = str(exc)
    assert refused is not None and "no longer the row this edit made" in refused and f"{t[1]!r} → {t[3]!r}" in refused
    with session_scope(engine) as s:
        assert [a.target_id for a in s.exec(select(Adjudication)).all()] == [t[3]]


def test_an_undo_entry_keeps_the_identity_across_a_restart(engine, study, db_path) -> None:  # type: ignore[no-untyped-def]
    from tui.undo import record, stored_stack

    t = study["trajectories"]
    rate_as(engine, "ann", ANN, t)
    rate_as(engine, "bob", BOB, t)
    _adjudicate_from_cli(db_path, t[1])
    with session_scope(engine, "rev") as s:
        row = s.exec(select(Adjudication)).one()
        edit = Edit("adj", "withdraw_adjudication", {"reviewer": "rev", "adjudication_id": row.id})
        edit.made = made_row(s, Adjudication, row.id or 0)
        record(s, "review", edit)
    with session_scope(engine, "rev") as s:
        (again,) = stored_stack(s, "review")
    assert again.made == edit.made and again.args == edit.args


def test_an_undo_of_the_row_it_made_still_works_in_a_later_session(engine, study, db_path) -> None:  # type: ignore[no-untyped-def]
    """The identity read back from the database (timestamps come back naive on SQLite) matches."""
    t = study["trajectories"]
    rate_as(engine, "ann", ANN, t)
    rate_as(engine, "bob", BOB, t)
    with session_scope(engine, "rev") as s:  # made and remembered in one transaction, as the TUI does
        row = adjudicate(s, "rev", Target("trajectory", t[1]), "yes-no", "no", "as the TUI records it")
        edit = Edit("adj", "withdraw_adjudication", {"reviewer": "rev", "adjudication_id": row.id})
        edit.made = made_row(s, Adjudication, row.id)
    with session_scope(engine, "rev") as s:
        edit.undo(s)
    with session_scope(engine) as s:
        assert s.exec(select(Adjudication)).all() == []
