"""`chainmark export-run parquet`: a run as events/trajectories tables, read back with pyarrow (and
pandas) the way an analyst would: the columns are typed and hold the event's values."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from store.blobs import sha256_of
from tests.interop.conftest import RecordedRun, cli

pa = pytest.importorskip("pyarrow", reason="pyarrow comes with the 'interop' extra")
pq = pytest.importorskip("pyarrow.parquet", reason="pyarrow comes with the 'interop' extra")


def test_events_and_trajectories_tables(recorded_run: RecordedRun, tmp_path: Path) -> None:
    out = tmp_path / "tables"
    res = cli(recorded_run.db, "export-run", "parquet", str(recorded_run.run_id), str(out), "--json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["files"] == 2
    events = pq.read_table(out / "events.parquet")
    trajs = pq.read_table(out / "trajectories.parquet")
    assert events.num_rows == 8 and trajs.num_rows == 2
    assert events.schema.field("ordinal").type == pa.int32()
    assert events.schema.field("prompt_tokens").type == pa.int64()
    assert events.schema.field("started_at").type == pa.timestamp("us", tz="UTC")
    assert events.schema.field("asset_sha256").type == pa.list_(pa.string())
    rows = events.to_pylist()
    first = [r for r in rows if r["source_id"] == recorded_run.source_ids[0]]
    assert [r["kind"] for r in first] == [
        "user_message",
        "model_message",
        "tool_call",
        "tool_result",
        "error",
        "model_message",
        "answer",
    ]
    assert [r["ordinal"] for r in first] == list(range(7))
    assert {r["run_id"] for r in rows} == {recorded_run.run_id}
    assert first[0]["text"] == "How many apples?"
    reply = first[1]
    assert (reply["prompt_tokens"], reply["completion_tokens"], reply["total_tokens"]) == (120, 30, 150)
    assert reply["tool_name"] == "CountGivenObject"
    call = first[2]
    assert call["tool_name"] == "CountGivenObject" and call["call_id"] == "c1"
    assert json.loads(call["arguments_json"]) == {"image": "a.png", "text": "apple"}
    result = first[3]
    assert result["text"] == "3" and result["asset_sha256"] == [sha256_of(recorded_run.result_png)]
    assert first[4]["error"] == "Timeout: OCR took too long" and first[4]["text"] == "OCR took too long"
    assert first[6]["text"] == "3" and first[6]["error"] is None
    assert first[0]["latency_s"] is not None and first[0]["latency_s"] >= 0
    assert json.loads(first[1]["payload_json"])["finish_reason"] == "tool_calls"

    by_source = {r["source_id"]: r for r in trajs.to_pylist()}
    done, failed = by_source[recorded_run.source_ids[0]], by_source[recorded_run.source_ids[1]]
    assert (done["status"], done["final_answer"], done["events"], done["tool_calls"]) == ("done", "3", 7, 1)
    assert (done["prompt_tokens"], done["total_tokens"], done["latency_s"]) == (320, 360, 1.25)
    assert done["benchmark"] == "gta" and done["run_name"] == "interop run" and done["mode"] == "atomic"
    assert (failed["status"], failed["error"], failed["events"], failed["prompt_tokens"]) == (
        "failed",
        "budget exhausted",
        1,
        50,
    )
    assert failed["completion_tokens"] is None


def test_pandas_reads_the_tables(recorded_run: RecordedRun, tmp_path: Path) -> None:
    pd = pytest.importorskip("pandas", reason="pandas is optional; pyarrow alone reads the tables")
    out = tmp_path / "tables"
    assert cli(recorded_run.db, "export-run", "parquet", str(recorded_run.run_id), str(out)).exit_code == 0
    df = pd.read_parquet(out / "events.parquet")
    tokens = df.groupby("source_id")["total_tokens"].sum()
    assert tokens[recorded_run.source_ids[0]] == 360
    assert (df["kind"] == "tool_call").sum() == 1
    assert str(df["started_at"].dt.tz) == "UTC"


def test_without_pyarrow_the_error_names_the_extra(
    recorded_run: RecordedRun, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    for mod in [m for m in sys.modules if m == "pyarrow" or m.startswith("pyarrow.")]:
        monkeypatch.delitem(sys.modules, mod)
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # what an environment without it does: ImportError
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    res = cli(recorded_run.db, "export-run", "parquet", str(recorded_run.run_id), str(tmp_path / "t"))
    assert res.exit_code == 1
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and "pyarrow" in lines[0] and "'interop' extra" in lines[0], res.output
    assert not (tmp_path / "t").exists()
