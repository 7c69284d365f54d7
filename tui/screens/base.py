"""The base of every data screen: read and write through thread workers that answer by message.

``load(what, fn)`` runs ``fn(session)`` read-only in an exclusive worker per ``what`` (a newer load
of the same thing supersedes an older one) and posts ``Loaded``; ``save(what, fn)`` runs a write
and posts ``Saved``. ``fn`` of a save may return an ``Edit`` (or ``(result, Edit)``) which goes on
the app's undo stack. Errors come back as ``Failed`` and are shown as a notification.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from textual import on
from textual.screen import Screen
from textual.worker import get_current_worker

from tui.messages import Failed, Loaded, Saved

if TYPE_CHECKING:
    from sqlmodel import Session

    from tui.app import ChainmarkApp


class WorkScreen(Screen[Any]):
    """A screen whose data comes from the store through workers."""

    @property
    def cm(self) -> "ChainmarkApp":
        return self.app  # type: ignore[return-value]

    def load(self, what: str, fn: Callable[[Session], Any]) -> None:
        self.run_worker(lambda: self._load(what, fn), thread=True, exclusive=True, group=f"load:{what}",
                        exit_on_error=False, description=f"loading {what}")

    def _load(self, what: str, fn: Callable[[Session], Any]) -> None:
        worker = get_current_worker()
        try:
            data = self.cm.read(fn)
        except Exception as exc:  # noqa: BLE001 - every failure becomes a visible message
            self.post_message(Failed(what, _describe(exc)))
            return
        if not worker.is_cancelled:
            self.post_message(Loaded(what, data))

    def save(self, what: str, fn: Callable[[Session], Any]) -> None:
        self.run_worker(lambda: self._save(what, fn), thread=True, exclusive=False, group="save",
                        exit_on_error=False, description=what)

    def _save(self, what: str, fn: Callable[[Session], Any]) -> None:
        from tui.app import Edit

        try:
            out = self.cm.write(fn)
        except Exception as exc:  # noqa: BLE001
            self.post_message(Failed(what, _describe(exc)))
            return
        result = out
        if isinstance(out, Edit):
            self.cm.call_from_thread(self.cm.push_undo, out)
            result = None
        elif isinstance(out, tuple) and len(out) == 2 and isinstance(out[1], Edit):
            self.cm.call_from_thread(self.cm.push_undo, out[1])
            result = out[0]
        self.post_message(Saved(what, result))

    @on(Failed)
    def _on_failed(self, message: Failed) -> None:
        self.notify(message.error, title=f"{message.what} failed", severity="error", timeout=8)

    @on(Saved)
    def _on_saved(self, message: Saved) -> None:
        self.refresh_data()

    def refresh_data(self) -> None:
        """Reload what the screen shows (after a save, an undo, or returning to the screen)."""

    def on_screen_resume(self) -> None:
        # Paint first, then load: a worker importing the store or running a query would otherwise
        # compete with the screen's first frame for the interpreter.
        self.call_after_refresh(self.refresh_data)


def _describe(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    if hasattr(exc, "message") and isinstance(getattr(exc, "message"), str):  # click.ClickException
        text = exc.message  # type: ignore[attr-defined]
    return text.splitlines()[0] if text else type(exc).__name__
