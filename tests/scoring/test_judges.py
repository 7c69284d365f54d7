"""Judges end to end against the scripted OpenAI-compatible server: rendering, parsing, storing, caching."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from sqlmodel import select, col

from annotation import tasks as authoring
from evaluation.judges.client import JudgeError
from evaluation.judges.parsers import extract_json, parse
from evaluation.judges.runner import judge_run
from evaluation.judges.templates import TemplateError, load_template, render
from evaluation.scoring.runner import score_run
from store import session_scope
from store.models import CheckpointResult, ModelEndpoint, ReplayCache, Verdict
from tests.scoring.builders import answer, call, res, stored_png, stored_run, stored_trajectory
from tests.support.scripted_openai import error, text
from tests.support.must import must


def amme_run(engine, blobs, base_url: str):
    with session_scope(engine, actor="tester") as s:
        run = stored_run(s, "amme-demo", "agentic-mme")
        s.add(ModelEndpoint(name="judge-ep", base_url=base_url, model="judge-model", api_key_env="CM_TEST_JUDGE_KEY"))
        task = authoring.create_task(
            s,
            "amme-demo",
            "Read the tail registration",
            source_id="0044",
            answer_spec={"kind": "contains", "value": "JA8089"},
            level="1",
        )
        authoring.add_checkpoint(
            s,
            must(task.id),
            "V1",
            axis="V",
            tools=["crop"],
            code_check={"verifier": "verify_crop_ast"},
            visual_check={"question": "Is the registration readable?", "expected_answer": "yes"},
        )
        authoring.add_checkpoint(
            s,
            must(task.id),
            "S1",
            axis="S",
            tools=["google_search"],
            description="Find the operator (expected to find: JAL)",
        )
        a1, a2 = stored_png(s, blobs, (255, 0, 0)), stored_png(s, blobs, (0, 0, 255))
        traj = stored_trajectory(
            s,
            run,
            must(task.id),
            [
                call("crop", {"image_index": 0, "bbox_2d": [0, 0, 10, 10]}, "a"),
                res("crop", "a", asset_ids=[a1]),
                call("crop", {"image_index": 1, "bbox_2d": [0, 0, 5, 5]}, "b"),
                res("crop", "b", asset_ids=[a2]),
                call("google_search", {"query": "JA8089 operator"}, "c"),
                res("google_search", "c", "JA8089 is flown by JAL"),
                answer("JA8089, operated by JAL"),
            ],
        )
        return run.id, traj.id, (a1, a2)


def test_visual_and_search_judges_store_verdicts_and_cache(engine, blobs, scripted_openai, monkeypatch) -> None:
    monkeypatch.setenv("CM_TEST_JUDGE_KEY", "sk-test")
    run_id, traj_id, (a1, a2) = amme_run(engine, blobs, scripted_openai.base_url)
    before = score_run(engine, run_id)
    assert before.pending_judgements == 2 and before.metrics["V"] == 0.0

    scripted_openai.push(text("No, it is cut off."), text("Yes, clearly."))
    stats = judge_run(engine, blobs, run_id, "amme-visual", "judge-ep")
    assert (stats["model_calls"], stats["verdicts"], stats["cache_hits"], stats["rounds"]) == (2, 2, 0, 2)
    first = scripted_openai.chat_requests()[0]
    assert first.headers["authorization"] == "Bearer sk-test"
    assert first.json["model"] == "judge-model" and first.json["temperature"] == 0 and first.json["max_tokens"] == 100
    assert first.messages[0]["role"] == "system" and "short" in first.messages[0]["content"]
    user = first.messages[1]["content"]
    assert user[0]["type"] == "image_url" and user[0]["image_url"]["url"].startswith("data:image/png;base64,")
    assert user[1] == {"type": "text", "text": "Is the registration readable?"}

    scripted_openai.push(text("VERDICT: PASS\nREASONING: the results name JAL"))
    judge_run(engine, blobs, run_id, "amme-search", "judge-ep")
    prompt = scripted_openai.chat_requests()[2].messages[0]["content"][0]["text"]
    assert "1. JA8089 operator" in prompt and "JAL" in prompt and "JA8089 is flown by JAL" in prompt

    after = score_run(engine, run_id)
    assert after.pending_judgements == 0 and after.metrics["V"] == 100.0 and after.metrics["S"] == 100.0
    assert after.judges_used == ["amme-search@judge-ep", "amme-visual@judge-ep"]
    with session_scope(engine) as s:
        rows = s.exec(select(CheckpointResult).where(CheckpointResult.trajectory_id == traj_id)).all()
        assert {(r.passed, r.method) for r in rows} == {(True, "judge")}
        verdicts = s.exec(select(Verdict).order_by(col(Verdict.id))).all()
        assert [v.target_part for v in verdicts] == [f"visual:V1:{a1}", f"visual:V1:{a2}", "search:S1"]
        assert verdicts[1].label == "Yes, clearly." and verdicts[2].label == "PASS" and verdicts[2].prompt_hash
        assert s.exec(select(ReplayCache).where(ReplayCache.kind == "judge")).all().__len__() == 3
        cache_text = json.dumps([c.request for c in s.exec(select(ReplayCache)).all()])
        assert "sk-test" not in cache_text

    # Judging again asks nothing; after deleting the verdicts, the cache answers without the model.
    assert judge_run(engine, blobs, run_id, "amme-visual", "judge-ep")["verdicts"] == 0
    with session_scope(engine) as s:
        for v in s.exec(select(Verdict)).all():
            s.delete(v)
    calls_before = len(scripted_openai.chat_requests())
    again = judge_run(engine, blobs, run_id, "amme-visual", "judge-ep")
    assert (again["cache_hits"], again["model_calls"], again["verdicts"]) == (2, 0, 2)
    assert len(scripted_openai.chat_requests()) == calls_before


def test_malformed_output_is_stored_unparsed_and_counts_as_failed(engine, blobs, scripted_openai, monkeypatch) -> None:
    monkeypatch.setenv("CM_TEST_JUDGE_KEY", "k")
    with session_scope(engine, actor="tester") as s:
        run = stored_run(s, "vtc-demo", "vtc")
        s.add(ModelEndpoint(name="j", base_url=scripted_openai.base_url, model="m"))
        task = authoring.create_task(
            s, "vtc-demo", "What is written?", answer_spec={"kind": "exact", "value": "12"}, category="ocr"
        )
        stored_trajectory(s, run, must(task.id), [answer("twelve")])
        run_id = run.id
    scripted_openai.push(*[text("I am not sure, maybe")] * 5)
    stats = judge_run(engine, blobs, must(run_id), "vtc-open-judge", "j")
    # VTC asks again after an unreadable reply: five tries in all, at temperature try × 0.5.
    assert stats["unparsed"] == 5 and stats["rounds"] == 5
    requests = scripted_openai.chat_requests()
    assert [r.json["temperature"] for r in requests] == [0, 0.5, 1.0, 1.5, 2.0]
    prompt = requests[0].messages[0]["content"][0]["text"]
    assert "Reference answer: 12" in prompt and "Model's answer: twelve" in prompt
    with session_scope(engine) as s:
        v = s.exec(select(Verdict).order_by(col(Verdict.id))).first()
        assert (
            must(v).label == "unparsed"
            and must(v).parsed["error"] == "neither yes nor no"
            and must(must(v).raw_output).startswith("I am")
        )
    res = score_run(engine, must(run_id))
    assert res.metrics["APR"] == 0.0 and res.pending_judgements == 0


def test_server_error_and_missing_key_are_clear(engine, blobs, scripted_openai, monkeypatch) -> None:
    monkeypatch.delenv("CM_TEST_JUDGE_KEY", raising=False)
    run_id, _, _ = amme_run(engine, blobs, scripted_openai.base_url)
    with pytest.raises(JudgeError, match=r"\$CM_TEST_JUDGE_KEY"):
        judge_run(engine, blobs, run_id, "amme-visual", "judge-ep")
    monkeypatch.setenv("CM_TEST_JUDGE_KEY", "k")
    scripted_openai.push(*[error(400, "bad request")] * 3)
    with pytest.raises(JudgeError, match="judge-ep"):
        judge_run(engine, blobs, run_id, "amme-visual", "judge-ep")
    with pytest.raises(JudgeError, match="no judge 'vtc-open-judge'"):
        judge_run(engine, blobs, run_id, "vtc-open-judge", "judge-ep")
    with pytest.raises(JudgeError, match="no model endpoint named 'nope'"):
        judge_run(engine, blobs, run_id, "amme-visual", "nope")


def test_templates_and_parsers() -> None:
    tpl = load_template("amme-search")
    assert tpl.ref == "amme-search.v1" and tpl.parser == "pass_fail"
    msgs = render(tpl, {"description": "d", "expected": "e", "queries": ["a", "b"], "results": []})
    assert "1. a\n2. b" in msgs[0]["content"][0]["text"]
    with pytest.raises(TemplateError, match="needs variable 'expected'"):
        render(tpl, {"description": "d", "queries": [], "results": []})
    assert extract_json('Sure!\n```json\n{"Judge": 7, "Reason": "ok"}\n```') == {"Judge": 7, "Reason": "ok"}
    assert extract_json('prefix {"a": {"b": "}"}} suffix') == {"a": {"b": "}"}}
    assert parse("json_judge", '{"Judge": "7"}').score == 7.0
    assert parse("pass_fail", "verdict: pass\nREASONING: ok").label == "PASS"
    assert parse("letters", "The model chose B and D").parsed == {"letters": ["B", "D"]}
    assert parse("json_holistic", "nope").label == "unparsed"


def test_atp_chief_reply_must_score_within_0_100() -> None:
    assert load_template("atp-chief").parser == "score_0_100"
    assert parse("score_0_100", '{"score": 72}').score == 72.0
    assert parse("score_0_100", '{"final_score": "100"}').score == 100.0
    for bad, why in (
        ('{"score": 150}', "outside 0-100"),
        ('{"score": -3}', "outside"),
        ('{"tier": "good"}', "no numeric"),
    ):
        p = parse("score_0_100", bad)
        assert p.label == "unparsed" and p.score is None and why in p.parsed["error"]


def test_cli_score_judge_report(engine, db_path, blobs, scripted_openai, monkeypatch) -> None:
    from tui.cli import cli

    monkeypatch.setenv("CM_TEST_JUDGE_KEY", "k")
    run_id, _, _ = amme_run(engine, blobs, scripted_openai.base_url)
    runner = CliRunner()
    out = runner.invoke(cli, ["--db", str(db_path), "score", str(run_id), "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert data["mode"] == "faithful" and data["profile"] == "agentic-mme" and data["pending_judgements"] == 2
    scripted_openai.push(text("yes"), text("yes"))
    out = runner.invoke(
        cli, ["--db", str(db_path), "judge", str(run_id), "--judge", "amme-visual", "--endpoint", "judge-ep"]
    )
    assert out.exit_code == 0, out.output
    assert "1 verdict(s) stored" in out.output  # any-pass stops at the first image that passes
    out = runner.invoke(cli, ["--db", str(db_path), "score", str(run_id), "--mode", "fixed"])
    assert out.exit_code == 0 and "mode fixed" in out.output and "1 judgement(s) pending (amme-search: 1)" in out.output
    out = runner.invoke(cli, ["--db", str(db_path), "report", str(run_id), "--format", "csv"])
    assert out.exit_code == 0
    assert "# amme-demo (agentic-mme): headline metrics" in out.output
    assert "# amme-demo (agentic-mme): tool adoption" in out.output
    md = runner.invoke(cli, ["--db", str(db_path), "report", str(run_id)]).output
    assert "| model | L1 |" in md and "tool calls per task" in md
    bad = runner.invoke(cli, ["--db", str(db_path), "score", "999"])
    assert bad.exit_code != 0 and "no run with id 999" in bad.output


def test_scoring_without_verdicts_is_what_a_reference_without_a_judge_sees(
    engine, db_path, blobs, scripted_openai, monkeypatch
) -> None:
    """``score_run(judged=False)``: conformance scores chainmark's side so when the reference gets no judge
    (Agentic-MME); with the run's verdicts every judged check differed for that reason alone."""
    from evaluation.conformance.runner import reference_is_judged
    from evaluation.scoring.runner import score_run
    from tui.cli import cli

    monkeypatch.setenv("CM_TEST_JUDGE_KEY", "k")
    run_id, _, _ = amme_run(engine, blobs, scripted_openai.base_url)
    scripted_openai.push(text("yes"), text("yes"))
    runner = CliRunner()
    out = runner.invoke(
        cli, ["--db", str(db_path), "judge", str(run_id), "--judge", "amme-visual", "--endpoint", "judge-ep"]
    )
    assert out.exit_code == 0, out.output
    judged = score_run(engine, run_id, write=False)
    unjudged = score_run(engine, run_id, write=False, judged=False)
    assert judged.pending_judgements == 1 and unjudged.pending_judgements == 2
    assert judged.metrics["V"] != unjudged.metrics["V"]
    assert reference_is_judged("agentic-mme") is False and reference_is_judged("isg") is True


def atp_run(engine, base_url: str) -> int:
    with session_scope(engine, actor="tester") as s:
        run = stored_run(s, "atp-demo", "atp", mode="plan")
        s.add(ModelEndpoint(name="judge-ep", base_url=base_url, model="judge-model", api_key_env="CM_TEST_JUDGE_KEY"))
        task = authoring.create_task(s, "atp-demo", "Show how to fold a paper crane", source_id="q1", category="craft")
        stored_trajectory(
            s,
            run,
            must(task.id),
            [
                {"kind": "plan_call", "payload": {"tool_name": "Search", "arguments": {"query": "paper crane"}}},
                answer('Fold the square. <tool>{"tool_name": "Search", "query": "paper crane"}</tool>'),
            ],
        )
        return run.id


def test_cli_atp_chief_sees_the_inspectors_verdicts_so_final_score_is_computed(
    engine, db_path, scripted_openai, monkeypatch
) -> None:
    from tui.cli import cli

    monkeypatch.setenv("CM_TEST_JUDGE_KEY", "k")
    run_id = atp_run(engine, scripted_openai.base_url)
    runner = CliRunner()
    checks = {
        k: True
        for k in (
            "necessity",
            "semantic_position",
            "structural_integrity",
            "tool_choice",
            "parameter_accuracy",
            "format_correctness",
        )
    }
    scripted_openai.push(
        text(json.dumps({"calls": [{"index": 0, **checks}]})),
        text(json.dumps({"missed": [], "missed_count": 0})),
        text(json.dumps({"score": 72, "tier": "good but flawed", "rationale": "fine"})),
    )
    for judge in ("atp-precision", "atp-recall", "atp-chief"):
        out = runner.invoke(
            cli, ["--db", str(db_path), "judge", str(run_id), "--judge", judge, "--endpoint", "judge-ep", "--json"]
        )
        assert out.exit_code == 0, out.output
        assert json.loads(out.output)["verdicts"] == 1, (judge, out.output)
    chief_prompt = "".join(p.get("text", "") for p in scripted_openai.chat_requests()[2].messages[0]["content"])
    assert '"missed_count": 0' in chief_prompt and '"format_correctness": true' in chief_prompt
    out = runner.invoke(cli, ["--db", str(db_path), "score", str(run_id), "--json"])
    data = json.loads(out.output)
    assert data["metrics"]["FS"] == 72.0 and data["pending_judgements"] == 0
    assert data["by_category"]["craft"]["FS"] == 72.0
