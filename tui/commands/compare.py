"""``chainmark compare``: runs side by side, task by task, largest disagreement first."""

from __future__ import annotations

from typing import TYPE_CHECKING


from evaluation.vocab import COMPARE_FILTERS, COMPARE_SORTS
from evaluation.scoring.matchers import MODES
from tui.commands import _click as click
from tui.context import AppContext, emit_json, pass_ctx, table

if TYPE_CHECKING:
    from evaluation.compare import Comparison


def _short(text: str, width: int = 40) -> str:
    one_line = " ".join(str(text).split())
    return one_line if len(one_line) <= width else one_line[: width - 1] + "…"


def _score(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def _count(value: int | None) -> str:
    return "–" if value is None else str(value)


def render(cmp: Comparison) -> str:
    """The plain-text report: header, summary, then one line per task."""
    lines = [
        f"comparing {', '.join(r['label'] for r in cmp.runs)} · scoring mode {cmp.summary['scoring_mode']} · "
        f"{cmp.summary['shared_tasks']} shared task(s), {cmp.summary['differing']} differ"
    ]
    lines.append(
        table(
            [
                [r["label"], _score(cmp.summary["mean"][r["run_id"]]), _count(cmp.summary["right"][r["run_id"]])]
                for r in cmp.runs
            ],
            ["run", "mean score", "right"],
        )
    )
    lines.append("")
    lines.append(
        table(
            [[f"run {p['a']} vs run {p['b']}", p["wins"], p["ties"], p["losses"]] for p in cmp.summary["pairwise"]],
            ["pair", "wins", "ties", "losses"],
        )
    )
    lines.append("")
    headers = ["task", "spread"] + [f"run {r['run_id']}" for r in cmp.runs] + ["query"]
    rows = [
        [
            row.source_id or row.task_id,
            _score(row.spread),
            *[f"{c.status} {'hidden' if c.hidden else _score(c.score)} {_short(c.answer, 24)}" for c in row.cells],
            _short(row.query),
        ]
        for row in cmp.rows
    ]
    lines.append(table(rows, headers) if rows else "no tasks match")
    lines.extend(f"note: {n}" for n in cmp.notes)
    return "\n".join(lines)


@click.command("compare")
@click.argument("run_ids", type=int, nargs=-1, required=True)
@click.option(
    "--mode",
    type=click.Choice(MODES),
    default="faithful",
    show_default=True,
    help="Scoring mode of the per-task scores.",
)
@click.option("--embedder", default="minilm", show_default=True, help="Embedder for similarity-scored answers.")
@click.option(
    "--filter",
    "filter_",
    type=click.Choice(COMPARE_FILTERS),
    default=None,
    help="Keep only these tasks (A and B are the first two runs).",
)
@click.option(
    "--sort",
    type=click.Choice(COMPARE_SORTS),
    default="disagreement",
    show_default=True,
    help="disagreement: largest spread of per-task scores first; task: by task id.",
)
@click.option("--limit", type=int, default=None, help="Show at most N tasks.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
@pass_ctx
def compare_cmd(
    app: AppContext,
    run_ids: tuple[int, ...],
    mode: str,
    embedder: str,
    filter_: str | None,
    sort: str,
    limit: int | None,
    as_json: bool,
) -> None:
    """Compare two or more RUN_IDS on their shared tasks: outcome, answer and per-task score of each."""
    from evaluation.compare import compare, load_run_results
    from tui.blind_view import scope_at, withhold_results

    if len(run_ids) < 2:
        raise click.UsageError("give at least two run ids")
    results = load_run_results(app.engine, list(run_ids), mode=mode, embedder=embedder)
    results = withhold_results(scope_at(app), results)
    cmp = compare(results, sort=sort, filter=filter_, limit=limit)
    if as_json:
        emit_json(cmp.to_json())
        return
    click.echo(render(cmp))


def register(cli: click.Group) -> None:
    cli.add_command(compare_cmd)
