"""The neutral run shape the formats read into and export from: plain dataclasses, kept apart from
``annotation.formats.runs`` (which stores and loads runs through the ORM) so that a format module,
which names these for its run import, loads no ORM when it imports a dataset."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class EventSpec:
    kind: str
    payload: dict[str, Any]
    failed: bool = False
    assets: list[bytes] = field(default_factory=list)  # ids are filled into payload["asset_ids"]
    asset_role: str = "output"


@dataclass
class TrajectorySpec:
    source_id: str
    record: str  # where it came from, for error messages
    events: list[EventSpec]
    final_answer: str | None = None
    status: str = "done"
    usage: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    native: Any = None
    blobs: list[bytes] = field(default_factory=list)  # files of the native record that are not event assets


@dataclass
class RunSpec:
    mode: str
    trajectories: list[TrajectorySpec]
    config: dict[str, Any] = field(default_factory=dict)
    name: str | None = None
    # How the benchmarks' own evaluators treat a predictions file, reproduced on import: ids with no
    # task are ignored, a repeated id keeps its last prediction. Each case is listed in ``notes``.
    # A format may opt out where its reference refuses such files.
    skip_unknown_ids: bool = True
    keep_last_duplicate: bool = True
    missing_tasks_as_failed: bool = False  # the evaluator scores every task, predicted or not
    # Where a reference does something else with such lines (ISG judges every line), the format says
    # what, and the import warns that faithful scores will differ from the reference's on this file.
    unknown_id_differs: str | None = None
    duplicate_differs: str | None = None
    notes: list[str] = field(default_factory=list)  # what the import did that a user should know
    warnings: list[str] = field(default_factory=list)  # kept going, but the user should know (import summary)


@dataclass
class RunImportSummary:
    run_id: int
    name: str
    format: str
    benchmark: str
    mode: str
    trajectories: int
    events: int
    assets: int
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class TrajectoryBundle:
    trajectory: Any
    task: Any
    events: list[Any]
    event_assets: dict[int, list[tuple[Any, Any]]]  # event id -> [(EventAsset, Asset)]


@dataclass
class RunBundle:
    run: Any
    benchmark: Any
    endpoint: Any
    trajectories: list[TrajectoryBundle]
    task_bundles: dict[int, Any] = field(default_factory=dict)  # task id -> TaskBundle (for gold data)
