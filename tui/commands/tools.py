"""``chainmark tools …``: list the tool sets and run one tool on an image from the terminal."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from store.plugins import tool_set_names as plugin_tool_sets
from tui.commands import _click as click
from tui.context import AppContext, emit_json, pass_ctx, table

TOOL_SET = click.LazyChoice(plugin_tool_sets)  # the sets the benchmark plugins define


@click.group("tools")
def tools_group() -> None:
    """List tool sets and run tools (offline image ops, OCR, Calculator, search with replay...)."""


def _params(schema: dict[str, Any]) -> str:
    props = schema.get("properties", {})
    if set(props) == {"image", "param"}:  # VTC form: show the keys inside "param"
        inner = props["param"]
        return "image*, param{" + _params(inner) + "}"
    required = set(schema.get("required", []))
    return ", ".join(f"{k}{'*' if k in required else ''}" for k in props)


@tools_group.command("list")
@click.option("--set", "set_name", type=TOOL_SET, help="Only this tool set.")
@click.option("--extras", is_flag=True, help="Also list executable tools a set does not offer to models.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def list_tools(set_name: str | None, extras: bool, as_json: bool) -> None:
    """Tools with their set, kind (offline/service/plan), category and parameters (* = required)."""
    from evaluation.tools import get_tool_set, tool_set_names

    rows = []
    for name in [set_name] if set_name else tool_set_names():
        ts = get_tool_set(name)
        for t in ts.all_tools(include_extras=extras):
            rows.append(
                {
                    "set": ts.name,
                    "version": ts.version,
                    "name": t.name,
                    "kind": t.kind,
                    "category": t.category,
                    "extra": t.name in ts.extras,
                    "description": t.description,
                    "parameters": t.parameters,
                }
            )
    if as_json:
        emit_json(rows)
        return
    click.echo(
        table(
            [
                [
                    r["set"],
                    r["name"] + (" (extra)" if r["extra"] else ""),
                    r["kind"],
                    r["category"],
                    _params(r["parameters"]),
                ]
                for r in rows
            ],
            ["set", "tool", "kind", "category", "parameters"],
        )
    )


def _find_set(tool: str, set_name: str | None) -> str:
    from evaluation.tools import get_tool_set, tool_set_names

    if set_name:
        return set_name
    owners = [n for n in tool_set_names() if tool in get_tool_set(n).names(include_extras=True)]
    if not owners:
        raise click.BadParameter(f"no tool set has a tool {tool!r}; see `chainmark tools list`", param_hint="NAME")
    if len(owners) > 1:
        raise click.BadParameter(
            f"{tool!r} is in several sets ({', '.join(owners)}); pick one with --set", param_hint="NAME"
        )
    return owners[0]


def _fill_image_arg(schema: dict[str, Any], args: dict[str, Any], images: list[str]) -> None:
    """With --image given and no image argument, point the tool's image parameter at it."""
    if not images:
        return
    props = schema.get("properties", {})
    if "image" in props and "image" not in args:
        args["image"] = images[0]
    elif "image_index" in props and "image_index" not in args:
        args["image_index"] = 0


@tools_group.command("run")
@click.argument("name")
@click.option(
    "--set",
    "set_name",
    type=TOOL_SET,
    help="Tool set of NAME (needed only when several sets have that name).",
)
@click.option(
    "--image",
    "images",
    multiple=True,
    type=click.Path(exists=True, dir_okay=False),
    help="An input image; repeat for more (the first is image 0 / the default image argument).",
)
@click.option("--args", "args_json", default=None, metavar="JSON", help="Tool arguments as a JSON object.")
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False),
    default="tool-output",
    show_default=True,
    help="Where produced images are saved.",
)
@click.option("--no-db", is_flag=True, help="Do not open the database: no replay cache, no assets.")
@click.option(
    "--unsafe-in-process-sandbox",
    "unsafe_sandbox",
    is_flag=True,
    help="Let Solver/Plot run code even where no OS-level sandbox (bubblewrap) works: in-process "
    "rlimits only, NOT a security boundary.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@pass_ctx
def run_tool(
    app: AppContext,
    name: str,
    set_name: str | None,
    images: tuple[str, ...],
    args_json: str | None,
    out_dir: str,
    no_db: bool,
    unsafe_sandbox: bool,
    as_json: bool,
) -> None:
    """Run one tool and print its result; produced images are saved under --out.

    Service tools use CHAINMARK_VLM_BASE_URL/_MODEL, SERPER_API_KEY, CHAINMARK_IMAGE_BASE_URL/_MODEL,
    and answer from the database's replay cache when the call was recorded before.
    """
    from evaluation.tools import ToolContext, ToolSettings, execute, get_tool_set, parse_arguments
    from evaluation.tools.result import ToolError

    set_name = _find_set(name, set_name)
    tool = get_tool_set(set_name).get(name)
    try:
        args = parse_arguments(args_json)
    except ToolError as exc:
        raise click.BadParameter(str(exc), param_hint="--args") from exc
    _fill_image_arg(tool.parameters, args, list(images))
    blobs = {p: Path(p).read_bytes() for p in images}
    settings = ToolSettings.from_env()
    settings.unsafe_in_process_sandbox = unsafe_sandbox
    ctx = ToolContext(
        images=list(blobs.values()), files={**blobs, **{Path(p).name: b for p, b in blobs.items()}}, settings=settings
    )
    if no_db:
        result = execute(set_name, name, args, ctx)
    else:
        from store import session_scope
        from store.blobs import put_asset

        # Short transactions only (replay-cache read, then write): none is held across a service's
        # network call, which would block a run writing to the same database meanwhile.
        ctx.engine, ctx.blobs = app.engine, app.blobs
        result = execute(set_name, name, args, ctx)
        if result.images and not result.asset_ids:
            with session_scope(app.engine, app.actor) as s:
                result.asset_ids = [put_asset(s, app.blobs, data).id or 0 for data in result.images]
    saved = _save_images(result.images, result.image_names, Path(out_dir))
    if as_json:
        emit_json({**result.to_dict(), "saved": [str(p) for p in saved]})
    elif result.ok:
        click.echo(result.text)
        if result.replayed:
            click.echo("(answer replayed from the cache)", err=True)
        for path, asset in zip(saved, result.asset_ids or [None] * len(saved)):
            click.echo(f"saved image: {path}" + (f" (asset {asset})" if asset is not None else ""))
    if not result.ok:
        if not as_json:
            click.echo(f"Error: {result.error}", err=True)
        sys.exit(1)


def _save_images(images: list[bytes], names: list[str], out_dir: Path) -> list[Path]:
    saved = []
    for data, name in zip(images, names):
        out_dir.mkdir(parents=True, exist_ok=True)
        target = out_dir / Path(name).name
        target.write_bytes(data)
        saved.append(target)
    return saved


def register(cli: click.Group) -> None:
    cli.add_command(tools_group)
