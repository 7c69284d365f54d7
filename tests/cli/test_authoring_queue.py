"""An annotator's authoring queue (issue 16, "an annotator's loop"): tasks are assigned by id or by
benchmark, the queue lists what is still to do first, and a submitted task counts as done."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.test_cli import run


def _setup(db: Path) -> list[int]:
    run(db, "benchmarks", "add", "receipts", "--format", "gta")
    run(db, "annotators", "add", "ann")
    return [int(run(db, "tasks", "add", "-b", "receipts", "-q", f"Question {i}?").output) for i in range(4)]


def test_assign_by_id_and_by_benchmark_and_the_queue_puts_work_to_do_first(tmp_path: Path) -> None:
    db = tmp_path / "q.db"
    ids = _setup(db)
    out = json.loads(run(db, "tasks", "assign", str(ids[2]), str(ids[0]), "--to", "ann", "--json").output)
    assert out == {"annotator": "ann", "assigned": [ids[2], ids[0]], "already": 0}
    out = json.loads(
        run(db, "tasks", "assign", "--benchmark", "receipts", "--limit", "3", "--to", "ann", "--json").output
    )
    assert out["assigned"] == [ids[1]] and out["already"] == 2
    run(db, "tasks", "edit", str(ids[0]), "--answer", '{"kind": "exact", "value": "4"}')
    run(db, "tasks", "status", str(ids[0]), "submitted")
    queue = json.loads(run(db, "tasks", "queue", "--to", "ann", "--json").output)
    assert [(t["id"], t["to_do"]) for t in queue["tasks"]] == [(ids[1], True), (ids[2], True), (ids[0], False)]
    assert queue["to_do"] == 2
    text = run(db, "tasks", "queue", "--to", "ann").output
    assert text.splitlines()[0] == "ann: 2 of 3 assigned tasks to do"
    assert json.loads(run(db, "tasks", "unassign", str(ids[2]), "--to", "ann", "--json").output)["removed"] == 1
    assert [t["id"] for t in json.loads(run(db, "tasks", "queue", "--to", "ann", "--json").output)["tasks"]] == [
        ids[1],
        ids[0],
    ]


def test_unknown_tasks_and_people_are_refused_and_nothing_is_assigned(tmp_path: Path) -> None:
    db = tmp_path / "q.db"
    ids = _setup(db)
    bad = run(db, "tasks", "assign", str(ids[0]), "999", "--to", "ann", ok=False)
    assert bad.exit_code != 0 and "no task with id 999" in bad.output
    bad = run(db, "tasks", "assign", str(ids[0]), "--to", "nobody", ok=False)
    assert bad.exit_code != 0 and "no annotator named 'nobody'" in bad.output
    assert json.loads(run(db, "tasks", "queue", "--to", "ann", "--json").output)["tasks"] == []
    # the default queue is the acting user's own ("--as tester" in these tests)
    run(db, "annotators", "add", "tester")
    run(db, "tasks", "assign", str(ids[3]), "--to", "tester")
    assert json.loads(run(db, "tasks", "queue", "--json").output)["annotator"] == "tester"
