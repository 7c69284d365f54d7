"""TUI figures on a 100,000-task database: cold start to first paint, and time per filter keystroke.

Goals (issue 8): cold start ≤ 0.5 s, filter keystroke ≤ 50 ms. Run:

    .venv/bin/python bench/bench_tui.py [--tasks 100000] [--db PATH]

The database is built once (bulk SQL inserts with realistic queries) and reused if it already has
enough tasks. Everything is timed the way a user sees it: the real ``chainmark`` command runs on a
pseudo-terminal (``pty_terminal.py``, 140×44, answering the terminal queries an xterm answers) and
the clock stops when the text appears in the terminal output. "Cold start" runs from process start
(imports, terminal probing) to the home screen's first frame, then on to its counts from the
database. A keystroke is timed from the key reaching the terminal to the task list drawing the first
rows of the new filter; the full count follows after a pause in typing.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

WORDS = (
    "cups table receipt price chart bar label sign mirror rotate crop count total apples red blue "
    "green circle square text menu street car dog cat person tree building window clock"
).split()


def build_db(path: Path, n: int) -> None:
    from sqlalchemy import text

    from store import make_engine, session_scope
    from store.migrate import upgrade

    engine = make_engine(path)
    upgrade(engine)
    with session_scope(engine) as s:
        have = s.execute(text("select count(*) from task")).scalar_one()
    if have >= n:
        return
    rng = random.Random(7)
    with session_scope(engine, "bench") as s:
        for name, fmt in (("gta", "gta"), ("mme", "agentic-mme"), ("vtc", "vtc")):
            s.execute(
                text(
                    "insert or ignore into benchmark (name, source_format, tool_set, settings, created_at) "
                    "values (:n, :f, :f, '{}', '2026-01-01')"
                ),
                {"n": name, "f": fmt},
            )
    with engine.begin() as conn:
        bench_ids = [r[0] for r in conn.execute(text("select id from benchmark order by id"))]
        rows = []
        for i in range(have, n):
            words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 20)))
            rows.append(
                {
                    "b": bench_ids[i % len(bench_ids)],
                    "s": f"big-{i:06d}",
                    "q": f"Task {i}: {words}?",
                    "c": rng.choice(["perception", "operation", "logic", "creativity"]),
                    "l": f"L{rng.randint(1, 3)}",
                    "st": rng.choice(["draft", "draft", "submitted", "verified"]),
                }
            )
        conn.execute(
            text(
                "insert into task (benchmark_id, source_id, query, category, level, answer_spec, status, revision, "
                'tools_offered, meta, created_at, updated_at) values (:b, :s, :q, :c, :l, \'{"kind": "none"}\', :st, 1, '
                "'[]', '{}', '2026-01-01', '2026-01-01')"
            ),
            rows,
        )
    engine.dispose()


def _terminal(db: Path):  # type: ignore[no-untyped-def]
    from tests.support.pty_terminal import PtyTerminal

    env = {
        **os.environ,
        "TERM": "xterm-256color",
        "COLORTERM": "truecolor",
        "TEXTUAL_ANIMATIONS": "none",
        "CHAINMARK_USER": "bench",
    }
    return PtyTerminal([str(Path(sys.executable).with_name("chainmark")), "--db", str(db)], size=(140, 44), env=env)


def _counts(db: Path, texts: list[str]) -> dict[str, int]:
    """How many tasks each filter text matches, and per benchmark (what the screens must show)."""
    from sqlalchemy import text as sql

    from store import make_engine, read_only, session_scope
    from tui.data import TaskFilter, task_ids

    engine = read_only(make_engine(db))
    with session_scope(engine) as s:
        out = {t: len(task_ids(s, TaskFilter(text=t))) for t in texts}
        out["(first benchmark)"] = s.execute(
            sql("select count(*) from task where benchmark_id = (select min(id) from benchmark)")
        ).scalar_one()
    engine.dispose()
    return out


def cold_start(db: Path, runs: int, total: int, first_benchmark: int) -> list[tuple[float, float, float, float]]:
    """Per run: seconds from process start to the first frame, to the home screen's counts, and
    from pressing ``t`` to the task list's first rows and to its total."""
    out = []
    for _ in range(runs):
        term = _terminal(db)
        try:
            painted = term.wait_for("Benchmarks")
            data = term.wait_for(rf"\b{first_benchmark}\b")
            pressed = term.send("t")
            rows = term.wait_for("counting…")
            listed = term.wait_for(rf"{total:,} tasks")
            out.append((painted - term.started, data - term.started, rows - pressed, listed - pressed))
            term.quit()
        finally:
            term.close()
    return out


def keystrokes(db: Path, text: str, counts: dict[str, int], total: int) -> list[tuple[str, float, int]]:
    """Type ``text`` into the task list's search box; per key, seconds from the key reaching the
    terminal to the list drawing the first rows of the new filter (before the full count)."""
    from tui.widgets.task_table import PAGE

    out = []
    term = _terminal(db)
    try:
        term.wait_for("Benchmarks")
        term.send("t")
        term.wait_for(rf"{total:,} tasks")
        term.send("/")
        time.sleep(0.3)
        for i in range(1, len(text) + 1):
            prefix = text[:i]
            n = counts[prefix]
            sent = term.send(text[i - 1])
            first_rows = term.wait_for("counting…" if n >= PAGE else rf"\b{n:,} tasks")
            out.append((prefix, first_rows - sent, n))
            if n >= PAGE:
                term.wait_for(rf"\b{n:,} matching tasks")  # the full index: the steady state for the next key
            time.sleep(0.05)
        term.quit()
    finally:
        term.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=100_000)
    ap.add_argument("--db", type=Path, default=Path(tempfile.gettempdir()) / "chainmark-bench-tui.db")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--text", default="receipt", help="what to type into the search box (no spaces)")
    args = ap.parse_args()
    t = time.time()
    build_db(args.db, args.tasks)
    prefixes = [args.text[:i] for i in range(1, len(args.text) + 1)]
    counts = _counts(args.db, prefixes)
    total = args.tasks
    print(f"database: {args.db} ({total:,} tasks, ready in {time.time() - t:.1f} s)")
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    starts = cold_start(args.db, args.runs, total, counts["(first benchmark)"])
    paint, data, first_rows, listing = ([run[i] for run in starts] for i in range(4))
    print(
        f"cold start → first frame:        median {statistics.median(paint) * 1000:4.0f} ms, "
        f"min {min(paint) * 1000:.0f} (runs: {', '.join(f'{x * 1000:.0f}' for x in paint)})  goal ≤ 500 ms"
    )
    print(f"cold start → home counts shown:  median {statistics.median(data) * 1000:4.0f} ms")
    print(
        f"key t → task list: first rows {statistics.median(first_rows) * 1000:4.0f} ms, "
        f"count of {total:,} tasks {statistics.median(listing) * 1000:4.0f} ms (medians)"
    )
    times = keystrokes(args.db, args.text, counts, total)
    for prefix, dt, n in times:
        print(f"  filter {prefix!r:12} {dt * 1000:6.1f} ms  {n:>7,} matches")
    per_key = [dt for _, dt, _ in times]
    from store import make_engine, read_only, session_scope
    from tui.data import TaskFilter, task_ids, task_rows

    engine = read_only(make_engine(args.db))
    for prefix in (prefixes[0], prefixes[len(prefixes) // 2], prefixes[-1]):
        with session_scope(engine) as s:
            t = time.perf_counter()
            task_rows(s, TaskFilter(text=prefix), 0, 64)
            first = time.perf_counter() - t
            t = time.perf_counter()
            n = len(task_ids(s, TaskFilter(text=prefix)))
            index = time.perf_counter() - t
        print(
            f"  query only {prefix!r:10}: first page {first * 1000:5.1f} ms, full index {index * 1000:6.1f} ms"
            f" ({n:,} ids)"
        )
    print(
        f"filter keystroke: median {statistics.median(per_key) * 1000:.1f} ms, "
        f"max {max(per_key) * 1000:.1f} ms  goal ≤ 50 ms"
    )
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())} (other work slows every figure)")
    print(
        json.dumps(
            {
                "cold_start_first_frame_ms": round(statistics.median(paint) * 1000),
                "cold_start_home_data_ms": round(statistics.median(data) * 1000),
                "task_list_first_rows_ms": round(statistics.median(first_rows) * 1000),
                "task_list_count_ms": round(statistics.median(listing) * 1000),
                "keystroke_median_ms": round(statistics.median(per_key) * 1000, 1),
                "keystroke_max_ms": round(max(per_key) * 1000, 1),
            }
        )
    )


if __name__ == "__main__":
    main()
