"""Authoring through the domain API: revisions, status workflow, chain edits, checkpoints, audit."""

from __future__ import annotations

import pytest
from sqlmodel import select

from annotation import tasks as authoring
from annotation.answers import AnswerSpecError
from store import session_scope
from store.models import Asset, AuditEvent, Task
from tests.support.must import must


@pytest.fixture
def task_id(engine):
    with session_scope(engine, actor="ann") as s:
        b = authoring.ensure_benchmark(s, "bench", "gta", tool_set="gta")
        t = authoring.create_task(
            s, b, "How many days will the bottle last?", answer_spec={"kind": "whitelist", "groups": [["58"]]}
        )
        authoring.add_step(s, must(t.id), tool_name="OCR", tool_args={"image": "a.jpg"}, result_text="290 SOFTGELS")
        authoring.add_step(s, must(t.id), final_answer="58")
        return t.id


def _png() -> bytes:
    import io

    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (4, 3), "blue").save(out, "PNG")
    return out.getvalue()


def _task(engine, tid):
    with session_scope(engine) as s:
        return s.get(Task, tid)


def test_building_a_task_in_one_go_is_revision_one(engine, task_id):
    t = _task(engine, task_id)
    assert (t.revision, t.status, t.source_id, t.author) == (1, "draft", "0", "ann")  # GTA numbers its records


def test_authored_ids_are_numbered_where_the_format_keys_records_by_integer(engine) -> None:
    with session_scope(engine, actor="ann") as s:
        gta = authoring.ensure_benchmark(s, "g", "gta", tool_set="gta")
        mine = authoring.ensure_benchmark(s, "m", "chainmark")
        authoring.create_task(s, gta, "q", source_id="7")
        ids = [authoring.create_task(s, gta, f"q{i}").source_id for i in range(2)]
        own = [authoring.create_task(s, mine, f"q{i}").source_id for i in range(2)]
    assert ids == ["1", "2"] and own == ["cm-00001", "cm-00002"]


def test_content_edits_bump_revision_once_and_status_does_not(engine, task_id):
    with session_scope(engine, actor="ann") as s:
        authoring.edit_task(s, task_id, query="How many days?", category="logic")
    assert _task(engine, task_id).revision == 2
    with session_scope(engine, actor="ann") as s:
        authoring.set_status(s, task_id, "submitted")
        authoring.edit_task(s, task_id, query="How many days?")  # unchanged value: no bump
    t = _task(engine, task_id)
    assert (t.revision, t.status) == (2, "submitted")


def test_status_workflow_refuses_jumps(engine, task_id):
    with pytest.raises(authoring.AuthoringError, match="a draft task can move to submitted, not verified"):
        with session_scope(engine) as s:
            authoring.set_status(s, task_id, "verified")
    with session_scope(engine) as s:
        authoring.set_status(s, task_id, "submitted")
        authoring.set_status(s, task_id, "verified")
    assert _task(engine, task_id).status == "verified"


def test_invalid_answer_spec_is_refused_and_nothing_changes(engine, task_id):
    with pytest.raises(AnswerSpecError, match="groups"):
        with session_scope(engine) as s:
            authoring.edit_task(s, task_id, answer_spec={"kind": "whitelist", "groups": []})
    assert _task(engine, task_id).answer_spec == {"kind": "whitelist", "groups": [["58"]]}


def test_steps_insert_before_the_final_answer_reorder_and_delete(engine, task_id):
    with session_scope(engine) as s:
        calc = authoring.add_step(
            s, task_id, tool_name="Calculator", tool_args={"expression": "290/5"}, result_text="58"
        )
        chain = [(st.ordinal, st.tool_name or "answer") for st in authoring.steps_of(s, task_id)]
        assert chain == [(0, "OCR"), (1, "Calculator"), (2, "answer")]
        authoring.move_step(s, must(calc.id), 0)
        assert [st.tool_name or "answer" for st in authoring.steps_of(s, task_id)] == ["Calculator", "OCR", "answer"]
        authoring.delete_step(s, must(calc.id))
        assert [(st.ordinal, st.tool_name or "answer") for st in authoring.steps_of(s, task_id)] == [
            (0, "OCR"),
            (1, "answer"),
        ]
    assert _task(engine, task_id).revision == 4
    with pytest.raises(authoring.AuthoringError, match="already has a final answer"):
        with session_scope(engine) as s:
            authoring.add_step(s, task_id, final_answer="59")


def test_checkpoints_and_ordering_constraints(engine, task_id):
    with session_scope(engine) as s:
        step = authoring.steps_of(s, task_id)[0]
        authoring.add_checkpoint(s, task_id, axis="V", step_id=step.id, code_check={"verifier": "require_op:crop"})
        authoring.add_checkpoint(s, task_id, axis="R", answer_check={"match_type": "exact", "target": "58"})
        keys = [c.key for c in authoring.checkpoints_of(s, task_id)]
        assert keys == ["cp1", "cp2"]
        oc = authoring.add_ordering_constraint(s, task_id, ["cp1", "cp2"], max_gap=1)
        assert (oc.key, oc.sequence, oc.max_gap) == ("order1", ["cp1", "cp2"], 1)
        with pytest.raises(authoring.AuthoringError, match="unknown checkpoint"):
            authoring.add_ordering_constraint(s, task_id, ["cp1", "cp9"])
        with pytest.raises(authoring.AuthoringError, match="already used"):
            authoring.add_checkpoint(s, task_id, "cp1", axis="S")


def test_deleting_checkpoints_and_ordering_constraints(engine, task_id):
    with session_scope(engine) as s:
        a = authoring.add_checkpoint(s, task_id, axis="S", description="search")
        b = authoring.add_checkpoint(s, task_id, axis="R", answer_check={"match_type": "exact", "target": "58"})
        child = authoring.add_checkpoint(s, task_id, axis="V", parent_id=b.id)
        authoring.add_ordering_constraint(s, task_id, ["cp1", "cp2"])
        authoring.add_ordering_constraint(s, task_id, ["cp2", "cp3"])
        # a checkpoint an ordering names cannot go until the ordering does
        with pytest.raises(authoring.AuthoringError, match="order1"):
            authoring.delete_checkpoint(s, must(a.id))
        snap = authoring.delete_ordering_constraint(s, task_id, "order1")
        assert snap == {"task_id": task_id, "sequence": ["cp1", "cp2"], "max_gap": None, "key": "order1"}
        # a new constraint never reuses a key still in use (it was counted, so order2 came twice)
        assert authoring.add_ordering_constraint(s, task_id, ["cp1", "cp3"]).key == "order3"
        assert authoring.add_ordering_constraint(s, task_id, ["cp3", "cp1"]).key == "order4"
        authoring.delete_ordering_constraint(s, task_id, "order3")
        authoring.delete_ordering_constraint(s, task_id, "order4")
        rev = must(s.get(Task, task_id)).revision
        fields = authoring.delete_checkpoint(s, must(a.id))
        assert (fields["key"], fields["axis"], fields["description"]) == ("cp1", "S", "search")
        assert must(s.get(Task, task_id)).revision == rev + 1
        # deleting a parent detaches its children
        authoring.delete_ordering_constraint(s, task_id, "order2")
        authoring.delete_checkpoint(s, must(b.id))
        assert must(s.get(type(child), child.id)).parent_id is None
        with pytest.raises(authoring.AuthoringError, match="no ordering constraint"):
            authoring.delete_ordering_constraint(s, task_id, "order9")


def test_every_edit_is_audited(engine, task_id):
    with session_scope(engine, actor="rev") as s:
        authoring.edit_task(s, task_id, query="Changed?")
        step = authoring.steps_of(s, task_id)[0]
        authoring.edit_step(s, must(step.id), result_text="290 softgels")
    with session_scope(engine) as s:
        events = s.exec(select(AuditEvent).where(AuditEvent.actor == "rev")).all()
    kinds = sorted((e.entity, e.action) for e in events)
    assert ("referencestep", "update") in kinds and ("task", "update") in kinds


def test_warnings_come_from_the_stored_task(engine, task_id):
    with session_scope(engine) as s:
        codes = [w.code for w in authoring.task_warnings(s, task_id)]
    assert "too-few-steps" in codes and "no-image" in codes


def test_attach_asset_links_an_image(engine, blobs, task_id):
    with session_scope(engine) as s:
        link = authoring.attach_asset(s, blobs, task_id, _png(), original_path="image/a.png")
        assert link.role == "query_image" and link.ordinal == 0
        assert len(authoring.assets_of(s, task_id, "query_image")) == 1


def test_only_images_attach_as_images(engine, blobs, task_id, tmp_path):
    with session_scope(engine) as s:
        with pytest.raises(authoring.AuthoringError, match="notes.txt is not an image"):
            authoring.attach_asset(s, blobs, task_id, b"just some text\n", original_path="notes.txt")
        with pytest.raises(authoring.AuthoringError, match="not an image"):
            authoring.attach_asset(s, blobs, task_id, b"\x89PNG but broken", role="artifact")
        import io

        from PIL import Image

        out = io.BytesIO()
        Image.new("RGB", (7, 5), "red").save(out, "TIFF")  # a format the blob store's sniffing doesn't know
        link = authoring.attach_asset(s, blobs, task_id, out.getvalue(), original_path="/abs/scan.tiff")
        asset = s.get(Asset, link.asset_id)
        assert (must(asset).mime, must(asset).width, must(asset).height) == ("image/tiff", 7, 5)
        # other roles (documents, golden outputs) are not images by definition
        authoring.attach_asset(s, blobs, task_id, b"plain", role="golden")


def test_review_rules(engine, task_id):
    """Editing a submitted or verified task sends it back with the reason on it; a rejection says
    why; the author cannot verify their own task unless the benchmark allows it."""
    with session_scope(engine, actor="ann") as s:
        authoring.set_status(s, task_id, "submitted")
        with pytest.raises(authoring.AuthoringError, match="wrote this task"):
            authoring.set_status(s, task_id, "verified")
    with session_scope(engine, actor="rev") as s:
        with pytest.raises(authoring.AuthoringError, match="needs a reason"):
            authoring.set_status(s, task_id, "rejected", reason="  ")
        authoring.set_status(s, task_id, "verified")
        assert authoring.review_note(must(s.get(Task, task_id)))["by"] == "rev"
    with session_scope(engine, actor="ann") as s:
        rev = must(s.get(Task, task_id)).revision
        authoring.edit_task(s, task_id, query="How many days will the bottle of 290 last?")
        t = s.get(Task, task_id)
        assert (must(t).status, must(t).revision) == ("draft", rev + 1)
        note = authoring.review_note(must(t))
        assert (note["status"], note["by"]) == ("draft", "ann")
        assert note["reason"] == f"edited after it was verified (revision {rev + 1})"
        # a step or checkpoint edit counts too
        authoring.set_status(s, task_id, "submitted")
        authoring.add_checkpoint(s, task_id, axis="S")
        assert must(s.get(Task, task_id)).status == "draft"
        authoring.set_status(s, task_id, "submitted")
    with session_scope(engine, actor="rev") as s:
        authoring.set_status(s, task_id, "rejected", reason="the count is wrong")
        note = authoring.review_note(must(s.get(Task, task_id)))
        assert (note["status"], note["reason"], note["by"]) == ("rejected", "the count is wrong", "rev")
    # with the benchmark's permission the author may verify
    with session_scope(engine, actor="ann") as s:
        bench = must(s.get(Task, task_id)).benchmark_id
        from store.models import Benchmark

        must(s.get(Benchmark, bench)).settings = {authoring.SELF_VERIFICATION_SETTING: True}
        authoring.set_status(s, task_id, "submitted")
        authoring.set_status(s, task_id, "verified")
        assert must(s.get(Task, task_id)).status == "verified"


def test_undoing_a_step_delete_restores_its_result_and_links(engine, blobs, task_id):
    """Issue 16 item 6: undoing a step delete once brought back the call without its result and
    left its checkpoint and image unlinked."""
    from store.models import Checkpoint, ReferenceStep, TaskAsset

    with session_scope(engine, "ann") as s:
        first = authoring.add_step(
            s,
            task_id,
            tool_name="OCR",
            tool_args={"image": "a.png"},
            result_text="58",
            result={"text": "58"},
            meta={"elapsed": 1.5},
        )
        authoring.add_step(s, task_id, tool_name="Calculator", tool_args={"expression": "1+1"}, result_text="2")
        link = authoring.attach_asset(s, blobs, task_id, _png(), role="artifact", step_id=first.id)
        cp = authoring.add_checkpoint(s, task_id, "cp1", axis="V", step_id=first.id)
        ids = first.id, link.id, cp.id
    with session_scope(engine, "ann") as s:
        snapshot = authoring.delete_step(s, must(ids[0]))
    with session_scope(engine, "ann") as s:
        restored = authoring.restore_step(s, snapshot)
        new_id = restored.id
    with session_scope(engine) as s:
        step = s.get(ReferenceStep, new_id)
        assert (
            must(step).ordinal,
            must(step).tool_name,
            must(step).result,
            must(step).result_text,
            must(step).meta,
        ) == (
            snapshot["ordinal"],
            "OCR",
            {"text": "58"},
            "58",
            {"elapsed": 1.5},
        )
        assert must(s.get(TaskAsset, ids[1])).step_id == new_id
        assert must(s.get(Checkpoint, ids[2])).step_id == new_id
        chain = authoring.steps_of(s, task_id)
        assert chain[snapshot["ordinal"]].id == new_id and chain[snapshot["ordinal"] + 1].tool_name == "Calculator"


def test_the_final_answer_cannot_move_above_tool_steps(engine, task_id):
    """Issue 16 item 8: moving the final answer up (or a tool step below it) was accepted."""
    with session_scope(engine, "ann") as s:
        authoring.add_step(s, task_id, tool_name="Calculator", tool_args={"expression": "1+1"}, result_text="2")
        final = next((x for x in authoring.steps_of(s, task_id) if x.is_final), None) or authoring.add_step(
            s, task_id, final_answer="2"
        )
        tool = authoring.steps_of(s, task_id)[0]
        final_id, tool_id, before = final.id, tool.id, [x.id for x in authoring.steps_of(s, task_id)]
    for step_id, to in ((final_id, 0), (tool_id, len(before) - 1)):
        with pytest.raises(authoring.AuthoringError, match="final answer"):
            with session_scope(engine, "ann") as s:
                authoring.move_step(s, must(step_id), to)
    with session_scope(engine) as s:
        assert [x.id for x in authoring.steps_of(s, task_id)] == before


def test_history_shows_step_checkpoint_and_image_changes(engine, blobs, task_id):
    """Issue 16 item 8: the task's history listed only edits of the task row itself."""
    from tui.data import task_history

    with session_scope(engine, "ann") as s:
        step = authoring.add_step(s, task_id, tool_name="Calculator", tool_args={"expression": "1+1"})
        authoring.attach_asset(s, blobs, task_id, _png(), role="artifact", step_id=step.id)
        authoring.add_checkpoint(s, task_id, "cpx", axis="V")
        step_id = step.id
    with session_scope(engine, "ann") as s:
        authoring.edit_step(s, must(step_id), thought="add them")
    with session_scope(engine) as s:
        actions = [h.action for h in task_history(s, task_id)]
    assert {"create step", "create image", "create checkpoint", "update step"} <= set(actions)
    assert actions.index("update step") < actions.index("create step")  # newest first


def _edit(engine, task_id, edit_session, **changes):
    with session_scope(engine, actor="ann") as s:
        if edit_session:
            s.info["edit_session"] = edit_session
        authoring.edit_task(s, task_id, **changes)


def test_one_editing_session_is_one_revision_however_many_saves(engine, task_id):
    for i in range(12):  # twelve typing pauses in one editor visit
        _edit(engine, task_id, "visit-1", query=f"How many days, take {i}?")
    assert _task(engine, task_id).revision == 2
    _edit(engine, task_id, "visit-2", query="How many days will it last?")  # the next visit
    assert _task(engine, task_id).revision == 3
    _edit(engine, task_id, None, category="logic")  # the CLI: every command is its own revision
    _edit(engine, task_id, None, category="counting")
    assert _task(engine, task_id).revision == 5
    with session_scope(engine) as s:
        audits = s.exec(
            select(AuditEvent).where(
                AuditEvent.entity == "task", AuditEvent.entity_id == task_id, AuditEvent.action == "update"
            )
        ).all()
        assert len(audits) == 15  # history still has every save, only the revision number groups them


def test_a_revision_a_run_or_rating_saw_is_never_extended(engine, task_id):
    """A trajectory remembers the revision it ran on: edits after it must make a new revision, even in
    the same editor visit, or scoring would read text the model never saw under that number."""
    from store.models import Benchmark, ModelEndpoint, Run, Trajectory

    _edit(engine, task_id, "visit-1", query="first wording?")
    rev = _task(engine, task_id).revision
    with session_scope(engine) as s:
        ep = ModelEndpoint(name="e", base_url="http://127.0.0.1:9/v1", model="m")
        s.add(ep)
        s.flush()
        bench_id = s.exec(select(Benchmark.id)).first()
        run = Run(name="r", benchmark_id=int(bench_id or 0), endpoint_id=ep.id, mode="atomic")
        s.add(run)
        s.flush()
        s.add(Trajectory(run_id=int(run.id or 0), task_id=task_id, task_revision=rev, status="done"))
    _edit(engine, task_id, "visit-1", query="second wording?")
    assert _task(engine, task_id).revision == rev + 1


def test_a_long_pause_starts_a_new_revision_and_review_status_still_drops(engine, task_id):
    from datetime import timedelta

    from store.models import utcnow

    with session_scope(engine, actor="ann") as s:
        authoring.set_status(s, task_id, "submitted")
    _edit(engine, task_id, "visit-1", query="reworded?")
    t = _task(engine, task_id)
    assert (t.revision, t.status) == (2, "draft")
    with session_scope(engine) as s:
        row = s.get(Task, task_id)
        assert row is not None
        row.updated_at = utcnow() - timedelta(hours=1)
        s.add(row)
    _edit(engine, task_id, "visit-1", query="reworded again?")
    assert _task(engine, task_id).revision == 3
