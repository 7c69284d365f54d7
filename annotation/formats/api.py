"""The four operations the CLI and TUI call, each one transaction: import/export a dataset, import/export a run.

A dataset import writes through SQLAlchemy Core on a plain connection (``writer``); the ORM, the table
classes and the run formats load only for what needs them (updating a changed task, exports, runs)."""

from __future__ import annotations

import inspect
from pathlib import Path
from types import ModuleType
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from sqlalchemy.engine import Engine

from annotation.formats.base import DatasetSpec, DatasetStream, gc_paused
from annotation.formats.errors import FormatError
from annotation.formats.registry import format_names, get_format, is_run_format
from annotation.formats.writer import ImportSummary, load_bundles, write_dataset
from store.blobs import BlobStore
from store.db import acting_user, read_only, session_scope
from store.rubrics import stored_versions

if TYPE_CHECKING:
    from sqlmodel import Session

    from annotation.formats.run_specs import RunImportSummary


def read_dataset(fmt_name: str, path: str | Path) -> tuple[ModuleType, DatasetSpec]:
    """The format module and everything it parsed from ``path`` (nothing written yet)."""
    fmt = get_format(fmt_name)
    with gc_paused():
        return fmt, fmt.read(Path(path))


def open_dataset(fmt_name: str, path: str | Path) -> tuple[ModuleType, DatasetSpec | DatasetStream]:
    """The format module and its dataset, as a stream read while it is written if the format can
    (``stream``), else parsed whole."""
    fmt = get_format(fmt_name)
    stream = getattr(fmt, "stream", None)
    if stream is not None:
        return fmt, stream(Path(path))
    return read_dataset(fmt_name, path)


def import_dataset(
    engine: Engine,
    blobs: BlobStore,
    fmt_name: str,
    path: str | Path,
    benchmark: str | None = None,
    actor: str | None = None,
) -> ImportSummary:
    """Read and write in one transaction: a bad record anywhere rolls the whole import back."""
    fmt, spec = open_dataset(fmt_name, path)
    with engine.begin() as conn:
        return write_dataset(conn, blobs, fmt, spec, benchmark, str(path), consume=True, actor=acting_user(actor))


def import_dataset_in(
    session: Session, blobs: BlobStore, fmt_name: str, path: str | Path, benchmark: str | None = None
) -> ImportSummary:
    """The same inside a caller's session (for callers that compose a bigger unit of work)."""
    fmt, spec = open_dataset(fmt_name, path)
    return write_dataset(session, blobs, fmt, spec, benchmark, str(path), consume=True)


def export_dataset(
    engine: Engine,
    blobs: BlobStore,
    fmt_name: str,
    benchmark: str,
    path: str | Path,
    describe_tools: Callable[[str | None, str], dict[str, dict[str, Any]]] | None = None,
) -> dict[str, Any]:
    """Write ``benchmark`` in ``fmt_name`` to ``path``. ``describe_tools(tool_set, source_format)`` says what
    the benchmark's tools are (a layer above knows the tool sets); formats that describe tools in their
    files get it as ``tools``."""
    from annotation.tasks import get_benchmark

    fmt = get_format(fmt_name)
    root = Path(path)
    with session_scope(read_only(engine)) as session:
        bench = get_benchmark(session, benchmark)
        bundles = load_bundles(session, bench.id or 0)
        settings = dict((bench.settings or {}).get(fmt.name) or {})
        extra: dict[str, Any] = {}
        if "benchmark" in inspect.signature(fmt.write).parameters:  # formats with a dataset card (hf)
            extra["benchmark"] = {
                "name": bench.name,
                "description": bench.description,
                "source_format": bench.source_format,
                "tool_set": bench.tool_set,
                "guidelines": bench.guidelines,
                "license": (bench.settings or {}).get("license") or settings.get("license"),
                "rubrics": stored_versions(session, bench.name),  # the author's judge rubric, every version
            }
        if "tools" in inspect.signature(fmt.write).parameters:  # formats that describe their tools (gta)
            extra["tools"] = describe_tools(bench.tool_set, bench.source_format) if describe_tools else {}
        files = fmt.write(bundles, settings, root, lambda sha: blobs.get(sha, session), **extra)
    return {"format": fmt.name, "benchmark": benchmark, "path": str(root), "tasks": len(bundles), "files": len(files)}


def import_run(
    engine: Engine,
    blobs: BlobStore,
    fmt_name: str,
    path: str | Path,
    benchmark: str,
    name: str | None = None,
    actor: str | None = None,
    **options: Any,
) -> RunImportSummary:
    """``options`` are the format's own reading options (e.g. ISG's ``root``, ``drop_last``); a format
    that does not take one refuses it by name."""
    from annotation.formats.runs import write_run

    fmt = get_format(fmt_name)
    options = {k: v for k, v in options.items() if v is not None and v is not False}
    if options:
        accepted = inspect.signature(fmt.read_run).parameters
        unknown = [k for k in options if k not in accepted]
        if unknown:
            raise ValueError(f"format {fmt.name!r} takes no option {', '.join(unknown)} when importing a run")
    with gc_paused():
        spec = fmt.read_run(Path(path), **options)
        with session_scope(engine, actor) as session:
            return write_run(session, blobs, fmt, spec, benchmark, str(path), name)


def run_format(benchmark: Any) -> str | None:
    """The format a run's benchmark is in: its source format, else (a benchmark authored in
    chainmark) the format its tool set belongs to; None when neither names a format."""
    known = format_names()
    for key in (benchmark.source_format, benchmark.tool_set):
        name = str(key or "").strip().lower().replace("_", "-")
        if name in known and getattr(get_format(name), "holds_runs", True):
            return name
    return None


def check_run_format(fmt: Any, run: Any) -> None:
    """Refuse to write a run in another benchmark's layout (its checkpoints and tools would not fit)."""
    if is_run_format(fmt.name):
        return  # a layout for any benchmark
    kind = run_format(run.benchmark)
    if kind is not None and kind != fmt.name:
        raise FormatError(
            f"run {run.run.id}",
            message=(
                f"the run's benchmark {run.benchmark.name!r} is in the {kind} format, not {fmt.name}; "
                f"export it with: chainmark export-run {kind} {run.run.id} PATH"
            ),
        )


def export_run(engine: Engine, blobs: BlobStore, fmt_name: str, run_id: int, path: str | Path) -> dict[str, Any]:
    from annotation.formats.runs import checkpoint_results, load_run

    fmt = get_format(fmt_name)
    with session_scope(read_only(engine)) as session:
        run = load_run(session, run_id)
        check_run_format(fmt, run)
        bundles = load_bundles(session, run.benchmark.id)
        wanted = {tb.task.id for tb in run.trajectories}
        run.task_bundles = {b.task.id: b for b in bundles if b.task.id in wanted}
        extra = {}
        if "scores" in inspect.signature(fmt.write_run).parameters:  # formats that carry scores (inspect)
            extra["scores"] = checkpoint_results(session, [tb.trajectory.id for tb in run.trajectories])
        files = fmt.write_run(run, Path(path), lambda sha: blobs.get(sha, session), **extra)
    return {
        "format": fmt.name,
        "run": run_id,
        "path": str(path),
        "trajectories": len(run.trajectories),
        "files": len(files),
    }
