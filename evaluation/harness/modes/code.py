"""Code mode (Agentic-MME "Gen"): the model answers with ``<code>`` (run in the sandbox) or
``<answer>``; images it saves become assets and are shown back; an AST trace maps the code to
canonical image operations so checkpoints can be matched. Search tools stay native function calls."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any


from evaluation.harness import prompts
from evaluation.harness.ast_trace import trace_ops
from evaluation.harness.budgets import rounds_left, tool_calls_left
from evaluation.harness.episode import Episode
from evaluation.harness.extract import extract_answer, has_answer_tag
from evaluation.harness.modes.atomic import final_answer_without_tools, tool_feedback
from evaluation.harness.sandbox import SandboxLimits, run_python
from evaluation.sandbox import read_regular_file, scan_outputs, work_folder
from evaluation.sandbox.outputs import MAX_IMAGE_PIXELS, check_image
from store import events as ev

_CODE = re.compile(r"<code>(.*?)(?:</code>|\Z)", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"^\s*```(?:python|py)?\s*\n?|\n?\s*```\s*$", re.IGNORECASE)
_IMAGE_EXT = {".png", ".jpg", ".jpeg", ".bmp", ".webp", ".gif", ".tif", ".tiff"}
MAX_IMAGE_BYTES = 16 * 1024 * 1024
MAX_IMAGES_PER_RUN = 32


def extract_code(text: str | None) -> str | None:
    m = _CODE.search(text or "")
    if not m:
        return None
    code = _FENCE.sub("", m.group(1)).strip("\n")
    return code if code.strip() else None


def _snapshot(folder: Path) -> dict[str, tuple[int, int, int]]:
    """Image files in the folder, never following a link (see ``evaluation.sandbox.outputs``)."""
    return {k: (v.mtime_ns, v.size, v.inode) for k, v in scan_outputs(folder, _IMAGE_EXT).items()}


def _collect_images(folder: Path, names: list[str]) -> tuple[list[str], list[bytes], list[str]]:
    """The produced images that are plain regular files, within the size cap, and really decode;
    the others are named in ``refused`` with the reason."""
    kept, images, refused = [], [], []
    for name in names:
        if len(kept) >= MAX_IMAGES_PER_RUN:
            refused.append(f"{name}: more than {MAX_IMAGES_PER_RUN} images in one run")
            continue
        try:
            data = read_regular_file(folder, name, MAX_IMAGE_BYTES)
            check_image(data, MAX_IMAGE_PIXELS)
        except OSError as exc:  # OutputRefused is one
            refused.append(f"{name}: {exc}")
            continue
        kept.append(name)
        images.append(data)
    return kept, images, refused


def _image_no(name: str) -> tuple[int, str]:
    m = re.search(r"(\d+)", Path(name).stem)
    return (int(m.group(1)) if m else 10**9, name)


async def run(ep: Episode) -> None:
    search = [t for t in ep.offered_tools() if t.kind == "service"]
    schemas = ep.tool_schemas(search)
    allowed = {t.name for t in search}
    limits = SandboxLimits.from_dict(ep.rc.sandbox)
    with work_folder("chainmark-code-") as workdir:
        await _episode(ep, workdir, limits, schemas, allowed, search)


async def _episode(
    ep: Episode, workdir: Path, limits: SandboxLimits, schemas: Any, allowed: set[str], search: list[Any]
) -> None:
    save_dir = workdir / "tool_images"
    save_dir.mkdir()
    env = _write_inputs(ep, workdir, save_dir)
    template = prompts.prompt_for("code", ep.rc.settings)
    ep.add("system", template.format(search_note=prompts.CODE_SEARCH_NOTE if search else ""))
    parts: list[dict[str, Any]] = []
    for i, img in enumerate(ep.task.images):
        parts.append(ep.image_part(img.data, img.asset_id, i, img.mime))
    parts.append({"type": "text", "text": ep.task.prompt_text()})
    ep.add("user", parts)
    ops_total = search_calls = 0
    while rounds_left(ep.budgets, ep.usage):
        reply = await ep.chat(tools=schemas or None)
        ep.add_assistant(reply)
        if reply.tool_calls:
            for call in reply.tool_calls:
                outcome = await ep.run_tool(call["name"], call["arguments"], call["id"], allowed=allowed)
                search_calls += 1
                text, _ = tool_feedback(ep, call["name"], outcome, indexed=True)
                ep.add("tool", text, tool_call_id=call["id"])
            if not tool_calls_left(ep.budgets, ep.usage):
                break
            continue
        code = extract_code(reply.content)
        if code is None:
            if has_answer_tag(reply.content):
                answer, how = extract_answer(reply.content)
                ep.finish(answer, reply.content, how)
                break
            ep.recorder.error("format", "the reply had neither <code> nor <answer>")
            ep.add("user", prompts.CODE_FORMAT_REMINDER)
            continue
        ep.usage.tool_calls += 1
        feedback, n_ops = await _execute(ep, code, workdir, save_dir, env, limits)
        ops_total += n_ops
        if has_answer_tag(reply.content):
            feedback.insert(
                0,
                {
                    "type": "text",
                    "text": "Note: your <answer> was ignored because the same reply "
                    "contained code; answer in a separate reply.",
                },
            )
        ep.add("user", feedback)
        if not tool_calls_left(ep.budgets, ep.usage):
            break
    ep.usage.extra["code_ops"] = ops_total
    ep.usage.extra["effective_tool_calls"] = ops_total + search_calls
    if ep.final_answer is None:
        ep.exhausted = "tool_calls" if not tool_calls_left(ep.budgets, ep.usage) else "rounds"
        await final_answer_without_tools(ep)


def _write_inputs(ep: Episode, workdir: Path, save_dir: Path) -> dict[str, str]:
    paths = []
    for i, img in enumerate(ep.task.images):
        name = "orig.png" if len(ep.task.images) == 1 else f"orig_{i}.png"
        ext = Path(img.name).suffix.lower() if Path(img.name).suffix.lower() in _IMAGE_EXT else ".png"
        path = workdir / (Path(name).stem + ext)
        path.write_bytes(img.data)
        paths.append(str(path))
    first = paths[0] if paths else ""
    return {
        "ORIGINAL_IMAGE_PATH": first,
        "LOCAL_INPUT_IMAGE_PATH": first,
        "ORIGINAL_IMAGE_PATHS": ":".join(paths),
        "PROCESSED_IMAGE_SAVE_PATH": str(save_dir),
    }


async def _execute(
    ep: Episode, code: str, workdir: Path, save_dir: Path, env: dict[str, str], limits: SandboxLimits
) -> tuple[list[dict[str, Any]], int]:
    from store.clock import utcnow

    started = utcnow()
    before = _snapshot(workdir)
    result = await run_python(
        code,
        workdir,
        save_dir=save_dir,
        env=env,
        limits=limits,
        allow_unsafe=bool(getattr(ep.rc, "unsafe_in_process_sandbox", False)),
    )
    after = _snapshot(workdir)
    changed = sorted((k for k, v in after.items() if before.get(k) != v), key=_image_no)
    produced, images, refused = _collect_images(workdir, changed)
    asset_ids = await ep.store_images(images)
    first_index = len(ep.tool_ctx.images)
    ep.tool_ctx.images.extend(images)
    ep.image_assets.extend(asset_ids)
    ops = trace_ops(code)
    ok = result.exit_code == 0 and not result.killed_reason
    payload = {
        "code": code,
        "stdout": result.stdout,
        "stderr": result.stderr,
        "exit_code": result.exit_code,
        "timed_out": result.timed_out,
        "ops": ops,
        "asset_ids": asset_ids,
        "files": produced,
        "duration_s": result.duration_s,
        "isolation": result.isolation,
        "sandbox_backend": result.backend,
        "stdout_truncated": result.stdout_truncated,
        "stderr_truncated": result.stderr_truncated,
    }
    if result.killed_reason:
        payload["killed_reason"] = result.killed_reason
    if refused:
        payload["refused_files"] = refused
    ep.recorder.add(ev.CODE_EXEC, payload, failed=not ok, started_at=started, assets=[(a, "output") for a in asset_ids])
    report = [
        f"Exit code: {result.exit_code}" + (f" (stopped: {result.killed_reason})" if result.killed_reason else "")
    ]
    if result.stdout:
        report.append("stdout:\n" + result.stdout + ("\n[output truncated]" if result.stdout_truncated else ""))
    if result.stderr:
        report.append("stderr:\n" + result.stderr[-4000:])
    if refused:
        report.append("files not collected:\n" + "\n".join(refused))
    parts: list[dict[str, Any]] = [{"type": "text", "text": "\n".join(report)}]
    for n, (name, data, aid) in enumerate(zip(produced, images, asset_ids)):
        parts.append({"type": "text", "text": f"{name} (image_index {first_index + n}):"})
        parts.append(ep.image_part(data, aid, first_index + n))
    return parts, len(ops)
