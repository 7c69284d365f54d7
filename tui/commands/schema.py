"""``chainmark schema``: the JSON Schema of what chainmark stores, for tools that read or write it."""

from __future__ import annotations

from tui.commands import _click as click
from tui.context import emit_json


@click.command("schema")
@click.argument("which", type=click.Choice(["events", "answers", "checkpoints", "tasks", "rubrics", "results"]))
def schema_cmd(which: str) -> None:
    """Print the JSON Schema (versioned) of event payloads, answer specs, checkpoints, task or judge
    rubric lines of the chainmark folder format (tasks.jsonl, rubrics.jsonl) or score results."""
    if which == "results":  # what `chainmark score --json` prints
        from evaluation.scoring.results import results_json_schema

        emit_json(results_json_schema())
        return
    from store.schemas import json_schema

    emit_json(json_schema(which))  # type: ignore[arg-type]


def register(cli: click.Group) -> None:
    cli.add_command(schema_cmd)
