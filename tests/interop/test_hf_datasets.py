"""`chainmark export hf` / `import hf`: a benchmark as a Hugging Face datasets folder, checked with the
`datasets` library itself (images come back as Image features), and read back into chainmark."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from sqlmodel import col, select

from store import session_scope
from store.blobs import sha256_of
from store.models import Asset, Benchmark, Task, TaskAsset
from tests.formats.fixtures import jpg, write_gta
from tests.interop.conftest import cli

pytestmark = pytest.mark.usefixtures("datasets")


@pytest.fixture(scope="module")
def datasets() -> Any:
    """Imported when a test here runs, not when the suite is collected (seconds, on every worker)."""
    return pytest.importorskip("datasets", reason="the `datasets` library comes with the 'interop' extra")


def _tasks(engine: Any, bench: str) -> dict[str, tuple[Any, list[str]]]:
    """source id → (task, [image sha256 in order])."""
    with session_scope(engine) as s:
        b = s.exec(select(Benchmark).where(Benchmark.name == bench)).one()
        out = {}
        for t in s.exec(select(Task).where(Task.benchmark_id == b.id)).all():
            shas = s.exec(
                select(Asset.sha256)
                .join(TaskAsset, col(TaskAsset.asset_id) == col(Asset.id))
                .where(TaskAsset.task_id == t.id)
                .order_by(col(TaskAsset.role), col(TaskAsset.ordinal))
            ).all()
            s.expunge(t)
            out[t.source_id] = (t, list(shas))
        return out


def test_export_loads_with_datasets_and_imports_back(tmp_path: Path, engine: Any, datasets: Any) -> None:
    db = tmp_path / "chainmark.db"
    data = write_gta(tmp_path / "gta", n=4)
    assert cli(db, "import", "gta", str(tmp_path / "gta")).exit_code == 0
    with session_scope(engine) as s:
        bench = s.exec(select(Benchmark).where(Benchmark.name == "gta")).one()
        bench.description = "General tool agents, four tasks."
        bench.settings = {**(bench.settings or {}), "license": "cc-by-4.0"}
    out = tmp_path / "hf"
    res = cli(db, "export", "hf", str(out), "--benchmark", "gta", "--json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["tasks"] == 4

    card = (out / "README.md").read_text()
    assert card.startswith('---\nlicense: "cc-by-4.0"\n') and "General tool agents, four tasks." in card
    assert "path: data/test-*.parquet" in card

    ds = datasets.load_dataset(str(out), split="test")
    assert ds.num_rows == 4
    assert isinstance(ds.features["images"].feature, datasets.Image)
    rows = {r["source_id"]: r for r in ds}
    assert set(rows) == set(data)
    row = rows["0"]
    assert row["query"] == data["0"]["dialogs"][0]["content"]
    image = row["images"][0]
    assert image.size == (20, 20)  # decoded by datasets as a PIL image: the bytes were embedded
    raw = {r["source_id"]: r for r in ds.cast_column("images", datasets.List(datasets.Image(decode=False)))}
    assert raw["0"]["images"] == [{"bytes": jpg(0), "path": "image/image_0.jpg"}]  # the file's own bytes
    stored = _tasks(engine, "gta")
    assert json.loads(row["answer_spec"]) == stored["0"][0].answer_spec

    res = cli(db, "import", "hf", str(out), "--benchmark", "from-hub", "--json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["created"] == 4
    back = _tasks(engine, "from-hub")
    assert set(back) == set(stored)
    for sid, (task, shas) in stored.items():
        got, got_shas = back[sid]
        assert (got.query, got.category, got.answer_spec, got.tools_offered) == (
            task.query,
            task.category,
            task.answer_spec,
            task.tools_offered,
        )
        assert got_shas == shas  # GTA tasks have only query images
    assert back["0"][1] == [sha256_of(jpg(0))]
    with session_scope(engine) as s:
        b = s.exec(select(Benchmark).where(Benchmark.name == "from-hub")).one()
        assert b.source_format == "hf" and b.settings["hf"]["license"] == "cc-by-4.0"


def test_a_hostile_image_is_refused_naming_the_row(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    folder = tmp_path / "bad"
    (folder / "data").mkdir(parents=True)
    table = pa.table(
        {
            "source_id": ["a", "b"],
            "query": ["q1", "q2"],
            "images": [[{"bytes": jpg(1), "path": "a.jpg"}], [{"bytes": b"not an image", "path": "b.png"}]],
        }
    )
    pq.write_table(table, folder / "data" / "test-00000-of-00001.parquet")
    res = cli(tmp_path / "cm.db", "import", "hf", str(folder))
    assert res.exit_code == 1
    assert "record row 1: field images[0]: is not a readable image" in res.output and "Traceback" not in res.output
    (folder / "data" / "test-00000-of-00001.parquet").unlink()
    (folder / "data" / "test-00000-of-00001.parquet").symlink_to("/etc/hostname")
    res = cli(tmp_path / "cm.db", "import", "hf", str(folder))
    assert res.exit_code == 1 and "Traceback" not in res.output
    assert "test-00000-of-00001.parquet" in res.output and "outside the dataset folder" in res.output, res.output


def test_runs_are_not_hf_files(tmp_path: Path) -> None:
    res = cli(tmp_path / "cm.db", "import-run", "hf", str(tmp_path), "--benchmark", "gta")
    assert res.exit_code == 1 and "Traceback" not in res.output
    assert "holds tasks, not runs" in res.output and "export-run parquet" in res.output
