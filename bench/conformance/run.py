"""The differential conformance bench: generate each benchmark's set, import and score it with chainmark,
run the reference evaluator from a checkout, print one table.

    python bench/conformance/run.py --reference gta=/path/to/GTA [--reference isg=…] [-n 300] [--python PY]

Each ``bench/conformance/gen_<benchmark>.py`` offers ``sets(out, n) -> [{"label", "format", "dataset", "run",
"options"}]``; a benchmark runs when its ``--reference`` is given. Everything goes into a throwaway database.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import tempfile
from pathlib import Path

from click.testing import CliRunner

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def run_benchmark(bench: str, reference: Path, n: int, python: str | None, embedder: str, work: Path) -> list[list]:
    from tui.cli import cli

    gen = importlib.import_module(f"bench.conformance.gen_{bench.replace('-', '_')}")
    rows = []
    for k, s in enumerate(gen.sets(work / bench / "gen", n)):
        env = {"CHAINMARK_DB": str(work / bench / f"{s['label']}.db")}
        runner = CliRunner()
        out = runner.invoke(cli, ["import", s["format"], str(s["dataset"])], env=env)
        assert out.exit_code == 0, out.output
        args = ["import-run", s["format"], str(s["run"]), "-b", s["format"], "--json"]
        for key, value in (s.get("options") or {}).items():
            args += [f"--{key.replace('_', '-')}"] + ([] if value is True else [str(value)])
        out = runner.invoke(cli, args, env=env)
        assert out.exit_code == 0, out.output
        run_id = json.loads(out.output)["run_id"]
        cmd = ["conformance", bench, str(run_id), "--reference", str(reference), "--json", "--embedder", embedder]
        if python:
            cmd += ["--python", python]
        out = runner.invoke(cli, cmd, env=env)
        report = json.loads(out.output[out.output.index("{"):])
        metrics_equal = sum(m["equal"] for m in report["metrics"])
        rows.append([bench, s["label"], len({d for d in report.get("per_metric_items") or {}}),
                     report["items_compared"], report["items_equal"], report["items_compared"] - report["items_equal"],
                     f"{metrics_equal}/{len(report['metrics'])}", "yes" if report["ok"] else "NO"])
        for note in report.get("notes") or []:
            print(f"  {bench}/{s['label']}: {note}", file=sys.stderr)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reference", action="append", default=[], metavar="BENCH=PATH", required=True)
    ap.add_argument("-n", type=int, default=300)
    ap.add_argument("--python", default=None, help="Python for the reference evaluators (default chainmark's)")
    ap.add_argument("--embedder", default="minilm")
    args = ap.parse_args()
    from tui.context import table

    rows = []
    with tempfile.TemporaryDirectory(prefix="chainmark-conformance-bench-") as tmp:
        for spec in args.reference:
            bench, _, path = spec.partition("=")
            rows += run_benchmark(bench, Path(path), args.n, args.python, args.embedder, Path(tmp))
    print(table(rows, ["benchmark", "set", "per-item metrics", "item values", "equal", "different",
                       "metrics equal", "ok"]))


if __name__ == "__main__":
    main()
