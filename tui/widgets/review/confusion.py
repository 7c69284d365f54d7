"""A confusion matrix of two raters as a Rich table: rows are rater A's values, columns rater B's."""

from __future__ import annotations

from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.widgets import Static

from tui.safe_text import data_cells
from tui.widgets.review.event_text import value_text


def _short(value: Any, width: int = 10) -> str:
    text = value_text(value)
    return text if len(text) <= width else text[: width - 1] + "…"


class ConfusionMatrix(Static):
    DEFAULT_CSS = "ConfusionMatrix { height: auto; }"

    caption = ""
    """What the matrix shows (its title), for tests and screen readers."""

    def show(self, a: str, b: str, categories: list[Any], counts: list[list[int]]) -> None:
        self.caption = f"{a} (rows) × {b} (columns)"
        table = Table(show_lines=False, box=None, pad_edge=False)
        table.add_column("", style="bold")
        for c in categories:
            table.add_column(*data_cells(_short(c)), justify="right")
        for value, row in zip(categories, counts):
            cells = [
                (f"[bold green]{n}[/]" if i == j and n else (str(n) if n else "·"))
                for j, n in enumerate(row)
                for i in [categories.index(value)]
            ]
            table.add_row(*data_cells(_short(value)), *cells)
        self.update(Group(Text(self.caption, style="bold"), table))

    def clear(self, message: str = "") -> None:
        self.caption = ""
        self.update(message)
