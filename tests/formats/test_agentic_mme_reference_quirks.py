"""Agentic-MME run folders scored the way the reference evaluator scores them (issue 15, items 2 and 3).

Expected values are what ``evaluation/eval_runs_search.py`` of the reference repository printed for
these same folders when run from a checkout (outside the project)."""

from __future__ import annotations

import json
from pathlib import Path

from annotation.formats.api import import_dataset, import_run
from evaluation.scoring.results import ScoreResult
from evaluation.scoring.runner import score_run
from tests.formats.fixtures import _write, mme_record, png, write_mme, write_mme_run


def _score(engine, run_id: int, mode: str = "faithful") -> ScoreResult:
    return score_run(engine, run_id, mode=mode, embedder="hashing", write=False)


def _by_source(res: ScoreResult) -> dict:
    return {row["source_id"]: row for row in res.per_item}


def test_incomplete_run_folder_is_a_failed_trajectory_in_every_overall_denominator(
    engine, blobs, tmp_path: Path
) -> None:
    write_mme(tmp_path / "src", n=3, multi=None)
    import_dataset(engine, blobs, "agentic-mme", tmp_path / "src")
    runs = tmp_path / "runs"
    write_mme_run(runs, "0000")
    _write(runs / "0001", "orig.png", png(11))  # the run died: only the copied image
    _write(runs / "0002", "tool_use_list.json", b"[]")  # neither run_meta.json nor orig.png
    summary = import_run(engine, blobs, "agentic-mme", runs, "agentic-mme")
    assert summary.trajectories == 2
    assert summary.notes[0].startswith("1 incomplete run(s) without run_meta.json imported as failed trajectories")
    assert "0001" in summary.notes[0] and "skipped, as the reference evaluator skips them: 0002" in summary.notes[1]

    res = _score(engine, summary.run_id)
    rows = _by_source(res)
    gone = rows["0001"]
    assert gone["incomplete_run"] and gone["level"] is None
    assert (gone["scores"]["S"], gone["scores"]["V"], gone["scores"]["PQS"]) == (0.0, 0.0, 0.0)
    assert gone["final_answer_accuracy"]["correct"] is False and gone["efficiency"]["effective_tool_calls"] == 0
    m = res.metrics
    assert m["total_cases"] == 2 and m["total_s_cases"] == 2 and m["total_v_cases"] == 2  # S=V=0 count
    assert m["Acc"] == 50.0  # 0000 answers 100 (contains); 0001 is wrong
    assert m["avg_tool_calls_per_case"] == 1.0
    assert list(res.by_category) == ["L1"] and res.by_category["L1"]["total_cases"] == 1
    over = m["overthink"]
    assert over["human_total_reference_calls"] == 2 and over["human_total_s_checkpoints"] == 1
    assert over["cases_optimal"] == 1 and over["pct_optimal"] == 50.0
    assert any("1 incomplete run(s)" in n for n in res.notes)
    # fixed mode keeps scoring the task's checkpoints (nothing to be faithful to)
    assert _by_source(_score(engine, summary.run_id, "fixed"))["0001"]["level"] == "L2"


def _verifier_task(ident: str, verifier: str) -> dict:
    rec = mme_record(0)
    rec["task_id"] = f"verifier_{ident}"
    rec["process_evaluation"] = {
        "checkpoints": [{"id": "V1", "axis": "V", "tools": [], "code_check": {"verifier": verifier}}]
    }
    return rec


def test_verifiers_metrics_json_and_reference_module_names(engine, blobs, tmp_path: Path) -> None:
    cases = {
        "0000": ("require_metrics:psnr", '{"psnr": 31.5}'),
        "0001": ("require_metrics:psnr", '{"ssim": 1}'),
        "0002": ("require_metrics", "{psnr: broken"),
        "0003": ("require_metrics_json", '{"a": 1}'),
        "0004": ("example_custom_verifier", None),
        "0005": ("require_op", None),
        "0006": ("require_metrics", '["psnr"]'),
        "0007": ("Path", None),
        "0008": ("PRIMITIVES", None),
    }
    src, runs = tmp_path / "src", tmp_path / "runs"
    for ident, (verifier, metrics) in cases.items():
        _write(src, f"json/{ident}.json", json.dumps(_verifier_task(ident, verifier)).encode())
        _write(src, f"images/image_{ident}.png", png(5))
        d = write_mme_run(runs, ident)  # holds one crop and one search
        if metrics is not None:
            _write(d, "tool_images/metrics.json", metrics.encode())
    import_dataset(engine, blobs, "agentic-mme", src)
    run_id = import_run(engine, blobs, "agentic-mme", runs, "agentic-mme").run_id

    res = _score(engine, run_id)
    rows = _by_source(res)
    v = {k: r["scores"]["V"] for k, r in rows.items() if "scores" in r}
    assert v == {"0000": 1.0, "0001": 0.0, "0002": 0.0, "0003": 1.0, "0004": 1.0, "0007": 1.0, "0008": 0.0}
    assert rows["0004"]["checkpoint_results"]["V1"]["code_check"]["detail"]["op"] == "crop"
    # require_op without ":op" is the module's function called with the wrong arguments, and a list in
    # metrics.json has no keys: the reference raises on both runs and leaves them out of every number.
    assert {k for k, r in rows.items() if "dropped" in r} == {"0005", "0006"}
    assert res.metrics["total_cases"] == 7 and any("2 trajectorie(s) left out" in n for n in res.notes)
    # the reference never finds the tasks of its search checkpoints (it looks under run_meta["task_json"])
    assert res.metrics["search_checkpoint_pass_rate"] == 0.0

    fixed = _by_source(_score(engine, run_id, "fixed"))
    assert fixed["0005"]["scores"]["V"] == 0.0 and fixed["0007"]["scores"]["V"] == 0.0
