"""``chainmark tasks …`` and ``chainmark benchmarks …``: list, inspect and author tasks headlessly."""

from __future__ import annotations

import json
from pathlib import Path
from collections.abc import Iterator
from typing import Any


from annotation.vocab import TASK_STATUSES
from tui.commands import _click as click
from tui.context import AppContext, emit_json, json_option, pass_ctx, table


def _json_arg(value: str | None, name: str) -> Any:
    if value is None:
        return None
    try:
        return json.loads(value)
    except json.JSONDecodeError as exc:
        raise click.BadParameter(f"not valid JSON: {exc}", param_hint=name) from exc


MAX_IMAGE_BYTES = 64 * 1024 * 1024


def _read_image(path: Path) -> bytes:
    """A regular file's bytes (not a device or a fifo), at most ``MAX_IMAGE_BYTES``."""
    import stat

    st = path.stat()
    if not stat.S_ISREG(st.st_mode):
        raise click.BadParameter(f"{path} is not a regular file", param_hint="--image")
    if st.st_size > MAX_IMAGE_BYTES:
        raise click.BadParameter(f"{path} is {st.st_size} bytes, over {MAX_IMAGE_BYTES}", param_hint="--image")
    return path.read_bytes()


@click.group("tasks")
def tasks_group() -> None:
    """List, show, create and edit tasks."""


DEFAULT_LIST_LIMIT = 200
_TASK_HEADERS = ["id", "benchmark", "source", "status", "rev", "answer", "steps", "cps", "query"]


@tasks_group.command("list")
@click.option("--benchmark", "-b", help="Only this benchmark.")
@click.option("--status", type=click.Choice(TASK_STATUSES), help="Only tasks in this status.")
@click.option("--category", help="Only this category.")
@click.option("--search", "text", help="Only tasks whose query contains this text.")
@click.option(
    "--limit", type=click.IntRange(min=1), default=None, help=f"At most this many tasks (default {DEFAULT_LIST_LIMIT})."
)
@click.option("--all", "all_", is_flag=True, help="Every matching task (streamed, however many).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@pass_ctx
def list_tasks(
    app: AppContext,
    benchmark: str | None,
    status: str | None,
    category: str | None,
    text: str | None,
    limit: int | None,
    all_: bool,
    as_json: bool,
) -> None:
    """List tasks with their status, revision, answer kind and chain size.

    Shows the first 200 by default and says how many more there are; rows are read and printed a
    page at a time, so a 100k-task database lists in flat memory."""
    from store.queries import count_tasks, iter_task_summaries, require_benchmark

    if all_ and limit is not None:
        raise click.UsageError("give --limit N or --all, not both")
    limit = None if all_ else (limit or DEFAULT_LIST_LIMIT)
    filters = {"status": status, "category": category, "text": text}
    with app.reading() as s:
        if benchmark:
            require_benchmark(s, benchmark)
        rows = iter_task_summaries(s, benchmark, limit=limit, **filters)
        shown = _stream_json(rows) if as_json else _stream_table(rows)
        more = count_tasks(s, benchmark, **filters) - shown if limit is not None and shown == limit else 0
    if more > 0:
        click.echo(f"… {more} more task{'s' if more != 1 else ''} not shown (use --limit N or --all)", err=as_json)


def _stream_json(rows: Iterator[Any]) -> int:
    """A JSON array written element by element."""
    n = 0
    click.echo("[", nl=False)
    for r in rows:
        click.echo(("," if n else "") + "\n  " + json.dumps(r.to_dict(), ensure_ascii=False, default=str), nl=False)
        n += 1
    click.echo("\n]" if n else "]")
    return n


def _stream_table(rows: Iterator[Any], page: int = 1000) -> int:
    """The table a page at a time: column widths come from the first page (later rows may be wider)."""
    n, widths, batch = 0, None, []

    def flush() -> None:
        nonlocal widths
        lines = table(batch, _TASK_HEADERS).split("\n")
        if widths is None:
            widths = [len(c) for c in lines[1].split("  ")]
            click.echo("\n".join(lines))
        else:
            cells = [["" if c is None else str(c) for c in r] for r in batch]
            click.echo("\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in cells))
        batch.clear()

    for r in rows:
        batch.append(
            [
                r.id,
                r.benchmark,
                r.source_id,
                r.status,
                r.revision,
                r.answer_kind,
                r.steps,
                r.checkpoints,
                _short(r.query, 60),
            ]
        )
        n += 1
        if len(batch) >= page:
            flush()
    if batch or widths is None:
        flush()
    return n


def _short(text: str, n: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


@tasks_group.command("show")
@click.argument("task_id", type=int)
@click.option("--json", "as_json", is_flag=True)
@pass_ctx
def show_task(app: AppContext, task_id: int, as_json: bool) -> None:
    """Show one task: query, answer, reference chain, checkpoints and authoring warnings."""
    from annotation import tasks as authoring
    from annotation.answers import describe
    from store import read_only, session_scope

    with session_scope(read_only(app.engine)) as s:
        t = authoring.get_task(s, task_id)
        steps = authoring.steps_of(s, task_id)
        cps = authoring.checkpoints_of(s, task_id)
        warnings = authoring.task_warnings(s, task_id)
        data: dict[str, Any] = {
            "id": t.id,
            "source_id": t.source_id,
            "query": t.query,
            "status": t.status,
            "revision": t.revision,
            "category": t.category,
            "level": t.level,
            "domain": t.domain,
            "answer_spec": t.answer_spec,
            "tools_offered": list(t.tools_offered or []),
            "steps": [
                {
                    "id": st.id,
                    "ordinal": st.ordinal,
                    "thought": st.thought,
                    "tool": st.tool_name,
                    "args": st.tool_args,
                    "result": st.result_text,
                    "final_answer": st.final_answer,
                }
                for st in steps
            ],
            "checkpoints": [{"id": c.id, "key": c.key, "axis": c.axis, "description": c.description} for c in cps],
            "warnings": [{"code": w.code, "message": w.message} for w in warnings],
        }
    if as_json:
        emit_json(data)
        return
    click.echo(f"#{data['id']} {data['source_id']}  [{data['status']}, rev {data['revision']}]")
    click.echo(data["query"])
    click.echo(f"answer: {describe(data['answer_spec'])}")
    click.echo(f"tools: {', '.join(data['tools_offered']) or '(the whole tool set)'}")
    for st in data["steps"]:
        if st["final_answer"] is not None:
            click.echo(f"  {st['ordinal']}. answer: {st['final_answer']}")
        else:
            click.echo(f"  {st['ordinal']}. {st['tool']}({json.dumps(st['args'])}) → {_short(st['result'] or '', 60)}")
    for c in data["checkpoints"]:
        click.echo(f"  [{c['axis']}] {c['key']}: {c['description'] or ''}")
    for w in data["warnings"]:
        click.echo(f"  ! {w['code']}: {w['message']}")


@tasks_group.command("add")
@click.option("--benchmark", "-b", required=True)
@click.option("--query", "-q", required=True)
@click.option("--answer", "answer", help='Answer spec as JSON, e.g. \'{"kind":"exact","value":"58"}\'.')
@click.option("--category")
@click.option("--level")
@click.option("--source-id")
@click.option(
    "--image",
    "images",
    multiple=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="A query image (repeatable, in order): tools name the first 0 or image/image_0.<ext>.",
)
@click.option(
    "--tool",
    "tools",
    multiple=True,
    metavar="NAME",
    help="A tool the model is offered for this task (repeatable; one of the benchmark's tool set, "
    "`tools list`). Without any, the whole tool set is offered.",
)
@json_option
@pass_ctx
def add_task(
    app: AppContext,
    benchmark: str,
    query: str,
    answer: str | None,
    category: str | None,
    level: str | None,
    source_id: str | None,
    images: tuple[Path, ...],
    tools: tuple[str, ...],
    as_json: bool,
) -> None:
    """Create a draft task (with its query images and tool list) and print its id."""
    from annotation import tasks as authoring
    from store import session_scope
    from tui.tool_lists import benchmark_tools

    spec = _json_arg(answer, "--answer")
    pictures = [(p, _read_image(p)) for p in images]
    for path, data in pictures:
        authoring.image_mime(data, str(path))  # names the file the user gave, not the stored name
    with session_scope(app.engine, app.actor) as s:
        offered = benchmark_tools(authoring.get_benchmark(s, benchmark), tools)
        t = authoring.create_task(
            s,
            benchmark,
            query,
            answer_spec=spec,
            category=category,
            level=level,
            source_id=source_id,
            tools_offered=offered,
        )
        for i, (path, data) in enumerate(pictures):
            ext = path.suffix.lower().lstrip(".") or "png"
            authoring.attach_asset(s, app.blobs, t.id or 0, data, original_path=f"image/image_{i}.{ext}")
        created = {
            "id": t.id,
            "benchmark": benchmark,
            "source_id": t.source_id,
            "status": t.status,
            "revision": t.revision,
            "tools_offered": list(t.tools_offered),
        }
    if as_json:
        emit_json(created)
    else:
        click.echo(created["id"])


@tasks_group.command("assign")
@click.argument("task_ids", nargs=-1, type=int)
@click.option("--to", "annotator", required=True, help="The annotator who is to author these tasks.")
@click.option("--benchmark", "-b", help="Every task of this benchmark (with --status, only those).")
@click.option("--status", type=click.Choice(TASK_STATUSES), help="With --benchmark: only tasks in this status.")
@click.option("--limit", type=click.IntRange(min=1), help="With --benchmark: at most this many.")
@json_option
@pass_ctx
def assign_cmd(
    app: AppContext,
    task_ids: tuple[int, ...],
    annotator: str,
    benchmark: str | None,
    status: str | None,
    limit: int | None,
    as_json: bool,
) -> None:
    """Put tasks in an annotator's authoring queue (by id, or a benchmark's tasks)."""
    from annotation import tasks as authoring
    from store import session_scope
    from store.queries import iter_task_summaries
    from annotation.authoring_queue import assign_tasks

    if not task_ids and not benchmark:
        raise click.UsageError("give task ids or --benchmark")
    with session_scope(app.engine, app.actor) as s:
        ids = list(task_ids)
        if benchmark:
            authoring.get_benchmark(s, benchmark)
            ids += [row.id for row in iter_task_summaries(s, benchmark, limit=limit, status=status)]
        new = assign_tasks(s, annotator, ids)
    if as_json:
        emit_json({"annotator": annotator, "assigned": new, "already": len(set(ids)) - len(new)})
    else:
        click.echo(
            f"{annotator}: {len(new)} task{'s' if len(new) != 1 else ''} added to the queue"
            + (f" ({len(set(ids)) - len(new)} already in it)" if len(set(ids)) > len(new) else "")
        )


@tasks_group.command("unassign")
@click.argument("task_ids", nargs=-1, type=int, required=True)
@click.option("--to", "annotator", required=True, help="Whose queue to take them out of.")
@json_option
@pass_ctx
def unassign_cmd(app: AppContext, task_ids: tuple[int, ...], annotator: str, as_json: bool) -> None:
    """Take tasks out of an annotator's authoring queue."""
    from store import session_scope
    from annotation.authoring_queue import unassign_tasks

    with session_scope(app.engine, app.actor) as s:
        removed = unassign_tasks(s, annotator, list(task_ids))
    if as_json:
        emit_json({"annotator": annotator, "removed": removed})
    else:
        click.echo(f"{annotator}: {removed} task{'s' if removed != 1 else ''} taken out of the queue")


@tasks_group.command("queue")
@click.option("--to", "annotator", help="Whose queue (default: you, as the audit names you).")
@json_option
@pass_ctx
def queue_cmd(app: AppContext, annotator: str | None, as_json: bool) -> None:
    """An annotator's authoring queue: tasks still to do (draft, rejected) first, then done ones."""
    from store import read_only, session_scope
    from annotation.authoring_queue import queue_of

    with session_scope(read_only(app.engine), app.actor) as s:
        who = annotator or str(s.info["actor"])
        items = queue_of(s, who)
    if as_json:
        emit_json(
            {
                "annotator": who,
                "to_do": sum(i.to_do for i in items),
                "tasks": [
                    {
                        "id": i.task_id,
                        "benchmark": i.benchmark,
                        "source_id": i.source_id,
                        "status": i.status,
                        "to_do": i.to_do,
                        "query": i.query,
                    }
                    for i in items
                ],
            }
        )
        return
    to_do = sum(i.to_do for i in items)
    click.echo(f"{who}: {to_do} of {len(items)} assigned task{'s' if len(items) != 1 else ''} to do")
    if items:
        click.echo(
            table(
                [[i.task_id, i.benchmark, i.source_id, i.status, _short(i.query, 60)] for i in items],
                ["id", "benchmark", "source", "status", "query"],
            )
        )


@tasks_group.command("edit")
@click.argument("task_id", type=int)
@click.option("--query", "-q")
@click.option("--answer", help="Answer spec as JSON.")
@click.option("--category")
@click.option("--level")
@click.option(
    "--tool",
    "tools",
    multiple=True,
    metavar="NAME",
    help="A tool the model is offered for this task, replacing its list (repeatable; one of the benchmark's "
    "tool set, `tools list`).",
)
@click.option("--all-tools", is_flag=True, help="Clear the task's tool list: offer the whole tool set again.")
@json_option
@pass_ctx
def edit_cmd(
    app: AppContext,
    task_id: int,
    query: str | None,
    answer: str | None,
    category: str | None,
    level: str | None,
    tools: tuple[str, ...],
    all_tools: bool,
    as_json: bool,
) -> None:
    """Edit a task's content (bumps its revision)."""
    from annotation import tasks as authoring
    from store import session_scope
    from store.models import Benchmark
    from tui.tool_lists import benchmark_tools

    if tools and all_tools:
        raise click.UsageError("--tool and --all-tools contradict each other; give one")

    changes: dict[str, Any] = {
        k: v for k, v in {"query": query, "category": category, "level": level}.items() if v is not None
    }
    if answer is not None:
        changes["answer_spec"] = _json_arg(answer, "--answer")
    with session_scope(app.engine, app.actor) as s:
        if tools or all_tools:
            bench = s.get(Benchmark, authoring.get_task(s, task_id).benchmark_id)
            assert bench is not None
            changes["tools_offered"] = benchmark_tools(bench, tools)
        t = authoring.edit_task(s, task_id, **changes)
    if as_json:
        emit_json({"id": t.id, "revision": t.revision, "status": t.status, "tools_offered": list(t.tools_offered)})
    else:
        click.echo(f"task {t.id} is at revision {t.revision}")


@tasks_group.command("status")
@click.argument("task_id", type=int)
@click.argument("status", type=click.Choice(TASK_STATUSES))
@click.option("--reason", help="Why (required to reject; kept on the task for its author).")
@json_option
@pass_ctx
def status_cmd(app: AppContext, task_id: int, status: str, reason: str | None, as_json: bool) -> None:
    """Move a task through draft → submitted → verified | rejected."""
    from annotation import tasks as authoring
    from store import session_scope

    with session_scope(app.engine, app.actor) as s:
        t = authoring.set_status(s, task_id, status, reason=reason)
    if as_json:
        emit_json({"id": t.id, "revision": t.revision, "status": t.status})
    else:
        click.echo(f"task {t.id} is {t.status}")


@tasks_group.command("history")
@click.argument("task_id", type=int)
@click.option("--json", "as_json", is_flag=True)
@pass_ctx
def history_cmd(app: AppContext, task_id: int, as_json: bool) -> None:
    """The audit trail of a task: who changed what, when."""
    from sqlmodel import col, select
    from annotation import tasks as authoring
    from store import read_only, session_scope
    from store.models import AuditEvent

    with session_scope(read_only(app.engine)) as s:
        authoring.get_task(s, task_id)
        events = s.exec(
            select(AuditEvent)
            .where(AuditEvent.entity == "task", AuditEvent.entity_id == task_id)
            .order_by(col(AuditEvent.id))
        ).all()
        rows = []
        for e in events:
            before, after = e.before or {}, e.after or {}
            changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k) and k != "updated_at")
            rows.append(
                {
                    "at": e.created_at.isoformat(),
                    "actor": e.actor,
                    "action": e.action,
                    "changed": changed if e.action == "update" else [],
                }
            )
    if as_json:
        emit_json(rows)
        return
    click.echo(
        table(
            [[r["at"][:19], r["actor"], r["action"], ", ".join(r["changed"])] for r in rows],
            ["when", "who", "action", "fields"],
        )
    )


@click.group("benchmarks")
def benchmarks_group() -> None:
    """List and create benchmarks."""


@benchmarks_group.command("list")
@click.option("--json", "as_json", is_flag=True)
@pass_ctx
def list_benchmarks(app: AppContext, as_json: bool) -> None:
    """Benchmarks with their task counts by status."""
    from store.queries import benchmark_summaries

    with app.reading() as s:
        rows = benchmark_summaries(s)
    if as_json:
        emit_json([r.to_dict() for r in rows])
        return
    click.echo(
        table(
            [
                [
                    r.name,
                    r.source_format,
                    r.tool_set or "",
                    r.tasks,
                    " ".join(f"{k}:{v}" for k, v in r.by_status.items()),
                ]
                for r in rows
            ],
            ["benchmark", "format", "tools", "tasks", "by status"],
        )
    )


@benchmarks_group.command("add", cls=click.FormatsHelp, formats="benchmark")
@click.argument("name")
@click.option(
    "--format",
    "source_format",
    required=True,
    metavar="FORMAT",
    help="The benchmark's file format (one of the formats below).",
)
@click.option(
    "--tools",
    "tool_set",
    metavar="SET",
    help="Tool set its chains use (default: the one its format's benchmark plugin names, if any).",
)
@click.option(
    "--guidelines",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="A Markdown file of authoring guidelines, shown beside the editors.",
)
@click.option("--description", help="One line about the benchmark.")
@pass_ctx
def add_benchmark(
    app: AppContext,
    name: str,
    source_format: str,
    tool_set: str | None,
    guidelines: Path | None,
    description: str | None,
) -> None:
    """Create a benchmark with its format and tool set (tasks are then added to it by name).

    The tool set defaults to the one the format's benchmark plugin names (`benchmarks plugins`)."""
    from annotation import tasks as authoring
    from store import session_scope

    text = guidelines.read_text(encoding="utf-8") if guidelines else None
    with session_scope(app.engine, app.actor) as s:
        try:
            bench = authoring.create_benchmark(
                s, name, source_format, tool_set=tool_set, description=description, guidelines=text
            )
        except authoring.UnknownToolSet as exc:
            raise click.BadParameter(str(exc), param_hint="--tools") from None
        except authoring.AuthoringError as exc:
            raise click.ClickException(str(exc)) from None
        tool_set = bench.tool_set
    click.echo(
        f"benchmark {name}: format {source_format}, tools {tool_set or '(none)'}"
        + (f", guidelines from {guidelines}" if guidelines else "")
    )


@benchmarks_group.command("plugins")
@click.argument("name", required=False)
@json_option
def list_plugins(name: str | None, as_json: bool) -> None:
    """The kinds of benchmark chainmark knows (its own and installed plugins), or one in detail.

    Scans the installed packages afresh (and renews the cache other commands read); a plugin that
    could not be loaded is listed as a warning with the reason."""
    from store.plugins import find_plugin, plugin_problems, rescan

    plugins = list(rescan())
    if name is not None:
        found = find_plugin(name)
        if found is None:
            raise click.ClickException(f"no benchmark plugin {name!r}; known: {', '.join(p.name for p in plugins)}")
        plugins = [found]
    if as_json:
        emit_json({"plugins": [_plugin_dict(p) for p in plugins], "problems": plugin_problems()})
        return
    if name is not None:
        click.echo(_plugin_detail(plugins[0]))
    else:
        rows = [[p.name, ", ".join(p.formats), p.tool_set or "", " ".join(_abilities(p)), _origin(p)] for p in plugins]
        click.echo(table(rows, ["benchmark", "formats", "tools", "provides", "from"]))
    for problem in plugin_problems():
        click.echo(f"warning: plugin {problem}", err=True)


def _abilities(plugin: Any) -> list[str]:
    """What a plugin brings, in words a user knows from the commands."""
    return [
        word
        for word, present in (
            ("import/export", plugin.format_module),
            ("score", plugin.profile),
            ("tools", plugin.tool_set_builder),
            ("judges", plugin.judge_templates),
            ("demo", plugin.demo),
            ("conformance", plugin.conformance),
        )
        if present
    ]


def _origin(plugin: Any) -> str:
    return plugin.source or "chainmark"


def _plugin_dict(plugin: Any) -> dict[str, Any]:
    from dataclasses import asdict

    return {**asdict(plugin), "source": _origin(plugin), "provides": _abilities(plugin)}


def _plugin_detail(plugin: Any) -> str:
    rows = [
        ("formats", ", ".join(plugin.formats)),
        ("tool set", plugin.tool_set or ""),
        ("report columns", ", ".join(plugin.metrics) or "every metric the profile returns"),
        ("per-category metric", plugin.category_metric or ""),
        ("provides", " ".join(_abilities(plugin))),
        ("from", _origin(plugin)),
    ]
    import textwrap

    lines = [f"{plugin.name}: {plugin.summary}", ""]
    if plugin.help:
        lines += [textwrap.fill(plugin.help, 100), ""]
    lines += [f"{label + ':':21} {value}" for label, value in rows if value]
    return "\n".join(lines)


def register(cli: click.Group) -> None:
    cli.add_command(tasks_group)
    cli.add_command(benchmarks_group)
