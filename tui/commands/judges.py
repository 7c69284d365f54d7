"""``chainmark judges``: judge prompt templates, including the reference prompts read from a checkout."""

from __future__ import annotations

from pathlib import Path


from evaluation.judges.templates import available
from tui.commands import _click as click
from tui.context import AppContext, emit_json, pass_ctx, table


@click.group("judges")
def judges_group() -> None:
    """Judge prompt templates: chainmark's own and the benchmarks' reference prompts."""


@judges_group.command("import-prompts")
@click.argument("benchmark")
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True)
@pass_ctx
def import_prompts_cmd(app: AppContext, benchmark: str, path: Path, as_json: bool) -> None:
    """Read BENCHMARK's judge prompts from PATH, your checkout of its reference repository.

    The text is read (never executed) from the files and variables the benchmark's profile names,
    stored in this database as a new template version with the checkout's commit, and used by
    faithful scoring and judging from then on.
    """
    from evaluation.benchmarks import UnknownProfile, all_profiles, get_profile
    from evaluation.judges.reference_prompts import PromptImportError, import_prompts
    from store import session_scope

    try:
        profile = get_profile(benchmark)
    except UnknownProfile as exc:
        raise click.ClickException(str(exc)) from None
    sources = list(getattr(profile, "reference_prompts", []) or [])
    if not sources:
        known = ", ".join(p.name for p in all_profiles() if getattr(p, "reference_prompts", None))
        raise click.ClickException(f"the {profile.name} profile names no reference prompts (profiles that do: {known})")
    try:
        with session_scope(app.engine, actor=app.actor) as s:
            done = import_prompts(s, profile.name, path, sources)
    except PromptImportError as exc:
        raise click.ClickException(str(exc)) from None
    if as_json:
        emit_json(done)
        return
    for d in done:
        src = d["source"]
        rev = (src.get("commit") or "")[:12] or f"content {src.get('content_sha256', '')[:12]}"
        state = "imported" if d["new"] else "unchanged"
        click.echo(
            f"{d['judge']}.v{d['version']}: {state} from {src['file']} ({src['variable']}) @ {rev}"
            + (" (files modified since that commit)" if src.get("dirty") else "")
        )


@judges_group.command("list")
@pass_ctx
def list_cmd(app: AppContext) -> None:
    """Judges with their own template files, and every imported reference prompt version."""
    from sqlmodel import col, select
    from store import read_only, session_scope
    from store.models import JudgeTemplate

    with session_scope(read_only(app.engine)) as s:
        rows = s.exec(select(JudgeTemplate).order_by(col(JudgeTemplate.judge), col(JudgeTemplate.id))).all()
        imported = [
            [
                r.judge,
                r.version,
                r.benchmark,
                (r.source.get("commit") or r.source.get("content_sha256") or "")[:12],
                r.source.get("file", ""),
                r.created_at.strftime("%Y-%m-%d %H:%M"),
            ]
            for r in rows
        ]
    click.echo(table([[j] for j in available()], ["judge (own template)"]))
    if imported:
        click.echo("")
        click.echo(table(imported, ["judge", "version", "benchmark", "source", "file", "imported"]))


def register(cli: click.Group) -> None:
    cli.add_command(judges_group)
