"""A statistic with its interval as text, the same in the CLI's tables and the TUI's dashboard."""

from __future__ import annotations

from typing import Any


def est_text(d: dict[str, Any] | None) -> str:
    """A statistic as the CLI prints it: value to 3 places, CI to 2; '–' when there is none."""
    if not d or d.get("value") is None:
        return "–"
    text = f"{d['value']:.3f}"
    if d.get("ci"):
        text += f" [{d['ci'][0]:.2f}, {d['ci'][1]:.2f}]"
    return text
