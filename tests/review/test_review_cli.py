"""The review CLI end to end through CliRunner on a real SQLite file: blind views, stale ratings,
agreement, the disagreement queue, adjudication provenance, imports and study exports."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result
from sqlalchemy.engine import Engine
from sqlmodel import select

from store import session_scope
from store.models import AuditEvent, HumanRating, Verdict
from tui.cli import cli

from .conftest import World
from tests.support.must import must


def run(db: Path, *args: str, ok: bool = True) -> Result:
    result = CliRunner().invoke(cli, ["--db", str(db), "--as", "tester", *args], catch_exceptions=False)
    if ok:
        assert result.exit_code == 0, result.output
    return result


def run_json(db: Path, *args: str) -> Any:
    return json.loads(run(db, *args, "--json").output)


def _people(db: Path) -> None:
    run(db, "annotators", "add", "ann")
    run(db, "annotators", "add", "bob")
    run(db, "annotators", "add", "rev", "--role", "reviewer")


def test_annotators_and_scales(db_path: Path, engine: Engine) -> None:
    _people(db_path)
    assert run_json(db_path, "annotators", "list") == [
        {"id": 1, "name": "ann", "role": "annotator"},
        {"id": 2, "name": "bob", "role": "annotator"},
        {"id": 3, "name": "rev", "role": "reviewer"},
    ]
    bad = run(db_path, "annotators", "add", "eve", "--role", "boss", ok=False)
    assert bad.exit_code != 0 and "boss" in bad.output
    names = {s["name"]: s for s in run_json(db_path, "scales", "list")}
    assert {"yes-no", "atp-agreement", "isg-1-10", "pass-fail", "mme-failure-mode"} <= set(names)
    assert names["isg-1-10"]["dimensions"][-1] == "overall"
    run(db_path, "scales", "add", "fs", "--level", "interval", "--values", "0..100")
    assert {s["name"]: s for s in run_json(db_path, "scales", "list")}["fs"]["values"][-1] == 100
    assert "fs" in run(db_path, "scales", "list").output


def test_blind_rating_stale_agreement_and_adjudication(db_path: Path, engine: Engine, world: World) -> None:
    _people(db_path)
    t0, t1 = world.trajectories[0], world.trajectories[1]
    out = run(
        db_path,
        "assign",
        "--scale",
        "yes-no",
        "--target-kind",
        "trajectory",
        "--run",
        str(world.runs[0]),
        "--annotators",
        "ann,bob",
        "--overlap",
        "2",
    ).output
    assert "8 new assignment(s) for 4 target(s)" in out
    assert len(run_json(db_path, "review", "queue", "ann")) == 4

    # blind: before ann rates, her view holds no verdicts and no other ratings
    run(
        db_path,
        "rate",
        "--as-annotator",
        "bob",
        "--scale",
        "yes-no",
        "--target-kind",
        "trajectory",
        "--target-id",
        str(t1),
        "--value",
        "no",
        "--comment",
        "misses the chart",
    )
    view = [
        "review",
        "view",
        "--as-annotator",
        "ann",
        "--scale",
        "yes-no",
        "--target-kind",
        "trajectory",
        "--target-id",
        str(t1),
    ]
    before = run_json(db_path, *view)
    assert before["blind"] is True and before["rated"] is False
    assert before["verdicts"] == [] and before["other_ratings"] == []
    assert "misses the chart" not in json.dumps(before) and "thinks" not in json.dumps(before)
    assert "hidden until you rate" in run(db_path, *view).output
    run(
        db_path,
        "rate",
        "--as-annotator",
        "ann",
        "--scale",
        "yes-no",
        "--target-kind",
        "trajectory",
        "--target-id",
        str(t1),
        "--value",
        "yes",
    )
    after = run_json(db_path, *view)
    assert after["rated"] and {v["judge"] for v in after["verdicts"]} == {"strict", "lenient"}
    assert [r["comment"] for r in after["other_ratings"]] == ["misses the chart"]
    assert len(run_json(db_path, "review", "queue", "ann")) == 3

    for who, value in (("ann", "yes"), ("bob", "yes")):
        run(
            db_path,
            "rate",
            "--as-annotator",
            who,
            "--scale",
            "yes-no",
            "--target-kind",
            "trajectory",
            "--target-id",
            str(t0),
            "--value",
            value,
        )
    bad = run(
        db_path,
        "rate",
        "--as-annotator",
        "ann",
        "--scale",
        "yes-no",
        "--target-kind",
        "trajectory",
        "--target-id",
        str(t0),
        "--value",
        "maybe",
        ok=False,
    )
    assert bad.exit_code == 1 and "'maybe' is not on scale yes-no" in bad.output

    # agreement: ann and bob agree on t0, split on t1
    rep = run_json(db_path, "agreement", "--scale", "yes-no", "--raters", "ann,bob", "--bootstrap", "0")
    assert rep[0]["pairs"][0]["n"] == 2
    assert rep[0]["pairs"][0]["statistics"]["percent_agreement"]["value"] == 0.5

    # editing the task makes ratings of its trajectories stale
    run(db_path, "tasks", "edit", str(world.tasks[0]), "--query", "a sharper question?")
    stale = run_json(db_path, "ratings", "list", "--stale")
    assert {(r["annotator"], r["target"]["id"]) for r in stale} == {("ann", t0), ("bob", t0)}
    assert all(r["task_revision"] < r["current_revision"] for r in stale)
    assert "stale" in run(db_path, "ratings", "list").output
    # the raw long format: one row per rating, empty cells where there is no value
    import csv
    import io

    raw = list(csv.DictReader(io.StringIO(run(db_path, "ratings", "list", "--csv").output)))
    assert len(raw) == 4 and {r["annotator"] for r in raw} == {"ann", "bob"}
    bob_t1 = next(r for r in raw if r["annotator"] == "bob" and r["target_id"] == str(t1))
    assert (bob_t1["scale"], bob_t1["value"], bob_t1["comment"], bob_t1["dimension"]) == (
        "yes-no",
        "no",
        "misses the chart",
        "",
    )
    assert {r["stale"] for r in raw if r["target_id"] == str(t0)} == {"true"}
    rep = run_json(db_path, "agreement", "--scale", "yes-no", "--raters", "ann,bob", "--bootstrap", "0")
    assert rep[0]["pairs"][0]["n"] == 1 and "2 stale rating(s) left out" in rep[0]["notes"][0]
    rep = run_json(
        db_path, "agreement", "--scale", "yes-no", "--raters", "ann,bob", "--bootstrap", "0", "--include-stale"
    )
    assert rep[0]["pairs"][0]["n"] == 2

    # the queue: t1 splits people and judges; human-human only
    queue = run_json(db_path, "disagreements", "--scale", "yes-no", "--between", "human-human")
    assert [(d["target"]["id"], d["pair_kinds"]) for d in queue] == [(t1, ["human-human"])]
    assert queue[0]["values"] == {"human:ann": "yes", "human:bob": "no", "judge:lenient": "yes", "judge:strict": "no"}

    # adjudication: a plain annotator may not; a reviewer's decision records what it overrode
    refused = run(
        db_path,
        "adjudicate",
        "--reviewer",
        "ann",
        "--target-kind",
        "trajectory",
        "--target-id",
        str(t1),
        "--scale",
        "yes-no",
        "--value",
        "no",
        "--rationale",
        "x",
        ok=False,
    )
    assert "only reviewers and admins" in refused.output
    out = run(
        db_path,
        "adjudicate",
        "--reviewer",
        "rev",
        "--target-kind",
        "trajectory",
        "--target-id",
        str(t1),
        "--scale",
        "yes-no",
        "--value",
        "no",
        "--rationale",
        "the chart is missing",
    ).output
    assert "adjudication 1" in out
    (adj,) = run_json(db_path, "review", "adjudications")
    with session_scope(engine, "check") as s:
        on_t1 = {r.value: r for r in s.exec(select(HumanRating).where(HumanRating.target_id == t1)).all()}
        ann_rating, bob_rating = on_t1["yes"], on_t1["no"]
        lenient = world.verdicts[("lenient", t1)]
        strict = world.verdicts[("strict", t1)]
        assert must(s.get(Verdict, lenient)).label == "yes" and s.get(Verdict, strict).label == "no"
        assert adj["overrides"]["ratings"] == [ann_rating.id]
        assert adj["overrides"]["verdicts"] == [lenient]
        assert adj["overrides"]["confirmed"] == {"ratings": [bob_rating.id], "verdicts": [strict]}
        assert (adj["reviewer"], adj["final_value"], adj["rationale"]) == ("rev", "no", "the chart is missing")
        # originals untouched, and the adjudication is in the audit trail
        assert len(s.exec(select(HumanRating)).all()) == 4
        assert s.exec(select(AuditEvent).where(AuditEvent.entity == "adjudication")).one().actor == "tester"
    queue = run_json(db_path, "disagreements", "--scale", "yes-no")
    assert t1 not in [d["target"]["id"] for d in queue]
    assert t1 in [
        d["target"]["id"] for d in run_json(db_path, "disagreements", "--scale", "yes-no", "--include-adjudicated")
    ]


def test_import_agreement_text_and_study_export(db_path: Path, engine: Engine, world: World, tmp_path: Path) -> None:
    t = world.trajectories
    labels = tmp_path / "labels.csv"
    rows = ["annotator,scale,target_kind,target_id,value"]
    rows += [f"ann,yes-no,trajectory,{tid},{v}" for tid, v in zip(t[:4], ["yes", "no", "no", "yes"])]
    rows += [f"bob,yes-no,trajectory,{tid},{v}" for tid, v in zip(t[:4], ["1", "0", "1", "1"])]
    rows += [f"ann,atp-agreement,verdict,{world.verdicts[('strict', tid)]},{v}" for tid, v in zip(t[:4], [2, 2, 1, 0])]
    labels.write_text("\n".join(rows) + "\n", encoding="utf-8")
    bad = run(db_path, "rate", "--import", str(labels), ok=False)
    assert "labels.csv line 2: no annotator named 'ann'" in bad.output
    assert "imported 12 rating(s)" in run(db_path, "rate", "--import", str(labels), "--create-annotators").output

    text = run(db_path, "agreement", "--scale", "yes-no", "--bootstrap", "50").output
    assert "yes-no (nominal): 4 rater(s), 8 target(s)" in text
    assert "krippendorff_alpha_nominal" in text and "human-judge" in text
    raw = run(db_path, "agreement", "--bootstrap", "50", "--json").output
    assert "NaN" not in raw and "Infinity" not in raw
    data = json.loads(raw)
    assert {d["scale"] for d in data} == {"yes-no", "atp-agreement"}
    yn = next(d for d in data if d["scale"] == "yes-no")
    assert yn["judge_errors"]["judges"] == ["judge:lenient", "judge:strict"]
    assert "model_ranking" in yn
    page = tmp_path / "agreement.html"
    run(db_path, "agreement", "--bootstrap", "50", "--html", str(page))
    html = page.read_text(encoding="utf-8")
    assert "yes-no: pairwise cohen_kappa</figcaption>" in html  # the heatmap of every pair of raters
    assert "<h2>Agreement on atp-agreement (ordinal)" in html
    assert html.count('src="data:image/svg+xml;base64,') == 1 and "<script" not in html
    assert "Agreement on yes-no (nominal): 4 raters, 8 targets" in html
    # a run's agreement: only the targets in that run's trajectories (t[:4] are run 0's)
    scoped = json.loads(
        run(db_path, "agreement", "--scale", "yes-no", "--run", str(world.runs[0]), "--bootstrap", "0", "--json").output
    )
    assert scoped[0]["units"] == 4

    md = tmp_path / "study.md"
    run(db_path, "study", "export", "--format", "md", str(md))
    body = md.read_text(encoding="utf-8")
    assert "ATP-Bench §6" in body and "ISG-Bench Table 3" in body
    assert "| strict | Holistic | Agreement (atp-agreement) | 4 | 62.50% |" in body
    csv_path = tmp_path / "atp.csv"
    run(db_path, "study", "export", "--format", "csv", "--shape", "atp", str(csv_path))
    assert (
        csv_path.read_text(encoding="utf-8")
        .splitlines()[1]
        .startswith("strict,Holistic,Agreement (atp-agreement),4,62.50%")
    )
    refused = run(db_path, "study", "export", "--format", "csv", str(csv_path), ok=False)
    assert refused.exit_code == 2 and "--shape" in refused.output
