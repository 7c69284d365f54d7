"""VTC import leniency as the reference evaluator reads its files (issue 15, item 10)."""

from __future__ import annotations

import json
from pathlib import Path

from sqlmodel import Session, select

from annotation.formats.api import import_dataset, import_run
from store.models import Task, Trajectory
from tests.formats.fixtures import write_vtc
from tests.support.must import must


def test_importing_one_tsv_imports_that_table_only(engine, blobs, tmp_path: Path) -> None:
    main, _ = write_vtc(tmp_path / "src")
    summary = import_dataset(engine, blobs, "vtc", tmp_path / "src" / "VTC-Bench.tsv")
    assert summary.created == len(main)
    assert any("imported VTC-Bench.tsv only" in n for n in summary.notes)
    with Session(engine) as s:
        tasks = s.exec(select(Task)).all()
        assert sorted(t.source_id for t in tasks) == sorted(r["id"] for r in main)
        assert all(list(must(t.source_record)) == ["VTC-Bench.tsv"] for t in tasks)


def test_results_file_read_as_the_reference_reads_it(engine, blobs, tmp_path: Path) -> None:
    write_vtc(tmp_path / "src")
    import_dataset(engine, blobs, "vtc", tmp_path / "src")
    res = tmp_path / "res"
    res.mkdir()
    lines = [
        {"item_id": "counting_1", "agent_answer": "A"},
        {"item_id": "nowhere_9", "agent_answer": "x"},
        {"item_id": "counting_1", "agent_answer": "B"},
        {"item_id": "ocr_1", "agent_answer": 42},
    ]
    (res / "results_1.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    summary = import_run(engine, blobs, "vtc", res, "vtc")
    notes = "\n".join(summary.notes)
    assert "'nowhere_9'; ignored" in notes
    assert "a second prediction for 'counting_1'" in notes
    assert "agent_answer 42 is a int" in notes
    assert "3 task(s) have no prediction" in notes
    with Session(engine) as s:
        rows = s.exec(select(Trajectory, Task).join(Task).where(Trajectory.run_id == summary.run_id)).all()
        by_id = {t.source_id: tr for tr, t in rows}
    assert by_id["counting_1"].final_answer == "B"  # the last one counts
    assert by_id["ocr_1"].final_answer == "42" and by_id["ocr_1"].native["result"]["agent_answer"] == 42
    assert by_id["math_1"].status == "failed" and by_id["math_1"].error == "no prediction in the file"
