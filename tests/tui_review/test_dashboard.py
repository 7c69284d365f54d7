"""Agreement dashboard: the numbers shown are the CLI's, plus confusion matrix and distributions."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from tests.tui_review.conftest import rate_as, settle
from tui.cli import cli
from tui.screens.review.dashboard import DashboardScreen, est_text
from tui.widgets.review.confusion import ConfusionMatrix

ANN = ["yes", "no", "yes", "yes", "no"]
BOB = ["yes", "yes", "no", "no", "no"]
RESAMPLES = 300  # fewer than the default 1000 to keep the test fast; both sides use the same number


def _cli_agreement(db_path, *args: str) -> list[dict]:  # type: ignore[no-untyped-def]
    result = CliRunner().invoke(
        cli, ["--db", str(db_path), "agreement", "--json", "--bootstrap", str(RESAMPLES), *args], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


async def test_dashboard_values_equal_cli(make_tui, engine, db_path, study) -> None:  # type: ignore[no-untyped-def]
    rate_as(engine, "ann", ANN, study["trajectories"])
    rate_as(engine, "bob", BOB, study["trajectories"])
    cli_report = _cli_agreement(db_path, "--scale", "yes-no")[0]
    app = make_tui(actor="rev")
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot, app)
        app.push_screen(DashboardScreen(scale="yes-no", resamples=RESAMPLES))
        await settle(pilot, app)
        screen = app.screen
        assert isinstance(screen, DashboardScreen) and screen.data is not None
        report = screen.data.report
        assert report is not None
        assert report["raters"] == ["human:ann", "human:bob", "judge:judge-a", "judge:judge-b"]
        # the same κ and α, CIs included, as `chainmark agreement --json`
        assert report["overall"] == cli_report["overall"]
        assert [p["statistics"]["cohen_kappa"] for p in report["pairs"]] == [
            p["statistics"]["cohen_kappa"] for p in cli_report["pairs"]
        ]
        overall = screen.query_one("#dash-overall")
        shown = {overall.get_row_at(i)[0]: overall.get_row_at(i)[1] for i in range(overall.row_count)}
        assert shown["fleiss_kappa"] == est_text(cli_report["overall"]["fleiss_kappa"])
        assert shown["krippendorff_alpha_nominal"] == est_text(cli_report["overall"]["krippendorff_alpha_nominal"])
        assert shown["krippendorff_alpha_nominal"].startswith(
            f"{cli_report['overall']['krippendorff_alpha_nominal']['value']:.3f}"
        )
        # confusion ann × bob over five shared targets: yes/yes 1, yes/no 2, no/yes 1, no/no 1
        first = screen.data.confusions[0]
        assert (first.a, first.b, first.categories, first.counts) == (
            "human:ann",
            "human:bob",
            ["yes", "no"],
            [[1, 2], [1, 1]],
        )
        assert screen.query_one(ConfusionMatrix).caption == "human:ann (rows) × human:bob (columns)"
        assert screen.data.distribution["human:ann"] == [3, 2]
        # one task category: its agreement is the mean over targets of agreeing rater pairs, (1+⅓+½+⅓+⅓)/5
        assert screen.data.per_category == [("counting", pytest.approx(0.5), 5)]
        # narrowing the raters recomputes, again like the CLI
        await pilot.press("slash", *"ann, bob", "enter")
        await settle(pilot, app)
        narrowed = _cli_agreement(db_path, "--scale", "yes-no", "--raters", "ann,bob")[0]
        assert screen.data.report["overall"] == narrowed["overall"]
        assert screen.data.report["raters"] == ["human:ann", "human:bob"]
