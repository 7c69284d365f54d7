"""``chainmark import|export|import-run|export-run``: the benchmarks' own files, in and out (the
formats come from the benchmark plugins, ``store.plugins``)."""

from __future__ import annotations

import csv
from collections.abc import Iterator
from contextlib import contextmanager

from annotation.formats.registry import format_names, run_format_names
from tui.commands import _click as click
from tui.context import AppContext, emit_json, json_option, pass_ctx

FORMAT = click.LazyChoice(format_names, case_sensitive=False)
RUN_FORMAT = click.LazyChoice(run_format_names, case_sensitive=False)


@contextmanager
def _naming(path: str) -> Iterator[None]:
    """Errors about the data itself (text a database cannot store, a value it refuses, nesting past
    the recursion limit) name the file or folder they came from, in one line."""
    import sqlalchemy.exc as sa_exc

    from tui.errors import describe

    try:
        yield
    except csv.Error as exc:  # e.g. a TSV field over the csv module's 128 KB limit
        raise click.ClickException(f"{path}: the CSV/TSV reader refused the file ({exc})") from exc
    except (UnicodeError, RecursionError, OverflowError, sa_exc.DataError, sa_exc.StatementError) as exc:
        if isinstance(exc, sa_exc.OperationalError | sa_exc.InternalError):
            raise  # the database, not the file: the CLI's own handler says which
        what = describe(exc) or f"{type(exc).__name__}: {exc}"
        raise click.ClickException(f"{path}: {what}") from exc


@click.command("import", cls=click.FormatsHelp)
@click.argument("fmt", metavar="FORMAT", type=FORMAT)
@click.argument("path", type=click.Path(path_type=str))
@click.option("--benchmark", "-b", help="Benchmark to import into (default: the format's name).")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@pass_ctx
def import_cmd(app: AppContext, fmt: str, path: str, benchmark: str | None, as_json: bool) -> None:
    """Import a dataset in FORMAT (one of the formats below) from PATH, in one transaction."""
    from store.gc_pause import gc_paused

    # Paused from the imports on (SQLAlchemy's and the format's modules all stay alive), as in `score`
    # and `run`: no collection walks them, ≈ 20 ms of the start-up.
    with gc_paused(), _naming(path):
        from annotation.formats import api

        summary = api.import_dataset(app.engine, app.blobs, fmt, path, benchmark, app.actor)
    if as_json:
        emit_json(summary.to_dict())
        return
    click.echo(
        f"{summary.benchmark}: {summary.created} created, {summary.updated} updated, "
        f"{summary.unchanged} unchanged ({summary.steps} steps, {summary.checkpoints} checkpoints, "
        f"{summary.documents} documents, {summary.assets} new files)"
    )
    if summary.rubrics:
        click.echo(f"{summary.benchmark}: {summary.rubrics} judge rubric version(s) added")
    for note in summary.notes:
        click.echo(f"note: {note}")


@click.command("export", cls=click.FormatsHelp)
@click.argument("fmt", metavar="FORMAT", type=FORMAT)
@click.argument("path", type=click.Path(path_type=str))
@click.option("--benchmark", "-b", required=True, help="Benchmark to export.")
@json_option
@pass_ctx
def export_cmd(app: AppContext, fmt: str, path: str, benchmark: str, as_json: bool) -> None:
    """Write a benchmark's tasks to PATH in FORMAT, images under their original relative paths (hf: a
    Hugging Face datasets folder, images embedded)."""
    from annotation.formats import api

    from tui.tool_lists import tool_descriptions

    result = api.export_dataset(app.engine, app.blobs, fmt, benchmark, path, describe_tools=tool_descriptions)
    if as_json:
        emit_json(result)
        return
    click.echo(f"{result['tasks']} tasks → {result['path']} ({result['files']} files)")


@click.command("import-run", cls=click.FormatsHelp, formats="run")
@click.argument("fmt", metavar="FORMAT", type=RUN_FORMAT)
@click.argument("path", type=click.Path(path_type=str))
@click.option("--benchmark", "-b", required=True, help="Benchmark whose tasks the predictions answer.")
@click.option("--name", help="Name of the new run.")
@click.option(
    "--root",
    type=click.Path(file_okay=False, path_type=str),
    default=None,
    help="isg: resolve output images as ISG-eval.py --root does (as given if that file exists, else "
    "under ROOT); default: next to the JSONL.",
)
@click.option("--drop-last", is_flag=True, help="isg: leave out the last line, as ISG-eval.py's default --end -1 does.")
@click.option("--json", "as_json", is_flag=True)
@pass_ctx
def import_run_cmd(
    app: AppContext,
    fmt: str,
    path: str,
    benchmark: str,
    name: str | None,
    root: str | None,
    drop_last: bool,
    as_json: bool,
) -> None:
    """Import predictions made by another harness (FORMAT's layout, or an Inspect AI log) as a run; prints the run id."""
    from annotation.formats import api

    with _naming(path):
        summary = api.import_run(
            app.engine, app.blobs, fmt, path, benchmark, name, app.actor, root=root, drop_last=drop_last
        )
    if as_json:
        emit_json(summary.to_dict())
        return
    click.echo(
        f"run {summary.run_id} ({summary.name}): {summary.trajectories} trajectories, "
        f"{summary.events} events, mode {summary.mode}"
    )
    for note in summary.notes:
        click.echo(f"note: {note}")
    for warning in summary.warnings:
        click.echo(f"warning: {warning}")


@click.command("export-run", cls=click.FormatsHelp, formats="run")
@click.argument("fmt", metavar="FORMAT", type=RUN_FORMAT)
@click.argument("run_id", type=int)
@click.argument("path", type=click.Path(path_type=str))
@json_option
@pass_ctx
def export_run_cmd(app: AppContext, fmt: str, run_id: int, path: str, as_json: bool) -> None:
    """Write a run in FORMAT's prediction/result layout so the reference evaluator can read it
    (parquet: events and trajectories as tables; inspect: an Inspect AI eval log; any benchmark)."""
    from annotation.formats import api
    from tui.blind_view import withheld_reason

    refused = withheld_reason(app, [run_id], what="export refused (it names the model and holds its scores)")
    if refused:
        raise click.ClickException(refused)
    with _naming(path):
        result = api.export_run(app.engine, app.blobs, fmt, run_id, path)
    if as_json:
        emit_json({"run_id": run_id, **result})
        return
    click.echo(f"run {run_id}: {result['trajectories']} trajectories → {result['path']}")


def register(cli: click.Group) -> None:
    for command in (import_cmd, export_cmd, import_run_cmd, export_run_cmd):
        cli.add_command(command)
