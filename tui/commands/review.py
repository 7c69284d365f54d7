"""Human review from the command line: annotators, scales, assignments, ratings (typed or imported),
blind rating views, agreement statistics, the disagreement queue, adjudication and study exports.

This module composes the two domain layers: ``annotation.review`` writes people's work,
``evaluation.agreement`` reads it back with the judges' verdicts and does the statistics.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import json
from pathlib import Path
from typing import Any


from annotation.vocab import ANNOTATOR_ROLES, SCALE_LEVELS, TARGET_KINDS
from evaluation.vocab import PAIR_KINDS
from tui.commands import _click as click
from tui.commands.estimate import plan_cmd
from tui.safe_text import json_safe
from tui.context import AppContext, emit_json, json_option, pass_ctx, table

if TYPE_CHECKING:
    from sqlmodel import Session
    from annotation.review import ratings as rating
    from evaluation.agreement.matrix import RatingMatrix

KIND = click.Choice(TARGET_KINDS)


def _split(text: str | None) -> list[str] | None:
    return [t.strip() for t in text.split(",") if t.strip()] if text else None


def _fmt(value: Any) -> str:
    from annotation.review import ratings as rating

    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.3f}"
    return rating.value_text(value)


def _est(d: dict[str, Any] | None) -> str:
    if not d or d.get("value") is None:
        return "–"
    text = f"{d['value']:.3f}"
    if d.get("ci"):
        text += f" [{d['ci'][0]:.2f}, {d['ci'][1]:.2f}]"
    return text


# ------------------------------------------------------------------------------------------------
# annotators, scales
# ------------------------------------------------------------------------------------------------


@click.group("annotators")
def annotators_group() -> None:
    """People who rate (annotator) and adjudicate (reviewer, admin)."""


@annotators_group.command("add")
@click.argument("name")
@click.option("--role", type=click.Choice(ANNOTATOR_ROLES), default="annotator", show_default=True)
@json_option
@pass_ctx
def annotators_add(app: AppContext, name: str, role: str, as_json: bool) -> None:
    """Add an annotator (an existing one keeps their role: change it with `annotators set-role`)."""
    from annotation.review import annotators as people, scales as scaling
    from store import session_scope

    with session_scope(app.engine, app.actor) as s:
        scaling.ensure_builtin_scales(s)
        p = people.add_annotator(s, name, role)
    if as_json:
        emit_json({"id": p.id, "name": p.name, "role": p.role})
    else:
        click.echo(f"annotator {p.name} ({p.role})")


@annotators_group.command("token")
@click.argument("name")
@click.option("--revoke", is_flag=True, help="Remove the person's serve login instead.")
@json_option
@pass_ctx
def annotators_token(app: AppContext, name: str, revoke: bool, as_json: bool) -> None:
    """Give NAME a login token for `chainmark serve --accounts` (replacing any earlier one); shown once.

    With --revoke the login is removed, and a running `serve --accounts` ends NAME's open sessions within
    seconds. Issuing, replacing and revoking are recorded in the audit trail (never the token)."""
    from annotation.review import annotators as people
    from store import session_scope

    with session_scope(app.engine, app.actor) as s:
        if revoke:
            had = people.revoke_serve_token(s, name)
        else:
            token = people.issue_serve_token(s, name)
    if revoke:
        if as_json:
            emit_json({"name": name, "revoked": had})
        else:
            click.echo(f"{name}: serve login removed" if had else f"{name} had no serve login")
        return
    if as_json:
        emit_json({"name": name, "token": token})
        return
    click.echo(f"{name}'s serve token (shown once; only its hash is stored): {token}")
    click.echo(f"they open `chainmark serve --accounts`'s address with /?token={token}", err=True)


@annotators_group.command("set-role")
@click.argument("name")
@click.argument("role", type=click.Choice(ANNOTATOR_ROLES))
@pass_ctx
def annotators_set_role(app: AppContext, name: str, role: str) -> None:
    """Change an existing annotator's role (recorded in the audit trail: who, when, old and new role)."""
    from annotation.review import annotators as people
    from store import session_scope

    with session_scope(app.engine, app.actor) as s:
        p, old = people.set_role(s, name, role)
        click.echo(
            f"annotator {p.name}: {old} → {p.role}" if old != p.role else f"annotator {p.name} ({p.role}), unchanged"
        )


@annotators_group.command("list")
@click.option("--json", "as_json", is_flag=True)
@pass_ctx
def annotators_list(app: AppContext, as_json: bool) -> None:
    """Annotators with their roles."""
    from annotation.review import annotators as people
    from store import read_only, session_scope

    with session_scope(read_only(app.engine)) as s:
        rows = [{"id": p.id, "name": p.name, "role": p.role} for p in people.list_annotators(s)]
    if as_json:
        emit_json(rows)
        return
    click.echo(table([[r["id"], r["name"], r["role"]] for r in rows], ["id", "name", "role"]))


@click.group("scales")
def scales_group() -> None:
    """Rating scales (built-in and custom)."""


@scales_group.command("list")
@click.option("--json", "as_json", is_flag=True)
@pass_ctx
def scales_list(app: AppContext, as_json: bool) -> None:
    """Every scale: level of measurement, values, dimensions."""
    from annotation.review import scales as scaling
    from store import read_only, session_scope

    with session_scope(read_only(app.engine)) as s:
        rows = [sc.to_dict() for sc in scaling.list_scales(s)]
    if as_json:
        emit_json(rows)
        return
    click.echo(
        table(
            [[r["name"], r["level"], _short_values(r["values"]), ", ".join(r["dimensions"])] for r in rows],
            ["scale", "level", "values", "dimensions"],
        )
    )


def _short_values(values: list[Any]) -> str:
    if len(values) > 4 and all(isinstance(v, (int, float)) for v in values):
        return f"{min(values)}..{max(values)}"
    text = " | ".join(map(str, values))
    return text if len(text) <= 60 else text[:59] + "…"


@scales_group.command("add")
@click.argument("name")
@click.option("--level", type=click.Choice(SCALE_LEVELS), required=True)
@click.option("--values", "values", required=True, help="'a,b,c', '0..100' or a JSON array, in scale order.")
@click.option("--dimensions", help="Comma-separated dimension names (each rated on the values).")
@click.option("--rubric", help="What the values mean, shown to raters.")
@json_option
@pass_ctx
def scales_add(
    app: AppContext, name: str, level: str, values: str, dimensions: str | None, rubric: str | None, as_json: bool
) -> None:
    """Add a custom scale."""
    from annotation.review import scales as scaling
    from store import session_scope

    with session_scope(app.engine, app.actor) as s:
        scaling.ensure_builtin_scales(s)
        sc = scaling.add_scale(s, name, level, scaling.parse_values(values), _split(dimensions), rubric)
    if as_json:
        emit_json(sc.to_dict())
    else:
        click.echo(f"scale {sc.name} ({sc.level}, {len(sc.values)} values)")


# ------------------------------------------------------------------------------------------------
# assign, rate, ratings, review view
# ------------------------------------------------------------------------------------------------


@click.command("assign")
@click.option("--scale", required=True)
@click.option("--target-kind", type=KIND, required=True)
@click.option("--targets", help="Target ids, e.g. 3,4,7@block:2 (a part follows '@').")
@click.option("--run", "run_id", type=int, help="Every target of this kind in a run.")
@click.option("--annotators", required=True, help="Comma-separated annotator names.")
@click.option("--overlap", type=int, default=1, show_default=True, help="Raters per target.")
@click.option(
    "--blind/--open",
    default=True,
    show_default=True,
    help="Blind raters see no verdicts or other ratings until they have rated.",
)
@json_option
@pass_ctx
def assign_cmd(
    app: AppContext,
    scale: str,
    target_kind: str,
    targets: str | None,
    run_id: int | None,
    annotators: str,
    overlap: int,
    blind: bool,
    as_json: bool,
) -> None:
    """Give targets to annotators, OVERLAP of them per target, balancing the load."""
    from annotation.review import assignments as assigning
    from annotation.review.targets import Target, parse_target_ids, targets_of_run
    from store import session_scope

    if (targets is None) == (run_id is None):
        raise click.UsageError("give exactly one of --targets or --run")
    with session_scope(app.engine, app.actor) as s:
        if run_id is not None:
            chosen = targets_of_run(s, run_id, target_kind)
        else:
            chosen = [Target(target_kind, i, p) for i, p in parse_target_ids(targets or "")]
        made = assigning.assign(s, scale, chosen, _split(annotators) or [], overlap, blind=blind)
        made_ids = [a.id for a in made]
    if as_json:
        emit_json({"scale": scale, "targets": len(chosen), "assignments": made_ids})
    else:
        click.echo(f"{len(made_ids)} new assignment(s) for {len(chosen)} target(s) on {scale}")


@click.command("rate")
@click.option("--as-annotator", "annotator", help="Who is rating.")
@click.option("--scale")
@click.option("--target-kind", type=KIND)
@click.option("--target-id", type=int)
@click.option("--part", default="", help="Sub-item of the target, e.g. block:3.")
@click.option("--value", help="A value on the scale; for dimensional scales 'dim=v,…' or a JSON object.")
@click.option("--comment")
@click.option(
    "--import",
    "import_path",
    type=click.Path(path_type=Path),
    help="Import ratings from a CSV (annotator, scale, target_kind, target_id, [target_part], value, "
    "[comment], [blind]); all rows or none.",
)
@click.option("--create-annotators", is_flag=True, help="With --import: add unknown annotators.")
@json_option
@pass_ctx
def rate_cmd(
    app: AppContext,
    annotator: str | None,
    scale: str | None,
    target_kind: str | None,
    target_id: int | None,
    part: str,
    value: str | None,
    comment: str | None,
    import_path: Path | None,
    create_annotators: bool,
    as_json: bool,
) -> None:
    """Rate one target, or import existing labels from a CSV."""
    from annotation.review import ratings as rating
    from annotation.review.targets import Target
    from store import session_scope

    if import_path is not None:
        with session_scope(app.engine, app.actor) as s:
            rows = rating.import_ratings_csv(s, import_path, create_annotators=create_annotators)
            imported = [r.id for r in rows]
        if as_json:
            emit_json({"imported": len(imported), "ratings": imported, "path": str(import_path)})
        else:
            click.echo(f"imported {len(imported)} rating(s) from {import_path}")
        return
    missing = [
        n
        for n, v in (
            ("--as-annotator", annotator),
            ("--scale", scale),
            ("--target-kind", target_kind),
            ("--target-id", target_id),
            ("--value", value),
        )
        if v is None
    ]
    if missing:
        raise click.UsageError(f"missing {', '.join(missing)} (or use --import CSV)")
    with session_scope(app.engine, app.actor) as s:
        r = rating.rate(
            s, annotator or "", scale or "", Target(target_kind or "", target_id or 0, part), value, comment=comment
        )
        if as_json:
            emit_json(
                {
                    "id": r.id,
                    "annotator": annotator,
                    "scale": r.scale,
                    "target_kind": r.target_kind,
                    "target_id": r.target_id,
                    "target_part": r.target_part,
                    "value": r.value,
                    "task_revision": r.task_revision,
                }
            )
            return
        click.echo(
            f"rating {r.id}: {annotator} rated {Target(r.target_kind, r.target_id, r.target_part).label()} "
            f"{rating.value_text(r.value)} on {r.scale} (task revision {r.task_revision})"
        )


@click.group("ratings")
def ratings_group() -> None:
    """List ratings and find stale ones."""


@ratings_group.command("list")
@click.option("--scale")
@click.option("--annotator")
@click.option("--stale", "only_stale", is_flag=True, help="Only ratings whose task was edited after rating.")
@click.option("--history", is_flag=True, help="Include superseded ratings.")
@click.option("--json", "as_json", is_flag=True)
@click.option(
    "--csv",
    "as_csv",
    is_flag=True,
    help="Raw long format for analysis: one row per rating and dimension, empty cells where none.",
)
@pass_ctx
def ratings_list(
    app: AppContext,
    scale: str | None,
    annotator: str | None,
    only_stale: bool,
    history: bool,
    as_json: bool,
    as_csv: bool,
) -> None:
    """Current ratings (newest per annotator, target and scale) with their stale flag."""
    from annotation.review import ratings as rating
    from store import read_only, session_scope
    from tui.blind_view import HIDDEN_NOTE, scope_for, visible_ratings

    with session_scope(read_only(app.engine)) as s:
        rows = rating.ratings(s, scale=scale, annotator=annotator, current_only=not history)
        rows, held_back = visible_ratings(s, scope_for(s, app.viewer), rows)
    if held_back and not as_json:
        click.echo(HIDDEN_NOTE.format(n=held_back, who=app.viewer).replace("target(s)", "rating(s)"), err=True)
    if only_stale:
        rows = [r for r in rows if r.stale]
    if as_json:
        emit_json([r.to_dict() for r in rows])
        return
    if as_csv:
        click.echo(ratings_csv(rows), nl=False)
        return
    click.echo(
        table(
            [
                [
                    r.id,
                    r.annotator,
                    r.target.label(),
                    r.scale,
                    rating.value_text(r.value),
                    f"{r.task_revision}/{r.current_revision}" if r.task_revision is not None else "",
                    "stale" if r.stale else ("" if r.current else "superseded"),
                ]
                for r in rows
            ],
            ["id", "annotator", "target", "scale", "value", "rev", "state"],
        )
    )


RATINGS_CSV_COLUMNS = [
    "rating_id",
    "annotator",
    "target_kind",
    "target_id",
    "target_part",
    "task_id",
    "task_revision",
    "scale",
    "dimension",
    "value",
    "comment",
    "blind",
    "stale",
    "current",
    "created_at",
]


def ratings_csv(rows: list[rating.RatingInfo]) -> str:
    """One row per rating, and per dimension of a multi-dimension rating; missing values are empty cells."""
    import csv
    import io

    def cell(v: object) -> object:
        return "" if v is None else ("true" if v is True else "false" if v is False else v)

    buf = io.StringIO()
    out = csv.writer(buf)
    out.writerow(RATINGS_CSV_COLUMNS)
    for r in rows:
        values = r.value.items() if isinstance(r.value, dict) else [(None, r.value)]
        for dimension, value in values:
            out.writerow(
                [
                    cell(v)
                    for v in (
                        r.id,
                        r.annotator,
                        r.target.kind,
                        r.target.id,
                        r.target.part,
                        r.task_id,
                        r.task_revision,
                        r.scale,
                        dimension,
                        value,
                        r.comment,
                        r.blind,
                        r.stale,
                        r.current,
                        r.created_at,
                    )
                ]
            )
    return buf.getvalue()


@click.group("review")
def review_group() -> None:
    """A rater's queue and what they may see (blind mode), and which items to label next."""


review_group.add_command(plan_cmd)  # defined with the estimates it serves (tui/commands/estimate.py)


@review_group.command("queue")
@click.argument("annotator")
@click.option("--all", "show_all", is_flag=True, help="Include done assignments.")
@click.option("--json", "as_json", is_flag=True)
@pass_ctx
def review_queue(app: AppContext, annotator: str, show_all: bool, as_json: bool) -> None:
    """An annotator's assignments (open ones by default)."""
    from annotation.review import annotators as people, assignments as assigning
    from store import read_only, session_scope

    with session_scope(read_only(app.engine)) as s:
        people.get_annotator(s, annotator)
        rows = assigning.assignments(s, annotator=annotator, status=None if show_all else "open")
    if as_json:
        emit_json([r.to_dict() for r in rows])
        return
    click.echo(
        table(
            [[r.id, r.target.label(), r.scale, "blind" if r.blind else "open", r.status] for r in rows],
            ["id", "target", "scale", "mode", "status"],
        )
    )


@review_group.command("view")
@click.option("--as-annotator", "annotator", required=True)
@click.option("--scale", required=True)
@click.option("--target-kind", type=KIND, required=True)
@click.option("--target-id", type=int, required=True)
@click.option("--part", default="")
@click.option("--json", "as_json", is_flag=True)
@pass_ctx
def review_view(
    app: AppContext, annotator: str, scale: str, target_kind: str, target_id: int, part: str, as_json: bool
) -> None:
    """What ANNOTATOR may see while rating a target (blind: no verdicts or others' ratings before rating)."""
    from annotation.review import ratings as rating
    from annotation.review.blind import rating_view
    from annotation.review.targets import Target
    from store import read_only, session_scope

    with session_scope(read_only(app.engine)) as s:
        view = rating_view(s, annotator, Target(target_kind, target_id, part), scale).to_dict()
    if as_json:
        emit_json(view)
        return
    click.echo(
        f"{Target(target_kind, target_id, part).label()} on {scale}"
        f" — {'blind' if view['blind'] else 'open'}, {'rated' if view['rated'] else 'not rated yet'}"
    )
    click.echo(json_safe(json.dumps(view["content"], indent=2, ensure_ascii=False, default=str)))
    if view["hidden"]:
        click.echo(f"hidden until you rate: {', '.join(view['hidden'])}")
    for v in view["verdicts"]:
        click.echo(f"verdict {v['id']} by {v['judge']}: {v['label'] if v['label'] is not None else v['score']}")
    for r in view["other_ratings"]:
        click.echo(f"rating {r['id']} by {r['annotator']}: {rating.value_text(r['value'])}")


# ------------------------------------------------------------------------------------------------
# agreement, disagreements, adjudicate, study export
# ------------------------------------------------------------------------------------------------


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
    from evaluation.agreement.rankings import judge_error_correlation, model_ranking
    from evaluation.agreement.summary import agreement_report
    from evaluation.agreement.rankings import within_runs

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
            [[k, _est(v), v["n"], v["reason"] or ""] for k, v in data["overall"].items()],
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
                    [p["a"], p["b"], p["kind"], p["n"]] + [_est(p["statistics"].get(c)) for c in cols]
                    for p in data["pairs"]
                ],
                ["rater A", "rater B", "pair", "n"] + cols,
            )
        )
    if "model_ranking" in data and data["model_ranking"]["reason"] is None:
        sp = data["model_ranking"]["spearman"]
        judges = sorted(sp)
        click.echo("\ninter-judge Spearman of model rankings")
        click.echo(table([[a] + [_est(sp[a][b]) for b in judges] for a in judges], [""] + judges))
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


@click.command("adjudicate")
@click.option("--reviewer", required=True)
@click.option("--target-kind", type=KIND, required=True)
@click.option("--target-id", type=int, required=True)
@click.option("--part", default="")
@click.option("--scale", required=True)
@click.option("--value", required=True)
@click.option("--rationale", required=True)
@json_option
@pass_ctx
def adjudicate_cmd(
    app: AppContext,
    reviewer: str,
    target_kind: str,
    target_id: int,
    part: str,
    scale: str,
    value: str,
    rationale: str,
    as_json: bool,
) -> None:
    """Record a reviewer's final value; the ratings and verdicts it overrides are kept and listed."""
    from annotation.review import adjudication as adj, ratings as rating, scales as scaling
    from annotation.review.targets import Target
    from evaluation.agreement.matrix import Unit, verdict_values as matrix_verdict_values
    from store import session_scope

    target = Target(target_kind, target_id, part)
    with session_scope(app.engine, app.actor) as s:
        scaling.ensure_builtin_scales(s)
        verdict_values = matrix_verdict_values(s, scale, Unit(target.kind, target.id, target.part))
        row = adj.adjudicate(s, reviewer, target, scale, value, rationale, verdict_values=verdict_values)
        o = row.overrides
        if as_json:
            emit_json(
                {
                    "id": row.id,
                    "reviewer": reviewer,
                    "target_kind": target.kind,
                    "target_id": target.id,
                    "target_part": target.part,
                    "scale": row.scale,
                    "final_value": row.final_value,
                    "overrides": o,
                }
            )
            return
        click.echo(
            f"adjudication {row.id}: {target.label()} = {rating.value_text(row.final_value)} on {row.scale}; "
            f"overrides ratings {o['ratings'] or '–'} and verdicts {o['verdicts'] or '–'}"
        )


@click.command("withdraw-adjudication")
@click.argument("adjudication_id", type=int)
@click.option("--reviewer", required=True)
@json_option
@pass_ctx
def withdraw_adjudication_cmd(app: AppContext, adjudication_id: int, reviewer: str, as_json: bool) -> None:
    """Take back an adjudication (audited; adjudicating the target again replaces it instead)."""
    from annotation.review import adjudication as adj
    from annotation.review.targets import Target
    from store import session_scope

    with session_scope(app.engine, app.actor) as s:
        gone = adj.withdraw_adjudication(s, reviewer, adjudication_id)
    if as_json:
        emit_json({"withdrawn": gone})
        return
    click.echo(
        f"adjudication {adjudication_id} withdrawn ({Target(**gone['target']).label()} on {gone['scale']}); "
        "the audit trail keeps it"
    )


@review_group.command("adjudications")
@click.option("--scale")
@click.option("--json", "as_json", is_flag=True)
@pass_ctx
def adjudications_list(app: AppContext, scale: str | None, as_json: bool) -> None:
    """Adjudications with what they overrode."""
    from annotation.review import adjudication as adj, ratings as rating
    from store import read_only, session_scope
    from tui.blind_view import HIDDEN_NOTE, scope_for, visible_units

    with session_scope(read_only(app.engine)) as s:
        rows = adj.adjudications(s, scale=scale)
        rows, held_back = visible_units(s, scope_for(s, app.viewer), rows, lambda r: r.target)
    if held_back and not as_json:
        click.echo(HIDDEN_NOTE.format(n=held_back, who=app.viewer), err=True)
    if as_json:
        emit_json([r.to_dict() for r in rows])
        return
    click.echo(
        table(
            [
                [
                    r.id,
                    r.reviewer,
                    r.target.label(),
                    r.scale,
                    rating.value_text(r.final_value),
                    ",".join(map(str, r.overrides.get("ratings", []))),
                    ",".join(map(str, r.overrides.get("verdicts", []))),
                    r.rationale,
                ]
                for r in rows
            ],
            ["id", "reviewer", "target", "scale", "final", "overrode ratings", "overrode verdicts", "rationale"],
        )
    )


@click.group("study")
def study_group() -> None:
    """Agreement study exports."""


@study_group.command("export")
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["csv", "md"]), default="md", show_default=True)
@click.option(
    "--shape",
    type=click.Choice(["atp", "isg", "all"]),
    default="all",
    show_default=True,
    help="ATP-Bench §6 agreement rates (+ Table 8b), ISG-Bench Table 3, or both (md only).",
)
@pass_ctx
def study_export(app: AppContext, path: Path, fmt: str, shape: str) -> None:
    """Write the agreement study tables to PATH."""
    from annotation.review import scales as scaling
    from evaluation.agreement.study import build_study, render_csv, render_markdown
    from store import read_only, session_scope
    from tui.blind_view import scope_for

    if fmt == "csv" and shape == "all":
        raise click.UsageError("a CSV holds one table: add --shape atp or --shape isg")
    with session_scope(app.engine, app.actor) as s:
        scaling.ensure_builtin_scales(s)
    with session_scope(read_only(app.engine)) as s:
        scope = scope_for(s, app.viewer)
        if scope.active:  # the study tables hold every rater's values: not for someone still rating blind
            raise click.ClickException(
                f"{app.viewer} still has {len(scope.targets)} target(s) to rate blind; the "
                f"study export shows every rating — rate them first, or export as someone else"
            )
        study = build_study(s)
    text = render_markdown(study, shape) if fmt == "md" else render_csv(study, shape)
    path.write_text(text, encoding="utf-8")
    click.echo(f"wrote {path} ({len(study.endorsement)} agreement row(s), {len(study.comparison)} comparison row(s))")


def register(cli: click.Group) -> None:
    for command in (
        annotators_group,
        scales_group,
        assign_cmd,
        rate_cmd,
        ratings_group,
        review_group,
        agreement_cmd,
        disagreements_cmd,
        adjudicate_cmd,
        withdraw_adjudication_cmd,
        study_group,
    ):
        cli.add_command(command)
