"""Answer spec editor: one form per answer kind, converted to and from the stored tagged union.

The text conventions are chosen so every kind fits plain inputs: alias groups are one group per
line with aliases separated by ``|``; lists are one item per line; MCQ options are ``A: text`` lines;
interleaved golden blocks are ``text: …`` / ``image: …`` lines. Validation is the domain's
``validate_answer_spec``; the editor only reports its message.
"""

from __future__ import annotations

from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Input, Label, Select, Static, TextArea

from annotation.answers import KINDS, AnswerSpecError, describe, validate_answer_spec
from tui.safe_text import data_content
from tui.widgets.data_input import DataInput
from tui.widgets.data_text_area import DataTextArea

# Field name → (label, multi-line?) for each kind.
FORMS: dict[str, list[tuple[str, str, bool]]] = {
    "whitelist": [
        ("groups", "groups (a line per group, aliases split by |)", True),
        ("blacklist", "blacklist (same form, may be empty)", True),
    ],
    "references": [("references", "references (one per line)", True)],
    "exact": [("value", "value", False), ("variants", "variants (split by |)", False)],
    "contains": [("value", "value", False), ("variants", "variants (split by |)", False)],
    "numeric": [
        ("value", "value", False),
        ("tolerance", "tolerance", False),
        ("variants", "variants (split by |)", False),
    ],
    "mcq": [("options", "options (one 'A: text' per line)", True), ("letter", "correct letter", False)],
    "interleaved": [("golden", "golden blocks ('text: …' or 'image: path' per line)", True)],
    "none": [],
}


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


def _split(text: str) -> list[str]:
    return [part.strip() for part in text.split("|") if part.strip()]


def spec_from_fields(kind: str, values: dict[str, str]) -> dict[str, Any]:
    """Build a spec from the form's raw texts (not validated; see ``validate_answer_spec``)."""
    v = {
        k: (values.get(k) or "")
        for k in ("groups", "blacklist", "references", "value", "tolerance", "variants", "options", "letter", "golden")
    }
    if kind == "whitelist":
        black = [_split(line) for line in _lines(v["blacklist"])]
        return {"kind": kind, "groups": [_split(line) for line in _lines(v["groups"])], "blacklist": black or None}
    if kind == "references":
        return {"kind": kind, "references": _lines(v["references"])}
    if kind in ("exact", "contains", "numeric"):
        spec: dict[str, Any] = {"kind": kind, "value": v["value"].strip()}
        if kind == "numeric" and v["tolerance"].strip():
            try:
                spec["tolerance"] = float(v["tolerance"])
            except ValueError:
                spec["tolerance"] = v["tolerance"].strip()
        if _split(v["variants"]):
            spec["variants"] = _split(v["variants"])
        return spec
    if kind == "mcq":
        options: dict[str, str] = {}
        for line in _lines(v["options"]):
            letter, _, text = line.partition(":")
            options[letter.strip()] = text.strip()
        return {"kind": kind, "options": options, "letter": v["letter"].strip().upper()}
    if kind == "interleaved":
        blocks = []
        for line in _lines(v["golden"]):
            kind_, _, content = line.partition(":")
            blocks.append({"type": kind_.strip().lower(), "content": content.strip()})
        return {"kind": kind, "golden": blocks}
    return {"kind": "none"}


def fields_from_spec(spec: dict[str, Any]) -> dict[str, str]:
    """The form texts for a stored spec (inverse of ``spec_from_fields`` for valid specs)."""
    kind = spec.get("kind", "none")
    out: dict[str, str] = {}
    if kind == "whitelist":
        out["groups"] = "\n".join(" | ".join(g) for g in spec.get("groups") or [])
        out["blacklist"] = "\n".join(" | ".join(g) for g in spec.get("blacklist") or [])
    elif kind == "references":
        out["references"] = "\n".join(spec.get("references") or [])
    elif kind in ("exact", "contains", "numeric"):
        out["value"] = "" if spec.get("value") is None else str(spec.get("value"))
        tol = spec.get("tolerance")
        out["tolerance"] = "" if tol is None else f"{tol:g}" if isinstance(tol, (int, float)) else str(tol)
        out["variants"] = " | ".join(spec.get("variants") or [])
    elif kind == "mcq":
        out["options"] = "\n".join(f"{k}: {t}" for k, t in (spec.get("options") or {}).items())
        out["letter"] = str(spec.get("letter") or "")
    elif kind == "interleaved":
        out["golden"] = "\n".join(f"{b.get('type')}: {b.get('content')}" for b in spec.get("golden") or [])
    return out


class AnswerEditor(Vertical):
    """Kind selector plus that kind's fields; posts ``Changed`` with the spec and its validation error."""

    DEFAULT_CSS = """
    AnswerEditor { height: auto; }
    AnswerEditor .answer-row { height: 3; }
    AnswerEditor .answer-row Label { width: 14; padding: 1 0 0 1; }
    AnswerEditor TextArea { height: 4; }
    AnswerEditor #answer-status { height: auto; padding: 0 1; }
    """

    class Changed(Message):
        def __init__(self, editor: "AnswerEditor", spec: dict[str, Any], error: str | None) -> None:
            super().__init__()
            self.editor, self.spec, self.error = editor, spec, error

        @property
        def control(self) -> "AnswerEditor":
            return self.editor

    def __init__(self, spec: dict[str, Any] | None = None, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.spec = spec or {"kind": "none"}
        self._quiet = False
        self._built_kind: str | None = None

    def compose(self) -> ComposeResult:
        with Horizontal(classes="answer-row"):
            yield Label("answer kind")
            yield Select(
                [(k, k) for k in KINDS], value=self.spec.get("kind", "none"), allow_blank=False, id="answer-kind"
            )
        yield Vertical(id="answer-fields")
        yield Static("", id="answer-status")

    async def on_mount(self) -> None:
        await self._build(self.spec.get("kind", "none"), fields_from_spec(self.spec), post=False)

    def set_spec(self, spec: dict[str, Any]) -> None:
        """Show a stored spec without posting ``Changed`` (loading is not editing)."""
        self.spec = spec
        self._quiet = True
        with self.prevent(Select.Changed):
            self.query_one("#answer-kind", Select).value = spec.get("kind", "none")
        self.call_next(self._show_spec, spec.get("kind", "none"), fields_from_spec(spec))

    async def _show_spec(self, kind: str, values: dict[str, str]) -> None:
        """A spec of the kind already shown goes into the fields in place, so a live update keeps the
        focus and the cursor (rebuilding them dropped both, and the next keys went elsewhere)."""
        if kind != self._built_kind:
            await self._build(kind, values, False)
            return
        with self.prevent(Input.Changed, TextArea.Changed):
            for w in self.query("#answer-fields Input, #answer-fields TextArea"):
                value = values.get((w.id or "").removeprefix("answer-"), "")
                if isinstance(w, DataTextArea) and w.text != value:
                    w.show_text(value)
                elif isinstance(w, DataInput) and w.value != value:
                    w.show_value(value)
        self._quiet = False
        self._report(post=False)

    def edited_since(self, stored: dict[str, Any]) -> bool:
        """The form holds an edit of ``stored`` not saved yet: a valid spec that differs, or an invalid one
        (an answer half typed) that does."""
        spec, error = self.current()
        return self.spec != stored or (error is not None and spec != stored)

    async def _build(self, kind: str, values: dict[str, str], post: bool) -> None:
        self._quiet = True
        self._built_kind = kind
        box = self.query_one("#answer-fields", Vertical)
        focused = self.screen.focused
        had_focus = focused is not None and box in focused.ancestors
        await box.remove_children()
        widgets: list[Widget] = []
        for name, label, multi in FORMS[kind]:
            widgets.append(Label(label, classes="hint"))
            if multi:
                widgets.append(DataTextArea(values.get(name, ""), id=f"answer-{name}", soft_wrap=True))
            else:
                widgets.append(DataInput(values.get(name, ""), id=f"answer-{name}"))
        await box.mount_all(widgets)
        if had_focus:  # the field typed in is gone: the focus stays in the answer, on its kind
            self.query_one("#answer-kind", Select).focus()
        self.call_after_refresh(self._unquiet, post)

    def _unquiet(self, post: bool) -> None:
        self._quiet = False
        self._report(post=post)

    def values(self) -> dict[str, str]:
        out = {}
        for w in self.query("#answer-fields Input, #answer-fields TextArea"):
            name = (w.id or "").removeprefix("answer-")
            out[name] = w.text if isinstance(w, TextArea) else w.value  # type: ignore[attr-defined]
        return out

    def current(self) -> tuple[dict[str, Any], str | None]:
        kind = str(self.query_one("#answer-kind", Select).value)
        spec = spec_from_fields(kind, self.values())
        try:
            validate_answer_spec(spec)
            return spec, None
        except AnswerSpecError as exc:
            return spec, str(exc)

    def _report(self, post: bool = True) -> None:
        spec, error = self.current()
        status = self.query_one("#answer-status", Static)
        status.update(data_content(f"✗ {error}" if error else f"✓ {describe(spec)}"))
        status.set_class(bool(error), "error-text")
        status.set_class(not error, "ok-text")
        # Only a spec that differs from the one shown counts as an edit: Select and Input post
        # Changed on mount too, and those echoes must never overwrite the stored answer.
        if post and not self._quiet and spec != self.spec:
            if error is None:
                self.spec = spec
            self.post_message(self.Changed(self, spec, error))

    @on(Select.Changed, "#answer-kind")
    async def _kind_changed(self, event: Select.Changed) -> None:
        event.stop()
        if str(event.value) == self._built_kind:
            return  # the Select announcing the value it was built with, not a new choice
        await self._build(str(event.value), {}, True)

    @on(Input.Changed)
    @on(TextArea.Changed)
    def _field_changed(self, event: Message) -> None:
        event.stop()
        if not self._quiet:
            self._report()
