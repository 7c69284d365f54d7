"""End to end: a run judged by a scripted judge over real HTTP, 30 human ratings, then ``estimate``,
``calibration`` and ``review plan`` read it all back from the database."""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from sqlmodel import select

from annotation import tasks as authoring
from annotation.review import adjudication, annotators, ratings, scales
from annotation.review.targets import Target
from evaluation.agreement import ppi
from evaluation.judges.runner import judge_run
from store import session_scope
from store.models import Assignment, Judge, ModelEndpoint, Trajectory, Verdict
from tests.scoring.builders import answer, stored_run, stored_trajectory
from tests.support.scripted_openai import scripted_openai  # noqa: F401  (fixture)
from tests.support.scripted_openai import Reply, text

ITEMS = 60
JUDGE = "vtc-open-judge@judge-ep"


def _correct(k: int) -> bool:
    return k % 3 != 0  # the model gets two items in three right


def _line(prompt: str, name: str) -> str:
    found = re.search(rf"{name}: (.*)", prompt)
    assert found is not None, prompt
    return found.group(1).strip()


def _fools_the_judge(k: int) -> bool:
    return not _correct(k) and (k // 3) % 4 in (0, 1)  # half the wrong answers, on rated and unrated items alike


def _model_answer(k: int) -> str:
    """Never the reference text, so VTC's rule cannot settle it and the judge is asked every time."""
    if _correct(k):
        return f"It shows R{k}"
    return f"almost R{k}" if _fools_the_judge(k) else f"It shows R{k + 1}"  # "almost" fools the lenient judge


def _judge_reply(request: Any) -> Reply:
    prompt = request.messages[0]["content"][0]["text"]
    said = _line(prompt, "Model's answer")
    ref = _line(prompt, "Reference answer")
    number = ref.removeprefix("ref-")
    return text("yes" if said in (f"It shows R{number}", f"almost R{number}") else "no")


@pytest.fixture
def judged_run(engine, blobs, scripted_openai, monkeypatch):
    """60 VTC items in two categories, judged by a scripted lenient judge, 30 of them rated by people
    (one rating overridden by an adjudication)."""
    monkeypatch.setenv("CM_TEST_JUDGE_KEY", "k")
    scripted_openai.handler = _judge_reply
    with session_scope(engine, actor="tester") as s:
        run = stored_run(s, "vtc-ppi", "vtc")
        s.add(
            ModelEndpoint(
                name="judge-ep", base_url=scripted_openai.base_url, model="m", api_key_env="CM_TEST_JUDGE_KEY"
            )
        )
        for k in range(ITEMS):
            task = authoring.create_task(
                s,
                "vtc-ppi",
                f"What number is shown? ({k})",
                answer_spec={"kind": "exact", "value": f"ref-{k}"},
                category="ocr" if k < 30 else "chart",
            )
            stored_trajectory(s, run, task.id or 0, [answer(_model_answer(k))])
        run_id = run.id or 0
    stats = judge_run(engine, blobs, run_id, "vtc-open-judge", "judge-ep")
    assert stats["verdicts"] == ITEMS
    with session_scope(engine, actor="tester") as s:
        scales.ensure_builtin_scales(s)
        for name in ("ann", "bea"):
            annotators.add_annotator(s, name)
        annotators.add_annotator(s, "rev", role="reviewer")
        trajs = s.exec(select(Trajectory).where(Trajectory.run_id == run_id).order_by(Trajectory.id)).all()  # type: ignore[arg-type]
        ids = [t.id or 0 for t in trajs]
        for k in range(0, ITEMS, 2):  # every other item: 15 per category
            truth = "yes" if _correct(k) else "no"
            # item 4 gets a wrong rating that the reviewer's adjudication then corrects
            ratings.rate(s, "ann", "yes-no", Target("trajectory", ids[k], "answer"), "no" if k == 4 else truth)
        adjudication.adjudicate(
            s, "rev", Target("trajectory", ids[4], "answer"), "yes-no", "yes", "the answer is right"
        )
    return run_id, ids


def _truth_arrays(
    ids: list[int],
) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]]:
    judge = np.array([1.0 if _correct(k) or _fools_the_judge(k) else 0.0 for k in range(ITEMS)])
    labelled = [k for k in range(ITEMS) if k % 2 == 0]
    rest = [k for k in range(ITEMS) if k % 2]
    human = np.array([1.0 if _correct(k) else 0.0 for k in labelled])
    per_cat: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
    for cat, ks in (("ocr", range(30)), ("chart", range(30, 60))):
        lab = [k for k in ks if k % 2 == 0]
        per_cat[cat] = (
            np.array([1.0 if _correct(k) else 0.0 for k in lab]),
            judge[lab],
            judge[[k for k in ks if k % 2]],
        )
    return human, judge[labelled], judge[rest], per_cat


def test_estimate_from_the_database(db_path, judged_run) -> None:
    from tui.cli import cli

    run_id, ids = judged_run
    runner = CliRunner()
    out = runner.invoke(
        cli,
        [
            "--db",
            str(db_path),
            "estimate",
            str(run_id),
            "--judge",
            JUDGE,
            "--scale",
            "yes-no",
            "--by",
            "category",
            "--target-width",
            "0.2",
            "--json",
        ],
    )
    assert out.exit_code == 0, out.output
    [data] = json.loads(out.output)
    human, judged, unlabelled, per_cat = _truth_arrays(ids)
    assert (data["items"], data["labelled"], data["kind"]) == (60, 30, "binary")
    want = ppi.estimate_mean(human, judged, unlabelled)
    overall = data["overall"]
    # the judge says yes to 50 of 60 (40 right answers + 10 "almost"); 20 of the 30 rated items are right
    assert overall["judge_only"]["estimate"] == pytest.approx(50 / 60, abs=1e-6)
    assert overall["human_only"]["estimate"] == pytest.approx(20 / 30, abs=1e-6)
    assert overall["human_only"]["n_labelled"] == 30 and overall["ppi++"]["n_unlabelled"] == 30
    for method, interval in (("ppi", want.ppi), ("ppi++", want.ppi_plus), ("human_only", want.human_only)):
        assert overall[method]["estimate"] == pytest.approx(interval.estimate, abs=1e-6)
        assert overall[method]["ci"] == pytest.approx([interval.low, interval.high], abs=1e-6)
    # the judge's leniency is corrected: on the unrated half it says yes to 25 of 30, and on the rated
    # half it said yes 5 times too often; PPI gives 25/30 - 5/30, the truth (40/60), not the judge's 50/60
    assert overall["ppi"]["estimate"] == pytest.approx(40 / 60, abs=1e-6)
    assert overall["width_gained"] == pytest.approx(want.width_gained(), abs=1e-6) and overall["width_gained"] > 0
    assert data["more_labels_for_target"] == ppi.labels_for_width(human, judged, unlabelled, 0.2)
    assert set(data["by_category"]) == {"ocr", "chart"}
    for cat, arrays in per_cat.items():
        got = data["by_category"][cat]
        assert got["items"] == 30 and got["human_only"]["n_labelled"] == 15
        assert got["ppi++"]["estimate"] == pytest.approx(ppi.ppi_interval(*arrays, lam=None).estimate, abs=1e-6)
    strata = [(30, ppi.ppi_interval(*per_cat[c], lam=None)) for c in ("chart", "ocr")]
    assert data["stratified"]["estimate"] == pytest.approx(ppi.stratified(strata, "s").estimate, abs=1e-6)

    text_out = runner.invoke(
        cli, ["--db", str(db_path), "estimate", str(run_id), "--judge", JUDGE, "--scale", "yes-no"]
    )
    assert text_out.exit_code == 0, text_out.output
    assert (
        "judge only" in text_out.output
        and "PPI++ (λ=" in text_out.output
        and "narrower than humans alone" in text_out.output
    )

    bad = runner.invoke(cli, ["--db", str(db_path), "estimate", str(run_id), "--judge", JUDGE])
    assert bad.exit_code != 0 and "names no rating scale of its own; give --scale" in bad.output
    bad = runner.invoke(
        cli, ["--db", str(db_path), "estimate", str(run_id), "--judge", JUDGE, "--scale", "mme-failure-mode"]
    )
    assert bad.exit_code != 0 and "needs a numeric scale or one of two labels" in bad.output


def test_review_plan_writes_assignments_the_queue_follows(db_path, engine, judged_run) -> None:
    from tui.cli import cli

    run_id, ids = judged_run
    runner = CliRunner()
    args = [
        "--db",
        str(db_path),
        "review",
        "plan",
        str(run_id),
        "--judge",
        JUDGE,
        "--scale",
        "yes-no",
        "--budget",
        "10",
        "--annotators",
        "ann,bea",
        "--json",
    ]
    out = runner.invoke(cli, args)
    assert out.exit_code == 0, out.output
    plan = json.loads(out.output)
    strata = {st["category"]: st for st in plan["strata"]}
    # 15 labels per category, so each category's variance of (human - judge) is measured: ocr has 3
    # fooled items of 15 (var 2.4/14), chart 2 (var 1.7333/14); the greedy Neyman allocation of 10
    # labels over two equal-sized categories then gives ocr 7 and chart 3
    assert {c: (st["items"], st["labelled"], st["variance_from"], st["chosen"]) for c, st in strata.items()} == {
        "ocr": (30, 15, "labels", 7),
        "chart": (30, 15, "labels", 3),
    }
    assert strata["ocr"]["variance"] == pytest.approx(2.4 / 14, abs=1e-6)
    assert strata["chart"]["variance"] == pytest.approx((2 * (13 / 15) ** 2 + 13 * (2 / 15) ** 2) / 14, abs=1e-6)
    assert len(plan["items"]) == 10
    assert sorted(p["category"] for p in plan["items"]) == ["chart"] * 3 + ["ocr"] * 7
    unlabelled = {ids[k] for k in range(ITEMS) if k % 2}
    assert {p["target"]["id"] for p in plan["items"]} <= unlabelled
    assert len(plan["assignments"]) == 10
    assert {a["annotator"] for a in plan["assignments"]} == {"ann", "bea"}
    with session_scope(engine) as s:
        rows = s.exec(select(Assignment).where(Assignment.scale == "yes-no")).all()
        assert len(rows) == 10 and {r.target_id for r in rows} == {p["target"]["id"] for p in plan["items"]}
    queue = runner.invoke(cli, ["--db", str(db_path), "review", "queue", "ann", "--json"])
    assert queue.exit_code == 0, queue.output
    assert len(json.loads(queue.output)) == 5
    # planning again hands out other items: the assigned ones count as labels on their way
    again = json.loads(runner.invoke(cli, args).output)
    assert not {p["target"]["id"] for p in again["items"]} & {p["target"]["id"] for p in plan["items"]}
    assert sum(st["pending"] for st in again["strata"]) == 10
    # bea now has targets to rate blind: the estimates, built from every rating, are not for her yet
    blind = runner.invoke(
        cli, ["--db", str(db_path), "--as", "bea", "estimate", str(run_id), "--judge", JUDGE, "--scale", "yes-no"]
    )
    assert blind.exit_code != 0 and "bea still has 10 target(s) to rate blind" in blind.output


def test_calibration_confusion_and_majority(db_path, engine, judged_run) -> None:
    from tui.cli import cli

    run_id, ids = judged_run
    with session_scope(engine, actor="tester") as s:  # two more judges on the same scale
        for name, flip in (("strict", 0), ("noisy", 1)):
            j = Judge(name=name, template="hand", params={"scale": "yes-no"})
            s.add(j)
            s.flush()
            for k, tid in enumerate(ids):
                label = "yes" if _correct(k) else "no"
                if flip and k % 5 == 0:
                    label = "no" if label == "yes" else "yes"
                s.add(
                    Verdict(
                        judge_id=j.id or 0, target_kind="trajectory", target_id=tid, target_part="answer", label=label
                    )
                )
    out = CliRunner().invoke(
        cli, ["--db", str(db_path), "calibration", str(run_id), "--judge", JUDGE, "--scale", "yes-no", "--json"]
    )
    assert out.exit_code == 0, out.output
    [data] = json.loads(out.output)
    # of the 30 rated (even) items, 5 wrong answers fooled the lenient judge (items 0, 12, 24, 36, 48)
    assert data["confusion"]["overall"] == {"yes": {"yes": 20, "no": 5}, "no": {"no": 5}}
    assert data["confusion"]["by_category"]["ocr"] == {"yes": {"yes": 10, "no": 3}, "no": {"no": 2}}
    assert data["judges"] == sorted([JUDGE, "strict", "noisy"])
    pairs = {(r["a"], r["b"]): r for r in data["judge_agreement"]}
    assert pairs[("strict", JUDGE)]["agreement"] == pytest.approx(50 / 60, abs=1e-6)
    assert pairs[("noisy", "strict")]["agreement"] == pytest.approx(48 / 60, abs=1e-6)
    majority = data["majority"]
    assert majority["judge"] == "majority" and majority["items"] == 60
    # majority of three: wrong only where the lenient and the noisy judge both err (items 0 and 15)
    assert majority["overall"]["judge_only"]["estimate"] == pytest.approx(42 / 60, abs=1e-6)
    assert majority["overall"]["ppi"]["estimate"] == pytest.approx(
        21 / 30 - 1 / 30, abs=1e-6
    )  # item 15 unrated, item 0 rated


def test_html_report_draws_the_intervals(db_path, judged_run) -> None:
    from tui.cli import cli

    run_id, ids = judged_run
    out = CliRunner().invoke(cli, ["--db", str(db_path), "report", str(run_id), "--format", "html"])
    assert out.exit_code == 0, out.output
    page = out.output
    assert f"Estimates: run {run_id}, judge {JUDGE} on yes-no (30 of 60 items with a human label)" in page
    svg = page[page.index("<svg") : page.index("</svg>")]
    human, judged, unlabelled, _ = _truth_arrays(ids)
    want = ppi.estimate_mean(human, judged, unlabelled)
    # one interval per method for all items and for each of the two categories
    assert svg.count('data-method="judge_only"') == 3 and svg.count('data-method="ppi++"') == 3
    assert svg.count('data-method="human_only"') == 3
    assert f"[{want.ppi_plus.low:.3f}, {want.ppi_plus.high:.3f}]" in page  # the table beside the plot
    assert "narrower than humans alone" in page


def test_numeric_dimensional_judge(engine, db_path) -> None:
    """ISG-style scores: a judge's 1-10 per dimension on every trajectory, people on 8 of 20; the
    estimate per dimension equals PPI on the same numbers."""
    from tui.cli import cli

    judge_scores = [3, 5, 7, 9, 4, 6, 8, 10, 2, 5, 7, 9, 6, 6, 8, 4, 3, 7, 9, 5]
    with session_scope(engine, actor="tester") as s:
        scales.ensure_builtin_scales(s)
        annotators.add_annotator(s, "ann")
        run = stored_run(s, "isg-ppi", "isg")
        judge = Judge(name="isg-holistic@hand", template="isg-holistic", params={"scale": "isg-1-10"})
        s.add(judge)
        s.flush()
        ids = []
        for k, score in enumerate(judge_scores):
            task = authoring.create_task(s, "isg-ppi", f"story {k}", category="a" if k < 10 else "b")
            traj = stored_trajectory(s, run, task.id or 0, [answer("…")])
            ids.append(traj.id or 0)
            parsed = {"coherence": {"score": score}, "overall_score": score}
            s.add(Verdict(judge_id=judge.id or 0, target_kind="trajectory", target_id=traj.id or 0, parsed=parsed))
        rated = [0, 2, 4, 6, 10, 12, 14, 16]  # four per category; the people score one lower than the judge
        for k in rated:
            value = {"overall": judge_scores[k] - 1, "coherence": judge_scores[k]}
            ratings.rate(s, "ann", "isg-1-10", Target("trajectory", ids[k]), value)
        run_id = run.id or 0
    out = CliRunner().invoke(
        cli,
        [
            "--db",
            str(db_path),
            "estimate",
            str(run_id),
            "--judge",
            "isg-holistic@hand",
            "--dimension",
            "overall",
            "--json",
        ],
    )
    assert out.exit_code == 0, out.output
    [data] = json.loads(out.output)
    assert (data["kind"], data["dimension"], data["items"], data["labelled"]) == ("numeric", "overall", 20, 8)
    human = np.array([judge_scores[k] - 1 for k in rated], float)
    judged = np.array([judge_scores[k] for k in rated], float)
    rest = np.array([v for k, v in enumerate(judge_scores) if k not in rated], float)
    want = ppi.estimate_mean(human, judged, rest)
    assert data["overall"]["judge_only"]["estimate"] == pytest.approx(np.mean(judge_scores), abs=1e-6)
    # a judge off by exactly one: PPI removes the offset, with no rectifier variance left
    assert data["overall"]["ppi"]["estimate"] == pytest.approx(rest.mean() - 1, abs=1e-6)
    assert data["overall"]["ppi++"]["ci"] == pytest.approx([want.ppi_plus.low, want.ppi_plus.high], abs=1e-6)
    every = CliRunner().invoke(
        cli, ["--db", str(db_path), "estimate", str(run_id), "--judge", "isg-holistic@hand", "--json"]
    )
    dims = {d["dimension"]: d for d in json.loads(every.output)}
    assert set(dims) == {"coherence", "overall"}  # dimensions the judge gave no value on are left out
    assert dims["coherence"]["overall"]["ppi"]["estimate"] == pytest.approx(rest.mean(), abs=1e-6)
