"""``chainmark conformance``: prove a run's faithful numbers by running the benchmark's own evaluator.

The run is exported in the benchmark's layout (``export-run``; the tasks too, with ``export``), scored by
chainmark, and handed to the reference evaluator from the user's checkout in its own Python; the command
prints the per-metric and per-item diff and exits 1 on any difference beyond tolerance.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any


from tui.commands import _click as click
from tui.context import AppContext, emit_json, pass_ctx, table


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6f}".rstrip("0").rstrip(".") if value == value else "nan"
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False)[:60]
    return "—" if value is None else str(value)


def _format_of(app: AppContext, run_id: int) -> tuple[str, str]:
    from store import read_only, session_scope
    from store.models import Benchmark, Run

    with session_scope(read_only(app.engine)) as s:
        run = s.get(Run, run_id)
        if run is None:
            raise LookupError(f"no run with id {run_id}")
        bench = s.get(Benchmark, run.benchmark_id)
        return bench.name, bench.source_format


def prepare(app: AppContext, run_id: int, work: Path, *, embedder: str, mode: str) -> tuple[str, Path, dict[str, Any]]:
    """Export run + tasks under ``work`` and score the run; (profile name, export dir, our view). Our view
    says in ``notes`` when it was scored without the run's verdicts because the reference gets no judge."""
    from annotation.formats import api
    from evaluation.benchmarks import get_profile
    from evaluation.conformance import ours_view
    from evaluation.conformance.runner import reference_is_judged
    from evaluation.scoring.runner import score_run

    bench_name, source_format = _format_of(app, run_id)
    try:
        profile = get_profile(source_format)
    except LookupError:
        profile = get_profile(bench_name)
    fmt = source_format if source_format in profile.formats else profile.formats[0]
    export_dir = work / "run"
    from tui.tool_lists import tool_descriptions

    api.export_dataset(app.engine, app.blobs, fmt, bench_name, work / "dataset", describe_tools=tool_descriptions)
    api.export_run(app.engine, app.blobs, fmt, run_id, export_dir)
    judged = reference_is_judged(profile.name)
    res = score_run(app.engine, run_id, mode=mode, embedder=embedder, write=False, judged=judged)
    ours = ours_view(profile.name, res)
    if not judged:
        ours["notes"] = [
            f"the {profile.name} reference runs with no judge here, so chainmark's side is scored without the "
            f"run's judge verdicts too: judged checks fail on both sides ({res.pending_judgements} left unjudged)"
        ]
    (work / "chainmark-scores.json").write_text(
        json.dumps(ours, ensure_ascii=False, default=str, indent=1), encoding="utf-8"
    )
    return profile.name, export_dir, ours


@click.command("conformance")
@click.argument("benchmark")
@click.argument("run_id", type=int)
@click.option(
    "--reference",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Your checkout of the benchmark's reference repository.",
)
@click.option(
    "--python",
    "python",
    default=None,
    metavar="PY",
    help="Python to run the reference with (default $CHAINMARK_REFERENCE_PYTHON, else chainmark's).",
)
@click.option(
    "--embedder",
    default="minilm",
    show_default=True,
    help="Embedder for chainmark's scores; injected into the reference too (within 4e-7 per item with "
    "sentence-transformers:all-mpnet-base-v2, else equal within 1e-4).",
)
@click.option(
    "--keep",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Write the exported files here and keep them (default: a temporary folder).",
)
@click.option("--max-items", type=int, default=30, show_default=True, help="Differing items to print.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@pass_ctx
def conformance_cmd(
    app: AppContext,
    benchmark: str,
    run_id: int,
    reference: Path,
    python: str | None,
    embedder: str,
    keep: Path | None,
    max_items: int,
    as_json: bool,
) -> None:
    """Score RUN_ID faithfully and with BENCHMARK's reference evaluator; diff them (exit 1 if they differ)."""
    from evaluation.benchmarks import get_profile
    from evaluation.conformance import run_conformance
    from tui.blind_view import withheld_reason

    refused = withheld_reason(app, [run_id], what="conformance refused (it shows the run's scores)")
    if refused:
        raise click.ClickException(refused)
    wanted = get_profile(benchmark).name
    work = keep if keep is not None else Path(tempfile.mkdtemp(prefix="chainmark-conformance-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        name, export_dir, ours = prepare(app, run_id, work, embedder=embedder, mode="faithful")
        if name != wanted:
            raise click.ClickException(f"run {run_id} belongs to benchmark profile {name!r}, not {wanted!r}")
        try:
            report = run_conformance(name, export_dir, reference, python, ours=ours, embedder=embedder)
        except (LookupError, OSError, RuntimeError) as exc:  # the reference could not be run: say why
            raise click.ClickException(f"the reference evaluator did not answer: {exc}") from None
    finally:
        if keep is None:
            shutil.rmtree(work, ignore_errors=True)
    if as_json:
        emit_json(report.to_dict())
    else:
        click.echo(f"conformance · {name} · run {run_id} · reference {reference}")
        click.echo(
            table(
                [[m.name, _fmt(m.ours), _fmt(m.reference), "yes" if m.equal else "NO"] for m in report.metrics],
                ["metric", "chainmark", "reference", "equal"],
            )
        )
        if report.per_metric_items:
            click.echo("")
            click.echo(
                table(
                    [[k, v["equal"], v["different"]] for k, v in sorted(report.per_metric_items.items())],
                    ["per-item metric", "equal", "different"],
                )
            )
        if report.items:
            click.echo("")
            click.echo(
                table(
                    [[d.item_id, d.metric, _fmt(d.ours), _fmt(d.reference)] for d in report.items[:max_items]],
                    ["item", "metric", "chainmark", "reference"],
                )
            )
            if len(report.items) > max_items:
                click.echo(f"… {len(report.items) - max_items} more differing item value(s)")
        for note in report.notes:
            click.echo(f"note: {note}")
        click.echo(
            "\nOK: every value equal to the reference"
            if report.ok
            else f"\nDIFFERENT: {sum(not m.equal for m in report.metrics)} metric(s), {len(report.items)} item value(s)"
        )
    if not report.ok:
        raise click.exceptions.Exit(1)


def register(cli: click.Group) -> None:
    cli.add_command(conformance_cmd)
