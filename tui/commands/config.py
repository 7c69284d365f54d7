"""``chainmark config``: the settings in force and where each comes from; the key binding ids."""

from __future__ import annotations

from tui.commands import _click as click
from tui.context import emit_json, table


def _shown_value(value: object) -> str:
    """Settings hold no secrets (keys stay in the environment variables they name), so all is shown."""
    if value is None:
        return "–"
    if isinstance(value, dict):
        return ", ".join(f"{k}={v}" for k, v in value.items()) or "–"
    return str(value)


@click.group("config")
def config_group() -> None:
    """Settings from chainmark.toml files and CHAINMARK_* variables: what is in force, and from where."""


@config_group.command("show")
@click.option("--json", "as_json", is_flag=True, help="One JSON document.")
def show(as_json: bool) -> None:
    """Every setting, its value and its source (env, project file, user file or default)."""
    from store.settings import config_files, current, shown

    rows = shown(current())
    if as_json:
        emit_json({"files": [str(p) for p in config_files()], "settings": rows})
        return
    click.echo(
        table([[r["name"], _shown_value(r["value"]), r["source"]] for r in rows], ["setting", "value", "source"])
    )
    click.echo("files read (later wins; the environment wins over both): " + ", ".join(str(p) for p in config_files()))


@config_group.command("keys")
@click.option("--json", "as_json", is_flag=True, help="One JSON document.")
def keys(as_json: bool) -> None:
    """Every key binding id (for [keymap] in chainmark.toml), with its default keys and what it does."""
    from store.settings import current
    from tui.keymap import chainmark_bindings, unknown_ids

    rows = chainmark_bindings()
    keymap = current().keymap
    if as_json:
        emit_json(
            {
                "bindings": [
                    {
                        "id": r.id,
                        "keys": keymap.get(r.id or "", r.key),
                        "default": r.key,
                        "action": r.action,
                        "description": r.description,
                        "owner": r.owner,
                    }
                    for r in rows
                ],
                "unknown_ids": unknown_ids(keymap),
            }
        )
        return
    click.echo(
        table(
            [[r.id or "–", keymap.get(r.id or "", r.key), r.description or r.action] for r in rows],
            ["id", "keys", "does"],
        )
    )
    for name in unknown_ids(keymap):
        click.echo(f"warning: [keymap] names {name!r}, which no binding has (see the ids above)")


@config_group.command("speedups")
@click.option("--json", "as_json", is_flag=True, help="One JSON document.")
def speedups(as_json: bool) -> None:
    """Every speed mechanism, whether it is on, its measured gain, bench and same-output test.
    Switch mechanisms off with the `plain` setting (CHAINMARK_PLAIN=all, or names separated by commas)."""
    from dataclasses import asdict

    from store.speedups import MECHANISMS, enabled

    rows = [{**asdict(m), "on": enabled(m.name)} for m in MECHANISMS]
    if as_json:
        emit_json({"mechanisms": rows})
        return
    click.echo(
        table([[r["name"], "on" if r["on"] else "off", r["what"]] for r in rows], ["mechanism", "state", "does"])
    )
    click.echo("switch off with CHAINMARK_PLAIN=all or CHAINMARK_PLAIN=name,name (details: config speedups --json)")


def register(cli: click.Group) -> None:
    cli.add_command(config_group)
