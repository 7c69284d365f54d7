"""Every speed mechanism is named once (``store.speedups``), switches off, and gives what the plain path gives.

The same-output test walks an evaluator's whole job twice in real processes — import a GTA dataset, run
it against the scripted server with an image tool, score it, list and show it — once with every
mechanism on (the import's read-ahead child and the run's child event loops forced on even at this
size) and once with ``CHAINMARK_PLAIN=all``, then compares the databases and the printed documents.
"""

from __future__ import annotations

import gc
import json
import os
import re
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from bench.gta_gen import TOOLS, write_dataset
from store import speedups
from tests.support.scripted_openai import ScriptedOpenAI, text, tool_calls

ROOT = Path(__file__).resolve().parents[1]

# The console script, with the size thresholds of two mechanisms lowered so that this small job takes
# their fast paths when they are on (the plain run ignores the thresholds: the switch comes first).
CLI_WITH_LOW_THRESHOLDS = """
import sys
import annotation.formats.read_ahead as read_ahead
import evaluation.harness.procs as procs
read_ahead.FORK_MIN_BYTES = 0
procs.PER_LOOP = 1
from tui.cli import main
sys.argv[0] = "chainmark"
main()
"""

_OCR: dict[str, Any] = TOOLS["OCR"]
DRAW_BOX = {
    **_OCR,
    "name": "DrawBox",
    "description": "Draw a box on the image.",
    "inputs": [
        {**_OCR["inputs"][0]},
        {**_OCR["inputs"][0], "type": "text", "name": "bbox"},
    ],
    "outputs": [{**_OCR["outputs"][0], "type": "image"}],
}


def _dataset(root: Path) -> Path:
    """Generated GTA tasks whose tool list also offers DrawBox (an image-producing tool)."""
    write_dataset(root, 12, distinct_images=5)
    data = json.loads((root / "dataset.json").read_text())
    for record in data.values():
        record["tools"].append(DRAW_BOX)
    (root / "dataset.json").write_text(json.dumps(data))
    return root


def _model(req: Any) -> Any:
    """Draw a box on the task's image, divide as the query asks, answer the quotient."""
    user = " ".join(part.get("text", "") for m in req.messages if m["role"] == "user" for part in m["content"])
    steps = sum(m["role"] == "assistant" for m in req.messages)
    image = re.search(r"related files are at `([^`]+)`", user).group(1)  # type: ignore[union-attr]
    people = int(re.search(r"family of (\d+)", user).group(1))  # type: ignore[union-attr]
    if steps == 0:
        return tool_calls(("DrawBox", {"image": image, "bbox": "(1, 1, 6, 6)"}))
    if steps == 1:
        return tool_calls(
            ("Calculator", {"expression": f"{100 + int(user.split('Item ')[1].split(':')[0]) % 900} // {people}"})
        )
    result = [m for m in req.messages if m["role"] == "tool"][-1]["content"]
    return text(f"<answer>{json.loads(result).get('result', result)}</answer>")


def _chainmark(env: dict[str, str], cwd: Path, *args: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-c", CLI_WITH_LOW_THRESHOLDS, *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, (args, proc.stderr)
    return proc.stdout


_TIMED = ("_at", "_s", "_ms")  # timestamps and durations
# and ids of assets, which trajectories running side by side take in any order
_VOLATILE_KEYS = {
    "elapsed",
    "rate",
    "latency_ms",
    "duration_ms",
    "wall_s",
    "last_task_id",
    "asset_ids",
    "asset_id",
    "started",
    "finished",
    "procs",
}


def _stable(value: Any) -> Any:
    """A printed or stored document without wall-clock figures."""
    if isinstance(value, dict):
        return {k: _stable(v) for k, v in value.items() if k not in _VOLATILE_KEYS and not k.endswith(_TIMED)}
    if isinstance(value, list):
        return [_stable(v) for v in value]
    return value


def _differences(a: Any, b: Any, at: str = "") -> list[str]:
    """Where two documents differ, as paths (a readable failure instead of two long reprs)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return [d for k in a.keys() | b.keys() for d in _differences(a.get(k), b.get(k), f"{at}.{k}")]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b, strict=True)) for d in _differences(x, y, f"{at}[{i}]")]
    return [] if a == b else [f"{at}: {a!r} != {b!r}"[:300]]


def _database(path: Path) -> dict[str, list[str]]:
    """Every table's rows as sorted JSON texts, without surrogate ids that depend on write order
    (events and assets of trajectories that ran side by side) and without timestamps."""
    kept_ids = {"task_id", "trajectory_id", "run_id", "benchmark_id", "judge_id", "endpoint_id"}
    out: dict[str, list[str]] = {}
    with closing(sqlite3.connect(path)) as c:
        tables = [r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        for table in tables:
            if table in {"alembic_version", "sqlite_sequence"}:
                continue
            cur = c.execute(f'SELECT * FROM "{table}"')
            names = [d[0] for d in cur.description]
            rows = []
            for row in cur:
                record = {}
                for name, value in zip(names, row, strict=True):
                    if name.endswith("_at") or (name == "id" or name.endswith("_id")) and name not in kept_ids:
                        continue
                    if isinstance(value, str) and value[:1] in "[{":
                        try:
                            value = _stable(json.loads(value))
                        except ValueError:
                            pass
                    record[name] = value
                rows.append(json.dumps(_stable(record), sort_keys=True, default=str))
            out[table] = sorted(rows)
    return out


def _job(tmp_path: Path, name: str, server: ScriptedOpenAI, plain: str | None) -> tuple[dict[str, Any], dict[str, Any]]:
    home = tmp_path / name
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "CHAINMARK_PLAIN"}
    env.update(
        {"CHAINMARK_DB": str(home / "x.db"), "PYTHONPATH": str(ROOT), "CHAINMARK_PLUGIN_CACHE": str(home / "p.json")}
    )
    if plain is not None:
        env["CHAINMARK_PLAIN"] = plain
    printed: dict[str, Any] = {}
    _chainmark(env, home, "import", "gta", str(_dataset(home / "ds")), "-b", "g")
    _chainmark(env, home, "endpoints", "add", "sc", "--base-url", server.base_url, "--model", "m")
    run = json.loads(_chainmark(env, home, "run", "-b", "g", "-e", "sc", "-m", "atomic", "-j", "4", "--json"))
    printed["run"] = _stable(run)
    printed["score"] = _stable(json.loads(_chainmark(env, home, "score", str(run["run_id"]), "--json", "--per-item")))
    printed["tasks"] = json.loads(_chainmark(env, home, "tasks", "list", "--json"))
    printed["runs show"] = _stable(json.loads(_chainmark(env, home, "runs", "show", str(run["run_id"]), "--json")))
    printed["speedups"] = json.loads(_chainmark(env, home, "config", "speedups", "--json"))
    return printed, _database(home / "x.db")


def test_every_mechanism_off_gives_the_same_databases_and_documents(tmp_path: Path) -> None:
    with ScriptedOpenAI() as server:
        server.handler = _model
        fast_printed, fast_db = _job(tmp_path, "fast", server, None)
        plain_printed, plain_db = _job(tmp_path, "plain", server, "all")
    assert {m["name"] for m in fast_printed.pop("speedups")["mechanisms"] if m["on"]} == speedups.NAMES
    assert not any(m["on"] for m in plain_printed.pop("speedups")["mechanisms"])
    assert fast_printed["run"]["done"] == 12 and fast_printed["score"]["metrics"]["AnsAcc"] == 100.0
    assert _differences(fast_printed, plain_printed) == []
    assert fast_db.keys() == plain_db.keys()
    differing = {t: sorted(set(fast_db[t]) ^ set(plain_db[t]))[:4] for t in fast_db if fast_db[t] != plain_db[t]}
    assert differing == {}
    assert len(fast_db["eventasset"]) >= 24  # each trajectory's input and its drawn box were stored


# ------------------------------------------------------------------------------------- each switch


@pytest.fixture
def all_plain(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CHAINMARK_PLAIN", "all")


def test_the_plain_setting_names_mechanisms_or_all_and_refuses_others(monkeypatch: pytest.MonkeyPatch) -> None:
    assert speedups.switched_off("") == frozenset()
    assert speedups.switched_off(" Read_Ahead , gc_pause") == {"read_ahead", "gc_pause"}
    assert speedups.switched_off("all") == speedups.NAMES
    with pytest.raises(speedups.UnknownMechanism, match="unknown speed mechanism turbo"):
        speedups.switched_off("gc_pause,turbo")
    monkeypatch.setenv("CHAINMARK_PLAIN", "gc_pause")
    assert not speedups.enabled("gc_pause") and speedups.enabled("read_ahead")


def test_gc_pause_and_heap_freeze_leave_the_collector_alone_when_off(all_plain: None) -> None:
    from store.heap import existing_objects_frozen
    from store.gc_pause import gc_paused

    with gc_paused():
        assert gc.isenabled()
    before = gc.get_freeze_count()
    with existing_objects_frozen():
        assert gc.get_freeze_count() == before


def test_import_and_run_take_one_process_when_off(all_plain: None) -> None:
    from annotation.formats.read_ahead import may_fork
    from evaluation.harness.procs import auto_procs

    assert may_fork(10**12) is False
    assert auto_procs(4096) == 1


def test_writes_go_through_core_and_reads_through_sqlalchemy_when_off(all_plain: None, tmp_path: Path) -> None:
    import sqlalchemy as sa

    from store.plain_rows import applies
    from tui.context import AppContext

    engine = sa.create_engine(f"sqlite:///{tmp_path / 'x.db'}")
    with engine.connect() as conn:
        assert applies(conn) is False
    engine.dispose()
    assert AppContext(db=str(tmp_path / "x.db"))._plain_reader() is None


def test_images_encode_inline_and_decode_every_time_when_off(all_plain: None) -> None:
    import numpy as np

    from evaluation.tools import images

    produced = images.Produced(np.zeros((4, 4, 3), dtype=np.uint8))
    future = produced.start()
    assert future.done() and future.result().startswith(b"\x89PNG")
    images._decoded.put("bgr", b"key", np.zeros(1), 1)
    assert images._decoded.get("bgr", b"key") is None


def test_the_caches_of_start_up_are_not_written_when_off(all_plain: None, tmp_path: Path, monkeypatch) -> None:
    from store import plugins
    from tui import command_index, exit_keep

    monkeypatch.setenv(plugins.CACHE_ENV, str(tmp_path / "plugins.json"))
    assert {name for name, _, _ in plugins._cached_entry_points()} >= {"gta"}
    assert not (tmp_path / "plugins.json").exists()
    package = tmp_path / "cmds"
    package.mkdir()
    (package / "one.py").write_text(
        'import click\n@click.command("one")\ndef one():\n    "Do one."\n\ndef register(cli):\n    cli.add_command(one)\n'
    )
    assert set(command_index.cached_index(package, "cmds").commands) == {"one"}
    assert not (package / "__pycache__").exists()
    exit_keep.keep_until_exit(object())
    assert exit_keep._kept == []


# ------------------------------------------------------------------------------------- the registry


def test_the_registry_names_real_files_and_the_performance_notes_list_every_mechanism() -> None:
    notes = (ROOT / "docs" / "design" / "performance.md").read_text()
    for m in speedups.MECHANISMS:
        assert (ROOT / m.where).is_file(), m
        for listed in (m.bench, m.same_output):
            for path in listed.split(", "):
                assert (ROOT / path.split()[0]).is_file(), (m.name, path)
    assert speedups.markdown_table() in notes, "regenerate the table: python -m store.speedups"
