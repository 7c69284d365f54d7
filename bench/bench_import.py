"""Import 10,000 generated GTA-format tasks (3 reference steps and one image each) into a fresh
SQLite database and print how long each phase took. Goal: the whole import in ≤ 5 s.

    .venv/bin/python bench/bench_import.py [--tasks 10000] [--images N]

The import is timed as ``chainmark import`` runs it: dataset.json read record by record while the
batches are written, in one transaction. "parse alone" then reads the same file again without writing,
for the share of the time spent parsing. The real command's peak memory is best measured on its own:
``/usr/bin/time -v chainmark --db X.db import gta DIR`` on a folder this script's generator wrote
(``bench/gta_gen.py``).

Beside each wall time: the CPU time of this process (user+sys) and of the child that writes the blob
files (``annotation.formats.blob_writer``). Wall time moves with the machine's load, and creating
files can cost far more kernel time right after many files were deleted nearby (seen on a journal-less
ext4, where new inodes skip recently freed ones); the "reference" line shows that file system floor.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from gta_gen import write_dataset  # noqa: E402

from annotation.formats.api import export_dataset, open_dataset  # noqa: E402
from annotation.formats.writer import write_dataset as store_dataset  # noqa: E402
from store import make_engine, session_scope  # noqa: E402
from store.blobs import FolderBlobStore  # noqa: E402
from store.migrate import upgrade  # noqa: E402


def clock() -> tuple[float, float, float]:
    """(wall, CPU of this process, CPU of its waited-for children) in seconds."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.perf_counter(), me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime


def phase(start: tuple[float, float, float], end: tuple[float, float, float]) -> str:
    wall, cpu, child = (b - a for a, b in zip(start, end))
    return f"{wall:6.2f} s  (CPU {cpu:.2f} s" + (f" + blob writer {child:.2f} s)" if child >= 0.005 else ")")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=10_000)
    ap.add_argument("--images", type=int, default=None, help="distinct images (default: one per task)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="cm-bench-import-") as tmp:
        root = write_dataset(Path(tmp) / "gta", args.tasks, args.images)
        engine = make_engine(Path(tmp) / "bench.db")
        upgrade(engine)
        blobs = FolderBlobStore(Path(tmp) / "bench.db.blobs")
        c0 = clock()
        fmt, spec = open_dataset("gta", root)  # what `chainmark import` does: read while writing, one transaction
        with session_scope(engine, "bench") as session:
            summary = store_dataset(session, blobs, fmt, spec, "bench", str(root), consume=True)
        c2 = clock()
        t0, t2 = c0[0], c2[0]
        again_start = time.perf_counter()
        with session_scope(engine, "bench") as session:
            again = store_dataset(session, blobs, fmt, open_dataset("gta", root)[1], "bench", str(root), consume=True)
        t3 = time.perf_counter()
        p0 = clock()
        parsed = sum(1 for _ in open_dataset("gta", root)[1].tasks)
        p1 = clock()
        t3 = time.perf_counter()
        export_dataset(engine, blobs, "gta", "bench", Path(tmp) / "out")
        t4 = time.perf_counter()
        # The floor set by the file system: the same images into an empty folder blob store.
        images = [p.read_bytes() for p in sorted((root / "image").iterdir())]
        floor = FolderBlobStore(Path(tmp) / "floor.blobs")
        t5 = time.perf_counter()
        for data in images:
            floor.put(data)
        t6 = time.perf_counter()
    total = t2 - t0
    print(f"tasks: {summary.created} created ({summary.steps} steps, {summary.assets} images)")
    print(
        f"import: {phase(c0, c2)}  read and written in one transaction → {summary.created / total:,.0f} tasks/s  "
        f"[goal ≤ 5 s: {'met' if total <= 5 else 'NOT met'}]"
    )
    print(f"  of which parse alone: {phase(p0, p1)}  ({parsed} records read again, nothing written)")
    print(f"re-import unchanged: {t3 - again_start:6.2f} s  ({again.unchanged} unchanged)")
    print(f"export: {t4 - t3:6.2f} s")
    print(f"reference: {len(images)} images into an empty folder blob store, one by one: {t6 - t5:6.2f} s")
    print(
        f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())} (other work on the machine slows all figures)"
    )


if __name__ == "__main__":
    main()
