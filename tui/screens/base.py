"""The base of every data screen: read and write through thread workers that answer by message.

``fetch(Kind, fn)`` runs ``fn(session)`` read-only in an exclusive worker per result kind (a newer
fetch of the same kind supersedes an older one) and posts the typed ``Kind`` message ``fn`` built;
``save(what, fn)`` runs a write and posts ``Saved``. ``fn`` of a save may return an ``Edit`` (or ``(result, Edit)``) which goes on
the app's undo stack. Errors come back as ``Failed`` and are shown as a notification.

Nothing typed is lost quietly: ``flush_pending`` saves what a screen holds back (debounced typing)
and runs whenever the screen is covered by another, before an undo and before quitting;
``unsaved_changes`` names what cannot be saved as it stands (an invalid answer spec, an unaccepted
tool run, a half-filled form), and ``leave``/quit ask before dropping it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from textual import on
from textual.screen import Screen
from textual.worker import get_current_worker

from tui.messages import Failed, Result, Saved
from tui.widgets.layered_text_area import LayeredTextArea

if TYPE_CHECKING:
    from sqlmodel import Session

    from tui.app import ChainmarkApp


R = TypeVar("R", bound=Result)


class WorkScreen(Screen[Any]):
    """A screen whose data comes from the store through workers."""

    LOAD_FAILURES: ClassVar[dict[str, tuple[str, str, str | None]]] = {}
    """What stays on screen when a load of a kind (its ``Result.WHAT``) fails: (the ``Static`` that says so,
    the words before the reason, the widget whose loading spinner stops, if any). The failure notice fades
    after 8 s; without this the screen went on showing its spinner or "loading…" for ever."""

    @property
    def cm(self) -> "ChainmarkApp":
        return self.app  # type: ignore[return-value]

    @property
    def edit_session(self) -> str:
        """This visit of the screen: its saves of one task make one revision, not one per typing pause."""
        key = self.__dict__.get("_edit_session")
        if key is None:
            import uuid

            key = self.__dict__["_edit_session"] = uuid.uuid4().hex
        return key

    def on_mount(self) -> None:
        self._load_stored_undo()

    def _load_stored_undo(self) -> None:
        """This person's undo stack for the screen's scope, as stored by an earlier session (once per scope)."""
        scope = self.undo_scope
        if scope in self.cm._undo_loaded:
            return

        def read() -> None:
            from tui.undo import stored_stack

            try:
                stored = self.cm.read(lambda s: stored_stack(s, scope))
            except Exception:  # noqa: BLE001 - an unreadable stack only means nothing older to undo
                return
            self.cm.call_from_thread(self._adopt_undo, scope, stored)

        self.run_worker(read, thread=True, group="undo-stack", exit_on_error=False, description="undo stack")

    def _adopt_undo(self, scope: str, stored: list[Any]) -> None:
        self.cm.adopt_stored_undo(scope, stored)
        if self.is_attached:
            self.show_undo_hint()

    def focus_when_untouched(self, widget: Any) -> bool:
        """Focus ``widget`` (the field a form is typed into) once the screen's data has loaded, unless the
        annotator has moved the focus meanwhile: focus is never taken from where someone is typing. Until
        then it is nowhere or where the screen put it by itself (the first focusable widget)."""
        from textual.widgets import Input, TextArea

        focused, chain = self.focused, self.focus_chain
        untouched = focused is None or (focused is chain[0] and not isinstance(focused, (Input, TextArea)))
        if focused is widget or not untouched:
            return False
        # At once, not ``widget.focus()``: that queues the move behind keys already waiting, and a key
        # handled in between reached the screen with nowhere to go (a character of early typing lost).
        self.set_focus(widget)
        return True

    def fetch(self, kind: type[R], fn: Callable[[Session], R]) -> None:
        """Read on a worker thread: ``fn(session)`` builds the typed result (a ``Result`` message), which is
        posted to this screen. A newer fetch of the same kind supersedes an older one still running."""
        self.run_worker(
            lambda: self._fetch(kind, fn),
            thread=True,
            exclusive=True,
            group=f"load:{kind.__name__}",
            exit_on_error=False,
            description=f"loading {kind.WHAT}",
        )

    def _fetch(self, kind: type[R], fn: Callable[[Session], R]) -> None:
        worker = get_current_worker()
        try:
            message = self.cm.read(fn)
        except Exception as exc:  # noqa: BLE001 - every failure becomes a visible message
            self.post_message(Failed(kind.WHAT, _describe(exc)))
            return
        if not worker.is_cancelled:
            self.post_message(message)

    def fetch_preview(self, pane: Any, images: list[Any], index: int, size: tuple[int, int] = (480, 360)) -> None:
        """Image ``index`` (cycling) of ``images`` (refs with ``caption`` and ``sha256``) for ``pane``, which
        is hidden when there are none; the shrunk image arrives as ``PreviewLoaded``."""
        from tui.images import preview
        from tui.messages import PreviewLoaded

        pane.display = bool(images)
        if not images:
            return
        ref, cm = images[index % len(images)], self.cm
        caption = f"{ref.caption} ({index % len(images) + 1}/{len(images)})"
        self.fetch(
            PreviewLoaded, lambda s: PreviewLoaded(caption, preview(cm.blobs.get(ref.sha256, s), size), ref.sha256)
        )

    @property
    def undo_scope(self) -> str:
        """Whose undo stack this screen's edits go on: the task it edits, so ctrl+z on one task never
        takes back an edit of another; screens that edit no task share one stack."""
        task_id = getattr(self, "task_id", None)
        return f"task {task_id}" if task_id is not None else "session"

    def show_undo_hint(self) -> None:
        """Say in the header what ctrl+z would take back here (``validate_sub_title`` adds it)."""
        self.sub_title = self.sub_title

    def validate_sub_title(self, value: str | None) -> str:
        """Whatever the screen puts in its sub-title, the undo hint stays at its end (alone, without the
        separator, when the screen has no sub-title of its own: "chainmark —  · ctrl+z …" read oddly); in a
        text field with typing of its own to undo, the hint says that ctrl+z takes that back first."""
        own = (value or "").split(_UNDO_HINT)[0]
        if own.startswith(_UNDO_ALONE):
            own = ""
        stack = self.cm.undo_stacks.get(self.undo_scope) or [] if self.is_attached else []
        focused = self.focused if self.is_attached else None
        typing = isinstance(focused, LayeredTextArea) and focused.has_own_undo
        if typing:  # what the field's own undo covers is not what comes after it
            covered = self.typing_entries(focused)
            stack = [e for e in stack if not any(e is c for c in covered)]
        undoes = [*(["typing"] if typing else []), *([stack[-1].label] if stack else [])]
        if not undoes:
            return own
        what = ", then ".join(undoes)
        return f"{own}{_UNDO_HINT}{what}" if own else f"{_UNDO_ALONE}{what}"

    def typing_entries(self, field: Any) -> list[Any]:
        """The undo entries that ``field``'s own undo takes back too (``tui.undo.TypingSpan``); none here."""
        return []

    @on(LayeredTextArea.OwnUndoChanged)
    def _own_undo_changed(self, message: LayeredTextArea.OwnUndoChanged) -> None:
        message.stop()
        self.show_undo_hint()

    def save(self, what: str, fn: Callable[[Session], Any]) -> None:
        """Write on a worker thread. The write lands even when the screen has been left meanwhile (a model's
        answer arriving after the annotator went back was dropped: the screen no longer reached the app)."""
        scope, cm = self.undo_scope, self.cm
        self.run_past_leaving(lambda: self._save(cm, what, fn, scope), what, group="save")

    def run_past_leaving(self, work: Callable[[], Any], description: str, group: str = "default") -> None:
        """``work`` on a thread of the app's, not the screen's: a screen's unmount cancels its workers, and
        work asked just before leaving (escape saves the typing, then pops the screen) whose worker had not
        started by then never ran. For what the annotator asked for and expects done: saves, exports."""
        self.cm.run_worker(work, thread=True, group=group, exit_on_error=False, description=description)

    def _save(self, cm: "ChainmarkApp", what: str, fn: Callable[[Session], Any], scope: str = "session") -> None:
        from tui.undo import Edit, record

        def write_and_remember(session: Session) -> Any:
            out = fn(session)
            edit = (
                out
                if isinstance(out, Edit)
                else (out[1] if isinstance(out, tuple) and len(out) == 2 and isinstance(out[1], Edit) else None)
            )
            if edit is not None:  # stored with the edit itself: ctrl+z still works after a restart
                record(session, scope, edit)
            return out

        try:
            out = cm.write(write_and_remember, edit_session=self.edit_session)
        except Exception as exc:  # noqa: BLE001
            self.post_message(Failed(what, _describe(exc)))
            return
        result = out
        if isinstance(out, Edit):
            cm.call_from_thread(cm.push_undo, out, scope)
            result = None
        elif isinstance(out, tuple) and len(out) == 2 and isinstance(out[1], Edit):
            cm.call_from_thread(cm.push_undo, out[1], scope)
            result = out[0]
        self.post_message(Saved(what, result))

    @on(Failed)
    def _on_failed(self, message: Failed) -> None:
        self.notify(message.error, title=f"{message.what} failed", severity="error", timeout=8)
        shown = self.LOAD_FAILURES.get(message.what)
        if shown is not None:
            self._show_load_failure(message.error, *shown)

    def _show_load_failure(self, error: str, where: str, words: str, spinner: str | None) -> None:
        from rich.text import Text
        from textual.widgets import Static

        from tui.safe_text import data_text

        if spinner is not None:
            self.query_one(spinner).loading = False
        self.query_one(where, Static).update(Text(words, style="bold") + data_text(error, keep_newlines=False))

    @on(Saved)
    def _on_saved(self, message: Saved) -> None:
        if message.what.startswith(UNDID):
            self.notify(f"undid in {self.undo_scope}: {message.what.removeprefix(UNDID)}", timeout=3)
        self.refresh_data()

    def refresh_data(self) -> None:
        """Reload what the screen shows (after a save, an undo, or returning to the screen)."""

    def flush_pending(self) -> None:
        """Start saving whatever the screen holds back (debounced typing); nothing by default."""

    async def settle_before_quit(self) -> None:
        """Wait (bounded) for work in hand that decides what quitting would drop; nothing by default."""

    def unsaved_changes(self) -> list[str]:
        """What leaving now would drop because it cannot be saved as it stands (shown in the prompt)."""
        return []

    def confirm_discard(self, then: Callable[[], object], lost: list[str] | None = None) -> None:
        """Run ``then`` now, or once the annotator agrees to drop ``lost`` (default: ``unsaved_changes``)."""
        lost = self.unsaved_changes() if lost is None else lost
        if not lost:
            then()
            return
        from tui.screens.confirm import ConfirmDiscardScreen

        def answered(discard: bool | None) -> None:
            if discard:
                then()

        self.app.push_screen(ConfirmDiscardScreen(f"Not saved: {'; '.join(lost)}. Discard?"), answered)

    def leave(self) -> None:
        """Go back a screen: pending typing is saved, anything unsavable is asked about first."""
        self.flush_pending()
        self.confirm_discard(self.app.pop_screen)

    def on_screen_suspend(self) -> None:
        # Covered by another screen (a push, a modal, the command palette's actions): save typing now,
        # so nothing waits on a timer of a screen that may never come back.
        self.flush_pending()

    def on_screen_resume(self) -> None:
        # Paint first, then load: a worker importing the store or running a query would otherwise
        # compete with the screen's first frame for the interpreter.
        self.call_after_refresh(self.refresh_data)
        self.show_undo_hint()


UNDID = "undid: "
"""What an undo's save is called (``ChainmarkApp.action_undo``); its label follows."""
_UNDO_HINT = " · ctrl+z undoes: "
_UNDO_ALONE = _UNDO_HINT.removeprefix(" · ")


def _describe(exc: BaseException) -> str:
    """One line for a notice: the CLI's own wording for an error the user can act on (a database that
    cannot be opened, a lock held too long), else the exception's first line."""
    from tui.errors import describe

    known = describe(exc)
    if known is not None:
        return known
    text = str(exc) or type(exc).__name__
    if hasattr(exc, "message") and isinstance(getattr(exc, "message"), str):  # click.ClickException
        text = exc.message  # type: ignore[attr-defined]
    return text.splitlines()[0] if text else type(exc).__name__
