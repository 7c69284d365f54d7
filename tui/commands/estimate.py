"""``chainmark estimate``, ``chainmark calibration`` and ``chainmark review plan``: a run's score from
a judge on every item and people on some (prediction-powered inference), the judge against the
people, and which items to label next."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tui.commands import _click as click
from tui.context import AppContext, emit_json, json_option, pass_ctx, table

if TYPE_CHECKING:
    from sqlmodel import Session

    from evaluation.agreement.estimates import JudgedItems

METHOD_TITLES = {"judge_only": "judge only", "human_only": "humans only", "ppi": "PPI", "ppi++": "PPI++"}


def _scale_options(fn: Any) -> Any:
    fn = click.option("--dimension", help="One dimension of a dimensional scale (default: each in turn).")(fn)
    fn = click.option("--scale", help="The rating scale people rate on (default: the judge's own).")(fn)
    fn = click.option(
        "--judge",
        "judge",
        required=True,
        help="The judge's name as stored with its verdicts, e.g. vtc-open-judge@ENDPOINT.",
    )(fn)
    return click.argument("run_id", type=int)(fn)


def _open(app: AppContext) -> Session:
    """A read-only session, refused to someone still rating blind (these numbers hold every rating)."""
    from sqlmodel import Session

    from annotation.review import scales as scaling
    from store import read_only
    from tui.blind_view import scope_for

    scaling.store_builtin_scales_before_reading(app.engine, app.actor)
    s = Session(read_only(app.engine), expire_on_commit=False)
    scope = scope_for(s, app.viewer)
    if scope.active:
        s.close()
        raise click.ClickException(
            f"{app.viewer} still has {len(scope.targets)} target(s) to rate blind; these numbers use every "
            "rating — rate them first, or ask as someone else"
        )
    return s


def _items(s: Session, run_id: int, judge: str, scale: str | None, dimension: str | None) -> list[JudgedItems]:
    from evaluation.agreement.estimates import EstimateError, judged_items

    try:
        return judged_items(s, run_id, judge, scale=scale, dimension=dimension)
    except EstimateError as exc:
        raise click.ClickException(str(exc)) from None


def _num(value: float | None, digits: int = 4) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def _interval_row(title: str, d: dict[str, Any]) -> list[Any]:
    ci = "—" if d["ci"] is None else f"[{_num(d['ci'][0])}, {_num(d['ci'][1])}]"
    lam = f" (λ={d['lambda']:.2f})" if d["method"] == "ppi++" and d["lambda"] is not None else ""
    return [title + lam, _num(d["estimate"]), ci, _num(d["width"]), d["n_labelled"], d["reason"] or ""]


def _estimate_table(block: dict[str, Any]) -> str:
    rows = [_interval_row(METHOD_TITLES[m], block[m]) for m in METHOD_TITLES]
    return table(rows, ["method", "estimate", "95% CI", "width", "human labels", "note"])


def _gain_line(block: dict[str, Any]) -> str:
    if block["width_gained"] is None:
        return "width gained: — (needs 2 or more human labels)"
    line = f"PPI++ is {block['width_gained'] * 100:.1f}% narrower than humans alone"
    if block["effective_labels"] is not None:
        line += f" (worth {block['effective_labels']:.0f} human labels; {block['human_only']['n_labelled']} given)"
    return line


def print_estimate(data: dict[str, Any]) -> None:
    title = data["scale"] + (f".{data['dimension']}" if data["dimension"] else "")
    click.echo(
        f"\nrun {data['run']} · judge {data['judge']} · {title} ({data['kind']}) · "
        f"{data['items']} item(s), {data['labelled']} with a human label"
    )
    click.echo(_estimate_table(data["overall"]))
    click.echo(_gain_line(data["overall"]))
    st = data["stratified"]
    if st["estimate"] is not None:
        click.echo(
            f"stratified by category (PPI++ per category): {_num(st['estimate'])} [{_num(st['ci'][0])}, {_num(st['ci'][1])}]"
        )
    if data["target_width"] is not None:
        more = data["more_labels_for_target"]
        click.echo(
            f"to reach width {data['target_width']:g}: "
            + ("not reachable by labelling" if more is None else f"{more} more human label(s)")
        )
    for category, block in data["by_category"].items():
        click.echo(f"\ncategory {category}: {block['items']} item(s)")
        click.echo(_estimate_table(block))
        click.echo(_gain_line(block))
    for note in data["notes"]:
        click.echo(f"note: {note}")


@click.command("estimate")
@_scale_options
@click.option("--by", "by", type=click.Choice(["category"]), help="Also one estimate per task category.")
@click.option("--target-width", type=float, help="Say how many more human labels bring PPI++ to this CI width.")
@click.option("--confidence", type=float, default=0.95, show_default=True)
@json_option
@pass_ctx
def estimate_cmd(
    app: AppContext,
    run_id: int,
    judge: str,
    scale: str | None,
    dimension: str | None,
    by: str | None,
    target_width: float | None,
    confidence: float,
    as_json: bool,
) -> None:
    """The run's score three ways, each with its CI: the judge alone, people alone, and prediction-powered
    (the judge on every item corrected by people's labels on some; adjudications override ratings)."""
    from evaluation.agreement.estimates import estimate_report

    if not 0 < confidence < 1:
        raise click.UsageError("--confidence must be between 0 and 1")
    s = _open(app)
    try:
        reports = [
            estimate_report(d, by_category=by == "category", target_width=target_width, alpha=1 - confidence).to_dict()
            for d in _items(s, run_id, judge, scale, dimension)
        ]
    finally:
        s.close()
    if as_json:
        emit_json(reports)
        return
    for data in reports:
        print_estimate(data)


def _confusion_text(matrix: dict[str, dict[str, int]]) -> str:
    columns = sorted({c for row in matrix.values() for c in row})
    return table(
        [[j] + [row.get(c, 0) for c in columns] for j, row in sorted(matrix.items())], ["judge \\ people"] + columns
    )


@click.command("calibration")
@_scale_options
@json_option
@pass_ctx
def calibration_cmd(
    app: AppContext, run_id: int, judge: str, scale: str | None, dimension: str | None, as_json: bool
) -> None:
    """The judge against people on a run: confusion matrices per category, a reliability table, and
    with several judges on the scale their agreement and a majority judge's estimate."""
    from evaluation.agreement.calibration import calibration_report, majority_judge
    from evaluation.agreement.estimates import estimate_report, verdict_probabilities

    s = _open(app)
    try:
        reports = []
        for d in _items(s, run_id, judge, scale, dimension):
            data = calibration_report(d, verdict_probabilities(s, d))
            majority = majority_judge(d)
            data["majority"] = None if majority is None else estimate_report(majority).to_dict()
            reports.append(data)
    finally:
        s.close()
    if as_json:
        emit_json(reports)
        return
    for data in reports:
        title = data["scale"] + (f".{data['dimension']}" if data["dimension"] else "")
        click.echo(
            f"\nrun {data['run']} · judge {data['judge']} · {title} · {data['labelled']} item(s) with a human label"
        )
        click.echo("confusion (all categories)")
        click.echo(_confusion_text(data["confusion"]["overall"]))
        for category, matrix in data["confusion"]["by_category"].items():
            click.echo(f"confusion ({category})")
            click.echo(_confusion_text(matrix))
        click.echo("reliability (judge value against the people's mean)")
        click.echo(
            table(
                [[b["bin"], b["n"], _num(b["judge_mean"]), _num(b["human_mean"])] for b in data["reliability"]],
                ["judge bin", "n", "judge mean", "people mean"],
            )
        )
        if data["judge_agreement"]:
            key = "agreement" if "agreement" in data["judge_agreement"][0] else "mean_distance"
            click.echo("judges against each other")
            click.echo(
                table(
                    [[r["a"], r["b"], r["n"], _num(r[key])] for r in data["judge_agreement"]],
                    ["judge A", "judge B", "n", key],
                )
            )
        if data["majority"] is not None:
            click.echo(f"majority judge of {', '.join(data['judges'])}")
            click.echo(_estimate_table(data["majority"]["overall"]))


@click.command("plan")
@_scale_options
@click.option("--budget", type=int, required=True, help="How many items to hand out for labelling.")
@click.option("--annotators", required=True, help="Comma-separated annotators who will label them.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the random draw inside a category.")
@click.option("--dry-run", is_flag=True, help="Show the plan without writing assignments.")
@json_option
@pass_ctx
def plan_cmd(
    app: AppContext,
    run_id: int,
    judge: str,
    scale: str | None,
    dimension: str | None,
    budget: int,
    annotators: str,
    seed: int,
    dry_run: bool,
    as_json: bool,
) -> None:
    """Which items people should label next to narrow the prediction-powered interval fastest: labels
    go to categories by size, judge doubt and disagreement between judges, drawn at random inside
    each; written as assignments (one annotator each) that the rating queue follows."""
    from annotation.review.assignments import assign_people, distribute
    from annotation.review.errors import ReviewError
    from annotation.review.targets import Target
    from evaluation.agreement.matrix import Unit
    from evaluation.agreement.planner import plan_for
    from store import session_scope

    if budget < 1:
        raise click.UsageError("--budget must be at least 1")
    s = _open(app)
    try:
        data = _items(s, run_id, judge, scale, dimension)[0]
        plan = plan_for(s, data, budget, seed)
    finally:
        s.close()
    made: list[dict[str, Any]] = []
    if not dry_run and plan.items:
        try:
            with session_scope(app.engine, app.actor) as w:
                people = assign_people(w, [a for a in annotators.split(",")], 1)
                targets = [Target(p.unit.kind, p.unit.id, p.unit.part) for p in plan.items]
                rows = distribute(w, data.scale.name, targets, people, 1)
                names = {p.id: p.name for p in people}
                made = [
                    {
                        "id": r.id,
                        "annotator": names[r.annotator_id],
                        "target": Unit(r.target_kind, r.target_id, r.target_part).label(),
                    }
                    for r in rows
                ]
        except ReviewError as exc:
            raise click.ClickException(str(exc)) from None
    out = {"run": run_id, "judge": data.judge, "scale": data.scale.name, **plan.to_dict(), "assignments": made}
    if as_json:
        emit_json(out)
        return
    click.echo(
        table(
            [
                [
                    st["category"],
                    st["items"],
                    st["labelled"],
                    st["pending"],
                    _num(st["variance"]),
                    st["variance_from"],
                    st["chosen"],
                ]
                for st in out["strata"]
            ],
            ["category", "items", "labelled", "assigned", "variance", "from", "next"],
        )
    )
    click.echo(
        table([[p["label"], p["category"], _num(p["doubt"], 2)] for p in out["items"]], ["target", "category", "doubt"])
    )
    if dry_run:
        click.echo(f"{len(plan.items)} item(s) planned (dry run: nothing assigned)")
    else:
        click.echo(f"{len(made)} assignment(s) on {data.scale.name} written for {annotators}")


def estimate_sections(app: AppContext, run_ids: list[int]) -> list[str]:
    """HTML sections for a run report: every judge people rated beside on each run, estimated (none
    for someone still rating blind)."""
    from sqlmodel import Session

    from evaluation.agreement.estimate_html import estimate_section
    from evaluation.agreement.estimates import estimate_report, judged_items, rated_judges
    from store import read_only
    from tui.blind_view import scope_for

    with Session(read_only(app.engine)) as s:
        if scope_for(s, app.viewer).active:
            return []
        return [
            estimate_section(estimate_report(d, by_category=True).to_dict())
            for run_id in dict.fromkeys(run_ids)
            for judge, scale in rated_judges(s, run_id)
            for d in judged_items(s, run_id, judge, scale=scale)
            if d.items
        ]


def register(cli: click.Group) -> None:
    cli.add_command(estimate_cmd)
    cli.add_command(calibration_cmd)
