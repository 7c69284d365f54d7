"""A toy benchmark plugin, written as an installed package: the ``toybench`` package (descriptor, format
module, scoring profile, tool set, judge template, demo) and its ``.dist-info`` with the entry point,
in a folder that is then put on ``sys.path`` (``PYTHONPATH`` for a subprocess). Nothing of chainmark
names it: if chainmark finds it in a command, the command read the plugin registry."""

from __future__ import annotations

import json
from pathlib import Path

DIST = "toybench"
VERSION = "0.1.0"

FILES = {
    "toybench/__init__.py": '"""A toy benchmark for chainmark: questions with one exact answer."""\n',
    "toybench/plugin.py": '''
"""The descriptor chainmark finds through the entry point."""

from store.plugins import BenchmarkPlugin

BENCHMARK = BenchmarkPlugin(
    name="toy",
    summary="Toy: one-line questions with one exact answer",
    formats=("toy", "toy-bench"),
    format_module="toybench.fmt",
    profile="toybench.profile:PROFILE",
    tool_set="toy",
    tool_set_builder="toybench.tools:build",
    metrics=("ToyAcc", "answered"),
    category_metric="ToyAcc",
    judge_templates="toybench:judges",
    demo="toybench.demo:fill",
    demo_description="Toy questions for trying the plugin",
    guidelines="toybench:guidelines.md",
    help="Questions answered in one word; scored by exact match (ToyAcc) and the number answered.",
)
''',
    "toybench/fmt.py": '''
"""Toy format: data.jsonl lines {"id", "question", "answer", "category"}; predictions.jsonl lines
{"id", "prediction"}."""

from annotation.formats.base import DatasetSpec, TaskSpec, find_dataset_file, read_jsonl, write_jsonl
from annotation.formats.run_specs import EventSpec, RunSpec, TrajectorySpec
from store import events as ev

name = "toy"
source_format = "toy"
tool_set = "toy"
default_benchmark = "toy"


def _lines(path, file_name):
    file = find_dataset_file(path, (file_name,), f"toy {file_name}")
    return read_jsonl(file, path if path.is_dir() else file.parent)


def read(path):
    tasks = [
        TaskSpec(
            str(line["id"]),
            line,
            {
                "query": line["question"],
                "answer_spec": {"kind": "exact", "value": line["answer"]},
                "category": line.get("category"),
            },
        )
        for _, line in _lines(path, "data.jsonl")
    ]
    return DatasetSpec(tasks)


def write(bundles, settings, root, read_blob):
    lines = [
        {
            "id": b.task.source_id,
            "question": b.task.query,
            "answer": (b.task.answer_spec or {}).get("value"),
            "category": b.task.category,
        }
        for b in bundles
    ]
    return [write_jsonl(root, "data.jsonl", lines)]


def read_run(path):
    trajectories = [
        TrajectorySpec(
            str(line["id"]),
            f"line {n}",
            [EventSpec(ev.ANSWER, ev.answer(line["prediction"]))],
            final_answer=line["prediction"],
            native=line,
        )
        for n, line in _lines(path, "predictions.jsonl")
    ]
    return RunSpec("atomic", trajectories, {"layout": "toy-predictions"})


def write_run(run, path, read_blob):
    lines = [{"id": t.task.source_id, "prediction": t.trajectory.final_answer} for t in run.trajectories]
    return [write_jsonl(path, "predictions.jsonl", lines)]
''',
    "toybench/profile.py": '''
"""Toy scoring: exact match, case-insensitive, overall and per category."""

from evaluation.benchmarks.base import pct, result, usage_stats


def _hit(item):
    gold = str((item.task.get("answer_spec") or {}).get("value") or "")
    return item.final_answer().strip().lower() == gold.strip().lower()


class ToyProfile:
    name = "toy"
    formats = ("toy", "toy-bench")
    judges = ("toy-judge",)

    def score(self, items, ctx):
        hits = {it.trajectory["id"]: _hit(it) for it in items}
        by_category = {}
        for it in items:
            by_category.setdefault(it.task.get("category") or "none", []).append(hits[it.trajectory["id"]])
        return result(
            self.name,
            ctx,
            {
                "ToyAcc": pct(sum(hits.values()), len(items)),
                "answered": sum(1 for it in items if it.final_answer()),
                "undeclared": 7.0,
            },
            by_category={c: {"ToyAcc": pct(sum(v), len(v))} for c, v in by_category.items()},
            per_item=[
                {"trajectory_id": it.trajectory["id"], "item_id": it.task.get("source_id"), "hit": hits[it.trajectory["id"]]}
                for it in items
            ],
            usage=usage_stats(items),
        )


PROFILE = ToyProfile()
''',
    "toybench/tools.py": '''
"""Toy tool set: one offline tool."""

from evaluation.tools.result import ToolOutput
from evaluation.tools.toolset import Tool, ToolSet


def shout(args, ctx):
    return ToolOutput(text=args["text"].upper() + "!")


def build():
    tool = Tool(
        name="Shout",
        description="The text in capitals, with an exclamation mark.",
        parameters={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
        category="text",
        kind="offline",
        impl="toybench.tools:shout",
    )
    return ToolSet(name="toy", version="1", description="Toy tools", tools={"Shout": tool})
''',
    "toybench/demo.py": '''
"""The toy demo benchmark: two questions (building it again adds nothing)."""


def fill(b):
    for source_id, question, answer in (("t1", "Capital of France?", "Paris"), ("t2", "Two plus two?", "4")):
        if not b.exists(source_id):
            task = b.task(source_id, question, {"kind": "exact", "value": answer}, category="toy")
            b.step(task, "Shout", {"text": answer}, answer.upper() + "!", thought="Say it loudly.")
            b.answer(task, answer)
''',
    "toybench/guidelines.md": "# Toy guidelines\n\nOne word per answer.\n",
    "toybench/judges/toy-judge.v1.md": """---
parser: score_0_10
temperature: 0
---
### system
You grade toy answers.
### user
Question: {{question}}
Answer: {{answer}}
""",
}


def write_toy_plugin(site: Path) -> Path:
    """Write the package and its distribution metadata into ``site`` (a folder to put on sys.path)."""
    for rel, text in FILES.items():
        path = site / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text.lstrip("\n"), encoding="utf-8")
    info = site / f"{DIST}-{VERSION}.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {DIST}\nVersion: {VERSION}\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(
        "[chainmark.benchmarks]\ntoy = toybench.plugin:BENCHMARK\n", encoding="utf-8"
    )
    return site


def write_toy_data(folder: Path) -> tuple[Path, Path]:
    """A toy dataset (three questions in two categories) and a run's predictions (two right)."""
    data, run = folder / "data", folder / "run"
    data.mkdir(parents=True)
    run.mkdir(parents=True)
    questions = [
        {"id": "q1", "question": "Colour of the sky?", "answer": "blue", "category": "colour"},
        {"id": "q2", "question": "Colour of grass?", "answer": "green", "category": "colour"},
        {"id": "q3", "question": "Three times three?", "answer": "9", "category": "maths"},
    ]
    predictions = [
        {"id": "q1", "prediction": "Blue"},
        {"id": "q2", "prediction": "red"},
        {"id": "q3", "prediction": "9"},
    ]
    (data / "data.jsonl").write_text("".join(json.dumps(q) + "\n" for q in questions), encoding="utf-8")
    (run / "predictions.jsonl").write_text("".join(json.dumps(p) + "\n" for p in predictions), encoding="utf-8")
    return data, run
