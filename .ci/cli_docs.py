"""Write docs/cli.md, the command-line reference, from the click command tree: `python .ci/cli_docs.py`.

Every command and subcommand gets its `--help` text as click prints it (100 columns), in the order of
the tree, so the reference is the program's own help. tests/test_cli_docs.py fails when the file
differs from what this writes (run this script after changing a command, option or help text).
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "cli.md"
WIDTH = 100
HEADER = """# Command-line reference

Generated from the commands themselves by `python .ci/cli_docs.py` (do not edit by hand); the same
text is `chainmark COMMAND --help`. The guides in [docs/](README.md) say when to use which.
"""


def _walk(command: click.Command, path: list[str], parent: click.Context | None):  # type: ignore[no-untyped-def]
    """Each (path, context, command) of the tree, depth first, subcommands sorted by name."""
    # As the program builds it: the command's context settings (e.g. -h), no arguments parsed.
    ctx = command.make_context(
        path[-1], [], parent=parent, resilient_parsing=True, terminal_width=WIDTH, max_content_width=WIDTH
    )
    yield path, ctx, command
    if isinstance(command, click.Group):
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            if sub is not None and not sub.hidden:
                yield from _walk(sub, [*path, name], ctx)


def render() -> str:
    """The whole reference as Markdown."""
    sys.path.insert(0, str(ROOT))
    from tui.cli import cli

    parts = [HEADER]
    for path, ctx, command in _walk(cli, ["chainmark"], None):
        level = "#" * min(len(path) + 1, 4)
        parts.append(f"{level} `{' '.join(path)}`\n\n```text\n{command.get_help(ctx).rstrip()}\n```\n")
    return "\n".join(parts)


if __name__ == "__main__":
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(render(), encoding="utf-8")
    print(f"{OUT.relative_to(ROOT)} written")
