"""Build a large chainmark database for the UI benchmarks: N GTA-format tasks imported through the
real importer (one transaction per 10,000 tasks), then spread over statuses, categories and levels.

    .venv/bin/python bench/make_big_db.py PATH [--tasks 100000] [--images 500]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import sqlalchemy as sa  # noqa: E402
from gta_gen import write_dataset  # noqa: E402

from annotation.formats.registry import get_format  # noqa: E402
from annotation.formats.writer import write_dataset as store_dataset  # noqa: E402
from store import make_engine, session_scope  # noqa: E402
from store.blobs import default_blob_store  # noqa: E402
from store.migrate import upgrade  # noqa: E402
from store.models import Task  # noqa: E402

STATUSES = ("draft", "submitted", "verified", "rejected")
CATEGORIES = ("perception", "operation", "logic", "creativity", "ocr", "counting", "chart", "math")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("path", type=Path)
    ap.add_argument("--tasks", type=int, default=100_000)
    ap.add_argument("--images", type=int, default=500, help="distinct images shared by the tasks")
    ap.add_argument("--benchmark", default="big")
    args = ap.parse_args()
    if args.path.exists():
        sys.exit(f"{args.path} exists; give a new path")
    engine = make_engine(args.path)
    upgrade(engine)
    blobs = default_blob_store(engine)
    fmt = get_format("gta")
    start = time.perf_counter()
    chunk = 10_000
    with tempfile.TemporaryDirectory(prefix="cm-big-") as tmp:
        root = write_dataset(Path(tmp) / "gta", min(chunk, args.tasks), min(args.images, args.tasks))
        base = fmt.read(root)
        done = 0
        while done < args.tasks:
            n = min(chunk, args.tasks - done)
            for i, spec in enumerate(base.tasks[:n]):
                spec.source_id = str(done + i)
            spec_part = type(base)(base.tasks[:n], base.settings)
            with session_scope(engine, "make_big_db") as s:
                store_dataset(s, blobs, fmt, spec_part, args.benchmark, f"generated {done}..{done + n}")
            done += n
            print(f"{done:>8,} tasks  {time.perf_counter() - start:6.1f} s", flush=True)
    with session_scope(engine, "make_big_db") as s:
        conn = s.connection()
        conn.execute(
            sa.update(Task).values(
                status=sa.case(*[(Task.id % 4 == k, v) for k, v in enumerate(STATUSES)]),
                category=sa.case(*[(Task.id % len(CATEGORIES) == k, v) for k, v in enumerate(CATEGORIES)]),
                level=sa.cast(Task.id % 3 + 1, sa.String),
            )
        )
    print(f"done: {args.tasks:,} tasks in {args.path} ({time.perf_counter() - start:.1f} s)")


if __name__ == "__main__":
    main()
