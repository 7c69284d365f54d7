"""Messages that thread workers post to screens ("messages up"): results of DB and tool work."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from textual.message import Message


@dataclass
class Result(Message):
    """What a screen's read worker hands back (``WorkScreen.fetch``): one subclass per kind of result,
    declared beside the screen that shows it, with typed fields, handled with ``@on(ThatResult)``.
    ``WHAT`` names it in a failure notice ("loading task failed")."""

    WHAT: ClassVar[str] = "data"


@dataclass
class TaskDetailLoaded(Result):
    """A task as the authoring screens show it (``tui.data.TaskDetail``)."""

    WHAT: ClassVar[str] = "task"
    detail: Any


@dataclass
class PreviewLoaded(Result):
    """A shrunk image for a preview pane: its caption, the PIL image, and the blob it came from (for zoom)."""

    WHAT: ClassVar[str] = "image"
    caption: str
    image: Any
    sha256: str | None = None


@dataclass
class Saved(Message):
    """A write committed; ``what`` says what changed (shown as a notification), ``data`` is its result."""

    what: str
    data: Any = None


@dataclass
class Failed(Message):
    """A worker raised; the screen shows the message and keeps its state."""

    what: str
    error: str


@dataclass
class ImageReady(Message):
    """A decoded, shrunk image for a preview slot (``key`` says which)."""

    key: str
    image: Any


@dataclass
class RecordsChanged(Message):
    """Someone (another terminal, another annotator) committed changes: ``notice`` is a
    ``store.changes.Notice`` saying which records. Sent to every open screen, PostgreSQL only."""

    notice: Any
