"""One step of a trajectory as a readable transcript: its name and arguments, timing, the model's
text, its code highlighted with its real newlines, and its output; long parts collapsed to a few lines
("… k more lines") until the row is expanded; search matches highlighted.

Everything from data goes through ``visible`` into ``Text``/``Syntax`` objects, which never read Rich
markup: a ``[bold]`` in a tool output shows as written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Protocol

from functools import lru_cache

from rich.console import Group, RenderableType
from rich.style import Style
from rich.syntax import Syntax
from rich.text import Text

from tui.safe_text import visible


class ModelCostLike(Protocol):
    @property
    def calls(self) -> int: ...
    @property
    def seconds(self) -> float | None: ...
    @property
    def prompt_tokens(self) -> int: ...
    @property
    def completion_tokens(self) -> int: ...
    @property
    def tokens(self) -> int: ...


class StepLike(Protocol):
    """What is shown of a step (``trajectory_data.Step``; widgets do not import screens)."""

    @property
    def name(self) -> str: ...
    @property
    def thought(self) -> str: ...
    @property
    def call(self) -> str: ...
    @property
    def code(self) -> str: ...
    @property
    def result(self) -> str: ...
    @property
    def ok(self) -> bool: ...
    @property
    def seconds(self) -> float | None: ...
    @property
    def cost(self) -> ModelCostLike: ...


TEXT_LINES = 4  # lines of a thought, an output or an answer shown while collapsed
TEXT_CHARS = 480  # characters of the same (one long line wraps into many)
CODE_LINES = 12
CODE_THEME = "monokai"  # fixed, so screenshots do not depend on the terminal
MATCH_STYLE = "bold black on yellow"
_DEFAULT_FG = Style.parse("#f8f8f2").color  # the theme's plain-text colour: left to the widget instead
_THEME = Syntax.get_theme(CODE_THEME)


@dataclass(frozen=True)
class Rendered:
    renderable: RenderableType
    truncated: bool  # something is hidden while collapsed


def _cut(text: str, expanded: bool, lines: int, chars: int) -> tuple[str, str]:
    """``(shown, note)``: the text or its first lines/characters and what was left out."""
    if expanded:
        return text, ""
    rows = text.splitlines()
    shown = "\n".join(rows[:lines])
    more = len(rows) - lines
    if len(shown) > chars:
        shown = shown[:chars].rstrip()
        rest = len("\n".join(rows[:lines])) - len(shown)
        return shown, (f"… {more} more lines" if more > 0 else f"… {rest} more characters")
    return shown, (f"… {more} more line{'s' if more != 1 else ''}" if more > 0 else "")


def _highlight(text: Text, query: str) -> None:
    if query:
        text.highlight_regex(re.compile(re.escape(query), re.IGNORECASE), MATCH_STYLE)


def duration_text(seconds: float | None) -> str:
    """``0.42s``, ``3.4s``, ``2m05s``; empty when unknown."""
    if seconds is None:
        return ""
    if seconds < 1:
        return f"{seconds:.2f}s"
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, rest = divmod(int(round(seconds)), 60)
    return f"{minutes}m{rest:02d}s"


def timing_text(step: StepLike) -> str:
    """``0.42s · model 3.1s · 1,234 tok`` from what was recorded (empty when nothing was)."""
    parts = []
    if step.seconds is not None and step.seconds >= 0.005:  # an instant (an answer, a planned call) says nothing
        parts.append(duration_text(step.seconds))
    cost = step.cost
    if cost.seconds is not None:
        parts.append(f"model {duration_text(cost.seconds)}" + (f" ×{cost.calls}" if cost.calls > 1 else ""))
    if cost.tokens:
        split = (
            f" ({cost.prompt_tokens:,} in, {cost.completion_tokens:,} out)"
            if cost.prompt_tokens and cost.completion_tokens
            else ""
        )
        parts.append(f"{cost.tokens:,} tok{split}")
    return " · ".join(parts)


def highlight(code: str, lexer: str = "python") -> Text:
    """Code highlighted with the fixed theme's colours only: no background (the row's own shows
    through, cursor included) and plain tokens in the widget's colour. Pygments is slow (~1 ms a
    line): callers with much code do this in a worker."""
    highlighted = Syntax(code, _lexer(lexer), theme=_THEME).highlight(code)
    out = Text(highlighted.plain.rstrip("\n"), no_wrap=False)
    for span in highlighted.spans:
        st = Style.parse(span.style) if isinstance(span.style, str) else span.style
        colour = st.color if st.color is not None and st.color != _DEFAULT_FG else None
        if colour is not None or st.bold or st.italic or st.underline:
            out.stylize(
                Style(color=colour, bold=st.bold, italic=st.italic, underline=st.underline),
                span.start,
                min(span.end, len(out.plain)),
            )
    return out


@lru_cache(maxsize=8)
def _lexer(name: str) -> Any:
    """Pygments' lexer, looked up once (the lookup costs more than lexing a short block)."""
    return Syntax("", name).lexer


@lru_cache(maxsize=2048)
def _highlighted(code: str) -> Text:
    return highlight(code)


def code_text(code: str) -> Text:
    """Highlighted Python, remembered: the loading worker highlights a trajectory's code once
    (``prepare``) and the rows on the UI thread reuse it (a copy, as search marks change it)."""
    return _highlighted(code).copy()


def _code_shown(code: str, expanded: bool) -> tuple[str, int]:
    """``(code as shown, lines hidden)``."""
    shown = visible(code, keep_newlines=True).strip("\n")
    rows = shown.splitlines()
    hidden = 0 if expanded else max(0, len(rows) - CODE_LINES)
    return ("\n".join(rows[:CODE_LINES]) if hidden else shown), hidden


def _code(code: str, expanded: bool, query: str) -> tuple[list[RenderableType], bool]:
    shown, hidden = _code_shown(code, expanded)
    text = code_text(shown)
    _highlight(text, query)
    if hidden:
        text.append(f"\n… {hidden} more line{'s' if hidden != 1 else ''} of code", style="dim")
    return [text], bool(hidden)


def render_step(step: StepLike | None, *, expanded: bool = False, query: str = "") -> Rendered:
    """The step as a group of renderables (``—`` for no step)."""
    if step is None:
        return Rendered(Text("—", style="dim"), False)
    truncated = False
    parts: list[RenderableType] = []
    head = Text()
    head.append(visible(step.name), style="bold" if step.ok else "bold red")
    if step.call:
        shown, note = _cut(visible(step.call, keep_newlines=True), expanded, TEXT_LINES, TEXT_CHARS)
        head.append(" " + shown)
    _highlight(head, query)
    if step.call and note:
        head.append(f"\n{note}", style="dim")
        truncated = True
    parts.append(head)
    timing = timing_text(step)
    if timing:
        parts.append(Text(timing, style="dim"))
    if step.thought:
        shown, note = _cut(visible(step.thought, keep_newlines=True), expanded, TEXT_LINES, TEXT_CHARS)
        thought = Text(shown, style="italic dim")
        _highlight(thought, query)
        if note:
            thought.append(f"\n{note}", style="dim")
            truncated = True
        parts.append(thought)
    if step.code:
        code, cut = _code(step.code, expanded, query)
        parts += code
        truncated = truncated or cut
    if step.result:
        shown, note = _cut(visible(step.result, keep_newlines=True), expanded, TEXT_LINES, TEXT_CHARS)
        result = Text("→ ", style="dim")
        result.append(shown, style="" if step.ok else "red")
        _highlight(result, query)
        if note:
            result.append(f"\n{note}", style="dim")
            truncated = True
        parts.append(result)
    return Rendered(Group(*parts), truncated)


def prepare(steps: "list[StepLike | None]") -> None:
    """Highlight the code of ``steps`` as collapsed rows show it (run in the loading worker)."""
    for step in steps:
        if step is not None and step.code:
            code_text(_code_shown(step.code, False)[0])


def collapsed_haystack(step: StepLike | None) -> str:
    """The text a collapsed step shows (lower-case), to tell a match that is out of sight."""
    if step is None:
        return ""
    parts = [visible(step.name)]
    for text in (step.call, step.thought, step.result):
        parts.append(_cut(visible(text, keep_newlines=True), False, TEXT_LINES, TEXT_CHARS)[0])
    parts.append("\n".join(visible(step.code, keep_newlines=True).strip("\n").splitlines()[:CODE_LINES]))
    return "\n".join(parts).lower()


def step_haystack(step: StepLike | None) -> str:
    """The text search looks in (lower-case, as it is shown)."""
    if step is None:
        return ""
    return "\n".join(
        visible(x, keep_newlines=True) for x in (step.name, step.call, step.thought, step.code, step.result)
    ).lower()
