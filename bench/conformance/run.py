"""The differential conformance bench: generate each benchmark's set, import and score it with chainmark,
run the reference evaluator from a checkout, print one table.

    python bench/conformance/run.py --reference gta=/path/to/GTA [--reference isg=…] [-n 300] [--python [BENCH=]PY]

``--python PY`` runs every reference with PY; ``--python vtc=PY`` only VTC's (repeatable: each checkout may
have its own virtualenv).

Each ``bench/conformance/gen_<benchmark>.py`` offers ``sets(out, n) -> [{"label", "format", "dataset", "run",
"options", "judges"?}]``; a benchmark runs when its ``--reference`` is given. ``judges`` (``{"names": [...],
"reply": fn(messages) -> str}``) are asked through a scripted OpenAI-compatible server before the check.
Everything goes into a throwaway database.
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
        if s.get("judges"):
            ask_judges(runner, env, run_id, s["judges"])
        cmd = ["conformance", bench, str(run_id), "--reference", str(reference), "--json", "--embedder", embedder]
        if python:
            cmd += ["--python", python]
        out = runner.invoke(cli, cmd, env=env)
        if "{" not in out.output:
            raise SystemExit(f"{bench}/{s['label']}: conformance printed no report: {out.output}{out.exception!r}")
        report = json.loads(out.output[out.output.index("{") :])
        metrics_equal = sum(m["equal"] for m in report["metrics"])
        rows.append(
            [
                bench,
                s["label"],
                len({d for d in report.get("per_metric_items") or {}}),
                report["items_compared"],
                report["items_equal"],
                report["items_compared"] - report["items_equal"],
                f"{metrics_equal}/{len(report['metrics'])}",
                "yes" if report["ok"] else "NO",
            ]
        )
        per_metric = ", ".join(
            f"{k} {v['equal']}/{v['equal'] + v['different']}"
            for k, v in sorted((report.get("per_metric_items") or {}).items())
        )
        print(f"  {bench}/{s['label']}: per-item equal: {per_metric}", file=sys.stderr)
        for d in (report.get("items") or [])[:10]:
            print(
                f"  {bench}/{s['label']}: item {d['item_id']} {d['metric']}: chainmark {d['ours']!r}, "
                f"reference {d['reference']!r}",
                file=sys.stderr,
            )
        for m in report.get("metrics") or []:
            if not m["equal"]:
                print(
                    f"  {bench}/{s['label']}: metric {m['name']}: chainmark {m['ours']!r}, reference "
                    f"{m['reference']!r}",
                    file=sys.stderr,
                )
        for note in report.get("notes") or []:
            print(f"  {bench}/{s['label']}: {note}", file=sys.stderr)
    return rows


def ask_judges(runner: CliRunner, env: dict[str, str], run_id: int, judges: dict) -> None:
    """A set's judges answer from its scripted ``reply(messages) -> str`` over real HTTP; the reference later
    gets the very same replies (the conformance check replays chainmark's verdicts to it)."""
    from tests.support.scripted_openai import ScriptedOpenAI, text
    from tui.cli import cli

    with ScriptedOpenAI(handler=lambda req: text(judges["reply"](req.messages))) as server:
        out = runner.invoke(
            cli,
            ["endpoints", "add", "scripted-judge", "--base-url", server.base_url, "-m", "scripted", "--replace"],
            env=env,
        )
        assert out.exit_code == 0, out.output
        for name in judges["names"]:
            out = runner.invoke(cli, ["judge", str(run_id), "--judge", name, "--endpoint", "scripted-judge"], env=env)
            assert out.exit_code == 0, out.output
            print(f"  {name}: {out.output.strip()}", file=sys.stderr)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reference", action="append", default=[], metavar="BENCH=PATH", required=True)
    ap.add_argument("-n", type=int, default=300)
    ap.add_argument(
        "--python",
        action="append",
        default=[],
        metavar="[BENCH=]PY",
        help="Python for the reference evaluators, or for one (default chainmark's)",
    )
    ap.add_argument("--embedder", default="minilm")
    args = ap.parse_args()
    from tui.context import table

    pythons = dict(p.partition("=")[::2] if "=" in p else ("", p) for p in args.python)
    rows = []
    with tempfile.TemporaryDirectory(prefix="chainmark-conformance-bench-") as tmp:
        for spec in args.reference:
            bench, _, path = spec.partition("=")
            python = pythons.get(bench) or pythons.get("")
            rows += run_benchmark(bench, Path(path), args.n, python, args.embedder, Path(tmp))
    print(
        table(
            rows, ["benchmark", "set", "per-item metrics", "item values", "equal", "different", "metrics equal", "ok"]
        )
    )


if __name__ == "__main__":
    main()
