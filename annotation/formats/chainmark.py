"""chainmark's own dataset folder: ``tasks.jsonl`` (one task a line, with its answer spec, reference
chain, checkpoints, orderings and documents), ``images/`` (each stored image once, named by its
content hash), ``benchmark.json`` (name, format, tool set, guidelines, description) and, when the
author wrote a judge rubric, ``rubrics.jsonl`` (every version, oldest first, with who saved it and when).

Everything a task holds is written, so an export re-imports to the same task rows and rubric versions. Reading is as
strict as the other formats: files must be regular and inside the folder, under the size caps; an
unknown or mistyped field is a FormatError naming file, line and field, and nothing is imported.
The layout is documented in ``docs/native-format.md``; ``chainmark schema tasks`` prints the JSON
Schema of a line.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any, Callable

from annotation.formats.base import (
    ROLES,
    AssetSpec,
    Checker,
    CheckpointSpec,
    DatasetSpec,
    DocumentSpec,
    OrderingSpec,
    RubricLine,
    StepSpec,
    TaskBundle,
    TaskSpec,
    extension_for,
    iter_jsonl,
    read_asset_hashed,
    read_json,
    write_file,
    write_json,
)
from annotation.formats.errors import FormatError
from annotation.formats.safe_files import DatasetRoot
from store.rubrics import RubricVersion, placeholder_problem

name = "chainmark"
source_format = "chainmark"
tool_set = None
default_benchmark = "chainmark"
TASKS_FILE = "tasks.jsonl"
BENCHMARK_FILE = "benchmark.json"
RUBRICS_FILE = "rubrics.jsonl"
RUBRIC_KEYS = {"version", "system", "user", "author", "created_at", "parser", "params"}
PARSER_CHARS = 40  # the judgetemplate.parser column
TEXT_FIELDS = ("category", "subcategory", "intent", "level", "domain", "output_format")
TASK_KEYS = {"id", "query", "answer_spec", "tools_offered", "meta", "steps", "checkpoints", "orderings"}
TASK_KEYS |= {"documents", "images", *TEXT_FIELDS}
STEP_KEYS = {"thought", "tool_name", "tool_args", "result_text", "result", "is_final", "final_answer", "meta"}
CHECKPOINT_KEYS = {"key", "axis", "description", "tools", "code_check", "visual_check", "search_check"}
CHECKPOINT_KEYS |= {"answer_check", "weight", "meta", "step"}
IMAGE_KEYS = {"path", "role", "step", "document"}


# ------------------------------------------------------------------ writing


def image_path(asset: Any) -> str:
    """Where a stored image goes: named by content, so an image several tasks share is written once."""
    return f"images/{asset.sha256}{extension_for(asset.mime)}"


def _step_line(step: Any) -> dict[str, Any]:
    return {k: getattr(step, k) for k in sorted(STEP_KEYS)}


def _checkpoint_line(cp: Any, step_ordinals: dict[int, int]) -> dict[str, Any]:
    line = {k: getattr(cp, k) for k in sorted(CHECKPOINT_KEYS - {"step"})}
    line["step"] = step_ordinals.get(cp.step_id) if cp.step_id is not None else None
    return line


def _image_lines(b: TaskBundle, step_ordinals: dict[int, int], doc_ordinals: dict[int, int]) -> list[dict[str, Any]]:
    ordered = sorted(b.assets, key=lambda p: (ROLES.index(p[0].role) if p[0].role in ROLES else 99, p[0].ordinal))
    return [
        {
            "path": image_path(asset),
            "role": link.role,
            "step": step_ordinals.get(link.step_id) if link.step_id is not None else None,
            "document": doc_ordinals.get(link.document_id) if link.document_id is not None else None,
        }
        for link, asset in ordered
    ]


def task_line(b: TaskBundle) -> dict[str, Any]:
    """One ``tasks.jsonl`` line: every field of the task and its children, links by ordinal."""
    t = b.task
    step_ordinals = {s.id: i for i, s in enumerate(b.steps)}
    doc_ordinals = {d.id: i for i, d in enumerate(b.documents)}
    meta = {k: v for k, v in (t.meta or {}).items() if k != "import"}
    return {
        "id": t.source_id,
        "query": t.query,
        **{f: getattr(t, f) for f in TEXT_FIELDS},
        "answer_spec": t.answer_spec or {"kind": "none"},
        "tools_offered": list(t.tools_offered or []),
        "meta": meta,
        "steps": [_step_line(s) for s in b.steps],
        "checkpoints": [_checkpoint_line(c, step_ordinals) for c in b.checkpoints],
        "orderings": [{"key": o.key, "sequence": list(o.sequence), "max_gap": o.max_gap} for o in b.orderings],
        "documents": [{"title": d.title, "text": d.text, "meta": d.meta or {}} for d in b.documents],
        "images": _image_lines(b, step_ordinals, doc_ordinals),
    }


def write(
    bundles: list[TaskBundle],
    settings: dict[str, Any],
    root: Path,
    read_blob: Callable[[str], bytes],
    benchmark: dict[str, Any] | None = None,
) -> list[Path]:
    root.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    seen: set[str] = set()
    lines = []
    for b in bundles:
        for _, asset in b.assets:
            rel = image_path(asset)
            if rel not in seen:
                seen.add(rel)
                written.append(write_file(root, rel, read_blob(asset.sha256)))
        lines.append(json.dumps(task_line(b), ensure_ascii=False, sort_keys=True) + "\n")
    written.append(write_file(root, TASKS_FILE, "".join(lines)))
    info = benchmark or {}
    card = {
        "name": info.get("name"),
        "format": name,
        "tool_set": info.get("tool_set"),
        "guidelines": info.get("guidelines"),
        "description": info.get("description"),
    }
    written.append(write_json(root, BENCHMARK_FILE, card))
    rubrics = info.get("rubrics") or []
    if rubrics:
        written.append(write_file(root, RUBRICS_FILE, "".join(_rubric_line(v) + "\n" for v in rubrics)))
    return written


def _rubric_line(v: RubricVersion) -> str:
    """One ``rubrics.jsonl`` line: a stored version as it was saved (its time in ISO 8601 with offset)."""
    line = {
        "version": int(v.version),
        "author": v.author,
        "created_at": v.created_at.isoformat(),
        "system": v.system,
        "user": v.user,
        "parser": v.parser,
        "params": v.params,
    }
    return json.dumps(line, ensure_ascii=False, sort_keys=True)


# ------------------------------------------------------------------ reading


def _no_unknown(c: Checker, obj: dict[str, Any], allowed: set[str], where: str) -> None:
    unknown = sorted(set(obj) - allowed)
    if unknown:
        raise c.fail(
            f"{where}{unknown[0]}", f"is not a field of the chainmark format (known: {', '.join(sorted(allowed))})"
        )


def _ordinal(c: Checker, obj: dict[str, Any], key: str, field: str, count: int) -> int | None:
    value = c.get(obj, key, (int, type(None)), field, required=False)
    if value is not None and not 0 <= value < count:
        raise c.fail(field, f"names item {value}, but there are {count}")
    return value


def _steps(c: Checker, raw: list[Any]) -> list[StepSpec]:
    out = []
    for i, s in enumerate(raw):
        f = f"steps[{i}]"
        c.expect(s, dict, f)
        _no_unknown(c, s, STEP_KEYS, f + ".")
        is_final = c.get(s, "is_final", bool, f + ".is_final", required=False, default=False)
        final = c.get(s, "final_answer", (str, type(None)), f + ".final_answer", required=False)
        if is_final != (final is not None):
            raise c.fail(f + ".is_final", "must be true exactly when final_answer is given")
        out.append(
            StepSpec(
                thought=c.get(s, "thought", (str, type(None)), f + ".thought", required=False),
                tool_name=c.get(s, "tool_name", (str, type(None)), f + ".tool_name", required=False),
                tool_args=s.get("tool_args"),
                result_text=c.get(s, "result_text", (str, type(None)), f + ".result_text", required=False),
                result=s.get("result"),
                final_answer=final,
                meta=c.get(s, "meta", dict, f + ".meta", required=False, default={}),
            )
        )
    return out


def _checkpoints(c: Checker, raw: list[Any], steps: int) -> list[CheckpointSpec]:
    from annotation.tasks import AuthoringError, _check_shapes

    out = []
    keys: set[str] = set()
    for i, cp in enumerate(raw):
        f = f"checkpoints[{i}]"
        c.expect(cp, dict, f)
        _no_unknown(c, cp, CHECKPOINT_KEYS, f + ".")
        key = c.get(cp, "key", str, f + ".key")
        if key in keys:
            raise c.fail(f + ".key", f"{key!r} appears twice")
        keys.add(key)
        checks = {k: cp.get(k) for k in ("code_check", "visual_check", "search_check", "answer_check")}
        try:
            _check_shapes(checks)
        except AuthoringError as exc:
            raise c.fail(f, str(exc)) from None
        weight = c.get(cp, "weight", (int, float), f + ".weight", required=False, default=1.0)
        step = _ordinal(c, cp, "step", f + ".step", steps)
        meta = dict(c.get(cp, "meta", dict, f + ".meta", required=False, default={}))
        out.append(
            CheckpointSpec(
                key=key,
                axis=c.get(cp, "axis", str, f + ".axis", required=False, default="V"),
                description=c.get(cp, "description", (str, type(None)), f + ".description", required=False),
                tools=[
                    c.expect(t, str, f"{f}.tools[{k}]")
                    for k, t in enumerate(c.get(cp, "tools", list, f + ".tools", required=False, default=[]))
                ],
                weight=float(weight),
                meta=meta,
                step_index=step,
                **checks,
            )
        )
    return out


def _orderings(c: Checker, raw: list[Any], keys: set[str]) -> list[OrderingSpec]:
    out = []
    for i, o in enumerate(raw):
        f = f"orderings[{i}]"
        c.expect(o, dict, f)
        _no_unknown(c, o, {"key", "sequence", "max_gap"}, f + ".")
        seq = [
            c.expect(s, str, f"{f}.sequence[{k}]") for k, s in enumerate(c.get(o, "sequence", list, f + ".sequence"))
        ]
        missing = [s for s in seq if s not in keys]
        if missing:
            raise c.fail(f + ".sequence", f"names checkpoint(s) the task lacks: {', '.join(missing)}")
        out.append(
            OrderingSpec(
                key=c.get(o, "key", str, f + ".key"),
                sequence=seq,
                max_gap=c.get(o, "max_gap", (int, type(None)), f + ".max_gap", required=False),
            )
        )
    return out


def _documents(c: Checker, raw: list[Any]) -> list[DocumentSpec]:
    out = []
    for i, d in enumerate(raw):
        f = f"documents[{i}]"
        c.expect(d, dict, f)
        _no_unknown(c, d, {"title", "text", "meta"}, f + ".")
        out.append(
            DocumentSpec(
                text=c.get(d, "text", str, f + ".text"),
                title=c.get(d, "title", (str, type(None)), f + ".title", required=False),
                meta=c.get(d, "meta", dict, f + ".meta", required=False, default={}),
            )
        )
    return out


def _images(c: Checker, raw: list[Any], root: DatasetRoot, steps: int, docs: int) -> list[AssetSpec]:
    out = []
    for i, im in enumerate(raw):
        f = f"images[{i}]"
        c.expect(im, dict, f)
        _no_unknown(c, im, IMAGE_KEYS, f + ".")
        role = c.get(im, "role", str, f + ".role", required=False, default="query_image")
        if role not in ROLES:
            raise c.fail(f + ".role", f"must be one of {', '.join(ROLES)}, got {role!r}")
        rel = c.get(im, "path", str, f + ".path")
        data, sha = read_asset_hashed(root, rel, c, f + ".path", image=True)
        out.append(
            AssetSpec(
                data,
                rel,
                role,
                document_index=_ordinal(c, im, "document", f + ".document", docs),
                step_index=_ordinal(c, im, "step", f + ".step", steps),
                known_sha256=sha,
            )
        )
    return out


def _answer_spec(c: Checker, raw: Any) -> dict[str, Any]:
    from annotation.answers import validate_answer_spec

    c.expect(raw, dict, "answer_spec")
    try:
        return validate_answer_spec(raw)
    except ValueError as exc:
        raise c.fail("answer_spec", str(exc)) from None


def parse_task(line: Any, file: Path, record: str, root: DatasetRoot) -> TaskSpec:
    """One ``tasks.jsonl`` line as a TaskSpec; any problem is a FormatError naming the field."""
    c = Checker(file, record)
    c.expect(line, dict, "")
    _no_unknown(c, line, TASK_KEYS, "")
    ident = c.get(line, "id", str, "id")
    if not ident.strip():
        raise c.fail("id", "is empty")
    fields: dict[str, Any] = {"query": c.get(line, "query", str, "query")}
    for f in TEXT_FIELDS:
        fields[f] = c.get(line, f, (str, type(None)), f, required=False)
    fields["answer_spec"] = _answer_spec(c, line.get("answer_spec", {"kind": "none"}))
    fields["tools_offered"] = [
        c.expect(t, str, f"tools_offered[{k}]")
        for k, t in enumerate(c.get(line, "tools_offered", list, "tools_offered", required=False, default=[]))
    ]
    fields["meta"] = c.get(line, "meta", dict, "meta", required=False, default={})
    steps = _steps(c, c.get(line, "steps", list, "steps", required=False, default=[]))
    checkpoints = _checkpoints(
        c, c.get(line, "checkpoints", list, "checkpoints", required=False, default=[]), len(steps)
    )
    orderings = _orderings(
        c, c.get(line, "orderings", list, "orderings", required=False, default=[]), {k.key for k in checkpoints}
    )
    documents = _documents(c, c.get(line, "documents", list, "documents", required=False, default=[]))
    images = _images(
        c, c.get(line, "images", list, "images", required=False, default=[]), root, len(steps), len(documents)
    )
    return TaskSpec(ident, line, fields, steps, checkpoints, orderings, documents, images)


def _card(folder: Path, root: DatasetRoot) -> dict[str, Any]:
    path = folder / BENCHMARK_FILE
    if not path.exists():
        return {}
    card = read_json(path, root)
    c = Checker(path, None)
    c.expect(card, dict, "")
    _no_unknown(c, card, {"name", "format", "tool_set", "guidelines", "description"}, "")
    for key in ("name", "format", "tool_set", "guidelines", "description"):
        c.get(card, key, (str, type(None)), key, required=False)
    if card.get("format") not in (None, name):
        raise c.fail("format", f"is {card['format']!r}; this reader takes {name!r} folders")
    return {k: card[k] for k in ("tool_set", "guidelines", "description") if card.get(k) is not None}


def _rubric_prompt(c: Checker, line: dict[str, Any], key: str) -> str:
    """A rubric's system or user text, refused when it names a placeholder the rubric judge is not given."""
    text = c.get(line, key, str, key, required=key == "user", default="")
    if key == "user" and not text.strip():
        raise c.fail(key, "is empty")
    problem = placeholder_problem(text)
    if problem:
        raise c.fail(key, problem)
    return str(text)


def _saved_at(c: Checker, line: dict[str, Any]) -> datetime:
    raw = c.get(line, "created_at", str, "created_at")
    try:
        when = datetime.fromisoformat(raw)
    except ValueError:
        raise c.fail("created_at", f"is not an ISO 8601 time: {raw[:40]!r}") from None
    if when.tzinfo is None:
        raise c.fail("created_at", "needs its UTC offset (e.g. +00:00)")
    return when


def parse_rubric(line: Any, file: Path, record: str, version: int) -> RubricVersion:
    """One ``rubrics.jsonl`` line as a RubricVersion; it must be version ``version`` (lines are v1, v2, …)."""
    c = Checker(file, record)
    c.expect(line, dict, "")
    _no_unknown(c, line, RUBRIC_KEYS, "")
    number = c.get(line, "version", int, "version")
    if number != version:
        raise c.fail("version", f"is {number}; the lines must be versions 1, 2, … in order (expected {version})")
    parser = c.get(line, "parser", str, "parser")
    if not parser or len(parser) > PARSER_CHARS:
        raise c.fail("parser", f"must be 1 to {PARSER_CHARS} characters")
    return RubricVersion(
        version=str(number),
        system=_rubric_prompt(c, line, "system"),
        user=_rubric_prompt(c, line, "user"),
        author=c.get(line, "author", str, "author", required=False, default=""),
        created_at=_saved_at(c, line),
        parser=parser,
        params=c.get(line, "params", dict, "params", required=False, default={}),
    )


def _rubrics(folder: Path, root: DatasetRoot) -> list[RubricLine]:
    """The folder's judge rubric versions, oldest first (none without a ``rubrics.jsonl``)."""
    file = folder / RUBRICS_FILE
    if not file.exists():
        return []
    out: list[RubricLine] = []
    for n, line in iter_jsonl(file, root):
        record = f"line {n}"
        out.append(RubricLine(file, record, parse_rubric(line, file, record, len(out) + 1)))
    return out


def read(path: Path) -> DatasetSpec:
    folder = path if path.is_dir() else path.parent
    file = folder / TASKS_FILE if path.is_dir() else path
    if not file.exists():
        raise FormatError(path, message=f"no {TASKS_FILE} found")
    root = DatasetRoot(folder)
    tasks: list[TaskSpec] = []
    seen: set[str] = set()
    for n, line in iter_jsonl(file, root):
        spec = parse_task(line, file, f"line {n}", root)
        if spec.source_id in seen:
            raise FormatError(file, f"line {n}", "id", f"{spec.source_id!r} appears twice")
        seen.add(spec.source_id)
        tasks.append(spec)
    rubrics = _rubrics(folder, root)
    return DatasetSpec(tasks, _card(folder, root), list(root.warnings), rubrics)


# ------------------------------------------------------------------ runs

_RUNS = "a chainmark folder holds tasks; export a run with: chainmark export-run parquet|inspect RUN_ID OUT"


def read_run(path: Path, **_: Any) -> Any:
    raise FormatError(path, message=_RUNS)


def write_run(run: Any, path: Path, read_blob: Callable[[str], bytes]) -> list[Path]:
    raise FormatError(path, message=_RUNS)
