"""GTA against OpenCompass's own evaluator, run from a checkout: set ``CHAINMARK_REFERENCE_GTA`` to the
open-compass/GTA checkout (and optionally ``CHAINMARK_REFERENCE_PYTHON``); skipped otherwise."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from annotation.formats.api import export_dataset, export_run, import_dataset, import_run
from bench.conformance.gen_gta import generate
from evaluation.benchmarks.gta import reference_conformance
from evaluation.conformance import compare, ours_view
from evaluation.scoring.runner import score_run
from tests.conformance import test_gta_quirks as quirks
from tests.support.must import must

REFERENCE = os.environ.get("CHAINMARK_REFERENCE_GTA")
pytestmark = pytest.mark.skipif(
    not REFERENCE, reason="CHAINMARK_REFERENCE_GTA (a checkout of open-compass/GTA) is not set"
)


@pytest.mark.parametrize("layout", ["step", "e2e"])
def test_generated_set_scores_equal_the_reference_per_item(db_path, tmp_path: Path, layout: str) -> None:
    from tui.cli import cli

    paths = generate(tmp_path / "gen", n=300)
    runner = CliRunner()
    env = {"CHAINMARK_DB": str(db_path)}
    assert runner.invoke(cli, ["import", "gta", str(paths["dataset"])], env=env).exit_code == 0
    assert runner.invoke(cli, ["import-run", "gta", str(paths[layout]), "-b", "gta"], env=env).exit_code == 0
    out = runner.invoke(cli, ["conformance", "gta", "1", "--reference", must(REFERENCE), "--json"], env=env)
    report = json.loads(out.output)
    assert out.exit_code == 0, out.output[-2000:]
    assert report["ok"] and report["items_compared"] >= 300 * 8


def _check(engine, blobs, run_id: int, tmp_path: Path) -> dict:
    export_dataset(engine, blobs, "gta", "gta", tmp_path / "x" / "dataset")
    export_run(engine, blobs, "gta", run_id, tmp_path / "x" / "run")
    res = score_run(engine, run_id, mode="faithful", embedder="hashing", write=False)
    os.environ["CHAINMARK_CONFORMANCE_EMBEDDER"] = "hashing"
    try:
        ref = reference_conformance(
            tmp_path / "x" / "run",
            Path(must(REFERENCE)),
            os.environ.get("CHAINMARK_REFERENCE_PYTHON") or __import__("sys").executable,
        )
    finally:
        os.environ.pop("CHAINMARK_CONFORMANCE_EMBEDDER", None)
    report = compare("gta", ours_view("gta", res), ref)
    assert report.ok, (report.metrics, report.items[:5], report.notes)
    return ref["metrics"]


def test_quirk_values_are_the_reference_values(engine, blobs, tmp_path: Path) -> None:
    data = quirks.write_gta(tmp_path / "src", n=4)
    import_dataset(engine, blobs, "gta", tmp_path / "src")
    spellings = [
        f"{quirks.ABS}/image/image_0.jpg",
        "image/image_1.jpg",
        "wrong/image/image_2.jpg",
        "/tmp/image/image_3.jpg",
    ]
    preds = {}
    for i, spelled in enumerate(spellings):
        gold = quirks.gold_of(data[str(i)])
        turns = [dict(g) for g in gold]
        turns[0] = quirks.tc("OCR", {"image": spelled})
        preds[str(i)] = {"gold": gold, "prediction": turns}
    run = import_run(engine, blobs, "gta", quirks.step_file(tmp_path / "p.json", preds), "gta").run_id
    assert _check(engine, blobs, run, tmp_path / "a")["ArgAcc"] == pytest.approx(5 / 8 * 100)


def test_failed_tool_calls_of_an_own_run_count_in_the_reference(engine, blobs, tmp_path: Path) -> None:
    quirks.write_gta(tmp_path / "src", n=4)
    import_dataset(engine, blobs, "gta", tmp_path / "src")
    from store import events as ev

    def events(t):
        tool = "DrawBox" if t.source_id == "2" else "Calculator"
        args = {"image": "image/image_2.jpg", "bbox": "(1, 2, 3, 4)"} if tool == "DrawBox" else {"expression": "1+1"}
        return [
            (ev.TOOL_CALL, ev.tool_call("OCR", {"image": f"image/image_{t.source_id}.jpg"}, "c1"), False),
            (ev.TOOL_RESULT, ev.tool_result("OCR", "290 SOFTGELS", call_id="c1"), False),
            (ev.TOOL_CALL, ev.tool_call(tool, args, "c2"), False),
            (ev.TOOL_RESULT, ev.tool_result(tool, "", call_id="c2", ok=False, error="boom"), True),
            (ev.ANSWER, ev.answer("no idea"), False),
        ]

    run = quirks._own_e2e_run(engine, events)
    m = _check(engine, blobs, run, tmp_path / "b")
    assert (m["tool_call"], m["tool_call_error"], m["AnsAcc+I"]) == (8, 4, 0.0)


def test_a_benchmark_authored_from_the_cli_exports_as_the_reference_loader_reads_it(db_path, tmp_path: Path) -> None:
    """Authored tasks (image, OCR → Calculator chain recorded by running the tools) export as GTA the
    reference's own ``GTABenchDataset.load`` reads, and its evaluator scores a run on them as chainmark does."""
    from tests.cli.test_cli_authoring import receipt
    from tests.cli.test_cli import run
    from tests.formats.fixtures import gta_step_predictions

    db = db_path
    run(db, "benchmarks", "add", "receipts", "--format", "gta")
    for n, (total, twice) in enumerate([(58, 116), (21, 42)]):
        image = receipt(tmp_path / f"r{n}.png", f"TOTAL {total}")
        spec = json.dumps({"kind": "whitelist", "groups": [[str(twice)]]})
        task = json.loads(
            run(
                db,
                "tasks",
                "add",
                "-b",
                "receipts",
                "-q",
                "Twice the total?",
                "--answer",
                spec,
                "--image",
                str(image),
                "--json",
            ).stdout  # fmt: skip
        )["id"]
        run(db, "chain", "add", str(task), "OCR", "--args", '{"image": "image/image_0.png"}')
        run(db, "chain", "add", str(task), "Calculator", "--args", json.dumps({"expression": f"{total}*2"}))
        run(db, "chain", "final", str(task), str(twice))
    run(db, "export", "gta", str(tmp_path / "out"), "-b", "receipts")
    data = json.loads((tmp_path / "out" / "dataset.json").read_text())
    assert [r["tools"][0]["name"] for r in data.values()] == ["OCR", "OCR"]
    positional = dict(zip(map(str, range(len(data))), data.values()))  # OpenCompass zips predictions by position
    preds = gta_step_predictions(positional)
    preds_by_id = {key: preds[str(i)] for i, key in enumerate(data)}
    (tmp_path / "p.json").write_text(json.dumps(preds_by_id))
    run(db, "import-run", "gta", str(tmp_path / "p.json"), "-b", "receipts")
    out = run(db, "conformance", "gta", "1", "--reference", str(REFERENCE), "--embedder", "hashing", "--json", ok=False)
    report = json.loads(out.output)
    assert out.exit_code == 0 and report["ok"], out.output[-2000:]
