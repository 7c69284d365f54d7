"""The chainmark Textual app: built by ``make_app`` (CLI and tests alike), started by ``run_app``.

The app owns what every screen shares: the database engine (opened lazily inside a worker thread,
never on the UI thread), the blob store, the actor name for the audit trail, the image widget class
(injected, so tests can fix ``HalfcellImage``; otherwise chosen from the terminal's answer to
``tui.terminal_probe``) and the undo stack. Screens do their reading and
writing through ``read``/``write`` inside thread workers and get the results back as messages.
"""

from __future__ import annotations

import contextlib
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, TypeVar

import click
from textual import events
from textual.app import App
from textual.binding import Binding
from textual.message import Message
from textual.widget import Widget

from store.heap import HeapHold
from tui.context import AppContext
from tui.held_keys import KeyOrder
from tui.safe_text import visible
from tui.undo import Edit

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine
    from sqlmodel import Session

    from store.blobs import BlobStore
    from tui.terminal_probe import TerminalGraphics

T = TypeVar("T")


class QuitRequested(Message):
    """ctrl+q, sent through the focused widget so that it arrives after the keys queued before it."""


class ChainmarkApp(App[None]):
    """Keyboard-first workbench: home → task list → task editor → chain builder / checkpoints."""

    CSS_PATH = "chainmark.tcss"
    COMMANDS = App.COMMANDS | {lambda: _screen_actions(), lambda: _review_screens()}
    TITLE = "chainmark"
    BINDINGS = [
        # Not a priority binding, so a widget may still claim ctrl+z. Text areas give way to it
        # (``LayeredTextArea``): ``action_undo`` takes back a text area's own typing first, then the last
        # saved edit; everywhere else (one-line inputs included, which have no undo) the last saved edit.
        Binding("ctrl+z", "undo", "Undo", id="chainmark.undo"),
        Binding("question_mark", "help", "Help", id="chainmark.help"),
        # A priority binding (so it works on every screen, modals too); ``action_quit`` lets the keys typed
        # before it land first.
        Binding("ctrl+q", "quit", "Quit", priority=True, id="chainmark.quit"),
    ]

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: Any = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """Notifications often quote data (an error from an endpoint, a name): shown with control characters
        escaped and never read as markup."""
        super().notify(
            visible(message, keep_newlines=True), title=visible(title), severity=severity, timeout=timeout, markup=False
        )

    def __init__(
        self,
        ctx: AppContext,
        *,
        image_widget: type[Widget] | None = None,
        start_task: int | None = None,
        engine: Engine | None = None,
        image_protocol: str = "auto",
        graphics: TerminalGraphics | None = None,
    ) -> None:
        super().__init__()
        self._startup_heap = HeapHold()  # store.heap: frozen once the first screen has its data
        self._started = False
        self.ctx = ctx
        self._image_widget = image_widget
        self.image_protocol = image_protocol
        self._graphics = graphics
        self.start_task = start_task
        self._engine = engine
        self._blobs: BlobStore | None = None
        self._engine_lock = threading.Lock()
        self._write_lock = threading.Lock()
        self.undo_stacks: dict[str, list[Edit]] = {}
        self._undo_loaded: set[str] = (
            set()
        )  # scopes whose stored stack (tui.undo) was read  # per undo scope ("task 11", …): ctrl+z never crosses tasks
        self.crash_log: Path | None = None  # set when a crash was written to the log
        self._quit_asked = False
        self._quit_waiting = False  # a quit waits for a screen's load (``WorkScreen.settle_before_quit``)
        self.keymap_problems: list[str] = []
        self.keymap: dict[str, str] = {}  # [keymap] from chainmark.toml: binding id → keys (``keys_in_force``)
        self.live_changes = False  # True while a PostgreSQL LISTEN brings other people's changes in
        self._stop_listening = threading.Event()
        self._key_hold: Any = None  # tui.held_keys.KeyHold while a form waits for its choices
        self._key_order = KeyOrder(self)  # keys from the terminal, one at a time (tui.held_keys)
        self.pump_task: Any = None  # the task that runs the app's messages (tui.held_keys waits on it)
        self._apply_keymap()

    def _apply_keymap(self) -> None:
        """``[keymap]`` from chainmark.toml: binding id → keys, for every screen (``chainmark config keys``)."""
        from store.settings import current

        keymap = current().keymap
        if not keymap:
            return
        from tui.keymap import unknown_ids

        self.keymap_problems = [
            f"[keymap] {name!r} is not a binding id (chainmark config keys lists them)" for name in unknown_ids(keymap)
        ]
        self.keymap = dict(keymap)
        self.set_keymap(keymap)

    @property
    def image_widget(self) -> type[Widget]:
        """The widget class that draws images (Sixel, kitty graphics or half-cell blocks); loaded on
        first use, or by a worker right after the first frame (``on_mount``)."""
        if self._image_widget is None:
            from tui.image_widgets import widget_class

            self._image_widget = widget_class(self.image_protocol, self._graphics)
        return self._image_widget

    def startup_done(self) -> None:
        """The first screen has its data. Now the image widgets load in a worker (not earlier: their
        imports would slow the store's), and then everything loaded so far, which lives as long as the
        app, is set aside from the garbage collector until the app ends (``store.heap``); otherwise
        every full collection walks it (about 100 ms on the UI thread, every few hundred ms while typing)."""
        if self._started:
            return
        self._started = True

        def settle() -> None:
            try:
                self.image_widget  # noqa: B018 - loading is the point
            finally:
                self._startup_heap.hold()

        self.run_worker(settle, thread=True, exit_on_error=False, description="loading image widgets")
        self.run_worker(
            self._listen_for_changes,
            thread=True,
            exit_on_error=False,
            group="changes",
            description="listening for changes",
        )

    # ------------------------------------------------------------------ other people's changes

    def _listen_for_changes(self) -> None:
        """On PostgreSQL, hear every commit that changes authored records (``store.changes``) and tell
        the open screens; while this runs, screens do not poll. A lost connection is retried."""
        from textual.worker import get_current_worker

        from store.changes import listen, supports_notices

        worker = get_current_worker()
        if not supports_notices(self.engine()):
            return

        class Stop:
            def is_set(_self) -> bool:
                return self._stop_listening.is_set() or worker.is_cancelled

        connected_before = False

        def ready() -> None:
            nonlocal connected_before
            self.live_changes = True
            if connected_before:  # what was committed while the channel was down is unknown: look again
                from store.changes import Notice

                self.call_from_thread(self._tell_screens, Notice("someone", everything=True))
            connected_before = True

        stop = Stop()
        while not stop.is_set():
            try:
                for notice in listen(self.engine(), stop, ready=ready):
                    self.call_from_thread(self._tell_screens, notice)
            except Exception:  # noqa: BLE001 - screens fall back to polling until the channel is back
                pass
            self.live_changes = False
            self._stop_listening.wait(2.0)

    def _tell_screens(self, notice: Any) -> None:
        from tui.messages import RecordsChanged

        for screen in self.screen_stack:
            screen.post_message(RecordsChanged(notice))

    # ------------------------------------------------------------------ storage (worker threads only)

    @property
    def actor(self) -> str:
        """Who is acting: ``--as``, else ``CHAINMARK_USER``, else the login name, as the audit trail names
        them. (The bare ``--as`` value left the queues empty and blind mode off for everyone who had
        not typed their own name: the rating queue asked for ``--as NAME`` while saving as the login.)"""
        from store.db import acting_user

        return acting_user(self.ctx.actor)

    def engine(self) -> Engine:
        with self._engine_lock:
            if self._engine is None:
                self._engine = self.ctx.engine
            return self._engine

    @property
    def blobs(self) -> BlobStore:
        """The blob store beside this app's engine (built once; never opens a second engine)."""
        if self._blobs is None:
            from store.blobs import default_blob_store

            self._blobs = default_blob_store(self.engine())
        return self._blobs

    def read(self, fn: Callable[[Session], T]) -> T:
        """Run ``fn`` in a short read-only transaction (call from a worker thread)."""
        from store import read_only, session_scope

        with session_scope(read_only(self.engine()), self.actor) as s:
            return fn(s)

    def write(self, fn: Callable[[Session], T], *, edit_session: str | None = None) -> T:
        """Run ``fn`` in one write transaction; writes are serialised so they land in request order.
        ``edit_session`` names the editor visit the write comes from (one revision per visit)."""
        from store import session_scope

        with self._write_lock, session_scope(self.engine(), self.actor) as s:
            if edit_session:
                s.info["edit_session"] = edit_session
            return fn(s)

    def adopt_stored_undo(self, scope: str, stored: list[Edit]) -> None:
        """Entries stored by an earlier session of this person go under this session's own, once."""
        mine = self.undo_stacks.setdefault(scope, [])
        if scope in self._undo_loaded:
            return
        self._undo_loaded.add(scope)
        known = {e.entry_id for e in mine if e.entry_id is not None}
        mine[:0] = [e for e in stored if e.entry_id not in known]

    def undo_stack_for(self, scope: str) -> list[Edit]:
        """The undo stack of one scope (a task, or a screen that edits no task)."""
        return self.undo_stacks.setdefault(scope, [])

    def push_undo(self, edit: Edit | None, scope: str = "session") -> None:
        if edit is not None and not edit.dropped:
            stack = self.undo_stack_for(scope)
            stack.append(edit)
            del stack[:-50]
            from tui.screens.base import WorkScreen

            if isinstance(self.screen, WorkScreen):
                self.screen.show_undo_hint()

    def drop_undo(self, edits: list[Edit], scope: str) -> None:
        """Entries a later save took over (their stored rows went in its transaction): off the stack, and
        never pushed if their own save's push arrives after this (saves land in order, pushes may not)."""
        for edit in edits:
            edit.dropped = True
        stack = self.undo_stack_for(scope)
        stack[:] = [e for e in stack if not e.dropped]
        from tui.screens.base import WorkScreen

        if isinstance(self.screen, WorkScreen):
            self.screen.show_undo_hint()

    # ------------------------------------------------------------------ app actions

    def hold_keys(self) -> Any:
        """From now on hold every key (``tui.held_keys``) until the returned hold is released; the
        app's priority keys (quit) still act at once."""
        from tui.held_keys import KeyHold

        passing = frozenset(
            key for key, bindings in self._bindings.key_to_bindings.items() if any(b.priority for b in bindings)
        )
        self._key_hold = KeyHold(self, passing)
        return self._key_hold

    def end_key_hold(self, hold: Any) -> None:
        if self._key_hold is hold:
            self._key_hold = None

    async def on_event(self, event: events.Event) -> None:
        hold = self._key_hold
        if hold is not None and isinstance(event, events.Key) and hold.take(event):
            event.stop()
            event.prevent_default()
            return
        if isinstance(event, events.Key) and not event.is_forwarded and not self._key_order.admit(event):
            return  # posted again once the key before it has been handled
        await super().on_event(event)

    def on_mount(self) -> None:
        import asyncio

        self.pump_task = asyncio.current_task()
        from tui.screens.home import HomeScreen

        self.push_screen(HomeScreen())
        for problem in self.keymap_problems:
            self.notify(problem, severity="warning", markup=False, timeout=10)
        if self.start_task is not None:
            from tui.screens.task_editor import TaskEditorScreen

            self.push_screen(TaskEditorScreen(self.start_task))

    def action_command_palette(self) -> None:
        """ctrl+p (and the footer's palette key) open the guarded palette (``tui.widgets.command_palette``)."""
        from textual.command import CommandPalette

        from tui.widgets.command_palette import GuardedCommandPalette

        if self.use_command_palette and not CommandPalette.is_open(self):  # type: ignore[arg-type]  # App[object] in its stub
            self.push_screen(GuardedCommandPalette(id="--command-palette"))

    def action_help(self) -> None:
        from tui.screens.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.screen))

    async def wait_for_saves(self) -> None:
        """Wait until every write started so far has landed (or failed)."""
        pending = [w for w in self.workers if w.group == "save" and not w.is_finished]
        if pending:
            await self.workers.wait_for_complete(pending)

    async def action_undo(self) -> None:
        from tui.screens.base import UNDID, WorkScreen
        from tui.widgets.layered_text_area import LayeredTextArea

        focused = self.focused
        if isinstance(focused, LayeredTextArea) and focused.history.undo_stack:
            focused.undo()  # the field's own typing first; the undone text saves like typing does
            return
        screen = self.screen
        if isinstance(screen, WorkScreen):
            screen.flush_pending()  # typing not yet saved is the last edit: save it, so undo takes it back
        await self.wait_for_saves()
        if not isinstance(screen, WorkScreen):  # pragma: no cover - every editing screen is a WorkScreen
            return
        stack = self.undo_stack_for(screen.undo_scope)
        if not stack:
            self.notify(f"nothing to undo in {screen.undo_scope}", severity="warning")
            return
        edit = stack.pop()  # said once it has landed (``WorkScreen._on_saved``): an undo can be refused
        screen.save(f"{UNDID}{edit.label}", edit.undo)
        screen.show_undo_hint()

    def on_delivery_failed(self, event: events.DeliveryFailed) -> None:
        """An original image the browser did not get (``o`` in the zoom view under ``serve``)."""
        from tui.screens.image_zoom import ORIGINAL_DELIVERY

        if event.name == ORIGINAL_DELIVERY:
            self.notify(f"the original could not be handed over: {event.exception}", severity="error")

    def on_image_pane_zoom_requested(self, message: Any) -> None:
        """Any preview's ``enter``: its image full size (``tui.screens.image_zoom``)."""
        from tui.screens.image_zoom import ImageZoomScreen

        self.push_screen(ImageZoomScreen(message.source, message.caption))

    async def action_quit(self) -> None:
        """ctrl+q is a priority binding: it is acted on as its key arrives, while keys typed just before it
        may still wait in the focused field's queue. So the request goes through that queue too (it
        bubbles back here once the field has handled every key before it), and only then is the typing
        saved and the app quit. With nothing focused the keys wait in the screen's own queue (that is where
        Textual forwards them), so the request goes through the screen."""
        if not self._quit_asked:
            (self.focused or self.screen).post_message(QuitRequested())
            return
        await self._quit()

    def on_after_typed_keys(self, message: Any) -> None:
        """A priority action that waited for the keys typed before it (``tui.typed_keys``)."""
        message.stop()
        message.then()

    def on_quit_requested(self, message: QuitRequested) -> None:
        """The quit runs beside the app's messages, not inside this handler: it may wait (up to
        EARLY_TYPING_WAIT_S) for a task to load, and the app handled nothing meanwhile (keys, repaints)."""
        message.stop()
        self.run_worker(self._quit(), group="quit", description="quit")

    async def _quit(self) -> None:
        """Quit once the screens' work in hand has landed (a task still loading with keys typed for it,
        bounded) and pending typing is saved; ask first if something cannot be saved as it stands."""
        from tui.screens.base import WorkScreen
        from tui.screens.confirm import ConfirmDiscardScreen

        if self._quit_asked:  # ctrl+q again on the question: quit
            self.exit()
            return
        if self._quit_waiting:  # ctrl+q again while a load is awaited: the first one goes on
            return
        screens = [s for s in self.screen_stack if isinstance(s, WorkScreen)]
        self._quit_waiting = True
        try:
            for screen in screens:
                await screen.settle_before_quit()
        finally:
            self._quit_waiting = False
        for screen in screens:
            screen.flush_pending()
        await self.wait_for_saves()
        # Asked once the saves have landed: a save refused as a conflict (someone changed the field
        # meanwhile) leaves the edit in the form only, and quitting then would drop it silently.
        lost = [what for screen in screens for what in screen.unsaved_changes()]
        if not lost:
            self.exit()
            return

        def answered(discard: bool | None) -> None:
            self._quit_asked = False
            if discard:
                self.exit()

        self._quit_asked = True
        self.push_screen(
            ConfirmDiscardScreen(f"Not saved: {'; '.join(lost)}. Quit anyway?", discard_label="Quit  d"), answered
        )

    def on_unmount(self) -> None:
        """The app has ended: its startup heap goes back to the collector (a process may open another)."""
        self._startup_heap.release()

    def exit(self, *args: Any, **kwargs: Any) -> None:
        self._stop_listening.set()
        self._key_order.stop()
        super().exit(*args, **kwargs)

    def _handle_exception(self, error: Exception) -> None:
        # Textual's own handler prints the traceback and exits; keep a copy in a file first.
        from tui.crash_log import crash_log_path, write_crash

        with contextlib.suppress(Exception):  # the log is a courtesy; never mask the crash itself
            self.crash_log = write_crash(
                crash_log_path(self.ctx.url), error, [type(s).__name__ for s in self.screen_stack]
            )
        super()._handle_exception(error)


def _screen_actions() -> type:
    from tui.widgets.actions_provider import ScreenActions

    return ScreenActions


def _review_screens() -> type:
    from tui.screens.review.palette import ReviewScreens

    return ReviewScreens


def make_app(
    ctx: AppContext,
    *,
    image_widget: type[Widget] | None = None,
    start_task: int | None = None,
    engine: Engine | None = None,
) -> ChainmarkApp:
    """Build the app; tests pass ``image_widget=HalfcellImage`` and an engine on their own database."""
    return ChainmarkApp(ctx, image_widget=image_widget, start_task=start_task, engine=engine)


def run_app(app_context: AppContext) -> None:
    """Open the TUI (what ``chainmark`` does when called without a subcommand)."""

    from tui import terminal_probe
    from tui.image_widgets import PROTOCOLS

    from store.settings import current

    protocol = current().images
    if protocol not in PROTOCOLS:
        raise click.ClickException(f"CHAINMARK_IMAGES={protocol!r} is not one of {', '.join(PROTOCOLS)}")
    graphics = terminal_probe.answer()  # before Textual owns the terminal
    app = ChainmarkApp(app_context, image_protocol=protocol, graphics=graphics)
    app.run()
    if app.crash_log is not None:
        click.echo(f"chainmark: the traceback above is also saved in {app.crash_log}", err=True)
    status = exit_status(app)
    if status:
        raise SystemExit(status)


def exit_status(app: App[Any]) -> int:
    """The process's exit status once the TUI has closed: Textual's return code, which a crash sets to 1
    (a crashed TUI exited 0, so a script or a supervisor calling ``chainmark`` took it for a clean quit)."""
    return int(app.return_code or 0)
