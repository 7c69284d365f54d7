"""``chainmark endpoints …``: the model endpoints runs call (their model, URL, key variable and
parameters; never the key itself)."""

from __future__ import annotations

import json

from store.urls import without_password
from tui.commands import _click as click
from tui.context import AppContext, emit_json, json_option, pass_ctx, table


@click.group("endpoints")
def endpoints_group() -> None:
    """OpenAI-compatible model endpoints (the API key stays in an environment variable)."""


@endpoints_group.command("add")
@click.argument("name")
@click.option("--base-url", required=True, help="e.g. http://127.0.0.1:8000/v1")
@click.option("--model", "-m", required=True, help="Model id sent in each request.")
@click.option("--api-key-env", metavar="VAR", help="NAME of the environment variable holding the key.")
@click.option("--param", "params", multiple=True, metavar="K=V", help="Sampling parameter, e.g. temperature=0.")
@click.option("--replace", is_flag=True, help="Overwrite an endpoint of the same name.")
@json_option
@pass_ctx
def add_cmd(
    app: AppContext,
    name: str,
    base_url: str,
    model: str,
    api_key_env: str | None,
    params: tuple[str, ...],
    replace: bool,
    as_json: bool,
) -> None:
    """Store an endpoint by name."""
    from evaluation.harness import add_endpoint
    from evaluation.harness.endpoints import parse_param
    from store import session_scope

    parsed = dict(parse_param(p) for p in params)
    with session_scope(app.engine, app.actor) as s:
        ep = add_endpoint(s, name, base_url, model, api_key_env=api_key_env, params=parsed, replace=replace)
    if as_json:
        emit_json(
            {
                "id": ep.id,
                "name": ep.name,
                "base_url": without_password(ep.base_url),
                "model": ep.model,
                "api_key_env": ep.api_key_env,
                "params": ep.params,
            }
        )
        return
    click.echo(
        f"endpoint {ep.name}: {ep.model} at {without_password(ep.base_url)}"
        + (f" (key from ${ep.api_key_env})" if ep.api_key_env else " (no key)")
    )


@endpoints_group.command("list")
@click.option("--json", "as_json", is_flag=True)
@pass_ctx
def list_cmd(app: AppContext, as_json: bool) -> None:
    """Endpoints with their model, URL, key variable (never the key) and parameters."""
    from evaluation.harness import list_endpoints
    from store import read_only, session_scope

    with session_scope(read_only(app.engine)) as s:
        rows = [{**e.to_dict(), "base_url": without_password(e.base_url)} for e in list_endpoints(s)]
    if as_json:
        emit_json(rows)
        return
    click.echo(
        table(
            [
                [
                    r["name"],
                    r["model"],
                    r["base_url"],
                    r["api_key_env"] or "",
                    "set" if r["key_present"] else ("-" if r["api_key_env"] else ""),
                    json.dumps(r["params"]) if r["params"] else "",
                ]
                for r in rows
            ],
            ["endpoint", "model", "base url", "key var", "key", "params"],
        )
    )


def register(cli: click.Group) -> None:
    cli.add_command(endpoints_group)
