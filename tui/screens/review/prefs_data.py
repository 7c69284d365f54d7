"""Read and write functions behind the preference queue, run in worker threads, returning plain data.

What a person may see of an item comes from ``annotation.review.preferences.pair_view`` (blind: A and
B only, names masked); this adds the queue with everyone's progress and the task's images.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlmodel import Session

from annotation.review import preferences as prefs
from annotation.review.annotators import get_annotator
from store.models import Asset
from tui.screens.review.data import ImageRef
from tui.undo import Edit


@dataclass(frozen=True)
class PrefQueue:
    annotator: str
    items: list[prefs.PairItem]
    progress: list[tuple[str, int, int]]

    @property
    def done(self) -> int:
        return sum(1 for i in self.items if i.status == "done")

    def first_open(self) -> int:
        return next((n for n, i in enumerate(self.items) if i.status != "done"), 0)


@dataclass(frozen=True)
class PrefItem:
    view: prefs.PairView
    images: list[ImageRef] = field(default_factory=list)


def pref_queue(session: Session, annotator: str) -> PrefQueue:
    person = get_annotator(session, annotator)
    return PrefQueue(person.name, prefs.queue(session, person.name), prefs.progress(session))


def pref_item(session: Session, annotator: str, item_id: int) -> PrefItem:
    view = prefs.pair_view(session, annotator, item_id)
    images = []
    for n, asset_id in enumerate(view.image_asset_ids):
        asset = session.get(Asset, asset_id)
        if asset is not None and asset.mime.startswith("image/"):
            images.append(ImageRef(f"query image {n + 1}", asset_id, asset.sha256))
    return PrefItem(view, images)


def submit_preference(
    session: Session, annotator: str, item_id: int, choice: str, reason: str | None
) -> tuple[int, Edit]:
    """Store the judgement; the Edit puts the item back as it was before (ctrl+z)."""
    before, before_reason = prefs.shown_judgement(session, annotator, item_id)
    row = prefs.record(session, annotator, item_id, choice, reason)
    return row.id or 0, Edit(
        f"judgement of item {item_id}",
        "restore_preference",
        {"annotator": annotator, "item_id": item_id, "choice": before, "reason": before_reason},
    )


def withdraw_preference(session: Session, annotator: str, item_id: int) -> None:
    prefs.withdraw(session, annotator, item_id)
