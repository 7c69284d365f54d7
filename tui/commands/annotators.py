"""People: who may annotate, review or run things, their roles and serve logins."""

from __future__ import annotations


from annotation.vocab import ANNOTATOR_ROLES
from tui.commands import _click as click
from tui.context import AppContext, emit_json, json_option, pass_ctx, table


@click.group("annotators")
def annotators_group() -> None:
    """People who rate (annotator) and adjudicate (reviewer, admin)."""


@annotators_group.command("add")
@click.argument("name")
@click.option("--role", type=click.Choice(ANNOTATOR_ROLES), default="annotator", show_default=True)
@json_option
@pass_ctx
def annotators_add(app: AppContext, name: str, role: str, as_json: bool) -> None:
    """Add an annotator (an existing one keeps their role: change it with `annotators set-role`)."""
    from annotation.review import annotators as people
    from annotation.review import scales as scaling
    from store import session_scope

    with session_scope(app.engine, app.actor) as s:
        scaling.ensure_builtin_scales(s)
        p = people.add_annotator(s, name, role)
    if as_json:
        emit_json({"id": p.id, "name": p.name, "role": p.role})
    else:
        click.echo(f"annotator {p.name} ({p.role})")


@annotators_group.command("token")
@click.argument("name")
@click.option("--revoke", is_flag=True, help="Remove the person's serve login instead.")
@json_option
@pass_ctx
def annotators_token(app: AppContext, name: str, revoke: bool, as_json: bool) -> None:
    """Give NAME a login token for `chainmark serve --accounts` (replacing any earlier one); shown once.

    With --revoke the login is removed, and a running `serve --accounts` ends NAME's open sessions within
    seconds. Issuing, replacing and revoking are recorded in the audit trail (never the token)."""
    from annotation.review import annotators as people
    from store import session_scope

    with session_scope(app.engine, app.actor) as s:
        if revoke:
            had = people.revoke_serve_token(s, name)
        else:
            token = people.issue_serve_token(s, name)
    if revoke:
        if as_json:
            emit_json({"name": name, "revoked": had})
        else:
            click.echo(f"{name}: serve login removed" if had else f"{name} had no serve login")
        return
    if as_json:
        emit_json({"name": name, "token": token})
        return
    click.echo(f"{name}'s serve token (shown once; only its hash is stored): {token}")
    click.echo(f"they open `chainmark serve --accounts`'s address with /?token={token}", err=True)


@annotators_group.command("set-role")
@click.argument("name")
@click.argument("role", type=click.Choice(ANNOTATOR_ROLES))
@pass_ctx
def annotators_set_role(app: AppContext, name: str, role: str) -> None:
    """Change an existing annotator's role (recorded in the audit trail: who, when, old and new role)."""
    from annotation.review import annotators as people
    from store import session_scope

    with session_scope(app.engine, app.actor) as s:
        p, old = people.set_role(s, name, role)
        click.echo(
            f"annotator {p.name}: {old} → {p.role}" if old != p.role else f"annotator {p.name} ({p.role}), unchanged"
        )


@annotators_group.command("list")
@click.option("--json", "as_json", is_flag=True)
@pass_ctx
def annotators_list(app: AppContext, as_json: bool) -> None:
    """Annotators with their roles."""
    from annotation.review import annotators as people
    from store import read_only, session_scope

    with session_scope(read_only(app.engine)) as s:
        rows = [{"id": p.id, "name": p.name, "role": p.role} for p in people.list_annotators(s)]
    if as_json:
        emit_json(rows)
        return
    click.echo(table([[r["id"], r["name"], r["role"]] for r in rows], ["id", "name", "role"]))


def register(cli: click.Group) -> None:
    cli.add_command(annotators_group)
