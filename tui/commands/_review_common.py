"""What the human-review command modules share: the target-kind choice and how values print."""

from __future__ import annotations

from typing import Any

from annotation.vocab import TARGET_KINDS
from tui.commands import _click as click


KIND = click.Choice(TARGET_KINDS)


def _split(text: str | None) -> list[str] | None:
    return [t.strip() for t in text.split(",") if t.strip()] if text else None


def _fmt(value: Any) -> str:
    from annotation.review import ratings as rating

    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.3f}"
    return rating.value_text(value)
