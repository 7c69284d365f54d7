"""Runs started from the TUI live here, owned by the app rather than a screen, so they keep going
when the monitor is left (a screen's workers die with the screen; the app's do not).

Each run executes ``evaluation.harness.execute_run`` on its own event loop in an app thread worker.
The harness's progress callback only stores a snapshot (no UI calls from the run's thread); the
monitor polls the snapshots on a timer, which throttles redraws for free. Cancelling sets the
harness's stop event from the UI thread through the run loop's ``call_soon_threadsafe``.
"""

from __future__ import annotations

import asyncio
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from annotation.review.annotators import run_refusal
from evaluation.harness import RunSpec, create_run, execute_run
from evaluation.harness.runner import RunProgress
from textual.worker import Worker, get_current_worker

if TYPE_CHECKING:
    from tui.app import ChainmarkApp

MAX_ERRORS = 200


@dataclass
class LiveRun:
    """What the monitor shows of a run in this process; ``progress`` is a plain dict snapshot."""

    key: int
    label: str
    run_id: int | None = None
    state: str = "starting"  # starting | running | cancelling | finished | failed
    progress: dict[str, Any] = field(default_factory=dict)
    errors: list[tuple[int | None, str]] = field(default_factory=list)
    error: str | None = None
    started: float = field(default_factory=time.monotonic)
    _loop: asyncio.AbstractEventLoop | None = None
    _stop: asyncio.Event | None = None

    @property
    def active(self) -> bool:
        return self.state in ("starting", "running", "cancelling")


class RunManager:
    def __init__(self, app: "ChainmarkApp") -> None:
        self.app = app
        self.runs: dict[int, LiveRun] = {}
        self._lock = threading.Lock()
        self._next = 0

    def by_run_id(self, run_id: int) -> LiveRun | None:
        """The newest session of the run in this app (a resumed run has one per resume)."""
        with self._lock:
            return max((r for r in self.runs.values() if r.run_id == run_id), key=lambda r: r.key, default=None)

    def snapshot(self) -> list[LiveRun]:
        with self._lock:
            return list(self.runs.values())

    def start(self, spec: RunSpec) -> LiveRun:
        """Create the run and execute it in the background; returns at once."""
        return self._launch(f"{spec.benchmark} · {spec.endpoint} · {spec.mode}", spec=spec)

    def resume(self, run_id: int, *, retry_failed: bool = False) -> LiveRun:
        live = self.by_run_id(run_id)
        if live is not None and live.active:
            raise ValueError(f"run {run_id} is still going")
        return self._launch(f"run {run_id} (resumed)", run_id=run_id, retry_failed=retry_failed)

    def cancel(self, run_id: int) -> bool:
        """Stop the run's session in this app. The caller has checked the actor's role (``refusal``)."""
        live = self.by_run_id(run_id)
        if live is None or not live.active or live._loop is None or live._stop is None:
            return False
        live.state = "cancelling"
        live._loop.call_soon_threadsafe(live._stop.set)
        return True

    def _launch(
        self, label: str, *, spec: RunSpec | None = None, run_id: int | None = None, retry_failed: bool = False
    ) -> LiveRun:
        with self._lock:
            self._next += 1
            live = LiveRun(self._next, label, run_id=run_id)
            self.runs[live.key] = live
        self.app.run_worker(
            lambda: self._execute(live, spec, retry_failed),
            thread=True,
            group="runs",
            exit_on_error=False,
            description=label,
        )
        return live

    def _execute(self, live: LiveRun, spec: RunSpec | None, retry_failed: bool) -> None:
        app = self.app
        try:
            refused = app.read(lambda s: run_refusal(s, app.actor))
            if refused is not None:  # a person's role decides, whatever screen or key asked
                raise PermissionError(refused)
            engine, blobs = app.engine(), app.blobs
            if spec is not None:
                live.run_id = app.write(lambda s: create_run(s, spec).id)
            asyncio.run(self._run(live, engine, blobs, retry_failed, get_current_worker()))
            live.state = "finished"
        except Exception as exc:  # noqa: BLE001 - shown in the monitor, the app goes on
            text = str(exc) or type(exc).__name__
            live.error = text.splitlines()[0]
            live.state = "failed"

    async def _run(self, live: LiveRun, engine: Any, blobs: Any, retry_failed: bool, worker: Worker[Any]) -> None:
        live._loop = asyncio.get_running_loop()
        live._stop = asyncio.Event()
        if live.state == "cancelling":  # cancelled before the loop existed
            live._stop.set()
        else:
            live.state = "running"
        seen: set[tuple[int | None, str]] = set()

        def progress(p: RunProgress) -> None:
            live.progress = p.to_dict()
            if worker.is_cancelled and not live._stop.is_set():  # the app is closing: start no new task
                live._stop.set()
            if p.last_status == "failed" and p.last_error:
                item = (p.last_task_id, p.last_error)
                if item not in seen and len(live.errors) < MAX_ERRORS:
                    seen.add(item)
                    live.errors.append(item)

        assert live.run_id is not None
        summary = await execute_run(
            engine,
            blobs,
            live.run_id,
            progress=progress,
            stop=live._stop,
            retry_failed=retry_failed,
            actor=self.app.actor,
        )
        if summary.halt_kind == "store":
            live.error = (
                f"failed: {summary.halted}; finished trajectories are saved, resume once the database "
                f"takes writes again"
            )
        elif summary.halted:
            live.error = f"stopped: {summary.halted}; resume with failed tasks redone once it answers"


def run_manager(app: "ChainmarkApp") -> RunManager:
    """The app's run manager, made on first use."""
    manager = getattr(app, "_chainmark_run_manager", None)
    if manager is None:
        manager = RunManager(app)
        setattr(app, "_chainmark_run_manager", manager)
    return manager
