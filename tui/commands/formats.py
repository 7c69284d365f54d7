"""``chainmark import|export|import-run|export-run``: the seed benchmarks' own files, in and out."""

from __future__ import annotations

from annotation.formats import FORMAT_NAMES
from annotation.formats import api
from tui.commands import _click as click
from tui.context import AppContext, emit_json, pass_ctx

FORMAT = click.Choice(FORMAT_NAMES, case_sensitive=False)


@click.command("import")
@click.argument("fmt", metavar="FORMAT", type=FORMAT)
@click.argument("path", type=click.Path(path_type=str))
@click.option("--benchmark", "-b", help="Benchmark to import into (default: the format's name).")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@pass_ctx
def import_cmd(app: AppContext, fmt: str, path: str, benchmark: str | None, as_json: bool) -> None:
    """Import a dataset in FORMAT (gta, agentic-mme, isg, vtc, atp) from PATH, in one transaction."""
    summary = api.import_dataset(app.engine, app.blobs, fmt, path, benchmark, app.actor)
    if as_json:
        emit_json(summary.to_dict())
        return
    click.echo(f"{summary.benchmark}: {summary.created} created, {summary.updated} updated, "
               f"{summary.unchanged} unchanged ({summary.steps} steps, {summary.checkpoints} checkpoints, "
               f"{summary.documents} documents, {summary.assets} new files)")
    for note in summary.notes:
        click.echo(f"note: {note}")


@click.command("export")
@click.argument("fmt", metavar="FORMAT", type=FORMAT)
@click.argument("path", type=click.Path(path_type=str))
@click.option("--benchmark", "-b", required=True, help="Benchmark to export.")
@pass_ctx
def export_cmd(app: AppContext, fmt: str, path: str, benchmark: str) -> None:
    """Write a benchmark's tasks to PATH in FORMAT, images under their original relative paths."""
    result = api.export_dataset(app.engine, app.blobs, fmt, benchmark, path)
    click.echo(f"{result['tasks']} tasks → {result['path']} ({result['files']} files)")


@click.command("import-run")
@click.argument("fmt", metavar="FORMAT", type=FORMAT)
@click.argument("path", type=click.Path(path_type=str))
@click.option("--benchmark", "-b", required=True, help="Benchmark whose tasks the predictions answer.")
@click.option("--name", help="Name of the new run.")
@click.option("--json", "as_json", is_flag=True)
@pass_ctx
def import_run_cmd(app: AppContext, fmt: str, path: str, benchmark: str, name: str | None, as_json: bool) -> None:
    """Import predictions made by another harness (FORMAT's layout) as a run; prints the run id."""
    summary = api.import_run(app.engine, app.blobs, fmt, path, benchmark, name, app.actor)
    if as_json:
        emit_json(summary.to_dict())
        return
    click.echo(f"run {summary.run_id} ({summary.name}): {summary.trajectories} trajectories, "
               f"{summary.events} events, mode {summary.mode}")
    for warning in summary.warnings:
        click.echo(f"warning: {warning}")


@click.command("export-run")
@click.argument("fmt", metavar="FORMAT", type=FORMAT)
@click.argument("run_id", type=int)
@click.argument("path", type=click.Path(path_type=str))
@pass_ctx
def export_run_cmd(app: AppContext, fmt: str, run_id: int, path: str) -> None:
    """Write a run in FORMAT's prediction/result layout so the reference evaluator can read it."""
    result = api.export_run(app.engine, app.blobs, fmt, run_id, path)
    click.echo(f"run {run_id}: {result['trajectories']} trajectories → {result['path']}")


def register(cli: click.Group) -> None:
    for command in (import_cmd, export_cmd, import_run_cmd, export_run_cmd):
        cli.add_command(command)
