"""Import generated tasks into a fresh SQLite database and print how long it took, in wall and CPU time.
Goals: 10,000 GTA tasks in ≤ 5 s; 100,000 in ≤ 30 s (issue #20).

    .venv/bin/python bench/bench_import.py [--format gta|isg] [--tasks 10000] [--images N] [--repeat 1]
                                           [--compare]

The import is timed as ``chainmark import`` runs it: the data file read record by record while the
batches are written, in one transaction; a big file (``read_ahead.FORK_MIN_BYTES``) is parsed in a
forked child while this process writes. ``--compare`` runs each repeat twice, interleaved: read ahead
in a child, and all in this process. "parse alone" then reads the same file again without writing, in
this process. The real command's peak memory is best measured on its own: ``/usr/bin/time -v chainmark
--db X.db import gta DIR`` on a folder this script's generator wrote (``bench/gta_gen.py``,
``bench/isg_gen.py``).

CPU is given per process: this one (the only database writer), the read-ahead child, and the children
that write the blob files (``annotation.formats.blob_writer``). Wall time moves with the machine's
load (printed at the end): on 2 shared cores compare CPU. Creating files can cost far more kernel time
right after many files were deleted nearby (seen on a journal-less ext4, where new inodes skip
recently freed ones); the "reference" line shows that file system floor.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from annotation.formats import read_ahead  # noqa: E402
from bench import gta_gen, isg_gen  # noqa: E402
from annotation.formats.api import export_dataset, open_dataset  # noqa: E402
from annotation.formats.writer import write_dataset as store_dataset  # noqa: E402
from store import make_engine  # noqa: E402
from store.blobs import FolderBlobStore  # noqa: E402
from store.migrate import upgrade  # noqa: E402

GENERATORS: dict[str, Callable[[Path, int, int | None], Path]] = {
    "gta": gta_gen.write_dataset,
    "isg": isg_gen.write_dataset,
}


def clock() -> tuple[float, float, float]:
    """(wall, CPU of this process, CPU of its waited-for children) in seconds."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.perf_counter(), me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime


class Readers:
    """The read-ahead children started while this is installed (for their CPU time)."""

    def __init__(self) -> None:
        self.started: list[read_ahead.ReadAhead] = []
        real = read_ahead.ReadAhead.__init__

        def init(this: read_ahead.ReadAhead, *args: Any, **kw: Any) -> None:
            real(this, *args, **kw)
            self.started.append(this)

        setattr(read_ahead.ReadAhead, "__init__", init)

    def cpu(self) -> float:
        return sum(r.child_cpu for r in self.started)


def one_import(fmt_name: str, root: Path, tmp: Path, ahead: bool, readers: Readers) -> dict[str, float]:
    db = tmp / f"bench-{time.monotonic_ns()}.db"
    engine = make_engine(db)
    upgrade(engine)
    blobs = FolderBlobStore(Path(f"{db}.blobs"))
    saved = read_ahead.FORK_MIN_BYTES
    read_ahead.FORK_MIN_BYTES = saved if ahead else 1 << 62
    readers.started.clear()
    try:
        c0 = clock()
        fmt, spec = open_dataset(fmt_name, root)  # what `chainmark import` does: one transaction
        with engine.begin() as conn:  # a plain connection, as the command writes (Core, no ORM session)
            summary = store_dataset(conn, blobs, fmt, spec, None, str(root), consume=True, actor="bench")
        c1 = clock()
    finally:
        read_ahead.FORK_MIN_BYTES = saved
    reader = readers.cpu()
    out = {
        "wall": c1[0] - c0[0],
        "parent": c1[1] - c0[1],
        "reader": reader,
        "blobs": c1[2] - c0[2] - reader,
        "tasks": summary.created,
        "steps": summary.steps,
        "assets": summary.assets,
        "forked": len(readers.started),
    }
    engine.dispose()
    os.unlink(db)
    shutil.rmtree(f"{db}.blobs", ignore_errors=True)
    return out


def show(label: str, runs: list[dict[str, float]]) -> str:
    def med(key: str) -> float:
        return statistics.median(r[key] for r in runs)

    total = med("parent") + med("reader") + med("blobs")
    walls = ", ".join(f"{r['wall']:.1f}" for r in runs)
    return (
        f"{label}: wall {med('wall'):6.2f} s  CPU {total:.2f} s = this process {med('parent'):.2f} + read-ahead "
        f"child {med('reader'):.2f} + blob writers {med('blobs'):.2f}  (median of {len(runs)}; walls "
        f"{walls})"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--format", choices=sorted(GENERATORS), default="gta")
    ap.add_argument("--tasks", type=int, default=10_000)
    ap.add_argument("--images", type=int, default=None, help="distinct (query) images (default: one per task)")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--compare", action="store_true", help="also import with everything in this process")
    args = ap.parse_args()
    readers = Readers()
    with tempfile.TemporaryDirectory(prefix="cm-bench-import-") as tmp_name:
        tmp = Path(tmp_name)
        gen = GENERATORS[args.format]
        root = gen(tmp / args.format, args.tasks, args.images)
        size = sum(p.stat().st_size for p in root.iterdir() if p.is_file())
        modes = [True, False] if args.compare else [True]
        runs: dict[bool, list[dict[str, float]]] = {m: [] for m in modes}
        for _ in range(args.repeat):
            for m in modes:
                runs[m].append(one_import(args.format, root, tmp, m, readers))
        first = runs[True][0]
        print(
            f"{args.format}: {first['tasks']:.0f} tasks ({first['steps']:.0f} steps, {first['assets']:.0f} images), "
            f"data file(s) {size / 2**20:.0f} MB, read ahead in a child: {'yes' if first['forked'] else 'no'}"
        )
        total = statistics.median(r["wall"] for r in runs[True])
        goal = 5 if args.tasks <= 10_000 else 30 * args.tasks / 100_000
        print(show("import", runs[True]) + f"  [goal ≤ {goal:g} s: {'met' if total <= goal else 'NOT met'}]")
        if args.compare:
            print(show("import, all in this process", runs[False]))
        # Kept for the figures below: one more import, then parse alone, re-import, export.
        engine = make_engine(tmp / "bench.db")
        upgrade(engine)
        blobs = FolderBlobStore(tmp / "bench.db.blobs")
        fmt, spec = open_dataset(args.format, root)
        with engine.begin() as conn:
            store_dataset(conn, blobs, fmt, spec, None, str(root), consume=True, actor="bench")
        p0 = clock()
        parsed = sum(1 for _ in open_dataset(args.format, root)[1].tasks)
        p1 = clock()
        print(f"  parse alone, in this process: {p1[0] - p0[0]:6.2f} s  (CPU {p1[1] - p0[1]:.2f} s, {parsed} records)")
        t0 = time.perf_counter()
        with engine.begin() as conn:
            again = store_dataset(
                conn, blobs, fmt, open_dataset(args.format, root)[1], None, str(root), consume=True, actor="bench"
            )
        t1 = time.perf_counter()
        export_dataset(engine, blobs, args.format, fmt.default_benchmark, tmp / "out")
        t2 = time.perf_counter()
        print(f"re-import unchanged: {t1 - t0:6.2f} s  ({again.unchanged} unchanged)")
        print(f"export: {t2 - t1:6.2f} s")
        # The floor set by the file system: the same images into an empty folder blob store.
        image_dir = root / ("image" if args.format == "gta" else "images")
        images = [p.read_bytes() for p in sorted(image_dir.iterdir())]
        floor = FolderBlobStore(tmp / "floor.blobs")
        t5 = time.perf_counter()
        for data in images:
            floor.put(data)
        t6 = time.perf_counter()
    print(f"reference: {len(images)} images into an empty folder blob store, one by one: {t6 - t5:6.2f} s")
    print(
        f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())} (other work on the machine slows all figures)"
    )


if __name__ == "__main__":
    main()
