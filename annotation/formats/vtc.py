"""VTC-Bench: ``VTC-Bench.tsv`` and ``VTC-Bench_GTToolChain.tsv`` joined by ``id`` (they are not
row-aligned; the tool-chain file is canonical), images under ``images/<folder>/<id>.jpg``, and the
evaluator's ``results_*.jsonl`` (+ ``response_list_<id>.json``) (seed_formats.md §5.1, §5.3).

``model_tools_gt`` is a JSON array in a string; curly quotes are repaired for parsing, the cell is
kept as written so export gives the same cells. Tool names are mapped onto the 32-name vocabulary.
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from typing import Any, Callable

from annotation.answers import AnswerSpecError, validate_answer_spec
from annotation.formats.base import (
    AssetSpec,
    Checker,
    DatasetSpec,
    StepSpec,
    TaskBundle,
    TaskSpec,
    export_relpath,
    extension_for,
    is_entry,
    read_asset,
    read_jsonl,
    read_text,
    write_file,
    write_json,
    write_jsonl,
)
from annotation.formats.errors import FormatError
from annotation.formats.safe_files import DatasetRoot
from annotation.formats.run_specs import EventSpec, RunBundle, RunSpec, TrajectorySpec
from store import events as ev

name = "vtc"
source_format = "vtc"
tool_set = "vtc"
default_benchmark = "vtc"
MAIN_FILE = "VTC-Bench.tsv"
GT_FILE = "VTC-Bench_GTToolChain.tsv"
FILES = (MAIN_FILE, GT_FILE)
BASE_COLUMNS = ["index", "id", "category", "image", "question", "answer", "A", "B", "C", "D"]
REQUIRED = ("id", "category", "image", "question", "answer")
OPTION_LETTERS = "ABCDE"

VOCABULARY = [
    "Rotate",
    "Crop",
    "Resize",
    "Flip",
    "Translate",
    "Image Pyramid",
    "Convert Color",
    "Adjust Brightness",
    "Histogram Eq",
    "Binarize",
    "Morphology",
    "Blur",
    "Denoise",
    "Sharpen",
    "Inpaint",
    "Color Filter",
    "Flood Fill",
    "Edge Detect",
    "Line Detect",
    "Circle Detect",
    "Compute Gradients",
    "Template Match",
    "Watershed",
    "GrabCut",
    "Connected Components",
    "Frequency Transform",
    "Draw Contours",
    "Measure Area",
    "Measure Perimeter",
    "Approximate Polygon",
    "Draw Line",
    "Draw Circle",
]
# Names seen in the gold chains that are not vocabulary entries, mapped to the op they perform.
ALIASES = {"zoomin": "Crop"}


def _norm(name_: str) -> str:
    return re.sub(r"[\s_\-]+", "", name_).lower()


_BY_NORM = {_norm(v): v for v in VOCABULARY}


def canonical_tool(raw: str) -> str | None:
    key = _norm(raw)
    return _BY_NORM.get(key) or ALIASES.get(key)


def parse_tool_chain(cell: str, c: Checker, field: str = "model_tools_gt") -> list[str]:
    repaired = cell.replace("\u201c", '"').replace("\u201d", '"')
    try:
        value = json.loads(repaired)
    except json.JSONDecodeError as exc:
        raise c.fail(field, f"is not a JSON array of tool names: {exc.msg} at char {exc.pos}") from None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise c.fail(field, "must be a JSON array of tool-name strings")
    return value


# ------------------------------------------------------------------ TSV reading


def read_tsv(file: Path, root: Path | DatasetRoot | None = None) -> tuple[list[str], list[dict[str, str]]]:
    text = read_text(file, root)
    rows = list(csv.reader(io.StringIO(text, newline=""), delimiter="\t"))
    rows = [r for r in rows if r and any(cell.strip() for cell in r)]
    if not rows:
        raise FormatError(file, message="is empty (no header row)")
    header = rows[0]
    missing = [col for col in REQUIRED if col not in header]
    if file.name == GT_FILE and "model_tools_gt" not in header:
        missing.append("model_tools_gt")
    if missing:
        raise FormatError(file, "header", ", ".join(missing), "column(s) missing from the header row")
    out = []
    for n, row in enumerate(rows[1:], start=2):
        if len(row) != len(header):
            raise FormatError(file, f"row {n}", None, f"has {len(row)} cells; the header has {len(header)}")
        out.append(dict(zip(header, row)))
    return header, out


def read(path: Path) -> DatasetSpec:
    """A folder: both tables joined by id (the tool-chain one canonical). A ``.tsv`` file: that table only."""
    only: str | None = None
    if is_entry(path):
        only, path = path.name, path.parent
    if not path.is_dir():
        raise FormatError(path, message="does not exist")
    present = [only] if only else [f for f in FILES if is_entry(path / f)]
    src = DatasetRoot(path)
    if not present:
        raise FormatError(path, message=f"neither {MAIN_FILE} nor {GT_FILE} is here")
    headers: dict[str, list[str]] = {}
    by_file: dict[str, dict[str, tuple[int, dict[str, str]]]] = {}
    order: list[str] = []
    for source in (GT_FILE, MAIN_FILE) if not only else (only,):
        if source not in present:
            continue
        header, rows = read_tsv(path / source, src)
        # A table under another name is keyed as the layout it has, so export writes it back.
        fname = source if source in FILES else GT_FILE if "model_tools_gt" in header else MAIN_FILE
        headers[fname] = header
        table: dict[str, tuple[int, dict[str, str]]] = {}
        for pos, row in enumerate(rows):
            ident = row["id"].strip()
            if not ident:
                raise FormatError(path / fname, f"row {pos + 2}", "id", "is empty")
            if ident in table:
                raise FormatError(path / fname, f"row {pos + 2}", "id", f"id {ident!r} appears twice")
            table[ident] = (pos, row)
            if ident not in order:
                order.append(ident)
        by_file[fname] = table
    tasks = []
    unmapped: set[str] = set()
    lenient: list[str] = []
    for ident in order:
        record = {f: by_file[f][ident][1] for f in by_file if ident in by_file[f]}
        positions = {f: by_file[f][ident][0] for f in record}
        tasks.append(parse_item(ident, record, positions, src, unmapped, lenient))
    one_sided = {
        f: sorted(set(by_file[f]) - set(by_file[o]))
        for f, o in ((MAIN_FILE, GT_FILE), (GT_FILE, MAIN_FILE))
        if f in by_file and o in by_file
    }
    notes = [f"{len(ids)} id(s) only in {f}" for f, ids in one_sided.items() if ids]
    if unmapped:
        notes.append(f"tool names outside the vocabulary kept as written: {', '.join(sorted(unmapped))}")
    if only:
        notes.append(f"imported {only} only (name the folder to join both tables)")
    notes.extend(lenient)
    return DatasetSpec(tasks, {"headers": headers}, notes)


def answer_spec_of(row: dict[str, str], c: Checker, lenient: list[str] | None = None) -> dict[str, Any]:
    """The task's answer spec. The row is kept verbatim as the source record, and faithful scoring reads
    the answer from it as written (an answer given as option text stays text there)."""
    answer = row["answer"].strip()
    if not answer:
        raise c.fail("answer", "is empty")
    open_spec = {"kind": "contains" if len(answer.split()) < 5 else "exact", "value": answer}
    options = {L: row[L] for L in OPTION_LETTERS if row.get(L, "") != ""}
    if options:
        letter = answer.upper() if len(answer) == 1 else next((L for L, t in options.items() if t == answer), None)
        spec: dict[str, Any] = {"kind": "mcq", "options": options, "letter": letter}
        try:
            return validate_answer_spec(spec)
        except AnswerSpecError as exc:
            if lenient is None:
                raise c.fail("answer" if exc.field == "letter" else exc.field, str(exc)) from None
            # The reference scores such a row all the same (as text against the options): keep it.
            lenient.append(
                f"{Path(str(c.file)).name} {c.record}: answer {answer!r} is not an option letter or text ({exc}); "
                "kept as a text answer"
            )
            return open_spec
    return open_spec


def parse_item(
    ident: str,
    record: dict[str, dict[str, str]],
    positions: dict[str, int],
    root: Path | DatasetRoot,
    unmapped: set[str],
    lenient: list[str] | None = None,
) -> TaskSpec:
    canonical = GT_FILE if GT_FILE in record else MAIN_FILE if MAIN_FILE in record else next(iter(record))
    row = record[canonical]
    c = Checker(
        Path(root.path if isinstance(root, DatasetRoot) else root) / canonical,
        f"row {positions[canonical] + 2} (id {ident})",
    )
    steps = []
    if "model_tools_gt" in row and row["model_tools_gt"].strip():
        for raw in parse_tool_chain(row["model_tools_gt"], c):
            tool = canonical_tool(raw)
            if tool is None:
                unmapped.add(raw)
            steps.append(StepSpec(tool_name=tool or raw, meta={"source_name": raw} if tool != raw else {}))
    image = read_asset(root, row["image"].strip(), c, "image", image=True)
    fields = {
        "query": row["question"],
        "category": row["category"] or None,
        "answer_spec": answer_spec_of(row, c, lenient),
        "meta": {"vtc_rows": positions, "index": row.get("index")},
    }
    return TaskSpec(ident, record, fields, steps=steps, assets=[AssetSpec(image, row["image"].strip())])


# ------------------------------------------------------------------ TSV writing


def build_row(bundle: TaskBundle, fname: str, header: list[str]) -> dict[str, str]:
    task = bundle.task
    base = (task.source_record or {}).get(fname) if isinstance(task.source_record, dict) else None
    row = {col: "" for col in header}
    if base:
        row.update(base)
    spec = task.answer_spec or {}
    images = bundle.assets_in("query_image")
    row.update({"id": task.source_id, "category": task.category or "", "question": task.query})
    if images:
        row["image"] = (
            export_relpath(images[0][0].original_path)
            or f"images/{task.category or 'other'}/{task.source_id}{extension_for(images[0][1].mime, '.jpg')}"
        )
    if "index" in header and not row.get("index"):
        row["index"] = str((task.meta or {}).get("index") or task.id)
    if spec.get("kind") == "mcq":
        opts = spec.get("options") or {}
        letter = spec.get("letter") or ""
        keep_text = base is not None and len(base.get("answer", "").strip()) > 1 and opts.get(letter) == base["answer"]
        row["answer"] = base["answer"] if keep_text else letter
        for L in OPTION_LETTERS:
            if L in header:
                row[L] = opts.get(L, "")
    else:
        row["answer"] = str(spec.get("value", row.get("answer", "")))
    if "model_tools_gt" in header:
        names = [(s.meta or {}).get("source_name") or s.tool_name for s in bundle.steps if not s.is_final]
        old = row.get("model_tools_gt") or ""
        try:
            same = old and parse_tool_chain(old, Checker(fname, task.source_id)) == names
        except FormatError:
            same = False
        if not same:
            row["model_tools_gt"] = json.dumps(names, ensure_ascii=False)
    return row


def write(
    bundles: list[TaskBundle], settings: dict[str, Any], root: Path, read_blob: Callable[[str], bytes]
) -> list[Path]:
    headers = settings.get("headers") or {}
    written = []
    for fname in FILES:
        header = headers.get(fname) or (BASE_COLUMNS + (["model_tools_gt"] if fname == GT_FILE else []))
        placed: list[tuple[int, int, dict[str, str]]] = []
        for n, b in enumerate(bundles):
            record = b.task.source_record if isinstance(b.task.source_record, dict) else {}
            if b.task.source_record is not None and fname not in record:
                continue  # this id is only in the other file
            pos = ((b.task.meta or {}).get("vtc_rows") or {}).get(fname)
            row = record[fname] if b.verbatim else build_row(b, fname, header)
            placed.append((0 if pos is not None else 1, pos if pos is not None else n, row))
        placed.sort(key=lambda p: (p[0], p[1]))
        buf = io.StringIO()
        writer = csv.writer(buf, delimiter="\t", lineterminator="\n")
        writer.writerow(header)
        for _, _, row in placed:
            writer.writerow([row.get(col, "") for col in header])
        written.append(write_file(root, fname, buf.getvalue()))
    for b in bundles:
        for link, asset in b.assets_in("query_image"):
            rel = export_relpath(link.original_path) or build_row(b, MAIN_FILE, BASE_COLUMNS)["image"]
            written.append(write_file(root, rel, read_blob(asset.sha256)))
    return written


# ------------------------------------------------------------------ results JSONL


def _results_file(path: Path) -> Path:
    if is_entry(path):
        return path
    if not path.is_dir():
        raise FormatError(path, message="does not exist")
    found = sorted(path.glob("results_*.jsonl"))
    if not found:
        raise FormatError(path, message="no results_*.jsonl file here")
    if len(found) > 1:
        raise FormatError(path, message=f"{len(found)} results files here; name the one to import")
    return found[0]


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(i.get("text")) for i in content if isinstance(i, dict) and i.get("text") is not None)
    return "" if content is None else json.dumps(content, ensure_ascii=False)


def response_events(messages: list[Any], c: Checker) -> list[EventSpec]:
    out: list[EventSpec] = []
    n = 0
    last: tuple[str, str] = ("", "")
    for i, msg in enumerate(messages):
        c.expect(msg, dict, f"response_list[-1][{i}]")
        role = msg.get("role")
        fc = msg.get("function_call")
        if role == "assistant" and isinstance(fc, dict):
            n += 1
            raw = fc.get("arguments")
            try:
                args = json.loads(raw) if isinstance(raw, str) else raw
            except json.JSONDecodeError:
                args = None
            payload = ev.tool_call(str(fc.get("name")), args if isinstance(args, dict) else {}, f"call_{n}")
            if not isinstance(args, dict):
                payload["raw_arguments"] = raw
            out.append(EventSpec(ev.TOOL_CALL, payload, failed=not isinstance(args, dict)))
            last = (f"call_{n}", str(fc.get("name")))
        elif role == "function":
            out.append(
                EventSpec(
                    ev.TOOL_RESULT,
                    ev.tool_result(
                        str(msg.get("name") or last[1]),
                        _content_text(msg.get("content")),
                        call_id=last[0],
                        data={"content": msg.get("content")},
                    ),
                )
            )
        elif role == "assistant":
            out.append(
                EventSpec(
                    ev.MODEL_MESSAGE,
                    {
                        "content": _content_text(msg.get("content")),
                        "reasoning": msg.get("reasoning_content"),
                        "tool_calls": [],
                        "usage": {},
                        "finish_reason": None,
                    },
                )
            )
        elif role in ("user", "system"):
            out.append(EventSpec(ev.USER_MESSAGE, {"role": role, "content": msg.get("content")}))
    return out


def read_run(path: Path) -> RunSpec:
    file = _results_file(path)
    src = DatasetRoot(path if path.is_dir() else file.parent)
    trajectories = []
    notes: list[str] = []
    for lineno, line in read_jsonl(file, src):
        c = Checker(file, f"line {lineno}")
        c.expect(line, dict, "(record)")
        ident = str(c.get(line, "item_id", (str, int), "item_id"))
        answer = c.get(line, "agent_answer", (str, int, float, bool, type(None)), "agent_answer", required=False)
        if answer is not None and not isinstance(answer, str):
            # The reference's sheet holds it as a number and str()s it when scoring; the line is kept
            # in ``native`` so faithful scoring sees the number itself.
            notes.append(f"line {lineno}: agent_answer {answer!r} is a {type(answer).__name__}; read as text")
            answer = json.dumps(answer)
        full = c.get(line, "full_response", (str, type(None)), "full_response", required=False)
        rl_file = file.parent / f"response_list_{ident}.json"
        response_list = None
        if is_entry(rl_file):
            from annotation.formats.base import read_json

            response_list = read_json(rl_file, src)
            rc = Checker(rl_file, ident)
            turns = rc.get(response_list, "response_list", list, "response_list")
            messages = rc.expect(turns[-1], list, "response_list[-1]") if turns else []
            events = response_events(messages, rc)
        else:
            conv = c.get(line, "conversation", list, "conversation", required=False, default=[])
            events = response_events(conv, c)
        events.append(EventSpec(ev.ANSWER, ev.answer(answer or "", full or "", "tag")))
        ok = bool(answer)
        trajectories.append(
            TrajectorySpec(
                ident,
                f"line {lineno}",
                events,
                final_answer=answer,
                status="done" if ok else "failed",
                error=None if ok else f"no answer (status {line.get('status')!r})",
                native={"result": line, "response_list": response_list},
            )
        )
    return RunSpec(
        "atomic",
        trajectories,
        {"layout": "vtc-results"},
        skip_unknown_ids=True,
        keep_last_duplicate=True,
        missing_tasks_as_failed=True,
        notes=notes,
    )


def write_run(run: RunBundle, path: Path, read_blob: Callable[[str], bytes]) -> list[Path]:
    if path.suffix == ".jsonl":
        root, rel = path.parent, path.name
    else:
        root, rel = path, f"results_run{run.run.id}.jsonl"
    lines = []
    written = []
    for n, tb in enumerate(run.trajectories):
        native = tb.trajectory.native
        ident = tb.task.source_id
        if isinstance(native, dict) and native.get("no_prediction"):
            continue  # added on import for a task the file had no line for; it had none
        if run.run.kind == "imported" and isinstance(native, dict) and "result" in native:
            lines.append(native["result"])
            if native.get("response_list") is not None:
                written.append(write_json(root, f"response_list_{ident}.json", native["response_list"]))
            continue
        lines.append(_build_line(run, tb, n))
        written.append(
            write_json(
                root,
                f"response_list_{ident}.json",
                {
                    "timestamp": tb.trajectory.finished_at.isoformat() if tb.trajectory.finished_at else None,
                    "response_list": [_messages(tb)],
                },
            )
        )
    written.append(write_jsonl(root, rel, lines))
    return written


def _messages(tb: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for e in tb.events:
        p = e.payload
        if e.kind == ev.TOOL_CALL:
            args = (
                p.get("raw_arguments")
                if "raw_arguments" in p
                else json.dumps(p.get("arguments") or {}, ensure_ascii=False)
            )
            out.append(
                {"role": "assistant", "content": "", "function_call": {"name": p.get("name"), "arguments": args}}
            )
        elif e.kind == ev.TOOL_RESULT:
            content = (p.get("data") or {}).get("content")
            out.append(
                {
                    "role": "function",
                    "name": p.get("name"),
                    "content": content if content is not None else p.get("text", ""),
                }
            )
        elif e.kind == ev.MODEL_MESSAGE:
            msg = {"role": "assistant", "content": p.get("content") or ""}
            if p.get("reasoning"):
                msg["reasoning_content"] = p["reasoning"]
            out.append(msg)
        elif e.kind == ev.USER_MESSAGE:
            out.append({"role": p.get("role", "user"), "content": p.get("content")})
    return out


def _build_line(run: RunBundle, tb: Any, n: int) -> dict[str, Any]:
    task = tb.task
    bundle = run.task_bundles.get(task.id)
    spec = task.answer_spec or {}
    answer_event = next((e for e in reversed(tb.events) if e.kind == ev.ANSWER), None)
    image = bundle.assets_in("query_image")[0] if bundle and bundle.assets_in("query_image") else None
    options = {L: (spec.get("options") or {}).get(L, "") for L in OPTION_LETTERS} if spec.get("kind") == "mcq" else {}
    return {
        "status": "success" if tb.trajectory.status == "done" else tb.trajectory.status,
        "row_index": n,
        "item_index": (task.meta or {}).get("index") or task.id,
        "item_id": task.source_id,
        "category": task.category,
        "image_path": image[0].original_path if image else None,
        "image_size": [image[1].width, image[1].height] if image else None,
        "question": task.query,
        "ground_truth": spec.get("letter") if spec.get("kind") == "mcq" else spec.get("value"),
        "agent_answer": tb.trajectory.final_answer,
        "full_response": answer_event.payload.get("raw") if answer_event else None,
        "options": options,
        "conversation": [m for m in _messages(tb) if m["role"] != "function" and "function_call" not in m],
        "timestamp": tb.trajectory.finished_at.isoformat() if tb.trajectory.finished_at else None,
    }
