"""The shareable report: one self-contained HTML file with tables and plots, opened in a real headless
Chromium (Debian's package; skipped where it is not installed); data never becomes markup or script."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from annotation import tasks as authoring
from store import session_scope
from tests.scoring.builders import answer, call, res, stored_run, stored_trajectory
from tui.cli import cli

HOSTILE = '<script>document.body.setAttribute("data-pwned", "1")</script><img src=x onerror="alert(1)">'
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


def _runs(engine) -> list[int]:  # type: ignore[no-untyped-def]
    with session_scope(engine, "tester") as s:
        runs = [
            stored_run(s, "mme", "agentic-mme", mode=mode, model=model)
            for mode, model in (("atomic", HOSTILE), ("code", "beta"))
        ]
        for n, cat in enumerate(["L1", "L2", "L1"]):
            t = authoring.create_task(
                s,
                "mme",
                f"Question {n}?",
                source_id=f"q{n}",
                level=cat,
                category=f"cat {n % 2}",
                answer_spec={"kind": "contains", "value": "red"},
            )
            for r, said in zip(runs, ("red", "blue" if n else "red")):
                stored_trajectory(
                    s,
                    r,
                    int(t.id or 0),
                    [call("crop", {"bbox_2d": [0, 0, 9, 9]}, "c1"), res("crop", "c1", "ok"), answer(said)],
                )
        return [int(r.id or 0) for r in runs]


def test_csv_cells_are_empty_where_there_is_no_value(engine, db_path) -> None:  # type: ignore[no-untyped-def]
    ids = _runs(engine)
    out = CliRunner().invoke(
        cli, ["--db", str(db_path), "report", *map(str, ids), "--format", "csv", "--embedder", "hashing"]
    )
    assert out.exit_code == 0, out.output
    assert "–" not in out.output and "None" not in out.output and "nan" not in out.output
    header = next(line for line in out.output.splitlines() if line.startswith("model,"))
    assert header.startswith("model,run mode,scoring mode,embedder,")
    assert ",," in out.output  # a metric this benchmark's run does not have stays an empty cell


def test_html_report_shows_agreement_on_the_runs_targets_only(engine, db_path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from sqlmodel import select

    from annotation.review.annotators import add_annotator
    from store.models import HumanRating, Trajectory

    ids = _runs(engine)
    with session_scope(engine, "tester") as s:
        people = [add_annotator(s, name) for name in ("ann", "bob")]
        for run_id, values in ((ids[0], ("yes", "no", "yes")), (ids[1], ("no", "no", "no"))):
            trajectories = [int(t.id or 0) for t in s.exec(select(Trajectory).where(Trajectory.run_id == run_id)).all()]
            trajectories.sort()
            for person, flip in zip(people, (False, True)):
                for tid, value in zip(trajectories, values):
                    said = value if not flip or tid != trajectories[0] else ("no" if value == "yes" else "yes")
                    s.add(
                        HumanRating(
                            annotator_id=person.id or 0,
                            target_kind="trajectory",
                            target_id=tid,
                            scale="yes-no",
                            value=said,
                        )
                    )
    target = tmp_path / "report.html"
    out = CliRunner().invoke(
        cli,
        ["--db", str(db_path), "report", str(ids[0]), "--format", "html", "--embedder", "hashing", "-o", str(target)],
    )
    assert out.exit_code == 0, out.output
    page = target.read_text(encoding="utf-8")
    assert "Agreement on yes-no (nominal): 2 raters, 3 targets" in page  # run 0's three, not all six
    assert "yes-no: pairwise cohen_kappa</figcaption>" in page


def test_html_report_is_one_file_with_tables_plots_and_escaped_data(engine, db_path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    ids = _runs(engine)
    target = tmp_path / "report.html"
    out = CliRunner().invoke(
        cli,
        [
            "--db",
            str(db_path),
            "report",
            *map(str, ids),
            "--format",
            "html",
            "--embedder",
            "hashing",
            "-o",
            str(target),
        ],
    )
    assert out.exit_code == 0, out.output
    page = target.read_text(encoding="utf-8")
    assert "<script" not in page.replace("&lt;script", "")  # the hostile name is text, not markup
    assert "&lt;script&gt;" in page and "onerror=&quot;" in page
    assert page.count("<table>") >= 3 and page.count('src="data:image/svg+xml;base64,') >= 2
    assert "http://" not in page and "https://" not in page.replace("https://json-schema", "")  # self-contained
    assert "run mode atomic" in page and "run mode code" in page


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium binary (Debian: apt-get install chromium)")
def test_html_report_opens_in_headless_chromium_and_runs_no_data_as_script(engine, db_path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    ids = _runs(engine)
    target = tmp_path / "report.html"
    CliRunner().invoke(
        cli,
        [
            "--db",
            str(db_path),
            "report",
            *map(str, ids),
            "--format",
            "html",
            "--embedder",
            "hashing",
            "-o",
            str(target),
        ],
    )
    profile = tmp_path / "chromium-profile"
    dom = subprocess.run(
        [
            str(CHROMIUM),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            f"--user-data-dir={profile}",
            "--dump-dom",
            target.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert "<table>" in dom.stdout and "headline metrics" in dom.stdout
    assert "data-pwned" not in dom.stdout.replace("data-pwned&quot;", "").replace('data-pwned", "1")', "")
    assert "&lt;script&gt;document.body.setAttribute" in dom.stdout  # shown as text
    assert dom.stdout.count('<img alt="" src="data:image/svg+xml') >= 2  # the plots
    assert '<img src="x"' not in dom.stdout and "&lt;img src=x onerror" in dom.stdout  # text, not an element


def test_drawing_the_plots_leaves_the_process_matplotlib_state_alone(engine, db_path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The TUI builds reports in a worker thread: the plots must not switch the process's backend or
    leave figures in pyplot's process-wide list (they used to do the first)."""
    import matplotlib
    import matplotlib.pyplot as plt

    before = matplotlib.get_backend()
    matplotlib.use("svg")
    try:
        target = tmp_path / "report.html"
        args = ["--db", str(db_path), "report", *map(str, _runs(engine)), "--format", "html", "-o", str(target)]
        out = CliRunner().invoke(cli, [*args, "--embedder", "hashing"])
        assert out.exit_code == 0, out.output
        assert target.read_text(encoding="utf-8").count('src="data:image/svg+xml;base64,') >= 2
        assert matplotlib.get_backend() == "svg" and plt.get_fignums() == []
    finally:
        matplotlib.use(before)
