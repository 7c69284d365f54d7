"""``chainmark schema``: versioned JSON Schemas of answer specs, checkpoints and event payloads, from the
same models the validators use (the harness suite checks every event it writes against them)."""

from __future__ import annotations

import json

import jsonschema  # type: ignore[import-untyped]
import pytest
from click.testing import CliRunner

from store.schemas import SCHEMA_VERSION, event_problems
from tests.annotation.test_answers import VALID
from tui.cli import cli


def schema(which: str) -> dict:
    r = CliRunner().invoke(cli, ["schema", which])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    assert doc["x-chainmark-schema-version"] == SCHEMA_VERSION
    jsonschema.Draft202012Validator.check_schema(doc)
    return doc


def test_answer_schema_accepts_every_valid_spec_and_refuses_an_unknown_kind() -> None:
    validator = jsonschema.Draft202012Validator(schema("answers"))
    for spec in VALID:
        assert not list(validator.iter_errors(spec)), spec
    assert list(validator.iter_errors({"kind": "guess"}))
    assert list(validator.iter_errors({"kind": "mcq", "options": {"A": 1}}))


def test_event_schema_matches_the_payload_models() -> None:
    validator = jsonschema.Draft202012Validator(schema("events"))
    good = {
        "kind": "tool_result",
        "payload": {
            "call_id": "c1",
            "name": "OCR",
            "ok": True,
            "text": "4471",
            "data": {},
            "asset_ids": [3],
            "native": {"kept": True},
        },
    }
    assert not list(validator.iter_errors(good)) and event_problems("tool_result", good["payload"]) == []
    bad = {"kind": "tool_result", "payload": {"name": "OCR", "ok": "maybe", "text": 5}}
    assert list(validator.iter_errors(bad))
    assert event_problems("tool_result", bad["payload"]) == [
        "ok: Input should be a valid boolean, unable to interpret input",
        "text: Input should be a valid string",
    ]
    assert event_problems("telepathy", {}) and "not an event kind" in event_problems("telepathy", {})[0]


def test_checkpoint_schema_and_authoring_refuse_a_malformed_check(engine) -> None:
    from annotation import tasks as authoring
    from annotation.tasks import AuthoringError
    from store import session_scope

    validator = jsonschema.Draft202012Validator(schema("checkpoints"))
    assert not list(
        validator.iter_errors({"key": "cp1", "axis": "V", "visual_check": {"question": "q?", "expected_answer": "4"}})
    )
    assert list(validator.iter_errors({"key": "cp1", "visual_check": {"question": "q?"}}))
    with session_scope(engine) as s:
        authoring.create_benchmark(s, "b", "chainmark")
        task = authoring.create_task(s, "b", "What is it?", answer_spec={"kind": "exact", "value": "4"})
        with pytest.raises(AuthoringError, match=r"checkpoint visual_check\.expected_answer: field required"):
            authoring.add_checkpoint(s, int(task.id or 0), visual_check={"question": "q?"})
        cp = authoring.add_checkpoint(s, int(task.id or 0), axis="S", code_check={"tool": "crop"})
        with pytest.raises(AuthoringError, match=r"checkpoint search_check\.keywords: input should be a valid list"):
            authoring.edit_checkpoint(s, int(cp.id or 0), search_check={"keywords": "crop"})


def test_an_imported_run_with_a_malformed_event_rolls_back_naming_file_record_and_event(engine, blobs) -> None:
    from sqlmodel import select

    from annotation import tasks as authoring
    from annotation.formats.errors import FormatError
    from annotation.formats.runs import EventSpec, RunSpec, TrajectorySpec, write_run
    from store import session_scope
    from store.models import Run

    with session_scope(engine) as s:
        authoring.create_benchmark(s, "b", "chainmark")
        authoring.create_task(s, "b", "What is it?", source_id="t1", answer_spec={"kind": "exact", "value": "4"})
    spec = RunSpec(
        "react",
        [
            TrajectorySpec(
                "t1",
                "line 3",
                [
                    EventSpec("answer", {"text": "4", "raw": "4", "extracted_by": "raw"}),
                    EventSpec("tool_result", {"name": "OCR", "ok": True, "text": ["not", "text"]}),
                ],
            )
        ],
    )
    with pytest.raises(FormatError) as err:
        with session_scope(engine) as s:
            write_run(s, blobs, type("Fmt", (), {"name": "test"})(), spec, "b", "preds.jsonl")
    assert "preds.jsonl" in str(err.value) and "line 3" in str(err.value)
    assert "events[1] (tool_result)" in str(err.value) and "text: Input should be a valid string" in str(err.value)
    with session_scope(engine) as s:
        assert s.exec(select(Run)).all() == []
