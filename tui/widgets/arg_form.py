"""An argument form generated from a tool's JSON schema (OpenAI function ``parameters``).

Each property becomes one input: text/number inputs, a select for enums, a checkbox for booleans,
JSON for arrays and free objects; nested objects with their own properties (VTC's ``param``) are
flattened as ``param.x``. ``values()`` converts the texts back to typed JSON so the tool runtime's
own schema check sees what a model would have sent.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Checkbox, Input, Label, Select

from tui.widgets.selection import NO_SELECTION, choose, is_nothing
from tui.widgets.data_input import DataInput

_BBOX_WORDS = re.compile(r"bbox|bounding box|\(x1, ?y1, ?x2, ?y2\)|\[x1, ?y1, ?x2, ?y2\]", re.IGNORECASE)


class FormNotReady(ValueError):
    """The form is between two tools: the old inputs are leaving and the new ones not mounted yet."""


@dataclass(frozen=True)
class ArgField:
    path: str  # "angle" or "param.x"
    schema: dict[str, Any]
    required: bool

    @property
    def type(self) -> str:
        t = self.schema.get("type", "string")
        return t[0] if isinstance(t, list) else str(t)

    @property
    def is_bbox(self) -> bool:
        text = f"{self.path} {self.schema.get('description', '')}"
        return bool(_BBOX_WORDS.search(text)) and self.type in ("array", "string")

    @property
    def bbox_normalised(self) -> bool:
        """True when the tool wants 0–1000 coordinates (Agentic-MME), False for pixels (GTA)."""
        return (
            "1000" in str(self.schema.get("description", ""))
            or self.type == "array"
            and "pixel" not in str(self.schema.get("description", "")).lower()
        )

    @property
    def is_image(self) -> bool:
        return self.path in ("image", "image_index") or self.path.endswith("image_index")

    @property
    def widget_id(self) -> str:
        return "arg-" + self.path.replace(".", "__")


def fields_of(schema: dict[str, Any], prefix: str = "") -> list[ArgField]:
    out: list[ArgField] = []
    required = set(schema.get("required") or [])
    for name, prop in (schema.get("properties") or {}).items():
        path = f"{prefix}{name}"
        if prop.get("type") == "object" and prop.get("properties"):
            out.extend(fields_of(prop, prefix=f"{path}."))
        else:
            out.append(ArgField(path, prop, name in required))
    return out


def convert(field: ArgField, raw: Any) -> Any:
    """Text (or bool) from the form → the typed value; ``ValueError`` names the field."""
    if field.type == "boolean":
        return bool(raw)
    text = str(raw).strip()
    if text == "":
        return None
    try:
        if field.type == "integer":
            return int(text)
        if field.type == "number":
            value = float(text)
            return int(value) if value.is_integer() and "." not in text else value
        if field.type in ("array", "object"):
            if field.type == "array" and not text.startswith("["):
                text = f"[{text}]"
            return json.loads(text)
    except (ValueError, json.JSONDecodeError) as exc:
        raise ValueError(f"{field.path}: expected {field.type}, got {text!r}") from exc
    return text


def format_value(field: ArgField, value: Any) -> str:
    if value is None:
        return ""
    if field.type in ("array", "object"):
        return json.dumps(value)
    return str(value)


class ArgForm(Vertical):
    """The inputs for one tool; rebuilt with ``set_tool`` when the palette selection changes."""

    DEFAULT_CSS = """
    ArgForm { height: auto; }
    ArgForm .arg-row { height: 3; }
    ArgForm .arg-row Label { width: 18; padding: 1 0 0 1; }
    ArgForm .arg-row Input, ArgForm .arg-row Select { width: 1fr; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.fields: list[ArgField] = []  # always the fields whose inputs are mounted
        self._switches = 0  # tools asked for; the form is ready when the last one's inputs are in
        self._switched = 0

    def compose(self) -> ComposeResult:
        yield from ()

    def set_tool(self, schema: dict[str, Any], defaults: dict[str, Any] | None = None) -> Any:
        """Rebuild the inputs; returns an awaitable that completes when they are mounted.

        The fields switch only once their inputs are in: an action reaching the form in the gap (a run
        deferred behind typed keys) read the new tool's fields while their inputs were not there yet,
        and crashed. In the gap there are no fields and ``values`` says the form is not ready."""
        defaults = defaults or {}
        fields = fields_of(schema)
        self._switches += 1
        switch = self._switches
        self.fields = []  # the old inputs are leaving
        removed = self.remove_children()
        rows = []
        for f in fields:
            label = f.path + ("*" if f.required else "")
            value = defaults.get(f.path, f.schema.get("default"))
            if f.type == "boolean":
                widget: Any = Checkbox(f.schema.get("description", "")[:50], value=bool(value), id=f.widget_id)
            elif f.schema.get("enum"):
                options = [(str(v), v) for v in f.schema["enum"]]
                widget = Select(options, value=value if value in f.schema["enum"] else NO_SELECTION, id=f.widget_id)
            else:
                hint = f.schema.get("description", "")
                if f.is_bbox:
                    hint = "ctrl+l picks a region · " + hint
                widget = DataInput(format_value(f, value), placeholder=hint[:90], id=f.widget_id)
            row = Horizontal(Label(label), widget, classes="arg-row")
            rows.append(row)

        async def mounted() -> None:
            await removed
            if rows:
                await self.mount_all(rows)
            if switch == self._switches:  # a later tool's inputs are on their way: it switches then
                self.fields, self._switched = fields, switch

        return mounted()

    @property
    def ready(self) -> bool:
        """The inputs of the last tool asked for are mounted (``fields`` are the chosen tool's)."""
        return self._switched == self._switches

    def set_value(self, path: str, value: Any) -> None:
        for f in self.fields:
            if f.path == path:
                found = self.query(f"#{f.widget_id}")
                if not found:
                    return
                w = found.first()
                if isinstance(w, Input):
                    w.value = format_value(f, value)
                elif isinstance(w, Checkbox):
                    w.value = bool(value)
                elif isinstance(w, Select):
                    choose(w, value)

    def field(self, path: str) -> ArgField | None:
        return next((f for f in self.fields if f.path == path), None)

    def bbox_field(self) -> ArgField | None:
        return next((f for f in self.fields if f.is_bbox), None)

    def raw(self, path: str) -> str:
        f = self.field(path)
        if f is None:
            return ""
        w = self.query_one(f"#{f.widget_id}")
        value = getattr(w, "value", "")
        return "" if is_nothing(value) else str(value)

    def values(self) -> dict[str, Any]:
        """The arguments as JSON (nested for dotted paths); empty optional fields are left out.
        ``FormNotReady`` (a ``ValueError``) while the chosen tool's inputs are still being mounted."""
        if not self.ready:
            raise FormNotReady("the tool's inputs are still being set up: try again")
        out: dict[str, Any] = {}
        for f in self.fields:
            w = self.query_one(f"#{f.widget_id}")
            raw = getattr(w, "value", "")
            if is_nothing(raw):
                continue
            if f.type == "boolean" and not f.required and bool(raw) == bool(f.schema.get("default", False)):
                continue  # an untouched optional checkbox: leave it out, as a model would
            value = convert(f, raw)
            if value is None:
                continue
            target = out
            *parents, leaf = f.path.split(".")
            for p in parents:
                target = target.setdefault(p, {})
            target[leaf] = value
        return out
