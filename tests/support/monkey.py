"""The monkey's parts (issue 32, how we know): the project it walks, the seeded key sequences it presses,
what it records of failures the app shows instead of raising, and the database checks after a walk.

A walk is replayable from its seed alone: the keys are drawn before the app starts, never from what the
screen shows, so a failing test id (screen, seed) presses the same keys again.
"""

from __future__ import annotations

import random
import shutil
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import sqlalchemy.exc as sa_exc
from sqlalchemy import text
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

SIZES = ((80, 24), (160, 48))
QUIT_KEYS = frozenset({"ctrl+q", "ctrl+c"})
QUIT_ACTIONS = frozenset({"quit", "app.quit"})
LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
DIGITS = "0123456789"
MOVES = ("tab", "shift+tab", "up", "down", "left", "right", "pageup", "pagedown", "home", "end")
EDITS = ("enter", "space", "backspace", "delete", "ctrl+z", "question_mark")
# What one might type into the palette: words of its entries (screens, actions) and a few stray letters.
# Textual's own "Quit the application" is among its commands: typing toward it and pressing enter quits,
# which the walk allows (it is a quit the person asked for), see ``QuitWatch``.
PALETTE_WORDS = ("rat", "pref", "adj", "agree", "est", "run", "new", "rep", "task", "chain", "save", "keys", "x", "q")
PALETTE_ENDS = ("enter", "down enter", "pageup", "pagedown", "pageup enter", "escape", "backspace", "tab enter", "")

# Exceptions that are a bug wherever they come from: data code raises ValueError/LookupError subclasses
# for what a person can fix, never these (matched by exact type, so a deliberate LookupError stays a message).
BUG_TYPES = (
    AttributeError,
    TypeError,
    KeyError,
    IndexError,
    NameError,
    UnboundLocalError,
    AssertionError,
    ZeroDivisionError,
    RecursionError,
    NotImplementedError,
)
BUG_BASES = (sa_exc.InvalidRequestError, sa_exc.IntegrityError, sa_exc.ProgrammingError)


def is_bug(exc: BaseException) -> bool:
    """An exception no person could have caused on purpose: the TUI shows it as an internal error."""
    from textual.css.query import NoMatches

    return type(exc) in BUG_TYPES or isinstance(exc, (*BUG_BASES, NoMatches))


def screen_keys(screen_class: type) -> list[str]:
    """The keys ``screen_class``'s own bindings (its whole MRO) bind, quit keys left out."""
    from textual.binding import Binding

    keys: set[str] = set()
    for klass in screen_class.__mro__:
        for raw in klass.__dict__.get("BINDINGS", []) or []:
            b = raw if isinstance(raw, Binding) else Binding(*raw)
            if b.action in QUIT_ACTIONS:
                continue
            keys.update(k.strip() for k in b.key.split(","))
    return sorted(keys - QUIT_KEYS)


def monkey_keys(rng: random.Random, own: list[str], length: int) -> list[list[str]]:
    """About ``length`` presses drawn from ``rng``, in bursts typed faster than the screen answers: the
    screen's own keys, moves, edits, letters and digits, now and then the palette with something typed
    into it; a quit (and what answers its question) only at the end, as a burst of its own."""
    keys: list[str] = []
    while len(keys) < length:
        roll = rng.random()
        if roll < 0.30 and own:
            keys.append(rng.choice(own))
        elif roll < 0.50:
            keys.append(rng.choice(MOVES))
        elif roll < 0.62:
            keys.append(rng.choice(EDITS))
        elif roll < 0.80:
            keys.extend(rng.choice(LETTERS + DIGITS) for _ in range(rng.randint(1, 4)))
        elif roll < 0.86:
            keys.append("escape")
        else:
            keys.extend(palette_visit(rng))
    keys = keys[:length]
    bursts: list[list[str]] = []
    while keys:
        size = rng.choice((1, 1, 2, 3, 4, 6))
        bursts.append(keys[:size])
        keys = keys[size:]
    if rng.random() < 0.25:
        bursts.append(rng.choice((["ctrl+q"], ["ctrl+q", "d"], ["ctrl+q", "ctrl+q"], ["ctrl+q", "escape"])))
    return bursts


async def press_burst(pilot: Any, keys: list[str]) -> None:
    """Send ``keys`` as a terminal would when they are typed at once (Pilot waits for the app between
    keys), then wait until the app is idle again."""
    import unicodedata

    from textual import events
    from textual.keys import _character_to_key, _get_unicode_name_from_key

    app = pilot.app
    for key in keys:
        name = _character_to_key(key) if len(key) == 1 and not key.isalnum() else key
        try:
            char: str | None = unicodedata.lookup(_get_unicode_name_from_key(name))
        except KeyError:
            char = name if len(name) == 1 else None
        event = events.Key(name, char)
        event.set_sender(app)
        app._driver.send_message(event)
    await pilot.pause()


def palette_visit(rng: random.Random) -> list[str]:
    """ctrl+p, maybe a page key before the list fills, some typing, then how the visit ends."""
    keys = ["ctrl+p"]
    if rng.random() < 0.3:
        keys.append(rng.choice(("pageup", "pagedown", "down", "end")))
    word = rng.choice(PALETTE_WORDS)
    keys.extend(word[: rng.randint(1, len(word))])
    end = rng.choice(PALETTE_ENDS)
    return keys + (end.split() if end else [])


@dataclass
class Recorder:
    """What the app caught instead of crashing: errors shown as notifications and failed workers."""

    bugs: list[str] = field(default_factory=list)

    def note(self, exc: BaseException, where: str) -> None:
        if is_bug(exc):
            import traceback

            self.bugs.append(f"{where}: {''.join(traceback.format_exception(exc)).strip()}")


def record_hidden_errors(monkeypatch: Any) -> Recorder:
    """Watch the two places a screen's exception turns into a message rather than a crash: the screens'
    read/write workers (``tui.screens.base._describe``) and workers that fail without exiting the app."""
    import tui.screens.base as base
    from textual.worker import WorkerState
    from textual.worker_manager import WorkerManager

    recorder = Recorder()
    describe = base._describe

    def noting_describe(exc: BaseException) -> str:
        recorder.note(exc, "a screen's worker (shown as a notification)")
        return describe(exc)

    remove = WorkerManager._remove_worker

    def noting_remove(self: WorkerManager, worker: Any) -> None:
        if worker.state == WorkerState.ERROR and worker.error is not None and not worker.exit_on_error:
            recorder.note(worker.error, f"worker {worker.description or worker.name!r} (failed quietly)")
        remove(self, worker)

    monkeypatch.setattr(base, "_describe", noting_describe)
    monkeypatch.setattr(WorkerManager, "_remove_worker", noting_remove)
    return recorder


@dataclass
class QuitWatch:
    """Whether the person asked to quit (ctrl+q, or the palette's quit): only then may the app end."""

    asked: bool = False


def watch_quit(monkeypatch: Any) -> QuitWatch:
    from tui.app import ChainmarkApp

    watch = QuitWatch()
    quit_ = ChainmarkApp._quit

    async def noting_quit(self: ChainmarkApp) -> None:
        watch.asked = True
        await quit_(self)

    monkeypatch.setattr(ChainmarkApp, "_quit", noting_quit)
    return watch


# ---------------------------------------------------------------------------------------------- the project


HOSTILE = "[/x] [@click=app.quit]q[/] \x1b[2J"  # a name that looks like markup and carries an escape


@dataclass(frozen=True)
class Project:
    """A seeded database file and blob folder, copied for each walk, and the ids the screens open."""

    db: Path
    blobs: Path
    ids: dict[str, Any]

    def copy_to(self, folder: Path) -> tuple[Path, Path]:
        db = folder / "chainmark.db"
        shutil.copyfile(self.db, db)
        db.chmod(0o600)
        blobs = db.with_name(db.name + ".blobs")
        shutil.copytree(self.blobs, blobs)
        return db, blobs


def build_project(folder: Path) -> Project:
    """The demo project (``chainmark demo``) plus the review study the review screens show: two runs of
    the same tasks, judges' verdicts, three people with blind ratings and preference pairs to do, and
    names that look like markup."""
    from annotation.demo import build_demo
    from store import make_engine, session_scope
    from store.blobs import FolderBlobStore
    from tests.support.template_db import copy_sqlite_template

    db = folder / "chainmark.db"
    copy_sqlite_template(db)
    engine = make_engine(db)
    blobs = FolderBlobStore(db.with_name(db.name + ".blobs"))
    with session_scope(engine, "demo") as s:
        build_demo(s, blobs)
    ids = _seed_review(engine, blobs)
    engine.dispose()
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return Project(db, Path(blobs.root), ids)


def _seed_review(engine: Engine, blobs: Any) -> dict[str, Any]:
    from annotation import tasks as authoring
    from annotation.review.preferences import assign_pairs
    from store import session_scope
    from store.models import Run
    from tests.scoring.builders import answer, stored_trajectory
    from tests.tui_review.conftest import png, seed_study

    ids = seed_study(engine, blobs)
    with session_scope(engine, "seed") as s:
        first = s.get(Run, ids["run"])
        assert first is not None
        second = Run(name="second run", benchmark_id=first.benchmark_id, mode="atomic", status="done")
        s.add(second)
        s.flush()
        for n, task in enumerate(ids["tasks"]):
            stored_trajectory(s, second, task, [answer(str(n + 2))], final_answer=str(n + 2))
        ids["runs"] = [ids["run"], second.id]
        assign_pairs(s, ids["run"], second.id or 0, ["ann", "bob"], 1)
        authoring.ensure_benchmark(s, HOSTILE, "chainmark")
        odd = authoring.create_task(s, "demo-gta", "What colour is the square?", category=HOSTILE, level=HOSTILE)
        authoring.attach_asset(s, blobs, odd.id or 0, png())
        ids["hostile_task"] = odd.id
    return ids


# ------------------------------------------------------------------------------------------- after a walk


def consistency_problems(engine: Engine, unaudited_before: Any) -> list[str]:
    """What a walk may never leave behind: a damaged file, dangling references, a chain with a gap in
    its step numbers, a checkpoint on another task's step, an edited row whose audit trail does not end in
    what is stored (a half-written change)."""
    problems: list[str] = []
    with engine.connect() as conn:
        if (verdict := conn.execute(text("PRAGMA integrity_check")).scalar()) != "ok":
            problems.append(f"integrity_check: {verdict}")
        problems += [f"dangling reference: {tuple(r)}" for r in conn.execute(text("PRAGMA foreign_key_check"))]
    with Session(engine) as s:
        problems += _chain_gaps(s)
        now = unaudited(s)
        problems += [f"{key[0]} #{key[1]}: {now[key]}" for key in sorted(set(now) - set(unaudited_before))]
    return problems


def _chain_gaps(s: Session) -> list[str]:
    from store.models import Checkpoint, ReferenceStep

    chains: dict[int, list[int]] = {}
    for step in s.exec(select(ReferenceStep)):
        chains.setdefault(step.task_id, []).append(step.ordinal)
    out = [f"task {t}: step ordinals {sorted(o)}" for t, o in chains.items() if sorted(o) != list(range(len(o)))]
    owner = {step.id: step.task_id for step in s.exec(select(ReferenceStep))}
    for cp in s.exec(select(Checkpoint)):
        if cp.step_id is not None and owner.get(cp.step_id) != cp.task_id:
            out.append(
                f"checkpoint {cp.id} of task {cp.task_id} sits on step {cp.step_id} of task {owner.get(cp.step_id)}"
            )
    return out


def unaudited(s: Session) -> dict[tuple[str, int], str]:
    """(table, id) of every audited row whose stored values are not the ``after`` of its last audit event,
    with how they differ."""
    from store import audit
    from store.models import AuditEvent

    last: dict[tuple[str, int], Any] = {}
    for event in s.exec(select(AuditEvent).order_by(col(AuditEvent.id))):
        if event.entity_id is not None:
            last[(event.entity, event.entity_id)] = event.after
    out: dict[tuple[str, int], str] = {}
    for model in audit.AUDITED:
        for row in _rows(s, model):
            key = (audit.entity_name(row), row.id)
            after = last.get(key)
            if after is None:
                out[key] = "no audit event"
                continue
            logged, stored = _comparable(after), _comparable(audit.row_dict(row))
            if logged != stored:
                out[key] = ", ".join(
                    f"{k}: audited {logged.get(k)!r}, stored {stored.get(k)!r}"
                    for k in sorted(set(logged) | set(stored))
                    if logged.get(k) != stored.get(k)
                )
    return out


def _rows(s: Session, model: type) -> Iterator[Any]:
    yield from s.exec(select(model))


def _comparable(values: dict[str, Any]) -> dict[str, Any]:
    """Column values as JSON would hold them, times in UTC without a zone (SQLite stores them naive)."""
    import json

    return {k: _naive(json.loads(json.dumps(v, default=str))) for k, v in values.items() if k != "updated_at"}


def _naive(value: Any) -> Any:
    from datetime import datetime, timezone

    if not isinstance(value, str) or len(value) < 19 or value[10] != "T":
        return value
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return value
    if moment.tzinfo is not None:
        moment = moment.astimezone(timezone.utc).replace(tzinfo=None)
    return moment.isoformat()
