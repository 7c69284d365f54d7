"""``chainmark conformance agentic-mme`` without the real checkout: a stand-in ``evaluation/eval_runs_search.py``
(our own few lines, the reference's arguments and output place) shows the CLI's work folder reaches it: the
exported run folders as ``--runs_dir``, each run_meta's task file found in the exported tasks after the
original folder is gone, and a judge endpoint that answers with empty text."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from click.testing import CliRunner

from bench.conformance.gen_agentic_mme import sets

EVALUATOR = """
import argparse, json, os, urllib.request
from pathlib import Path

ap = argparse.ArgumentParser()
for a in ("--runs_dir", "--judge_model", "--api_key", "--base_url"):
    ap.add_argument(a)
args = ap.parse_args()
req = urllib.request.Request(args.base_url + "/chat/completions", method="POST",
                             data=json.dumps({"model": args.judge_model, "messages": []}).encode(),
                             headers={"Content-Type": "application/json"})
said = json.load(urllib.request.urlopen(req))["choices"][0]["message"]["content"]
assert said == "", said
cases, reference_calls = 0, 0
for d in sorted(Path(args.runs_dir).iterdir()):
    if (d / "run_meta.json").is_file():
        meta = json.loads((d / "run_meta.json").read_text(encoding="utf-8"))
        task = json.loads(Path(meta["task_file"]).read_text(encoding="utf-8"))
        cases += 1
        reference_calls += task["process_evaluation"]["efficiency"]["reference_tool_calls"]
out = Path("runs") / "scores" / "atomic_standin_scored.json"
out.parent.mkdir(parents=True, exist_ok=True)
out.write_text(json.dumps({"overall_scores": {"total_cases": cases}, "count": cases, "results": [],
                           "overthink_analysis": {"human_total_reference_calls": reference_calls}}))
"""


def test_conformance_cli_hands_the_run_folders_and_tasks_to_the_agentic_mme_evaluator(db_path, tmp_path: Path) -> None:
    from tui.cli import cli

    (s,) = sets(tmp_path / "gen", 12)
    tasks = [json.loads(p.read_text(encoding="utf-8")) for p in sorted((s["dataset"] / "json").glob("*.json"))]
    scored = [t for t, d in zip(tasks, sorted(s["run"].iterdir())) if (d / "run_meta.json").is_file()]
    runner = CliRunner()
    env = {"CHAINMARK_DB": str(db_path)}
    assert runner.invoke(cli, ["import", "agentic-mme", str(s["dataset"])], env=env).exit_code == 0
    out = runner.invoke(cli, ["import-run", "agentic-mme", str(s["run"]), "-b", "agentic-mme", "--json"], env=env)
    assert out.exit_code == 0, out.output
    run_id = json.loads(out.output)["run_id"]
    shutil.rmtree(tmp_path / "gen")  # the run_meta files name task files that are gone now
    ref = tmp_path / "ref"
    (ref / "evaluation").mkdir(parents=True)
    (ref / "evaluation" / "eval_runs_search.py").write_text(EVALUATOR, encoding="utf-8")
    out = runner.invoke(
        cli,
        ["conformance", "agentic-mme", str(run_id), "--reference", str(ref), "--python", sys.executable, "--json"],
        env=env,
    )
    assert out.exit_code == 0, out.output[-3000:]
    report = json.loads(out.output)
    assert report["ok"]
    assert any("scored without the run's judge verdicts" in n for n in report["notes"])
    expected_calls = sum(t["process_evaluation"]["efficiency"]["reference_tool_calls"] for t in scored)
    assert {m["name"]: m["reference"] for m in report["metrics"]} == {
        "total_cases": len(scored),
        "count": len(scored),
        "overthink.human_total_reference_calls": expected_calls,
    }
