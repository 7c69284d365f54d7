"""Agreement between raters (people and judges), and the disagreement queue."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from evaluation.vocab import PAIR_KINDS
from tui.commands import _click as click
from tui.commands._review_common import KIND, _fmt, _split
from tui.stat_text import est_text
from tui.context import AppContext, emit_json, pass_ctx, table

if TYPE_CHECKING:
    from sqlmodel import Session

    from evaluation.agreement.matrix import RatingMatrix


def _scale_names(s: Session, scale: str | None) -> list[str]:
    from sqlmodel import select

    from store.models import RatingScale

    if scale:
        return [scale]
    return list(s.exec(select(RatingScale.name).order_by(RatingScale.name)).all())


def _matrices(
    app: AppContext, scale: str | None, target_kind: str | None, raters: list[str] | None, include_stale: bool
) -> tuple[Session, list[RatingMatrix]]:
    from sqlmodel import Session

    from annotation.review import scales as scaling
    from evaluation.agreement.matrix import collect
    from store import read_only
    from tui.blind_view import scope_for, visible_matrices

    scaling.store_builtin_scales_before_reading(app.engine, app.actor)
    s = Session(read_only(app.engine), expire_on_commit=False)
    out = []
    for name in _scale_names(s, scale):
        if scale:
            scaling.get_scale(s, name)
        out += [
            m for m in collect(s, name, target_kind=target_kind, raters=raters, include_stale=include_stale) if m.units
        ]
    out, _ = visible_matrices(s, scope_for(s, app.viewer), out)
    return s, [m for m in out if m.units]


def agreement_results(
    app: AppContext,
    *,
    raters: list[str] | None = None,
    scale: str | None = None,
    target_kind: str | None = None,
    include_stale: bool = False,
    resamples: int = 1000,
    seed: int = 0,
    runs: list[int] | None = None,
) -> list[dict[str, Any]]:
    """The agreement reports (as dictionaries) the CLI prints, the HTML page and run reports show."""
    from evaluation.agreement.matrix import JUDGE, rater_kind
    from evaluation.agreement.rankings import judge_error_correlation, model_ranking, within_runs
    from evaluation.agreement.summary import agreement_report
    from tui.blind_view import scope_for

    s, matrices = _matrices(app, scale, target_kind, raters, include_stale)
    try:
        if runs:
            matrices = [m for m in (within_runs(s, m, set(runs)) for m in matrices) if m.units]
        results = []
        blind = scope_for(s, app.viewer)
        for m in matrices:
            data = agreement_report(m, resamples=resamples, seed=seed).to_dict()
            if sum(1 for r in m.raters if rater_kind(r) == JUDGE) >= 2:
                if blind.runs:  # per-model means name the models the viewer still judges blind
                    hidden = blind.why_any_hidden("model ranking hidden")
                    data["notes"] = [*data.get("notes", []), hidden]
                else:
                    data["model_ranking"] = model_ranking(s, m).to_dict()
                errors, source = judge_error_correlation(s, m)
                data["judge_errors"] = {**errors.to_dict(), "reference": source}
            results.append(data)
    finally:
        s.close()
    return results


@click.command("agreement")
@click.option("--raters", help="Comma-separated raters: annotator or judge names (human:X / judge:X if both).")
@click.option("--scale", help="Only this scale (default: every scale with ratings).")
@click.option("--target-kind", type=KIND)
@click.option("--run", "runs", type=int, multiple=True, help="Only targets in this run's trajectories (repeatable).")
@click.option("--include-stale", is_flag=True, help="Count ratings whose task was edited after rating.")
@click.option(
    "--bootstrap", "resamples", type=int, default=1000, show_default=True, help="Bootstrap resamples for CIs (0: none)."
)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--json", "as_json", is_flag=True)
@click.option(
    "--html",
    "html_out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Also write a self-contained HTML page with the tables and agreement heatmaps to this file.",
)
@pass_ctx
def agreement_cmd(
    app: AppContext,
    raters: str | None,
    scale: str | None,
    target_kind: str | None,
    runs: tuple[int, ...],
    include_stale: bool,
    resamples: int,
    seed: int,
    as_json: bool,
    html_out: Path | None,
) -> None:
    """Agreement among raters (people and judges) over the same targets, per scale and dimension."""
    results = agreement_results(
        app,
        raters=_split(raters),
        scale=scale,
        target_kind=target_kind,
        include_stale=include_stale,
        resamples=resamples,
        seed=seed,
        runs=list(runs),
    )
    if html_out is not None:
        from evaluation.agreement.html_section import page

        html_out.write_text(page(results), encoding="utf-8")
        click.echo(f"agreement page written to {html_out}", err=True)
    if as_json:
        emit_json(results)
        return
    if not results:
        click.echo("no ratings to compare yet")
    for data in results:
        _print_report(data)


def _print_report(data: dict[str, Any]) -> None:
    title = data["scale"] + (f".{data['dimension']}" if data["dimension"] else "")
    click.echo(f"\n{title} ({data['level']}): {len(data['raters'])} rater(s), {data['units']} target(s)")
    click.echo(
        table(
            [[k, est_text(v), v["n"], v["reason"] or ""] for k, v in data["overall"].items()],
            ["statistic", "value [95% CI]", "n", "note"],
        )
    )
    if data["pairs"]:
        cols = ["percent_agreement", "cohen_kappa", "cohen_kappa_quadratic", "pearson", "spearman", "mae"]
        cols = [c for c in cols if any(c in p["statistics"] for p in data["pairs"])]
        click.echo("")
        click.echo(
            table(
                [
                    [p["a"], p["b"], p["kind"], p["n"]] + [est_text(p["statistics"].get(c)) for c in cols]
                    for p in data["pairs"]
                ],
                ["rater A", "rater B", "pair", "n"] + cols,
            )
        )
    if "model_ranking" in data and data["model_ranking"]["reason"] is None:
        sp = data["model_ranking"]["spearman"]
        judges = sorted(sp)
        click.echo("\ninter-judge Spearman of model rankings")
        click.echo(table([[a] + [est_text(sp[a][b]) for b in judges] for a in judges], [""] + judges))
    if "judge_errors" in data:
        je = data["judge_errors"]
        click.echo(
            f"\njudge error correlation vs {je['reference']} (n={je['n_units']}): mean r = "
            f"{_fmt(je['mean_offdiagonal'])}, effective independent judges = {_fmt(je['effective_judges'])}"
            + (f" — {je['reason']}" if je["reason"] else "")
        )
    for note in data["notes"]:
        click.echo(f"note: {note}")


@click.command("disagreements")
@click.option(
    "--threshold",
    type=float,
    default=0.0,
    show_default=True,
    help="Queue targets whose raters split by more than this share of the scale's range.",
)
@click.option("--scale")
@click.option("--target-kind", type=KIND)
@click.option("--between", help=f"Only splits between these pair kinds: {', '.join(PAIR_KINDS)}.")
@click.option("--include-adjudicated", is_flag=True)
@click.option("--include-stale", is_flag=True)
@click.option(
    "--contradicted-first",
    "contradicted_first_",
    is_flag=True,
    help="Targets with the most raters contradicting the run's own score of the answer first.",
)
@click.option("--json", "as_json", is_flag=True)
@pass_ctx
def disagreements_cmd(
    app: AppContext,
    threshold: float,
    scale: str | None,
    target_kind: str | None,
    between: str | None,
    include_adjudicated: bool,
    include_stale: bool,
    contradicted_first_: bool,
    as_json: bool,
) -> None:
    """The disagreement queue: targets where raters split beyond the threshold, largest split first.

    A rater whose clear yes/no on a trajectory's answer contradicts the run's own score of it is listed
    under "contradicts" (in --json: run_score, right, contradictions)."""
    from evaluation.agreement.contradicted import contradicted_first, flag_disagreements, flag_key
    from evaluation.agreement.disagreements import disagreements

    s, matrices = _matrices(app, scale, target_kind, None, include_stale)
    try:
        items = [
            d
            for m in matrices
            for d in disagreements(
                s, m, threshold=threshold, between=_split(between), include_adjudicated=include_adjudicated
            )
        ]
        items.sort(key=lambda d: (-d.split, d.unit, d.scale, d.dimension))  # largest split first, as documented
        flags = flag_disagreements(s, items)  # only targets the actor may see are listed, so scored
    finally:
        s.close()
    if contradicted_first_:
        items = contradicted_first(items, flags)
    if as_json:
        emit_json(
            [
                d.to_dict()
                | (
                    f.to_dict()
                    if (f := flags.get(flag_key(d)))
                    else {"run_score": None, "right": None, "contradictions": []}
                )
                for d in items
            ]
        )
        return
    click.echo(
        table(
            [
                [
                    d.unit.label(),
                    d.scale + (f".{d.dimension}" if d.dimension else ""),
                    f"{d.split:.2f}",
                    ", ".join(d.pair_kinds),
                    "; ".join(f"{r}={_fmt(v)}" for r, v in d.values.items()),
                    ("⚠ " + f.summary()) if (f := flags.get(flag_key(d))) and f.contradicted else "",
                ]
                for d in items
            ],
            ["target", "scale", "split", "between", "values", "contradicts"],
        )
    )


def register(cli: click.Group) -> None:
    for command in (agreement_cmd, disagreements_cmd):
        cli.add_command(command)
