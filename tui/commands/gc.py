"""``chainmark gc``: remove orphan blobs, half-written temp files and dead sandbox folders."""

from __future__ import annotations


from tui.commands import _click as click
from tui.context import AppContext, pass_ctx


def _size(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return f"{n} B"


@click.command("gc")
@click.option("--dry-run", is_flag=True, help="List what would be removed; remove nothing.")
@click.option(
    "--min-age",
    "min_age",
    type=click.FloatRange(0, None),
    default=None,
    show_default="3600, an hour",  # store.gc.DEFAULT_MIN_AGE_S, read when the command runs (start-up)
    metavar="SECONDS",
    help="Only touch things older than this (another process may be writing).",
)
@pass_ctx
def gc_cmd(app: AppContext, dry_run: bool, min_age: float | None) -> None:
    """Remove blobs no asset references (left by failed imports and runs), .tmp-* files of killed blob
    writes, and work folders of killed sandboxes."""
    from store import session_scope
    from store.gc import DEFAULT_MIN_AGE_S, collect, find_garbage

    if min_age is None:
        min_age = DEFAULT_MIN_AGE_S
    with session_scope(app.engine, app.actor) as s:
        garbage = find_garbage(s, app.blobs, min_age_s=min_age)
        for sha in garbage.orphan_blobs:
            click.echo(f"{'would remove' if dry_run else 'remove'} orphan blob {sha}")
        for path in garbage.temp_files:
            click.echo(f"{'would remove' if dry_run else 'remove'} temp {path}")
        if dry_run:
            click.echo(
                f"{len(garbage.orphan_blobs)} orphan blob(s), {len(garbage.temp_files)} temp file(s), "
                f"{_size(garbage.bytes)}; nothing removed (--dry-run)"
            )
            return
        removed = collect(s, app.blobs, garbage)
    click.echo(f"removed {removed} item(s), {_size(garbage.bytes)}")


def register(cli: click.Group) -> None:
    cli.add_command(gc_cmd)
