"""``chainmark rubrics``: the judge rubric a benchmark's author writes, one immutable version at a time."""

from __future__ import annotations

from pathlib import Path

from tui.commands import _click as click
from tui.context import AppContext, emit_json, pass_ctx, table


@click.group("rubrics")
def rubrics_group() -> None:
    """Judge rubrics a chainmark-format benchmark's author writes (versioned; used by `judge`)."""


def _rubric_error(exc: Exception) -> click.ClickException:
    return click.ClickException(str(exc))


@rubrics_group.command("add")
@click.argument("benchmark")
@click.option("--file", "path", required=True, type=click.Path(path_type=Path), help="The rubric's text (markdown).")
@click.option("--json", "as_json", is_flag=True)
@pass_ctx
def add_cmd(app: AppContext, benchmark: str, path: Path, as_json: bool) -> None:
    """Save the rubric in --file as BENCHMARK's next version (versions are never edited).

    The text is the judge's user prompt, or ``### system`` and ``### user`` sections. Placeholders:
    {{query}} (the task), {{answer}} (the model's answer), {{golden}} (the expected answer's blocks);
    any other is refused. Scores are 0-10 (the judge answers {"score": …, "analysis": …}).
    """
    from evaluation.judges.rubrics import RubricError, add_rubric
    from store import session_scope

    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise click.ClickException(f"{path}: cannot be read ({exc})") from None
    try:
        with session_scope(app.engine, actor=app.actor) as s:
            tpl, new = add_rubric(s, benchmark, text, app.actor)
    except RubricError as exc:
        raise click.ClickException(f"{path}: {exc}") from None
    if as_json:
        emit_json({"benchmark": benchmark, "version": tpl.version, "new": new})
        return
    state = "saved" if new else "unchanged (the newest version already has this text)"
    click.echo(f"{benchmark}: rubric v{tpl.version} {state}")


@rubrics_group.command("list")
@click.argument("benchmark")
@click.option("--json", "as_json", is_flag=True)
@pass_ctx
def list_cmd(app: AppContext, benchmark: str, as_json: bool) -> None:
    """BENCHMARK's rubric versions, oldest first, with who saved each and when; `judge` uses the newest."""
    from store import read_only, session_scope
    from store.rubrics import RubricError, benchmark_format, stored_versions

    try:
        with session_scope(read_only(app.engine)) as s:
            benchmark_format(s, benchmark)  # the benchmark exists
            versions = stored_versions(s, benchmark)
    except RubricError as exc:
        raise _rubric_error(exc) from None
    saved = [v.created_at.strftime("%Y-%m-%d %H:%M UTC") for v in versions]
    rows = [[f"v{v.version}", v.author, at, v.user.strip().split("\n")[0][:60]] for v, at in zip(versions, saved)]
    if as_json:
        emit_json(
            [{"version": v.version, "author": v.author, "created_at": v.created_at.isoformat()} for v in versions]
        )
        return
    if not rows:
        click.echo(f"{benchmark}: no authored rubric; `judge` uses the built-in one (chainmark rubrics show)")
        return
    click.echo(table(rows, ["version", "author", "saved", "first line"]))


@rubrics_group.command("show")
@click.argument("benchmark")
@click.option("--version", "version", default=None, metavar="V", help="This version (default: the newest).")
@pass_ctx
def show_cmd(app: AppContext, benchmark: str, version: str | None) -> None:
    """Print BENCHMARK's rubric (the newest version, or V), or the built-in one when none was authored."""
    from evaluation.judges.rubrics import RUBRIC_JUDGE, RubricError, rubric_for, rubric_text, rubric_versions
    from evaluation.judges.templates import load_template
    from store import read_only, session_scope
    from tui.safe_text import visible

    try:
        with session_scope(read_only(app.engine)) as s:
            rubric_versions(s, benchmark)  # the benchmark exists
            tpl = rubric_for(s, benchmark, version)
    except RubricError as exc:
        raise _rubric_error(exc) from None
    if tpl is None:
        tpl = load_template(RUBRIC_JUDGE)
        click.echo(f"# {benchmark}: no authored rubric; the built-in {tpl.ref}")
    else:
        click.echo(f"# {benchmark}: rubric v{tpl.version}")
    click.echo(visible(rubric_text(tpl), keep_newlines=True))


def register(cli: click.Group) -> None:
    cli.add_command(rubrics_group)
