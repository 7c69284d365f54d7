"""GTA (General Tool Agents): ``dataset.json`` keyed by index + ``toolmeta.json`` + ``image/``, and the
OpenCompass predictions JSON in step-by-step and end-to-end layouts (seed_formats.md §1.1, §1.4).

Mapping: the first user message is the query; each gold tool call becomes a reference step whose
result is the following ``tool`` message; the last assistant ``content`` is the final step;
``gt_answer`` becomes a whitelist, references or none answer spec; ``files`` become query images.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Iterator

from annotation.formats.base import (
    AssetSpec,
    Checker,
    DatasetSpec,
    DatasetStream,
    StepSpec,
    TaskBundle,
    TaskSpec,
    export_relpath,
    extension_for,
    file_size,
    find_dataset_file,
    is_entry,
    read_asset_hashed,
    read_json,
    read_json_noting_duplicates,
    write_file,
    write_json,
)
from annotation.formats.errors import FormatError
from annotation.formats.fingerprint import encode_record
from annotation.formats.json_stream import RecordReader
from annotation.formats.safe_files import DatasetRoot
from annotation.formats.run_specs import EventSpec, RunBundle, RunSpec, TrajectorySpec
from store import events as ev

name = "gta"
source_format = "gta"
tool_set = "gta"
default_benchmark = "gta"
numbered_ids = True  # the loader reads every dataset key as an integer: authored tasks are numbered
DATASET_FILE = "dataset.json"
TOOLMETA_FILE = "toolmeta.json"
PREDICTIONS_FILE = "gta_bench.json"


# ------------------------------------------------------------------ dataset in


def read(path: Path) -> DatasetSpec:
    """The whole dataset in memory (exports, tests, tools); ``import`` streams it instead."""
    streamed = stream(path)
    return DatasetSpec(list(streamed.tasks), streamed.settings, streamed.notes)


def stream(path: Path) -> DatasetStream:
    """``toolmeta.json`` now, ``dataset.json`` record by record as the import asks for tasks."""
    file = find_dataset_file(path, (DATASET_FILE,), "GTA dataset.json")
    root = file.parent
    src = DatasetRoot(root)
    settings: dict[str, Any] = {}
    toolmeta_file = root / TOOLMETA_FILE
    if is_entry(toolmeta_file):
        toolmeta = read_json(toolmeta_file, src)
        if not isinstance(toolmeta, dict):
            raise FormatError(toolmeta_file, None, None, "must be a JSON object keyed by tool name")
        settings["toolmeta"] = toolmeta
    notes: list[str] = []
    return DatasetStream(_tasks(file, src, notes), settings, notes=notes, size=file_size(file))


def _tasks(file: Path, src: DatasetRoot, notes: list[str]) -> Iterator[TaskSpec]:
    records = RecordReader(file, src, encode_record, what='must be a JSON object keyed by sample index ("0", "1", …)')
    for key, record, text in records:
        spec = parse_record(key, record, file, src)
        spec.record_text = text
        notes.extend(f"{file}: record {key}: {odd}" for odd in spec.fields["answer_spec"].get("as_read") or ())
        yield spec


# The checks below test exact types first (what json decodes to) and build a field's name only when
# that fails, calling the Checker then for the message: naming every field of every record up front
# was most of the parse's time on 100,000 records.


def parse_record(key: str, record: Any, file: Path, root: Path | DatasetRoot) -> TaskSpec:
    c = Checker(file, key)
    if type(record) is not dict:
        c.expect(record, dict, "(record)")
    tools = record.get("tools")
    if type(tools) is not list:
        tools = c.get(record, "tools", list, "tools")
    tool_names = []
    for i, tool in enumerate(tools):
        name_ = tool.get("name") if type(tool) is dict else None
        tool_names.append(name_ if type(name_) is str else c.get(tool, "name", str, f"tools[{i}].name"))
    files = record.get("files", [])
    if type(files) is not list:
        files = c.get(record, "files", list, "files", required=False, default=[])
    assets = []
    for i, f in enumerate(files):
        ftype = c.get(f, "type", str, f"files[{i}].type")
        rel = c.get(f, "path", str, f"files[{i}].path")
        url = c.get(f, "url", (str, type(None)), f"files[{i}].url", required=False)
        data, sha = read_asset_hashed(root, rel, c, f"files[{i}].path", image=ftype == "image")
        assets.append(AssetSpec(data, rel, "query_image" if ftype == "image" else "evidence", url, known_sha256=sha))
    dialogs = record.get("dialogs")
    if type(dialogs) is not list:
        dialogs = c.get(record, "dialogs", list, "dialogs")
    if not dialogs:
        raise c.fail("dialogs", "is empty; the first message must be the user query")
    first = dialogs[0]
    if type(first) is not dict:
        first = c.expect(first, dict, "dialogs[0]")
    if first.get("role") != "user":
        raise c.fail("dialogs[0].role", f"must be 'user', got {first.get('role')!r}")
    query = first.get("content")
    if type(query) is not str:
        query = c.get(first, "content", str, "dialogs[0].content")
    steps = parse_dialogs(dialogs, c)
    if "gt_answer" not in record:
        raise c.fail("gt_answer", "is missing (use null for image-generation queries)")
    spec = answer_spec_of(record["gt_answer"], c)
    return TaskSpec(
        str(key), record, {"query": query, "answer_spec": spec, "tools_offered": tool_names}, steps=steps, assets=assets
    )


_RESULT_TYPES = (dict, str, list)
_VALUE_TYPES = (str, int, float)


def parse_dialogs(dialogs: list[Any], c: Checker) -> list[StepSpec]:
    steps: list[StepSpec] = []
    waiting: list[StepSpec] = []  # tool calls still expecting their result message
    last = len(dialogs) - 1
    for j in range(1, len(dialogs)):
        msg = dialogs[j]
        if type(msg) is not dict:
            c.expect(msg, dict, f"dialogs[{j}]")
        role = msg.get("role")
        if role == "assistant" and "tool_calls" in msg:
            calls = msg["tool_calls"]
            if type(calls) is not list:
                calls = c.get(msg, "tool_calls", list, f"dialogs[{j}].tool_calls")
            thought = msg.get("thought")
            if thought is not None and type(thought) is not str:
                thought = c.get(msg, "thought", (str, type(None)), f"dialogs[{j}].thought", required=False)
            for k, call in enumerate(calls):
                fn = call.get("function") if type(call) is dict else None
                if type(fn) is not dict:
                    fn = c.get(call, "function", dict, f"dialogs[{j}].tool_calls[{k}].function")
                tool = fn.get("name")
                if type(tool) is not str:
                    tool = c.get(fn, "name", str, f"dialogs[{j}].tool_calls[{k}].function.name")
                args = fn.get("arguments")
                if type(args) is not dict and type(args) is not str:
                    args = c.get(fn, "arguments", (dict, str), f"dialogs[{j}].tool_calls[{k}].function.arguments")
                step = StepSpec(thought=thought, tool_name=tool, tool_args=args, meta={"dialog_index": j})
                steps.append(step)
                waiting.append(step)
        elif role == "tool":
            if not waiting:
                raise c.fail(f"dialogs[{j}]", "a tool result with no tool call before it")
            step = waiting.pop(0)
            content = msg.get("content")
            if type(content) not in _RESULT_TYPES:
                content = c.get(msg, "content", _RESULT_TYPES, f"dialogs[{j}].content")
            step.result = content
            if isinstance(content, dict):
                ctype = content.get("type")
                if type(ctype) is not str:
                    ctype = c.get(content, "type", str, f"dialogs[{j}].content.type")
                value = content.get("content")
                if type(value) not in _VALUE_TYPES:
                    value = c.get(content, "content", _VALUE_TYPES, f"dialogs[{j}].content.content")
                step.result_text = str(value) if ctype == "text" else None
            elif isinstance(content, str):
                step.result_text = content
        elif role == "assistant":
            where = f"dialogs[{j}]"
            content = c.get(msg, "content", (str, type(None)), f"{where}.content")
            if j != last:
                raise c.fail(where, "an assistant answer must be the last message of the dialog")
            steps.append(
                StepSpec(
                    thought=msg.get("thought") if isinstance(msg.get("thought"), str) else None,
                    final_answer=content or "",
                    meta={"dialog_index": j},
                )
            )
        else:
            raise c.fail(f"dialogs[{j}].role", f"must be 'assistant' or 'tool' after the first message, got {role!r}")
    return steps


def answer_spec_of(gt: Any, c: Checker) -> dict[str, Any]:
    if gt is None:
        return {"kind": "none"}
    if isinstance(gt, list):
        for i, ref in enumerate(gt):
            c.expect(ref, str, f"gt_answer[{i}]")
        return _as_read({"kind": "references", "references": gt}, _empty_references(gt))
    if isinstance(gt, dict):
        groups = c.get(gt, "whitelist", list, "gt_answer.whitelist")
        blacklist = c.get(gt, "blacklist", (list, type(None)), "gt_answer.blacklist", required=False)
        for name_, value in (("whitelist", groups), ("blacklist", blacklist or [])):
            for i, group in enumerate(value):
                if type(group) is not list:
                    c.expect(group, list, f"gt_answer.{name_}[{i}]")
                for k, alias in enumerate(group):
                    if type(alias) is not str:
                        c.expect(alias, str, f"gt_answer.{name_}[{i}][{k}]")
        spec = {"kind": "whitelist", "groups": groups, "blacklist": blacklist or None}
        no_groups = ["gt_answer.whitelist is []: the reference then checks the blacklist only"] if not groups else []
        oddities = no_groups + _empty_aliases("whitelist", groups) + _empty_aliases("blacklist", blacklist or [])
        return _as_read(spec, oddities)
    raise c.fail("gt_answer", f"must be an object (whitelist), an array (references) or null, got {type(gt).__name__}")


def _as_read(spec: dict[str, Any], oddities: list[str]) -> dict[str, Any]:
    """The spec, marked ``as_read`` when the reference scores something an author could not write."""
    return {**spec, "as_read": oddities} if oddities else spec


def _empty_references(refs: list[str]) -> list[str]:
    if not refs:
        return ["gt_answer is []: the reference leaves the query out of AnsAcc's denominator and adds 0"]
    return []


def _empty_aliases(name_: str, groups: list[Any]) -> list[str]:
    """GTA joins a group's aliases into one ``\\b(?:…)\\b`` pattern: an empty group or alias makes that
    pattern match at any word boundary (a whitelist group then matches any answer with a word in it, a
    blacklist fails every such answer)."""
    effect = "matches any answer with a word in it" if name_ == "whitelist" else "fails any answer with a word in it"
    return [
        f"gt_answer.{name_}[{i}] has an empty alias: the reference's pattern then {effect}"
        for i, group in enumerate(groups)
        if not group or any(not alias for alias in group)
    ]


# ------------------------------------------------------------------ dataset out


def gt_answer_of(spec: dict[str, Any]) -> Any:
    kind = spec.get("kind")
    if kind == "whitelist":
        return {"whitelist": spec.get("groups"), "blacklist": spec.get("blacklist")}
    if kind == "references":
        return list(spec.get("references") or [])
    if kind in ("exact", "contains", "numeric"):
        return {"whitelist": [[str(spec.get("value"))] + list(spec.get("variants") or [])], "blacklist": None}
    if kind == "mcq":
        letter = spec.get("letter")
        return {"whitelist": [[str(letter), str((spec.get("options") or {}).get(letter, letter))]], "blacklist": None}
    return None


def asset_paths(bundle: TaskBundle) -> list[tuple[Any, Any, str]]:
    """(link, asset, relative path) for the task's files; authored files get ``image/<id>_<n>.<ext>``."""
    out = []
    for link, asset in bundle.assets:
        if link.role not in ("query_image", "evidence"):
            continue
        rel = (
            export_relpath(link.original_path)
            or f"image/{bundle.task.source_id}_{link.role}_{link.ordinal}{extension_for(asset.mime)}"
        )
        out.append((link, asset, rel))
    return out


def chain_tools(bundle: TaskBundle) -> list[str]:
    """The tools the reference chain calls, in first-use order: an authored task's tool list when nobody
    set one (GTA offers a query the tools its chain needs)."""
    return list(dict.fromkeys(s.tool_name for s in bundle.steps if s.tool_name))


def tool_content(step: Any) -> Any:
    """A tool message's content as GTA writes it: an imported one as it was (``{"type", "content"}`` or a
    string); a result recorded in chainmark (``{"data", "image_names", …}``) as ``{"type": "text", …}``."""
    result = step.result
    if isinstance(result, str) or (isinstance(result, dict) and isinstance(result.get("type"), str)):
        return result
    return {"type": "text", "content": step.result_text or ""}


def build_record(bundle: TaskBundle, toolmeta: dict[str, Any]) -> dict[str, Any]:
    """A dataset.json item from the rows (for authored or edited tasks)."""
    task = bundle.task
    base = task.source_record if isinstance(task.source_record, dict) else {}
    base_tools = {t.get("name"): t for t in base.get("tools") or [] if isinstance(t, dict)}
    tools = [
        base_tools.get(n) or toolmeta.get(n) or {"name": n, "description": "", "inputs": [], "outputs": []}
        for n in task.tools_offered or chain_tools(bundle)
    ]
    files = [
        {"type": "image" if link.role == "query_image" else "file", "path": rel, "url": link.url}
        for link, _, rel in asset_paths(bundle)
    ]
    dialogs: list[dict[str, Any]] = [{"role": "user", "content": task.query}]
    last_msg: dict[str, Any] | None = None
    last_index: Any = object()
    results: list[dict[str, Any]] = []
    for step in bundle.steps:
        if step.is_final:
            dialogs.extend(results)
            results = []
            msg: dict[str, Any] = {"role": "assistant", "content": step.final_answer or ""}
            if step.thought:
                msg["thought"] = step.thought
            dialogs.append(msg)
            continue
        call = {
            "type": "function",
            "function": {"name": step.tool_name, "arguments": step.tool_args if step.tool_args is not None else {}},
        }
        index = (step.meta or {}).get("dialog_index")
        if last_msg is not None and index is not None and index == last_index:
            last_msg["tool_calls"].append(call)
        else:
            dialogs.extend(results)
            results = []
            last_msg = {"role": "assistant", "tool_calls": [call]}
            if step.thought is not None:
                last_msg["thought"] = step.thought
            dialogs.append(last_msg)
            last_index = index
        if step.result is not None or step.result_text is not None:
            results.append({"role": "tool", "name": step.tool_name, "content": tool_content(step)})
    dialogs.extend(results)
    record = dict(base)
    record.update({"tools": tools, "files": files, "dialogs": dialogs, "gt_answer": gt_answer_of(task.answer_spec)})
    return record


def record_of(bundle: TaskBundle, toolmeta: dict[str, Any]) -> dict[str, Any]:
    return bundle.task.source_record if bundle.verbatim else build_record(bundle, toolmeta)


def toolmeta_of(tools: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """``toolmeta.json`` entries for the tool set's tools that carry GTA's input/output metas."""
    return {
        name: {
            "name": name,
            "description": t.get("description") or "",
            "inputs": meta["inputs"],
            "outputs": meta["outputs"],
        }
        for name, t in tools.items()
        if isinstance(meta := t.get("meta"), dict) and "inputs" in meta and "outputs" in meta
    }


def write(
    bundles: list[TaskBundle],
    settings: dict[str, Any],
    root: Path,
    read_blob: Callable[[str], bytes],
    tools: dict[str, dict[str, Any]] | None = None,
) -> list[Path]:
    """``dataset.json``, ``toolmeta.json`` and the images. The tool metas are the imported benchmark's where it
    has them, else the tool set's (an authored benchmark), so each task's ``tools`` are described."""
    described = toolmeta_of(tools or {})
    toolmeta = dict(settings.get("toolmeta") or described)
    dataset: dict[str, Any] = {}
    written: list[Path] = []
    files_done: set[str] = set()
    for b in bundles:
        record = record_of(b, {**described, **toolmeta})
        dataset[b.task.source_id] = record
        for tool in record.get("tools") or []:
            if isinstance(tool, dict) and tool.get("name") and tool["name"] not in toolmeta:
                toolmeta[tool["name"]] = tool
        for _, asset, rel in asset_paths(b):
            if rel not in files_done:  # tasks often share an image
                files_done.add(rel)
                written.append(write_file(root, rel, read_blob(asset.sha256)))
    written.append(write_json(root, DATASET_FILE, dataset, indent=4))
    written.append(write_json(root, TOOLMETA_FILE, toolmeta, indent=4))
    return written


# ------------------------------------------------------------------ predictions in


def _parse_arguments(raw: Any) -> tuple[dict[str, Any], str | None]:
    if isinstance(raw, dict):
        return raw, None
    if isinstance(raw, str):
        try:
            value = json.loads(raw)
        except json.JSONDecodeError as exc:
            return {}, f"arguments are not JSON: {exc.msg}"
        if isinstance(value, dict):
            return value, None
        return {}, "arguments are not a JSON object"
    return {}, f"arguments must be an object or a JSON string, got {type(raw).__name__}"


def read_run(path: Path) -> RunSpec:
    file = find_dataset_file(path, (PREDICTIONS_FILE,), "GTA predictions file")
    data, duplicates, nested = read_json_noting_duplicates(file, path if path.is_dir() else file.parent)
    if not isinstance(data, dict):
        raise FormatError(file, None, None, "must be a JSON object keyed by sample index")
    notes = []
    if duplicates:
        notes.append(
            f"{len(duplicates)} sample key(s) occur more than once in {file.name}; the last record of each "
            f"was kept, as json.load keeps it for the reference: {', '.join(map(repr, duplicates[:10]))}"
        )
    if nested:
        notes.append(
            f"key(s) repeated inside records of {file.name}: {', '.join(map(repr, nested[:10]))}; the last "
            f"value of each was used, as json.load uses it for the reference"
        )
    numeric: list[str] = []
    layouts = set()
    trajectories = []
    for key, rec in data.items():
        c = Checker(file, key)
        c.expect(rec, dict, "(record)")
        preds = c.get(rec, "prediction", list, "prediction")
        c.get(rec, "gold", list, "gold", required=False)
        layout = "e2e" if preds and isinstance(preds[0], list) else "step"
        layouts.add(layout)
        if len(layouts) > 1:
            raise c.fail("prediction", "mixes step-by-step and end-to-end layouts in one file")
        if _stringify_numeric_answers(preds, layout):
            numeric.append(str(key))
        events = _step_events(preds, c) if layout == "step" else _e2e_events(preds, c)
        answer = next((e.payload["text"] for e in reversed(events) if e.kind == ev.ANSWER), None)
        if layout == "step" and preds:
            last = preds[-1]
            if isinstance(last.get("content"), str) and "tool_calls" not in last:
                answer = last["content"]
        trajectories.append(
            TrajectorySpec(
                str(key),
                str(key),
                events,
                final_answer=answer,
                status="done" if preds else "failed",
                error=None if preds else "empty prediction",
                native=rec,
            )
        )
    layout = layouts.pop() if layouts else "step"
    if numeric:
        notes.append(
            f"{len(numeric)} sample(s) answer with a number instead of a string; it was read as str(number): "
            f"{', '.join(map(repr, numeric[:10]))}"
        )
    return RunSpec("step" if layout == "step" else "react", trajectories, {"layout": layout}, notes=notes)


def _stringify_numeric_answers(preds: list[Any], layout: str) -> bool:
    """Assistant ``content`` given as a number becomes ``str(number)`` (in place); True if any was."""
    steps = preds if layout == "step" else (preds[0] if preds and isinstance(preds[0], list) else [])
    changed = False
    for step in steps:
        if (
            isinstance(step, dict)
            and step.get("role") == "assistant"
            and isinstance(step.get("content"), (int, float))
            and not isinstance(step.get("content"), bool)
        ):
            step["content"] = str(step["content"])
            changed = True
    return changed


def _step_events(preds: list[Any], c: Checker) -> list[EventSpec]:
    out = []
    for k, pred in enumerate(preds):
        c.expect(pred, dict, f"prediction[{k}]")
        out.append(EventSpec(ev.STEP_PREDICTION, {"gold_index": k, "prediction": pred}, failed="error" in pred))
    return out


def _e2e_events(preds: list[Any], c: Checker) -> list[EventSpec]:
    steps = c.expect(preds[0], list, "prediction[0]")
    out: list[EventSpec] = []
    open_calls: list[tuple[str, str]] = []
    n_calls = 0
    for j, step in enumerate(steps):
        where = f"prediction[0][{j}]"
        c.expect(step, dict, where)
        role = step.get("role")
        if role == "assistant" and "tool_calls" in step:
            calls = c.get(step, "tool_calls", list, f"{where}.tool_calls")
            error = step.get("error")
            for k, call in enumerate(calls):
                fn = c.get(call, "function", dict, f"{where}.tool_calls[{k}].function")
                tool = c.get(fn, "name", str, f"{where}.tool_calls[{k}].function.name")
                args, problem = _parse_arguments(fn.get("arguments"))
                n_calls += 1
                call_id = f"call_{n_calls}"
                payload = ev.tool_call(tool, args, call_id)
                if problem:
                    payload["raw_arguments"] = fn.get("arguments")
                    payload["parse_error"] = problem
                if error is not None:
                    payload["error"] = error
                out.append(EventSpec(ev.TOOL_CALL, payload, failed=error is not None or problem is not None))
                open_calls.append((call_id, tool))
        elif role == "tool":
            content = step.get("content")
            items = content if isinstance(content, list) else [content]
            text = "\n".join(str(i.get("content")) for i in items if isinstance(i, dict) and i.get("type") == "text")
            call_id, tool = open_calls.pop(0) if open_calls else ("", str(step.get("name") or ""))
            out.append(
                EventSpec(ev.TOOL_RESULT, ev.tool_result(tool, text, call_id=call_id, data={"content": content}))
            )
        elif role == "assistant":
            content = c.get(step, "content", (str, type(None)), f"{where}.content")
            is_thought = (step.get("meta") or {}).get("type") == "thought"
            if is_thought or j != len(steps) - 1:
                out.append(
                    EventSpec(
                        ev.MODEL_MESSAGE,
                        {"content": content, "reasoning": None, "tool_calls": [], "usage": {}, "finish_reason": None},
                    )
                )
            else:
                out.append(EventSpec(ev.ANSWER, ev.answer(content or "")))
        else:
            raise c.fail(f"{where}.role", f"must be 'assistant' or 'tool', got {role!r}")
    return out


# ------------------------------------------------------------------ predictions out


def gold_dialogs(bundle: TaskBundle | None, toolmeta: dict[str, Any]) -> list[dict[str, Any]]:
    if bundle is None:
        return []
    return list(record_of(bundle, toolmeta).get("dialogs") or [])


def build_prediction(tb: Any, layout: str, task_bundle: TaskBundle | None, toolmeta: dict[str, Any]) -> dict[str, Any]:
    dialogs = gold_dialogs(task_bundle, toolmeta)
    events = tb.events
    origin = [e.payload for e in events if e.kind == ev.USER_MESSAGE]
    if layout == "step":
        gold = [m for m in dialogs if m.get("role") == "assistant"]
        preds = [
            e.payload["prediction"]
            for e in sorted(
                (e for e in events if e.kind == ev.STEP_PREDICTION), key=lambda e: e.payload.get("gold_index", 0)
            )
        ]
        return {"gold": gold, "prediction": preds, "origin_prompt": origin, "steps": []}
    steps: list[dict[str, Any]] = []
    failed_results = {
        str(e.payload.get("call_id")): e
        for e in events
        if e.kind == ev.TOOL_RESULT and e.payload.get("call_id") and (e.failed or e.payload.get("ok") is False)
    }
    for e in events:
        p = e.payload
        if e.kind == ev.TOOL_CALL:
            raw = p.get("raw_arguments")
            step: dict[str, Any] = {
                "role": "assistant",
                "tool_calls": [
                    {
                        "type": "function",
                        "function": {
                            "name": p.get("name"),
                            "arguments": raw if raw is not None else p.get("arguments"),
                        },
                    }
                ],
            }
            failed_result = failed_results.get(str(p.get("call_id") or "")) if p.get("call_id") else None
            if "error" in p:
                step["error"] = p["error"]
            elif e.failed:
                step["error"] = {"type": "invalid_call", "msg": p.get("parse_error") or "the call was invalid"}
            elif failed_result is not None:  # the call ran and failed: OpenCompass marks the step with error
                step["error"] = {
                    "type": "tool_error",
                    "msg": str(
                        failed_result.payload.get("error")
                        or failed_result.payload.get("text")
                        or "the tool call failed"
                    ),
                }
            steps.append(step)
        elif e.kind == ev.TOOL_RESULT:
            content = (p.get("data") or {}).get("content")
            if content is None:
                content = [{"type": "text", "content": p.get("text") or p.get("error") or ""}]
            steps.append({"role": "tool", "content": content})
        elif e.kind == ev.MODEL_MESSAGE and isinstance(p.get("content"), str) and p.get("content"):
            steps.append({"role": "assistant", "content": p["content"], "meta": {"type": "thought"}})
        elif e.kind == ev.ANSWER:
            steps.append({"role": "assistant", "content": p.get("text") or ""})
    return {"gold": [dialogs[1:]] if dialogs else [], "prediction": [steps], "origin_prompt": origin, "steps": []}


def write_run(run: RunBundle, path: Path, read_blob: Callable[[str], bytes]) -> list[Path]:
    layout = (run.run.config or {}).get("layout") or ("step" if run.run.mode == "step" else "e2e")
    toolmeta = ((run.benchmark.settings or {}).get(name) or {}).get("toolmeta") or {}
    out: dict[str, Any] = {}
    for tb in run.trajectories:
        native = tb.trajectory.native
        if run.run.kind == "imported" and isinstance(native, dict) and "prediction" in native:
            out[tb.task.source_id] = native
        else:
            out[tb.task.source_id] = build_prediction(tb, layout, run.task_bundles.get(tb.task.id), toolmeta)
    if path.suffix == ".json":
        root, rel = path.parent, path.name
    else:
        root, rel = path, PREDICTIONS_FILE
    return [write_json(root, rel, out, indent=4)]
