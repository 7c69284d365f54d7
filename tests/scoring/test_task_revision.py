"""A score is bound to the task revision its trajectory ran on: editing the task afterwards (here its
query, which the judge prompt quotes) neither zeroes the stored judge verdict nor passes silently —
the score stays and says "edited after this run"."""

from __future__ import annotations

from annotation import tasks as authoring
from evaluation.judges.runner import judge_run
from evaluation.scoring.runner import score_run
from store import session_scope
from store.models import ModelEndpoint
from tests.scoring.builders import answer, stored_run, stored_trajectory
from tests.support.scripted_openai import text
from tests.support.must import must


def test_editing_the_query_after_a_judged_run_keeps_its_score(engine, blobs, scripted_openai, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("CM_TEST_JUDGE_KEY", "k")
    with session_scope(engine, actor="tester") as s:
        run = stored_run(s, "vtc-demo", "vtc")
        s.add(ModelEndpoint(name="j", base_url=scripted_openai.base_url, model="m"))
        ids = []
        for _n, (query, gold, said) in enumerate(
            [("What is written?", "12", "twelve"), ("How many dots?", "3", "five")]
        ):
            task = authoring.create_task(
                s, "vtc-demo", query, answer_spec={"kind": "exact", "value": gold}, category="ocr"
            )
            stored_trajectory(s, run, must(task.id), [answer(said)]).task_revision = task.revision
            ids.append(task.id)
        run_id = run.id
    scripted_openai.handler = lambda req: text("yes" if "twelve" in str(req.json) else "no")
    judge_run(engine, blobs, must(run_id), "vtc-open-judge", "j")
    before = score_run(engine, must(run_id))
    assert before.metrics["APR"] == 50.0 and not any("edited" in n for n in before.notes)

    with session_scope(engine, actor="editor") as s:
        authoring.edit_task(s, must(ids[0]), query="What number is written on the sign?")

    after = score_run(engine, must(run_id))
    assert after.metrics["APR"] == 50.0 and after.pending_judgements == 0
    assert any("edited after this run" in n and "1 task(s)" in n for n in after.notes)
