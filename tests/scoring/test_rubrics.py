"""Rubrics a benchmark's author writes: versioned, validated, and what `judge` sends (scripted server)."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema  # type: ignore[import-untyped]
import pytest
import sqlalchemy as sa
from click.testing import CliRunner
from sqlmodel import select

from annotation import tasks as authoring
from store import make_engine, session_scope
from store.models import Benchmark, ModelEndpoint, Task, Verdict
from tests.scoring.builders import answer, stored_run, stored_trajectory
from tests.support.scripted_openai import text
from tui.cli import cli

KEY_ENV = "CM_TEST_JUDGE_KEY"
V1 = "Grade the crane instructions.\nTask: {{query}}\nAnswer: {{answer}}\nExpected: {{golden}}\nRUBRIC-ONE\n"
V2 = "### system\nYou are strict.\n\n### user\nTask: {{query}}\nAnswer: {{answer}}\nRUBRIC-TWO {{golden|numbered}}\n"


def native_run(engine, base_url: str, answers: list[str]) -> int:  # type: ignore[no-untyped-def]
    """A chainmark-format benchmark ``mine`` with one interleaved task per answer, and a run answering them."""
    with session_scope(engine, actor="tester") as s:
        run = stored_run(s, "mine", "chainmark")
        s.add(ModelEndpoint(name="judge-ep", base_url=base_url, model="judge-model", api_key_env=KEY_ENV))
        for i, said in enumerate(answers):
            spec = {"kind": "interleaved", "golden": [{"type": "text", "content": f"fold {i} times"}]}
            task = authoring.create_task(s, "mine", f"Fold crane {i}", source_id=f"q{i}", answer_spec=spec)
            stored_trajectory(s, run, task.id or 0, [answer(said)])
        return int(run.id or 0)


def invoke(db_path: Path, *args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(cli, ["--db", str(db_path), *args])


def add(db_path: Path, tmp_path: Path, text_: str, name: str = "rubric.md"):  # type: ignore[no-untyped-def]
    path = tmp_path / name
    path.write_text(text_, encoding="utf-8")
    return invoke(db_path, "rubrics", "add", "mine", "--file", str(path))


def sent_text(request) -> str:  # type: ignore[no-untyped-def]
    out = []
    for m in request.messages:
        content = m["content"]
        out.extend([content] if isinstance(content, str) else [p.get("text", "") for p in content])
    return "\n".join(out)


def verdict_versions(engine) -> list[tuple[int, str | None, float | None]]:  # type: ignore[no-untyped-def]
    with session_scope(engine) as s:
        return [(v.target_id, v.template_version, v.score) for v in s.exec(select(Verdict).order_by(Verdict.id))]  # type: ignore[arg-type]


def test_versions_are_added_listed_shown_and_never_edited(engine, db_path: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    native_run(engine, "http://127.0.0.1:9/v1", ["x"])
    out = invoke(db_path, "rubrics", "list", "mine")
    assert "no authored rubric" in out.output
    assert "built-in chainmark-rubric.v1" in invoke(db_path, "rubrics", "show", "mine").output
    assert add(db_path, tmp_path, V1).output.strip() == "mine: rubric v1 saved"
    assert "unchanged" in add(db_path, tmp_path, V1).output  # the same text twice adds nothing
    assert add(db_path, tmp_path, V2).output.strip() == "mine: rubric v2 saved"
    listed = json.loads(invoke(db_path, "rubrics", "list", "mine", "--json").output)
    assert [v["version"] for v in listed] == ["1", "2"]
    assert "RUBRIC-TWO" in invoke(db_path, "rubrics", "show", "mine").output
    shown = invoke(db_path, "rubrics", "show", "mine", "--version", "1").output
    assert "RUBRIC-ONE" in shown and "RUBRIC-TWO" not in shown
    bad = invoke(db_path, "rubrics", "show", "mine", "--version", "7")
    assert bad.exit_code == 1 and "no rubric version 7; its versions: v1, v2" in bad.output


def test_unknown_placeholders_are_refused_in_one_line(engine, db_path: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    native_run(engine, "http://127.0.0.1:9/v1", ["x"])
    out = add(db_path, tmp_path, "Task {{query}} {{ reference }} {{answer.__class__}} {{answer}} {{reference}}")
    lines = out.output.strip().splitlines()
    assert out.exit_code == 1 and len(lines) == 1, out.output
    assert "unknown placeholder(s) {{ reference }}, {{answer.__class__}}, {{reference}}" in lines[0]
    assert "{{query}}, {{answer}}, {{golden}}" in lines[0]
    assert json.loads(invoke(db_path, "rubrics", "list", "mine", "--json").output) == []


def test_judge_sends_the_chosen_version_and_verdicts_keep_theirs(  # type: ignore[no-untyped-def]
    engine, db_path: Path, tmp_path: Path, scripted_openai, monkeypatch
) -> None:
    monkeypatch.setenv(KEY_ENV, "k")
    # The model's answer holds placeholder syntax: it is sent as text, never expanded.
    run_id = native_run(engine, scripted_openai.base_url, ["Fold it. {{query}} {0} %s", "Fold twice"])
    scripted_openai.handler = lambda req: text(json.dumps({"score": 7, "analysis": "ok"}))
    judge = ["judge", str(run_id), "--judge", "chainmark-rubric", "--endpoint", "judge-ep"]

    builtin = invoke(db_path, *judge, "--limit", "1")
    assert "the built-in rubric: 'mine' has no authored rubric" in builtin.output, builtin.output
    assert "RUBRIC-ONE" not in sent_text(scripted_openai.chat_requests()[0])

    assert add(db_path, tmp_path, V1).exit_code == 0
    first = invoke(db_path, *judge)
    assert first.exit_code == 0 and "chainmark-rubric v1 (the rubric authored for benchmark 'mine')" in first.output
    v1_requests = scripted_openai.chat_requests()[1:]
    assert len(v1_requests) == 2  # the built-in verdict answers nothing the v1 rubric asks
    sent = sent_text(v1_requests[0])
    assert "RUBRIC-ONE" in sent and "Task: Fold crane 0" in sent
    assert "Answer: Fold it. {{query}} {0} %s" in sent  # the answer verbatim
    assert [v for _, v, _ in verdict_versions(engine)] == ["1", "1", "1"]  # the built-in's v1, then rubric v1 ×2

    assert add(db_path, tmp_path, V2).exit_code == 0
    second = invoke(db_path, *judge)
    assert second.exit_code == 0, second.output
    v2_requests = scripted_openai.chat_requests()[3:]
    assert len(v2_requests) == 2
    assert all("RUBRIC-TWO 1. {" in sent_text(r) and "RUBRIC-ONE" not in sent_text(r) for r in v2_requests), [
        sent_text(r) for r in v2_requests
    ]
    assert v2_requests[0].messages[0] == {"role": "system", "content": "You are strict."}
    assert [v for _, v, _ in verdict_versions(engine)] == ["1", "1", "1", "2", "2"]  # v1's stay v1

    again = invoke(db_path, *judge, "--rubric-version", "1", "--json")
    assert json.loads(again.output)["model_calls"] == 0  # v1's answers are still there
    assert len(scripted_openai.chat_requests()) == 5
    score = json.loads(invoke(db_path, "score", str(run_id), "--json").output)
    assert score["metrics"]["RubricScore"] == 7.0 and score["pending_judgements"] == 0


def rubric_rows(engine) -> list[dict]:  # type: ignore[no-untyped-def]
    """The authored rubric rows as plain values, ids left out and times as aware UTC."""
    from store.clock import as_utc
    from store.core_tables import judgetemplate

    with engine.connect() as conn:
        rows = conn.execute(sa.select(judgetemplate).order_by(judgetemplate.c.id)).mappings().all()
    return [{**{k: v for k, v in r.items() if k != "id"}, "created_at": as_utc(r["created_at"])} for r in rows]


def authored_and_exported(engine, db_path: Path, tmp_path: Path) -> Path:  # type: ignore[no-untyped-def]
    """Benchmark ``mine`` with rubric v1 by ana and v2 by ben, exported in chainmark's own format."""
    from evaluation.judges.rubrics import add_rubric

    native_run(engine, "http://127.0.0.1:9/v1", ["Fold it"])
    for text_, who in ((V1, "ana"), (V2, "ben")):
        with session_scope(engine, actor=who) as s:
            assert add_rubric(s, "mine", text_, who)[1]
    out = tmp_path / "exported"
    assert invoke(db_path, "export", "chainmark", str(out), "-b", "mine").exit_code == 0
    return out


def test_an_export_carries_every_rubric_version_and_an_import_restores_it_to_judge_with(  # type: ignore[no-untyped-def]
    engine, db_path: Path, tmp_path: Path, scripted_openai, monkeypatch
) -> None:
    out = authored_and_exported(engine, db_path, tmp_path)
    lines = [json.loads(x) for x in (out / "rubrics.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [(x["version"], x["author"]) for x in lines] == [(1, "ana"), (2, "ben")]
    assert lines[1]["system"] == "You are strict." and "RUBRIC-TWO" in lines[1]["user"]
    published = json.loads(invoke(db_path, "schema", "rubrics").output)
    for line in lines:
        jsonschema.validate(line, published)
    with pytest.raises(jsonschema.ValidationError):  # closed, as the reader is
        jsonschema.validate({**lines[0], "colour": "red"}, published)

    other = tmp_path / "other.db"
    imported = invoke(other, "import", "chainmark", str(out), "-b", "mine")
    assert imported.exit_code == 0 and "mine: 2 judge rubric version(s) added" in imported.output, imported.output
    other_engine = make_engine(other)
    assert rubric_rows(other_engine) == rubric_rows(engine)  # texts, authors, times, versions as stored
    assert invoke(other, "rubrics", "list", "mine").output == invoke(db_path, "rubrics", "list", "mine").output
    listed = json.loads(invoke(other, "rubrics", "list", "mine", "--json").output)
    assert listed == json.loads(invoke(db_path, "rubrics", "list", "mine", "--json").output)
    assert [(v["version"], v["author"]) for v in listed] == [("1", "ana"), ("2", "ben")]
    assert [v["created_at"] for v in listed] == [x["created_at"] for x in lines]
    again = invoke(other, "import", "chainmark", str(out), "-b", "mine")
    assert again.exit_code == 0 and "rubric" not in again.output  # the same versions again add nothing
    assert len(rubric_rows(other_engine)) == 2

    monkeypatch.setenv(KEY_ENV, "k")
    with session_scope(other_engine, actor="tester") as s:
        run = stored_run(s, "mine", "chainmark")
        s.add(ModelEndpoint(name="judge-ep", base_url=scripted_openai.base_url, model="jm", api_key_env=KEY_ENV))
        task = s.exec(select(Task).where(Task.source_id == "q0")).one()
        stored_trajectory(s, run, task.id or 0, [answer("Fold it")])
        run_id = run.id
    scripted_openai.handler = lambda req: text(json.dumps({"score": 6, "analysis": "ok"}))
    judged = invoke(
        other, "judge", str(run_id), "--judge", "chainmark-rubric", "--endpoint", "judge-ep", "--rubric-version", "1"
    )
    assert judged.exit_code == 0 and "chainmark-rubric v1" in judged.output, judged.output
    sent = sent_text(scripted_openai.chat_requests()[0])
    assert "RUBRIC-ONE" in sent and "Task: Fold crane 0" in sent and "RUBRIC-TWO" not in sent
    assert [(v, s) for _, v, s in verdict_versions(other_engine)] == [("1", 6.0)]
    other_engine.dispose()


def test_a_malformed_rubric_refuses_the_whole_import_naming_file_line_and_field(  # type: ignore[no-untyped-def]
    engine, db_path: Path, tmp_path: Path
) -> None:
    out = authored_and_exported(engine, db_path, tmp_path)
    path = out / "rubrics.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    bad = json.loads(lines[1])
    bad["user"] = "Task {{query}} {{reference}}"
    path.write_text(lines[0] + "\n" + json.dumps(bad) + "\n", encoding="utf-8")
    other = tmp_path / "other.db"
    refused = invoke(other, "import", "chainmark", str(out), "-b", "mine")
    assert refused.exit_code == 1
    assert f"{path}: record line 2: field user: unknown placeholder(s) {{{{reference}}}}" in refused.output
    other_engine = make_engine(other)
    with session_scope(other_engine) as s:
        assert s.exec(select(Task)).all() == [] and s.exec(select(Benchmark)).all() == []
    assert rubric_rows(other_engine) == []
    other_engine.dispose()


def test_an_import_never_edits_a_stored_version(engine, db_path: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = authored_and_exported(engine, db_path, tmp_path)
    other = tmp_path / "other.db"
    assert invoke(other, "benchmarks", "add", "mine", "--format", "chainmark").exit_code == 0
    path = tmp_path / "mine-v1.md"
    path.write_text("Our own v1: {{answer}}\n", encoding="utf-8")
    assert invoke(other, "rubrics", "add", "mine", "--file", str(path)).exit_code == 0
    refused = invoke(other, "import", "chainmark", str(out), "-b", "mine")
    assert refused.exit_code == 1
    assert (
        f"{out / 'rubrics.jsonl'}: record line 1: field version: benchmark 'mine' already has a different rubric v1"
        in refused.output
    ), refused.output
    other_engine = make_engine(other)
    with session_scope(other_engine) as s:
        assert s.exec(select(Task)).all() == []  # the tasks written before the rubrics were rolled back
    assert [(r["version"], r["user"]) for r in rubric_rows(other_engine)] == [("1", "Our own v1: {{answer}}")]
    other_engine.dispose()
