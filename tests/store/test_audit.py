"""Every edit of an authored row leaves who, what, before and after."""

from __future__ import annotations

from sqlmodel import select, col

from store import session_scope
from store.models import AuditEvent, Benchmark, HumanRating, Annotator, Task
from tests.support.must import must


def _events(engine, entity):
    with session_scope(engine) as s:
        return s.exec(select(AuditEvent).where(AuditEvent.entity == entity).order_by(col(AuditEvent.id))).all()


def test_create_update_delete_of_a_task_are_audited_with_actor(any_engine):
    with session_scope(any_engine, actor="ann") as s:
        b = Benchmark(name="b", source_format="chainmark")
        s.add(b)
        s.flush()
        t = Task(benchmark_id=must(b.id), source_id="1", query="old query")
        s.add(t)
    with session_scope(any_engine, actor="rev") as s:
        t = s.get(Task, t.id)
        t.query = "new query"
    with session_scope(any_engine, actor="admin") as s:
        s.delete(s.get(Task, t.id))
    ev = _events(any_engine, "task")
    assert [(e.action, e.actor) for e in ev] == [("create", "ann"), ("update", "rev"), ("delete", "admin")]
    assert ev[0].after["query"] == "old query" and ev[0].entity_id == t.id
    assert ev[1].before["query"] == "old query" and ev[1].after["query"] == "new query"
    assert ev[2].before["query"] == "new query" and ev[2].after is None


def test_ratings_are_audited_and_untouched_rows_are_not(any_engine):
    with session_scope(any_engine, actor="ann") as s:
        a = Annotator(name="ann")
        s.add(a)
        s.flush()
        r = HumanRating(annotator_id=must(a.id), target_kind="trajectory", target_id=1, scale="yes/no", value="yes")
        s.add(r)
    with session_scope(any_engine, actor="ann") as s:
        must(s.get(HumanRating, r.id)).value = "no"
        s.get(Annotator, a.id)  # loaded, not changed
    ev = _events(any_engine, "humanrating")
    assert [e.action for e in ev] == ["create", "update"]
    assert (ev[1].before["value"], ev[1].after["value"]) == ("yes", "no")
    assert _events(any_engine, "annotator") == []


def test_audit_names_the_os_user_when_user_is_unset(tmp_path, monkeypatch):
    """Issue 16 item 8: with ``$USER`` (and the other login variables) unset and no terminal, the
    audit used to say "system"; it names the OS user from the password database."""
    import os
    import pwd

    from store import make_engine
    from store.migrate import upgrade

    for var in ("CHAINMARK_USER", "USER", "LOGNAME", "LNAME", "USERNAME"):
        monkeypatch.delenv(var, raising=False)

    def no_terminal():
        raise OSError("no controlling terminal")

    monkeypatch.setattr(os, "getlogin", no_terminal)
    engine = make_engine(str(tmp_path / "who.db"))
    upgrade(engine)
    with session_scope(engine) as s:
        s.add(Benchmark(name="b", source_format="chainmark"))
        s.flush()
        s.add(Task(benchmark_id=must(s.exec(select(Benchmark)).one().id), source_id="1", query="q"))
    (event,) = _events(engine, "task")
    assert event.actor == pwd.getpwuid(os.getuid()).pw_name != "system"
    engine.dispose()
