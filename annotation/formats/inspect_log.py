"""Inspect AI eval logs, out and in: a run as one log (a sample per trajectory with its messages, tool
calls, model usage and chainmark's checkpoint scores) that ``inspect view`` and
``inspect_ai.log.read_eval_log`` open, and an Inspect log brought in as an imported run.

The log is built from inspect-ai's own types and written with its own writer (``OUT.json`` gives
the JSON log format, anything else the ``.eval`` format), so what it writes is what it reads. inspect-ai
is an optional dependency (extra ``interop``). An imported log is read through the safe reader (a
regular file, under the size cap) and parsed from memory.
"""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path
from typing import Any, Callable

from annotation.formats.errors import FormatError
from annotation.formats.run_table import require
from annotation.formats.run_specs import EventSpec, RunBundle, RunSpec, TrajectorySpec
from annotation.formats.safe_files import DatasetRoot, UnsafeFile, check_image
from store import events as ev

name = "inspect"
SCORER = "chainmark_checkpoints"


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text")) for p in content if isinstance(p, dict) and p.get("type") == "text")
    return "" if content is None else str(content)


def _content(text: str, e: Any, tb: Any, m: Any, read_blob: Callable[[str], bytes] | None) -> Any:
    """The text, plus the event's images inlined as data URIs (how Inspect logs carry images)."""
    assets = tb.event_assets.get(e.id, []) if read_blob is not None else []
    images = [a for _, a in assets if str(a.mime or "").startswith("image/")]
    if not images:
        return text
    assert read_blob is not None
    parts: list[Any] = [m.ContentText(text=text)] if text else []
    for a in images:
        data = base64.b64encode(read_blob(a.sha256)).decode("ascii")
        parts.append(m.ContentImage(image=f"data:{a.mime};base64,{data}"))
    return parts


def _messages(
    tb: Any,
    model_name: str,
    m: Any,
    tool: Any,
    read_blob: Callable[[str], bytes] | None = None,
) -> tuple[list[Any], str | None, list[str]]:
    """(Inspect chat messages, final answer, error messages) for one trajectory's events."""
    out: list[Any] = []
    answer: str | None = None
    errors: list[str] = []
    announced: set[str] = set()  # call ids an assistant message already carries
    for e in tb.events:
        p = e.payload if isinstance(e.payload, dict) else {}
        if e.kind == ev.USER_MESSAGE:
            cls = m.ChatMessageSystem if p.get("role") == "system" else m.ChatMessageUser
            out.append(cls(content=_content(_text_of(p.get("content")), e, tb, m, read_blob)))
        elif e.kind == ev.MODEL_MESSAGE:
            calls = []
            for c in p.get("tool_calls") or []:
                args = c.get("parsed") if isinstance(c.get("parsed"), dict) else {}
                calls.append(
                    tool.ToolCall(
                        id=str(c.get("id") or ""),
                        function=str(c.get("name") or ""),
                        arguments=args,
                        parse_error=None if args or not c.get("arguments") else "arguments are not a JSON object",
                    )
                )
                announced.add(str(c.get("id") or ""))
            out.append(
                m.ChatMessageAssistant(content=p.get("content") or "", tool_calls=calls or None, model=model_name)
            )
        elif e.kind == ev.TOOL_CALL:
            call_id = str(p.get("call_id") or f"call-{e.ordinal}")
            if call_id not in announced:  # a call no recorded model message made (imported logs)
                args = p.get("arguments") if isinstance(p.get("arguments"), dict) else {}
                out.append(
                    m.ChatMessageAssistant(
                        content="",
                        model=model_name,
                        tool_calls=[tool.ToolCall(id=call_id, function=str(p.get("name") or ""), arguments=args)],
                    )
                )
                announced.add(call_id)
        elif e.kind == ev.TOOL_RESULT:
            error = tool.ToolCallError("unknown", str(p.get("error") or "failed")) if p.get("ok") is False else None
            out.append(
                m.ChatMessageTool(
                    content=_content(str(p.get("text") or ""), e, tb, m, read_blob),
                    tool_call_id=str(p.get("call_id") or ""),
                    function=str(p.get("name") or ""),
                    error=error,
                )
            )
        elif e.kind == ev.CODE_EXEC:
            call_id = f"code-{e.ordinal}"
            out.append(
                m.ChatMessageAssistant(
                    content="",
                    model=model_name,
                    tool_calls=[
                        tool.ToolCall(id=call_id, function="python", arguments={"code": str(p.get("code") or "")})
                    ],
                )
            )
            out.append(
                m.ChatMessageTool(
                    content=str(p.get("stdout") or "") + str(p.get("stderr") or ""),
                    tool_call_id=call_id,
                    function="python",
                )
            )
        elif e.kind == ev.ANSWER:
            answer = str(p.get("text") or "")
        elif e.kind == ev.ERROR:
            errors.append(f"{p.get('type') or 'error'}: {p.get('message') or ''}")
    return out, answer, errors


def _target(task: Any) -> str:
    spec = task.answer_spec or {}
    for key in ("value", "letter"):
        if isinstance(spec.get(key), (str, int, float)):
            return str(spec[key])
    return json.dumps(spec, ensure_ascii=False, sort_keys=True) if spec else ""


def _usage(m: Any, usage: dict[str, Any]) -> Any:
    def n(key: str) -> int:
        value = usage.get(key)
        return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0

    return m.ModelUsage(
        input_tokens=n("prompt_tokens"), output_tokens=n("completion_tokens"), total_tokens=n("total_tokens")
    )


def build_log(
    run: RunBundle,
    scores: dict[int, list[dict[str, Any]]] | None = None,
    read_blob: Callable[[str], bytes] | None = None,
) -> Any:
    """The run as an ``inspect_ai.log.EvalLog`` (inspect-ai's own model objects)."""
    log_mod = require("inspect_ai.log")
    m = require("inspect_ai.model")
    tool = require("inspect_ai.tool")
    scorer = require("inspect_ai.scorer")
    scores = scores or {}
    model_name = run.endpoint.model if run.endpoint is not None else f"chainmark/{run.run.name or run.run.id}"
    samples = []
    total_usage = m.ModelUsage()
    means: list[float] = []
    for tb in run.trajectories:
        messages, answer, errors = _messages(tb, model_name, m, tool, read_blob)
        final = answer if answer is not None else tb.trajectory.final_answer
        usage = _usage(m, tb.trajectory.usage if isinstance(tb.trajectory.usage, dict) else {})
        total_usage = total_usage + usage
        results = scores.get(tb.trajectory.id) or []
        sample_scores = None
        if results:
            value = sum(1.0 for r in results if r["passed"]) / len(results)
            means.append(value)
            sample_scores = {
                SCORER: scorer.Score(
                    value=value,
                    answer=final,
                    explanation=", ".join(f"{r['key']}: {'pass' if r['passed'] else 'fail'}" for r in results),
                    metadata={"checkpoints": {r["key"]: r["passed"] for r in results}},
                )
            }
        started = tb.trajectory.started_at
        finished = tb.trajectory.finished_at
        samples.append(
            log_mod.EvalSample(
                id=tb.task.source_id,
                epoch=1,
                input=tb.task.query or "",
                target=_target(tb.task),
                messages=messages,  # no answer: an output without choices (Inspect's shape for "nothing produced")
                output=m.ModelOutput.from_content(model_name, final)
                if final is not None
                else m.ModelOutput(model=model_name),
                scores=sample_scores,
                model_usage={model_name: usage},
                metadata={
                    "chainmark": {
                        "run_id": run.run.id,
                        "trajectory_id": tb.trajectory.id,
                        "task_id": tb.task.id,
                        "status": tb.trajectory.status,
                        "category": tb.task.category,
                        "errors": errors,
                        "trajectory_error": tb.trajectory.error,
                    }
                },
                error=log_mod.EvalError(message=tb.trajectory.error or "failed", traceback="", traceback_ansi="")
                if tb.trajectory.status == "failed"
                else None,
                started_at=started.isoformat() if started else None,
                completed_at=finished.isoformat() if finished else None,
            )
        )
    created = run.run.created_at.isoformat() if run.run.created_at else None
    eval_scores = []
    if means:
        eval_scores.append(
            log_mod.EvalScore(
                name=SCORER,
                scorer=SCORER,
                scored_samples=len(means),
                metrics={"mean": log_mod.EvalMetric(name="mean", value=sum(means) / len(means))},
            )
        )
    return log_mod.EvalLog(
        status="success"
        if run.run.status in ("done", "completed")
        else "error"
        if run.run.status == "failed"
        else "started",
        eval=log_mod.EvalSpec(
            created=created,
            task=run.benchmark.name,
            run_id=f"chainmark-run-{run.run.id}",
            dataset=log_mod.EvalDataset(name=run.benchmark.name, samples=len(samples)),
            model=model_name,
            config=log_mod.EvalConfig(),
            metadata={"chainmark_run_id": run.run.id, "mode": run.run.mode, "run_name": run.run.name},
        ),
        results=log_mod.EvalResults(
            total_samples=len(samples),
            completed_samples=sum(1 for tb in run.trajectories if tb.trajectory.status == "done"),
            scores=eval_scores,
        ),
        stats=log_mod.EvalStats(
            started_at=run.run.started_at.isoformat() if run.run.started_at else "",
            completed_at=run.run.finished_at.isoformat() if run.run.finished_at else "",
            model_usage={model_name: total_usage},
        ),
        samples=samples,
    )


def write_run(
    run: RunBundle, path: Path, read_blob: Callable[[str], bytes], scores: dict[int, list[dict[str, Any]]] | None = None
) -> list[Path]:
    log_mod = require("inspect_ai.log")
    path.parent.mkdir(parents=True, exist_ok=True)
    log_mod.write_eval_log(
        build_log(run, scores, read_blob), str(path), format="json" if path.suffix == ".json" else "eval"
    )
    return [path]


# ------------------------------------------------------------------ reading


def _assistant_events(msg: Any) -> list[EventSpec]:
    calls = [
        {"id": c.id, "name": c.function, "arguments": json.dumps(c.arguments), "parsed": c.arguments}
        for c in (msg.tool_calls or [])
    ]
    out = [
        EventSpec(
            ev.MODEL_MESSAGE,
            {
                "content": msg.text,
                "reasoning": None,
                "tool_calls": calls,
                "usage": {},
                "finish_reason": "tool_calls" if calls else None,
            },
        )
    ]
    out += [
        EventSpec(
            ev.TOOL_CALL, ev.tool_call(c.function, dict(c.arguments or {}), c.id), failed=c.parse_error is not None
        )
        for c in (msg.tool_calls or [])
    ]
    return out


def _images(msg: Any, where: str, root: DatasetRoot) -> list[bytes]:
    """The message's inlined images (data URIs), each decoded under the read limits."""
    out: list[bytes] = []
    for k, part in enumerate(msg.content if isinstance(msg.content, list) else []):
        uri = getattr(part, "image", None) if getattr(part, "type", None) == "image" else None
        if not isinstance(uri, str) or not uri.startswith("data:") or ";base64," not in uri:
            continue  # a URL or a file path: not brought in
        try:
            data = base64.b64decode(uri.split(",", 1)[1], validate=True)
        except ValueError:
            raise FormatError(where, f"content[{k}]", "image", "is not valid base64") from None
        if len(data) > root.limits.image_bytes:
            raise FormatError(where, f"content[{k}]", "image", f"is over the {root.limits.image_bytes:,} byte limit")
        try:
            check_image(data, root.limits.image_pixels)
        except UnsafeFile as exc:
            raise FormatError(where, f"content[{k}]", "image", str(exc)) from None
        out.append(data)
    return out


def _sample_events(sample: Any, where: str, root: DatasetRoot) -> tuple[list[EventSpec], str | None]:
    out: list[EventSpec] = []
    for msg in sample.messages or []:
        if msg.role in ("system", "user"):
            out.append(
                EventSpec(
                    ev.USER_MESSAGE,
                    {"role": msg.role, "content": msg.text},
                    assets=_images(msg, where, root),
                    asset_role="input",
                )
            )
        elif msg.role == "assistant":
            out += _assistant_events(msg)
        elif msg.role == "tool":
            error = msg.error.message if msg.error is not None else None
            out.append(
                EventSpec(
                    ev.TOOL_RESULT,
                    ev.tool_result(
                        msg.function or "",
                        msg.text,
                        call_id=msg.tool_call_id or "",
                        ok=error is None,
                        **({"error": error} if error else {}),
                    ),
                    assets=_images(msg, where, root),
                )
            )
    answer = sample.output.completion if sample.output is not None and sample.output.choices else None
    if answer is not None:
        out.append(EventSpec(ev.ANSWER, ev.answer(answer)))
    if sample.error is not None:
        out.append(EventSpec(ev.ERROR, {"type": "InspectError", "message": sample.error.message}))
    return out, answer


def read_run(path: Path) -> RunSpec:
    log_mod = require("inspect_ai.log")
    root = DatasetRoot(path.parent)
    try:
        data = root.read(path)
    except FileNotFoundError:
        raise FormatError(path, message="file not found") from None
    except UnsafeFile as exc:
        raise FormatError(path, message=str(exc)) from None
    try:
        log = log_mod.read_eval_log(
            io.BytesIO(data), format="eval" if data[:2] == b"PK" else "json", resolve_attachments=True
        )
    except Exception as exc:  # inspect-ai raises pydantic, zip and JSON errors alike
        raise FormatError(path, message=f"not an Inspect eval log ({type(exc).__name__}: {str(exc)[:200]})") from None
    trajectories = []
    for k, sample in enumerate(log.samples or []):
        events, answer = _sample_events(sample, f"{path}: sample {sample.id}", root)
        usage: dict[str, int] = {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}
        for u in (sample.model_usage or {}).values():
            usage["prompt_tokens"] += u.input_tokens
            usage["completion_tokens"] += u.output_tokens
            usage["total_tokens"] += u.total_tokens
        usage["tool_calls"] = sum(1 for e in events if e.kind == ev.TOOL_CALL)
        native = {
            "id": sample.id,
            "epoch": sample.epoch,
            "scores": {n: s.model_dump(mode="json") for n, s in (sample.scores or {}).items()},
        }
        status = "failed" if sample.error is not None else "done"
        trajectories.append(
            TrajectorySpec(
                str(sample.id),
                f"sample {k} (id {sample.id}, epoch {sample.epoch})",
                events,
                final_answer=answer,
                status=status,
                usage=usage,
                error=sample.error.message if sample.error is not None else None,
                native=native,
            )
        )
    return RunSpec(
        "atomic",
        trajectories,
        {"layout": "inspect-eval-log", "task": log.eval.task, "model": log.eval.model},
        name=f"inspect {log.eval.task} {log.eval.model}",
    )
