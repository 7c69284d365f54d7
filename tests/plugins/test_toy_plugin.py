"""A benchmark is a plugin: a toy benchmark package installed into a temporary environment (its package
and ``.dist-info`` with the ``chainmark.benchmarks`` entry point on ``PYTHONPATH``) is found by import,
export, import-run, score, report, tools, judge templates, demo and help, in a fresh interpreter that
knows nothing else of it; without it on the path, none of those know "toy"."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support.toy_plugin import write_toy_data, write_toy_plugin

ROOT = Path(__file__).resolve().parents[2]

SESSION = """
import json, sys
from click.testing import CliRunner
from tui.cli import cli

db, commands = sys.argv[1], json.loads(sys.argv[2])
out = []
for args in commands:
    res = CliRunner().invoke(cli, ["--db", db, *args], terminal_width=120)
    out.append({"args": args, "code": res.exit_code, "output": res.output,
                "error": repr(res.exception) if res.exception and res.exit_code not in (0, 1, 2) else None})
print("RESULTS " + json.dumps(out))
"""


def _session(tmp_path: Path, commands: list[list[str]], *, with_plugin: bool) -> list[dict[str, Any]]:
    """Run chainmark commands in one fresh interpreter, the toy package installed or not."""
    site = write_toy_plugin(tmp_path / "site") if with_plugin else tmp_path / "empty-site"
    site.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHAINMARK_")}
    env["PYTHONPATH"] = os.pathsep.join([str(site), str(ROOT)])
    env["CHAINMARK_PLUGIN_CACHE"] = str(tmp_path / "plugin-cache.json")
    env["HOME"] = str(tmp_path)
    db = tmp_path / ("with.db" if with_plugin else "without.db")
    proc = subprocess.run(
        [sys.executable, "-c", SESSION, str(db), json.dumps(commands)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = next(x for x in proc.stdout.splitlines() if x.startswith("RESULTS "))
    return list(json.loads(line.removeprefix("RESULTS ")))


def _ok(result: dict[str, Any]) -> str:
    assert result["code"] == 0, (result["args"], result["output"], result["error"])
    return str(result["output"])


def test_an_installed_benchmark_plugin_is_found_everywhere(tmp_path: Path) -> None:
    data, run = write_toy_data(tmp_path)
    commands = [
        ["import", "toy", str(data)],  # 0
        ["import-run", "toy", str(run), "-b", "toy", "--name", "toy-run", "--json"],  # 1
        ["score", "1", "--json", "--embedder", "hashing", "--no-write"],  # 2
        ["report", "1", "--format", "csv", "--embedder", "hashing"],  # 3
        ["tools", "list", "--set", "toy", "--json"],  # 4
        ["tools", "run", "Shout", "--set", "toy", "--args", '{"text": "hello"}', "--no-db", "--json"],  # 5
        ["demo", "--json"],  # 6
        ["import", "--help"],  # 7
        ["benchmarks", "plugins"],  # 8
        ["benchmarks", "plugins", "toy"],  # 9
        ["judge", "--help"],  # 10
        ["export", "toy", str(tmp_path / "exported"), "-b", "toy", "--json"],  # 11
        ["benchmarks", "add", "mine", "--format", "toy"],  # 12
        ["benchmarks", "list", "--json"],  # 13
    ]
    results = _session(tmp_path, commands, with_plugin=True)
    assert "toy: 3 created" in _ok(results[0])
    assert json.loads(_ok(results[1]))["trajectories"] == 3

    scored = json.loads(_ok(results[2]))
    assert scored["profile"] == "toy"
    assert scored["metrics"]["ToyAcc"] == 2 / 3 * 100 and scored["metrics"]["answered"] == 3
    assert scored["by_category"] == {"colour": {"ToyAcc": 50.0}, "maths": {"ToyAcc": 100.0}}

    report = _ok(results[3])  # the descriptor's columns, in its order, and its per-category metric
    assert "model,run mode,scoring mode,embedder,ToyAcc,answered,pending judgements" in report
    assert "undeclared" not in report
    assert "# toy: ToyAcc by category" in report and "colour,maths" in report

    tools = json.loads(_ok(results[4]))
    assert [(t["set"], t["name"], t["kind"]) for t in tools] == [("toy", "Shout", "offline")]
    shouted = json.loads(_ok(results[5]))
    assert (shouted["ok"], shouted["text"]) == (True, "HELLO!")

    demo = json.loads(_ok(results[6]))["created"]
    assert list(demo) == [
        "demo-chainmark",
        "demo-gta",
        "demo-agentic-mme",
        "demo-vtc",
        "demo-isg",
        "demo-atp",
        "demo-toy",
    ]
    assert demo["demo-toy"] == 2

    assert "toy          Toy: one-line questions with one exact answer" in _ok(results[7])
    plugins = _ok(results[8])
    assert any(
        line.split()[:2] == ["toy", "toy,"] and line.rstrip().endswith("toybench") for line in plugins.splitlines()
    )
    assert "scored by exact match (ToyAcc)" in _ok(results[9])
    assert "toy-judge" in _ok(results[10])

    exported = json.loads(_ok(results[11]))
    assert exported["tasks"] == 3
    assert [json.loads(x)["answer"] for x in (tmp_path / "exported" / "data.jsonl").read_text().splitlines()] == [
        "blue",
        "green",
        "9",
    ]
    assert "format toy, tools toy" in _ok(results[12])
    rows = {b["name"]: b for b in json.loads(_ok(results[13]))}
    assert (rows["demo-toy"]["source_format"], rows["demo-toy"]["tool_set"], rows["demo-toy"]["tasks"]) == (
        "toy",
        "toy",
        2,
    )


def test_without_the_package_nothing_knows_the_toy_benchmark(tmp_path: Path) -> None:
    data, _ = write_toy_data(tmp_path)
    results = _session(
        tmp_path,
        [["import", "toy", str(data)], ["import", "--help"], ["tools", "list", "--set", "toy"], ["demo", "--json"]],
        with_plugin=False,
    )
    assert (
        results[0]["code"] == 2
        and "'toy' is not one of 'chainmark', 'gta', 'agentic-mme', 'vtc', 'isg', 'atp', 'hf'" in (results[0]["output"])
    )
    assert "toy" not in _ok(results[1]).split("Formats:")[1]
    assert results[2]["code"] == 2
    assert "demo-toy" not in json.loads(_ok(results[3]))["created"]
