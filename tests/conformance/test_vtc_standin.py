"""``chainmark conformance vtc`` without the real checkout: a stand-in laid out like VTC-Bench (our own few
lines at the same paths, module and class names: ``vlmeval.dataset.image_vqa.VTCBenchDataset``, ``vlmeval.smp``,
``vlmeval.api.gpt``) shows the CLI's work folder reaches the scorer: the task table from the sibling
``dataset/`` export, the predictions from the run export, every task's rule score and the category rates."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from bench.conformance.gen_vtc import COLUMNS, tiny_jpeg

IMAGE_VQA = """
import pandas as pd

class VTCBenchDataset:
    def _evaluate_single_item(self, row):
        return 1.0 if str(row["prediction"]).strip() == str(row["answer"]).strip() else 0.0

    def evaluate(self, sheet, **kwargs):
        from vlmeval.smp import load
        data = load(sheet)
        data["score"] = [self._evaluate_single_item(r) for _, r in data.iterrows()]
        out = {"Overall": [data["score"].mean() * 100]}
        for cat, rows in data.groupby("category"):
            out[cat] = [rows["score"].mean() * 100]
        return pd.DataFrame(out)
"""
SMP = """
import pandas as pd

def dump(df, path):
    df.to_json(path, orient="records")

def load(path):
    return pd.read_json(path, orient="records", dtype=False)
"""
GPT = "class OpenAIWrapper:\n    pass\n"
TASKS = [
    ("ocr_1", "ocr", "A", "A"),
    ("ocr_2", "ocr", "B", "zzz"),
    ("spatial_3", "spatial", "Paris", "Paris"),
    ("spatial_4", "spatial", "7", "7"),
    ("spatial_5", "spatial", "C", "zzz"),
]


def standin(root: Path) -> Path:
    pkg = root / "eval" / "eval" / "VLMEvalKit" / "vlmeval"
    for rel, text in {"dataset/image_vqa.py": IMAGE_VQA, "smp.py": SMP, "api/gpt.py": GPT}.items():
        (pkg / rel).parent.mkdir(parents=True, exist_ok=True)
        (pkg / rel).write_text(text, encoding="utf-8")
    return root


def dataset(out: Path) -> tuple[Path, Path]:
    rows = []
    for n, (ident, cat, answer, _) in enumerate(TASKS):
        image = f"images/{cat}/{ident}.jpg"
        (out / image).parent.mkdir(parents=True, exist_ok=True)
        (out / image).write_bytes(tiny_jpeg(n))
        opts = ["alpha", "beta", "gamma", "delta"] if len(answer) == 1 and answer.isalpha() else [""] * 4
        row = {
            "index": str(n + 1),
            "id": ident,
            "category": cat,
            "image": image,
            "question": "Which?",
            "answer": answer,
            **dict(zip("ABCD", opts)),
            "model_tools_gt": json.dumps(["Crop"]),
        }
        rows.append("\t".join(row[c] for c in COLUMNS))
    (out / "VTC-Bench_GTToolChain.tsv").write_text("\n".join(["\t".join(COLUMNS), *rows]) + "\n", encoding="utf-8")
    preds = out / "results_standin.jsonl"
    preds.write_text(
        "".join(
            json.dumps({"item_id": ident, "agent_answer": pred, "category": cat}) + "\n"
            for ident, cat, _, pred in TASKS
        ),
        encoding="utf-8",
    )
    return out, preds


def test_conformance_cli_hands_the_dataset_and_run_exports_to_the_vtc_scorer(db_path, tmp_path: Path) -> None:
    import sys

    # The stand-in scorer runs in this Python and reads its tables with pandas, as VLMEvalKit does;
    # pandas comes with the `interop` extra (through datasets), not with chainmark or the `test` extra.
    pytest.importorskip("pandas", reason="the VTC stand-in scorer needs pandas (pip install -e '.[interop]')")

    from tui.cli import cli

    data, preds = dataset(tmp_path / "src")
    runner = CliRunner()
    env = {"CHAINMARK_DB": str(db_path)}
    assert runner.invoke(cli, ["import", "vtc", str(data)], env=env).exit_code == 0
    out = runner.invoke(cli, ["import-run", "vtc", str(preds), "-b", "vtc", "--json"], env=env)
    assert out.exit_code == 0, out.output
    run_id = json.loads(out.output)["run_id"]
    work = tmp_path / "work"
    out = runner.invoke(
        cli,
        [
            "conformance",
            "vtc",
            str(run_id),
            "--reference",
            str(standin(tmp_path / "ref")),
            "--python",
            sys.executable,
            "--keep",
            str(work),
            "--json",
        ],
        env=env,
    )
    assert out.exit_code == 0, out.output[-3000:]
    report = json.loads(out.output)
    assert report["ok"]
    assert {m["name"]: m["reference"] for m in report["metrics"]} == {
        "APR": 60.0,
        "APR[ocr]": 50.0,
        "APR[spatial]": 2 / 3 * 100,
    }
    assert report["per_metric_items"] == {"rule": {"equal": 5, "different": 0}, "final": {"equal": 5, "different": 0}}
    assert (work / "dataset" / "VTC-Bench_GTToolChain.tsv").is_file()  # the table came from the dataset export
    assert not list((work / "run").glob("*.tsv"))


def test_a_folder_that_is_not_the_checkout_is_reported_not_crashed(db_path, tmp_path: Path) -> None:
    from tui.cli import cli

    data, preds = dataset(tmp_path / "src")
    runner = CliRunner()
    env = {"CHAINMARK_DB": str(db_path)}
    assert runner.invoke(cli, ["import", "vtc", str(data)], env=env).exit_code == 0
    assert runner.invoke(cli, ["import-run", "vtc", str(preds), "-b", "vtc"], env=env).exit_code == 0
    (tmp_path / "empty").mkdir()
    out = runner.invoke(cli, ["conformance", "vtc", "1", "--reference", str(tmp_path / "empty")], env=env)
    assert out.exit_code == 1
    assert "is not a VTC-Bench checkout" in out.output and "internal error" not in out.output
