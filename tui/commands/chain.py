"""``chainmark chain …`` and ``chainmark checkpoints …``: author a task's reference chain and its checkpoints
from the command line, as the chain builder and the checkpoint editor do (same functions, same rules)."""

from __future__ import annotations

import json
from typing import Any

from tui.commands import _click as click
from tui.context import AppContext, emit_json, json_option, pass_ctx


def _json_object(value: str | None, name: str) -> dict[str, Any] | None:
    if value is None:
        return None
    try:
        parsed = json.loads(value)
    except json.JSONDecodeError as exc:
        raise click.BadParameter(f"not valid JSON: {exc}", param_hint=name) from exc
    if not isinstance(parsed, dict):
        raise click.BadParameter("must be a JSON object", param_hint=name)
    return parsed


@click.group("chain")
def chain_group() -> None:
    """Record a task's reference chain: run real tools on its images, give the final answer."""


@chain_group.command("add")
@click.argument("task_id", type=int)
@click.argument("tool")
@click.option("--args", "args_json", default="{}", show_default=True, help="The tool's arguments as a JSON object.")
@click.option("--thought", help="Why this step (a planned ATP call's description).")
@json_option
@pass_ctx
def chain_add(app: AppContext, task_id: int, tool: str, args_json: str, thought: str | None, as_json: bool) -> None:
    """Run TOOL on task TASK_ID's images and record the call with its result as the next step.

    Images are named as the chain builder names them: 0 (or image/image_0.png) is the first query image,
    then the images earlier steps produced. A failing call records nothing and exits 1."""
    from store import session_scope
    from tui.chain_steps import record_step, run_tool, tool_set_for
    from tui.data import task_detail

    args = _json_object(args_json, "--args") or {}
    with session_scope(app.engine, app.actor) as s:
        detail = task_detail(s, task_id, with_history=False)
        tool_set = tool_set_for(detail)
        try:
            result = run_tool(s, app.blobs, detail.image_sequence(), tool_set, tool, args, description=thought or "")
        except LookupError as exc:
            raise click.ClickException(str(exc).strip("'\"")) from None
        if not result.ok:
            raise click.ClickException(f"{tool} failed, nothing recorded: {result.error}")
        recorded = record_step(s, app.blobs, task_id, tool, args, result, thought)
        out = {
            "task_id": task_id,
            "step_id": recorded.step_id,
            "tool_set": tool_set,
            "tool": tool,
            "result": result.text,
            "images": len(recorded.link_ids),
        }
    if as_json:
        emit_json(out)
    else:
        made = f" ({out['images']} image(s) produced)" if out["images"] else ""
        click.echo(f"step {out['step_id']}: {tool} → {result.text.strip()[:200] or '(no text)'}{made}")


@chain_group.command("final")
@click.argument("task_id", type=int)
@click.argument("answer")
@click.option("--thought")
@json_option
@pass_ctx
def chain_final(app: AppContext, task_id: int, answer: str, thought: str | None, as_json: bool) -> None:
    """Record ANSWER as the final step of task TASK_ID's chain (replacing an earlier final answer)."""
    from annotation import tasks as authoring
    from store import session_scope

    with session_scope(app.engine, app.actor) as s:
        final = [st for st in authoring.steps_of(s, task_id) if st.is_final]
        if final:
            step = authoring.edit_step(s, final[0].id or 0, final_answer=answer, thought=thought or final[0].thought)
        else:
            step = authoring.add_step(s, task_id, thought=thought, final_answer=answer)
        out = {"task_id": task_id, "step_id": step.id, "final_answer": answer}
    if as_json:
        emit_json(out)
    else:
        click.echo(f"step {out['step_id']}: final answer recorded")


@click.group("checkpoints")
def checkpoints_group() -> None:
    """Mark a task's stepwise checkpoints (S, V, R) and their order."""


@checkpoints_group.command("add")
@click.argument("task_id", type=int)
@click.argument("key", required=False)
@click.option("--axis", default="V", show_default=True, help="S (search), V (visual), R (answer) or your own.")
@click.option("--description")
@click.option("--tools", help="Tools that satisfy it, comma-separated (e.g. OCR,Calculator).")
@click.option("--step", "step_ordinal", type=int, help="The reference step (0 = first) it checks.")
@click.option("--code-check", help='JSON, e.g. \'{"verifier": "require_op:crop"}\'.')
@click.option("--visual-check", help='JSON, e.g. \'{"question": "…", "expected_answer": "yes"}\'.')
@click.option("--answer-check", help='JSON, e.g. \'{"match_type": "contains", "target": "58"}\'.')
@click.option("--weight", type=float)
@json_option
@pass_ctx
def checkpoint_add(
    app: AppContext,
    task_id: int,
    key: str | None,
    axis: str,
    description: str | None,
    tools: str | None,
    step_ordinal: int | None,
    code_check: str | None,
    visual_check: str | None,
    answer_check: str | None,
    weight: float | None,
    as_json: bool,
) -> None:
    """Add a checkpoint to task TASK_ID (KEY defaults to cpN)."""
    from annotation import tasks as authoring
    from store import session_scope

    fields: dict[str, Any] = {"axis": axis}
    optional = {
        "description": description,
        "tools": [t.strip() for t in tools.split(",") if t.strip()] if tools else None,
        "code_check": _json_object(code_check, "--code-check"),
        "visual_check": _json_object(visual_check, "--visual-check"),
        "answer_check": _json_object(answer_check, "--answer-check"),
        "weight": weight,
    }
    fields.update({k: v for k, v in optional.items() if v is not None})
    with session_scope(app.engine, app.actor) as s:
        if step_ordinal is not None:
            steps = authoring.steps_of(s, task_id)
            if not 0 <= step_ordinal < len(steps):
                raise click.BadParameter(f"the task has {len(steps)} step(s)", param_hint="--step")
            fields["step_id"] = steps[step_ordinal].id
        cp = authoring.add_checkpoint(s, task_id, key, **fields)
        out = {"task_id": task_id, "id": cp.id, "key": cp.key, "axis": cp.axis, "step_id": cp.step_id}
    if as_json:
        emit_json(out)
    else:
        click.echo(f"checkpoint {out['key']} ({out['axis']}) added to task {task_id}")


@checkpoints_group.command("order")
@click.argument("task_id", type=int)
@click.argument("keys", nargs=-1, required=True)
@click.option("--max-gap", type=int, help="At most this many calls between two checkpoints of the sequence.")
@click.option("--key", "constraint_key", help="The constraint's name (default orderN).")
@json_option
@pass_ctx
def checkpoint_order(
    app: AppContext, task_id: int, keys: tuple[str, ...], max_gap: int | None, constraint_key: str | None, as_json: bool
) -> None:
    """Require checkpoints KEYS of task TASK_ID to be met in this order (R)."""
    from annotation import tasks as authoring
    from store import session_scope

    with session_scope(app.engine, app.actor) as s:
        oc = authoring.add_ordering_constraint(s, task_id, list(keys), max_gap=max_gap, key=constraint_key)
        sequence = [str(k) for k in oc.sequence or []]
        out = {"task_id": task_id, "key": oc.key, "sequence": sequence, "max_gap": oc.max_gap}
    if as_json:
        emit_json(out)
    else:
        click.echo(f"ordering {out['key']}: {' → '.join(sequence)}")


def register(cli: click.Group) -> None:
    cli.add_command(chain_group)
    cli.add_command(checkpoints_group)
