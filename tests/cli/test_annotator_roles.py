"""``annotators add`` never changes an existing annotator's role; ``annotators set-role`` does, audited."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from tui.cli import cli


def test_adding_an_existing_annotator_never_promotes_them(tmp_path: Path) -> None:
    db = str(tmp_path / "c.db")
    run = CliRunner().invoke
    assert run(cli, ["--db", db, "annotators", "add", "ann"]).exit_code == 0
    r = run(cli, ["--db", db, "annotators", "add", "ann", "--role", "admin"])
    assert r.exit_code == 1
    assert (
        "ann is already an annotator with role annotator; adding does not change roles. "
        "To make them admin: `chainmark annotators set-role ann admin`"
    ) in r.stderr
    assert run(cli, ["--db", db, "annotators", "add", "ann"]).exit_code == 0  # same role: nothing to do
    assert '"role": "annotator"' in run(cli, ["--db", db, "annotators", "list", "--json"]).stdout
    r = run(cli, ["--db", db, "--as", "boss", "annotators", "set-role", "ann", "reviewer"])
    assert r.exit_code == 0 and "annotator ann: annotator → reviewer" in r.stdout
    listed = run(cli, ["--db", db, "annotators", "list", "--json"]).stdout
    assert '"role": "reviewer"' in listed
    r = run(cli, ["--db", db, "annotators", "set-role", "nobody", "admin"])
    assert r.exit_code == 1 and "no annotator named 'nobody'" in r.stderr
