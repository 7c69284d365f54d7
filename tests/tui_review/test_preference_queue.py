"""Preference queue: a, b and t store judgements in canonical order, a reason goes with the next one,
the screen moves on by itself, and nothing on it ever names a run, a model or a judge (blind)."""

from __future__ import annotations

from typing import Any

from sqlalchemy.engine import Engine
from sqlmodel import col, select

from annotation.review.preferences import assign_pairs
from store import session_scope
from store.models import Assignment, Event, ModelEndpoint, Preference, Run, Trajectory
from tests.tui_review.conftest import settle
from tui.screens.review.nav import screen_for
from tui.screens.review.preference_queue import PreferenceQueueScreen

SECRETS = ("scripted", "rival", "secretmodel", "judge-a", "judge-b", "matches", "differs")


def second_run(engine: Engine, study: dict[str, Any]) -> int:
    """A rival run on the same tasks, its endpoint named; its answers mention its own model."""
    with session_scope(engine, "seed") as s:
        first = s.get(Run, study["run"])
        assert first is not None
        ep = ModelEndpoint(name="secretmodel", base_url="http://127.0.0.1:1/v1", model="secretmodel-large")
        s.add(ep)
        s.flush()
        rival = Run(name="rival run", benchmark_id=first.benchmark_id, endpoint_id=ep.id, mode="atomic", status="done")
        s.add(rival)
        s.flush()
        for n, task_id in enumerate(study["tasks"]):
            traj = Trajectory(
                run_id=rival.id or 0, task_id=task_id, status="done", final_answer=f"secretmodel-large thinks {n + 9}"
            )
            s.add(traj)
            s.flush()
            s.add(Event(trajectory_id=traj.id or 0, ordinal=0, kind="answer", payload={"text": f"{n + 9}"}))
        assign_pairs(s, study["run"], rival.id or 0, ["ann"], 1)
        return rival.id or 0


def screen_text(app: Any) -> str:
    statics = "\n".join(str(w.render()) for w in app.screen.query("Static"))
    return statics + app.export_screenshot()


async def test_judge_pairs_with_keys_blind(make_tui, engine, study) -> None:  # type: ignore[no-untyped-def]
    rival = second_run(engine, study)
    app = make_tui(actor="ann")
    async with app.run_test(size=(150, 44)) as pilot:
        await settle(pilot, app)
        app.push_screen(screen_for("prefs"))
        await settle(pilot, app)
        screen = app.screen
        assert isinstance(screen, PreferenceQueueScreen)
        text = screen_text(app)
        assert "Answer A" in text and "Answer B" in text and "How many cups are on table 1?" in text
        assert "[model] thinks 9" in text  # the rival's answer, its model's name masked
        shown_left = []
        for key in ("a", "r", "b", "t"):
            shown_left.append(screen.item.view.sides[0].final_answer if screen.item else None)
            for secret in SECRETS:
                assert secret not in screen_text(app), secret
            if key == "r":  # a reason goes with the next judgement
                await pilot.press("r", *"clearer steps", "enter")
                await settle(pilot, app)
                assert "clearer steps" in screen_text(app)
                shown_left.pop()
                continue
            await pilot.press(key)
            await settle(pilot, app)
        assert screen.state is not None and screen.state.done == 3 and screen.index == 3
        assert "judged" not in str(screen.query_one("#pref-choice").render()).replace("not judged", "")
        await pilot.press("left")  # back to the tie: shown as judged
        await settle(pilot, app)
        assert "judged: tie" in str(screen.query_one("#pref-choice").render())
        # narrow terminals stack the answers
        assert getattr(screen.query_one("#pref-answers").styles.layout, "name", None) == "horizontal"
        await pilot.resize_terminal(90, 44)
        await settle(pilot, app)
        assert getattr(screen.query_one("#pref-answers").styles.layout, "name", None) == "vertical"
    with session_scope(engine) as s:
        rows = s.exec(select(Preference).order_by(col(Preference.id))).all()
        assert [(r.task_id, r.run_a_id, r.run_b_id) for r in rows] == [
            (t, study["run"], rival) for t in study["tasks"][:3]
        ]
        scripted = study["run"]
        for row, key, left_answer in zip(rows, ("a", "b", "t"), shown_left):
            left_is_rival = "[model]" in (left_answer or "")
            assert row.shown_left_run_id == (rival if left_is_rival else scripted)
            if key == "t":
                assert row.choice == "tie"
            else:  # the side the key named, in canonical (scripted, rival) terms
                winner = row.shown_left_run_id if key == "a" else ({scripted, rival} - {row.shown_left_run_id}).pop()
                assert row.choice == ("a" if winner == scripted else "b")
        assert [r.reason for r in rows] == [None, "clearer steps", None]
        done = s.exec(
            select(Assignment.status).where(Assignment.scale == "preference").order_by(col(Assignment.id))
        ).all()
        assert done == ["done", "done", "done", "open", "open"]


async def test_undo_reopens_and_sides_stay_put(make_tui, engine, study) -> None:  # type: ignore[no-untyped-def]
    second_run(engine, study)
    app = make_tui(actor="ann")
    async with app.run_test(size=(150, 44)) as pilot:
        await settle(pilot, app)
        app.push_screen(PreferenceQueueScreen())
        await settle(pilot, app)
        screen = app.screen
        first_left = screen.item.view.sides[0].final_answer
        await pilot.press("a")
        await settle(pilot, app)
        await pilot.press("left", "u")
        await settle(pilot, app)
        assert screen.state is not None and screen.state.done == 0
        assert screen.item.view.sides[0].final_answer == first_left  # reopening never swaps A and B
    with session_scope(engine) as s:
        assert s.exec(select(Preference)).all() == []


async def test_dashboard_shows_the_leaderboard_and_preference_agreement(make_tui, engine, study) -> None:  # type: ignore[no-untyped-def]
    from annotation.review import preferences as prefs
    from tui.screens.review.dashboard import DashboardScreen
    from tui.screens.review.dashboard_data import DashboardQuery, dashboard_data

    rival = second_run(engine, study)
    with session_scope(engine, "seed") as s:
        assign_pairs(s, study["run"], rival, ["ann", "bob"], 2)
        for who in ("ann", "bob"):
            for n, item in enumerate(prefs.queue(s, who)):
                # the rival wins 4 of 5 for ann, 3 of 5 for bob (whatever side it was shown on)
                rival_wins = n < (4 if who == "ann" else 3)
                choice = "a" if (item.left == rival) == rival_wins else "b"
                prefs.record(s, who, item.assignment_id, choice)
        data = dashboard_data(s, DashboardQuery(resamples=100), "rev")
        assert "preference" in data.scales and data.leaderboard is not None
        assert [m["model"] for m in data.leaderboard["models"]] == ["secretmodel", "scripted run"]
        assert data.leaderboard["models"][0]["wins"] == 7 and data.leaderboard["judgements"] == 10
        pref = dashboard_data(s, DashboardQuery(scale="preference", resamples=100), "rev").report
        assert pref is not None and pref["units"] == 5
        assert pref["overall"]["percent_agreement"]["value"] == 0.8
        # someone with pairs still to judge sees no leaderboard
        assign_pairs(s, study["run"], rival, ["ann", "bob", "rev"], 3)
        hidden = dashboard_data(s, DashboardQuery(resamples=100), "rev")
        assert hidden.leaderboard is None and "5 pair(s) to judge blind" in hidden.leaderboard_note
    app = make_tui(actor="ann")
    async with app.run_test(size=(150, 44)) as pilot:
        await settle(pilot, app)
        app.push_screen(DashboardScreen(resamples=50))
        await settle(pilot, app)
        board = app.screen.query_one("#dash-leaderboard")
        assert board.display and board.row_count == 2
        assert "Bradley–Terry" in str(app.screen.query_one("#dash-board-title").render())


def test_reports_carry_the_leaderboard(engine, db_path, study, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from click.testing import CliRunner

    from annotation.review import preferences as prefs
    from tui.cli import cli

    rival = second_run(engine, study)
    with session_scope(engine, "seed") as s:
        for item in prefs.queue(s, "ann")[:4]:
            prefs.record(s, "ann", item.assignment_id, "a" if item.left == rival else "b")
    runs = [str(study["run"]), str(rival)]
    out: dict[str, str] = {}
    for fmt in ("md", "csv", "html"):
        path = tmp_path / f"report.{fmt}"
        result = CliRunner().invoke(
            cli, ["--db", str(db_path), "report", *runs, "--format", fmt, "-o", str(path)], catch_exceptions=False
        )
        assert result.exit_code == 0, result.output
        out[fmt] = path.read_text(encoding="utf-8")
    assert "Bradley–Terry leaderboard (4 judgement(s)" in out["md"]
    assert "| 1 | secretmodel |" in out["md"] and "| 2 | scripted run |" in out["md"]
    assert "# human preferences: Bradley–Terry leaderboard" in out["csv"]
    assert "\n1,secretmodel," in out["csv"]
    assert "<h2>human preferences: Bradley–Terry leaderboard" in out["html"] and "<td>secretmodel</td>" in out["html"]
    single = CliRunner().invoke(cli, ["--db", str(db_path), "report", runs[0]], catch_exceptions=False)
    assert "Bradley" not in single.output  # one run: nothing to compare


def test_reports_screen_tables_include_the_leaderboard(engine, study, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from rich.console import Console

    from annotation.review import preferences as prefs
    from tui.screens.reports import ReportRequest, export_text, preference_tables, report_renderable

    rival = second_run(engine, study)
    with session_scope(engine, "seed") as s:
        for item in prefs.queue(s, "ann"):
            prefs.record(s, "ann", item.assignment_id, "tie")
        assert preference_tables(s, ReportRequest((study["run"],), "faithful", "minilm", None)) == []
        extra = preference_tables(s, ReportRequest((study["run"], rival), "faithful", "minilm", None))
    assert len(extra) == 1 and [row[1] for row in extra[0][2]] == ["scripted run", "secretmodel"]  # tied: by name
    console = Console(width=160, record=True)
    console.print(report_renderable([], None, extra))
    assert "Bradley–Terry leaderboard (5 judgement(s)" in console.export_text()
    assert "secretmodel" in export_text([], None, tmp_path / "r.csv", extra)
    assert "<td>secretmodel</td>" in export_text([], None, tmp_path / "r.html", extra)


async def test_ctrl_z_puts_the_item_back_as_it_was(make_tui, engine, study) -> None:  # type: ignore[no-untyped-def]
    second_run(engine, study)
    app = make_tui(actor="ann")

    def stored() -> list[tuple[str, int]]:
        with session_scope(engine) as s:
            return [(p.choice, p.revision) for p in s.exec(select(Preference)).all()]

    async with app.run_test(size=(150, 44)) as pilot:
        await settle(pilot, app)
        app.push_screen(PreferenceQueueScreen())
        await settle(pilot, app)
        screen = app.screen
        await pilot.press("t")
        await settle(pilot, app)
        await pilot.press("left", "a")  # change the mind: A after all
        await settle(pilot, app)
        changed = stored()
        assert len(changed) == 1 and changed[0][1] == 2 and changed[0][0] != "tie"
        await pilot.press("ctrl+z")
        await settle(pilot, app)
        assert [c for c, _ in stored()] == ["tie"]
        await pilot.press("ctrl+z")
        await settle(pilot, app)
        assert stored() == []
        assert screen.state is not None and screen.state.done == 0
