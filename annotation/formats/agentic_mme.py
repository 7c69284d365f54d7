"""Agentic-MME: ``json/NNNN.json`` + ``images/`` (seed_formats.md §3.1), and the per-task run folders of
its runners (§3.3: ``tool_use_list.json``, ``run_meta.json``, ``model_answer.txt``, ``conversation.json``,
``orig.png``, ``tool_images/``).

Images are found the way the reference does it: the first digit run of the JSON file name, padded to
four digits, names ``image_<id>_1..N`` (multi-image) or ``image_<id>`` in ``image/`` or ``images/``;
``input.image`` is the fallback. Checkpoints keep their source keys so an edited task is rebuilt with
the same shape.
"""

from __future__ import annotations

import io
import json
import os
import re
from pathlib import Path, PurePath
from typing import Any, Callable, Iterator

from annotation.formats.base import (
    ROLES,
    AssetSpec,
    Checker,
    CheckpointSpec,
    DatasetSpec,
    DatasetStream,
    OrderingSpec,
    StepSpec,
    TaskBundle,
    TaskSpec,
    export_relpath,
    extension_for,
    file_size,
    is_entry,
    parse_json,
    read_asset,
    read_json,
    safe_relpath,
    write_file,
    write_json,
)
from annotation.formats.errors import FormatError
from annotation.formats.run_specs import EventSpec, RunBundle, RunSpec, TrajectorySpec
from annotation.formats.safe_files import DatasetRoot, UnsafeFile
from store import events as ev

name = "agentic-mme"
source_format = "agentic-mme"
tool_set = "agentic-mme"
default_benchmark = "agentic-mme"
IMAGE_DIRS = ("image", "images")
IMAGE_EXTS = (".png", ".jpg", ".jpeg")
MATCH_TYPES = {"contains": "contains", "exact": "exact", "numeric": "numeric"}
CHECK_KEYS = ("code_check", "visual_check", "search_check", "answer_check")
RUN_FILES = ("tool_use_list.json", "run_meta.json", "model_answer.txt", "conversation.json")
CODE_EXEC_NAMES = {"run_visual_processing_code", "script_exec"}
RUN_IMAGE_EXTS = (".png", ".jpg", ".jpeg", ".webp", ".gif", ".bmp")
# chainmark's additions to a task file, which the reference's evaluator does not read: the annotator's
# reference chain (in the runners' tool_use_list shape), the task's other images (under image_cause/, the
# seed's folder of auxiliary visual evidence), a checkpoint's step and ground-truth image
CHAIN_KEY = "reference_chain"
EVIDENCE_KEY = "image_cause"
EVIDENCE_DIR = "image_cause"
CHECKPOINT_LINKS = ("step", "gt_image")


# ------------------------------------------------------------------ dataset in


def _json_dir(path: Path) -> tuple[Path, Path]:
    if not path.exists():
        raise FormatError(path, message="does not exist")
    if path.is_dir() and path.name == "json" and not (path / "json").is_dir():
        return path.parent, path
    if not (path / "json").is_dir():
        raise FormatError(path, message="no json/ folder (expected <root>/json/NNNN.json and <root>/images/)")
    return path, path / "json"


def image_id(stem: str) -> str | None:
    m = re.search(r"(\d+)", stem)
    return m.group(1).zfill(4) if m else None


def _find(folder: Path, base: str) -> Path | None:
    for ext in IMAGE_EXTS:
        p = folder / f"{base}{ext}"
        if _present(p):
            return p
    return None


_present = is_entry  # a link or FIFO counts too: reading it then says why it is refused


def resolve_images(root: Path, stem: str) -> list[Path]:
    """The reference's filename rule: image_<id>_1..N first, then image_<id>."""
    ident = image_id(stem)
    if ident is None:
        return []
    for d in IMAGE_DIRS:
        folder = root / d
        found = []
        n = 1
        while (p := _find(folder, f"image_{ident}_{n}")) is not None:
            found.append(p)
            n += 1
        if found:
            return found
        single = _find(folder, f"image_{ident}")
        if single is not None:
            return [single]
    return []


def read(path: Path) -> DatasetSpec:
    """The whole dataset in memory (exports, tests, tools); ``import`` streams it instead."""
    return DatasetSpec(list(stream(path).tasks))


def stream(path: Path) -> DatasetStream:
    """The task files read one by one as the import asks for tasks (one file is one task)."""
    root, json_dir = _json_dir(path)
    files = sorted(json_dir.glob("*.json"))
    if not files:
        raise FormatError(json_dir, message="contains no task files (*.json)")
    src = DatasetRoot(root)
    notes: list[str] = []
    return DatasetStream(_noted(files, src, notes), notes=notes, size=sum(map(file_size, files)))


def _noted(files: list[Path], src: DatasetRoot, notes: list[str]) -> Iterator[TaskSpec]:
    """Each task file parsed, with a note for every ordering kept as the reference reads it."""
    for f in files:
        spec = parse_task(f, src)
        keys = {cp.key for cp in spec.checkpoints}
        for o in spec.orderings:
            unknown = [k for k in o.sequence if k not in keys]
            if unknown:
                o.as_read = True
                notes.append(
                    f"{f}: ordering {o.key} names unknown checkpoint(s) {', '.join(unknown)}: kept, and it never "
                    f"passes (R counts it as failed), as the reference scores it"
                )
        yield spec


def parse_task(file: Path, src: Path | DatasetRoot) -> TaskSpec:
    src = src if isinstance(src, DatasetRoot) else DatasetRoot(src)
    root = Path(src.path)
    record = read_json(file, src)
    c = Checker(file, file.stem)
    c.expect(record, dict, "(record)")
    task_id = c.get(record, "task_id", str, "task_id")
    meta = c.get(record, "meta", dict, "meta", required=False, default={})
    level = c.get(meta, "level", (int, str, type(None)), "meta.level", required=False)
    domain = c.get(meta, "domain", (str, type(None)), "meta.domain", required=False)
    inp = c.get(record, "input", dict, "input")
    prompt = c.get(inp, "prompt", str, "input.prompt")
    image_rel = c.get(inp, "image", (str, type(None)), "input.image", required=False)
    golden = c.get(record, "golden_answer", dict, "golden_answer")
    value = c.get(golden, "value", (str, int, float), "golden_answer.value")
    match_type = c.get(golden, "match_type", str, "golden_answer.match_type", required=False, default="contains")
    if match_type not in MATCH_TYPES:
        raise c.fail("golden_answer.match_type", f"must be one of {', '.join(MATCH_TYPES)}, got {match_type!r}")
    spec: dict[str, Any] = {"kind": MATCH_TYPES[match_type], "value": value}
    if "tolerance" in golden:
        spec["tolerance"] = c.get(golden, "tolerance", (int, float), "golden_answer.tolerance")
    from annotation.answers import AnswerSpecError, validate_answer_spec  # pydantic: loaded with the first record

    try:
        validate_answer_spec(spec)
    except AnswerSpecError as exc:
        raise c.fail(f"golden_answer.{exc.field}", str(exc)) from None

    pe = c.get(record, "process_evaluation", dict, "process_evaluation", required=False, default={})
    checkpoints = [
        parse_checkpoint(cp, c, f"process_evaluation.checkpoints[{i}]")
        for i, cp in enumerate(
            c.get(pe, "checkpoints", list, "process_evaluation.checkpoints", required=False, default=[])
        )
    ]
    orderings = []
    for i, oc in enumerate(
        c.get(pe, "ordering_constraints", list, "process_evaluation.ordering_constraints", required=False, default=[])
    ):
        where = f"process_evaluation.ordering_constraints[{i}]"
        key = c.get(oc, "id", str, f"{where}.id")
        seq = c.get(oc, "sequence", list, f"{where}.sequence")
        for k, item in enumerate(seq):
            c.expect(item, str, f"{where}.sequence[{k}]")
        gap = c.get(oc, "max_gap", (int, type(None)), f"{where}.max_gap", required=False)
        orderings.append(OrderingSpec(key, seq, gap))
    eff = c.get(pe, "efficiency", dict, "process_evaluation.efficiency", required=False, default={})
    fields: dict[str, Any] = {
        "query": prompt,
        "answer_spec": spec,
        "domain": domain,
        "category": domain,
        "level": None if level is None else str(level),
        "reference_tool_calls": c.get(
            eff, "reference_tool_calls", int, "process_evaluation.efficiency.reference_tool_calls", required=False
        ),
        "max_tool_calls": c.get(
            eff, "max_tool_calls", int, "process_evaluation.efficiency.max_tool_calls", required=False
        ),
        "penalty_per_extra_call": c.get(
            eff,
            "penalty_per_extra_call",
            (int, float),
            "process_evaluation.efficiency.penalty_per_extra_call",
            required=False,
        ),
        "meta": {"task_id": task_id},
    }
    images = resolve_images(root, file.stem)
    if not images and image_rel:
        rel = safe_relpath(image_rel, c, "input.image")
        if _present(root / rel):
            images = [root / rel]
    if not images:
        ident = image_id(file.stem) or "<no digits in the file name>"
        raise c.fail(
            "input.image",
            f"no image found: looked for image_{ident}[_N].png/.jpg in "
            f"{', '.join(IMAGE_DIRS)}/ and for input.image={image_rel!r}",
        )
    assets = [
        AssetSpec(
            read_asset(src, p.relative_to(root).as_posix(), c, "input.image", image=True),
            p.relative_to(root).as_posix(),
            "query_image",
        )
        for p in images
    ]
    if isinstance(meta.get("category"), str):
        fields["category"] = meta["category"]
    steps = parse_chain(record, c, src, assets)
    assets.extend(parse_evidence(record, c, src, len(steps)))
    link_checkpoints(checkpoints, c, src, assets, len(steps))
    return TaskSpec(file.stem, record, fields, steps=steps, checkpoints=checkpoints, orderings=orderings, assets=assets)


def parse_chain(record: dict[str, Any], c: Checker, src: DatasetRoot, assets: list[AssetSpec]) -> list[StepSpec]:
    """The reference chain an export from chainmark wrote; each step's images are added to ``assets``."""
    steps = []
    for i, item in enumerate(c.get(record, CHAIN_KEY, list, CHAIN_KEY, required=False, default=[])):
        where = f"{CHAIN_KEY}[{i}]"
        c.expect(item, dict, where)
        step = StepSpec(
            thought=c.get(item, "thought", (str, type(None)), f"{where}.thought", required=False),
            tool_name=c.get(item, "tool_name", (str, type(None)), f"{where}.tool_name", required=False),
            tool_args=item.get("arguments"),
            result_text=c.get(item, "output_text", (str, type(None)), f"{where}.output_text", required=False),
            result=item.get("output"),
            final_answer=c.get(item, "final_answer", (str, type(None)), f"{where}.final_answer", required=False),
            meta=c.get(item, "meta", dict, f"{where}.meta", required=False, default={}),
        )
        if step.tool_name is None and step.final_answer is None:
            raise c.fail(where, "a step names a tool_name or a final_answer")
        steps.append(step)
        for k, rel in enumerate(c.get(item, "output_paths", list, f"{where}.output_paths", required=False, default=[])):
            assets.append(_evidence_asset(rel, "artifact", i, c, src, f"{where}.output_paths[{k}]"))
    return steps


def parse_evidence(record: dict[str, Any], c: Checker, src: DatasetRoot, n_steps: int) -> list[AssetSpec]:
    """The task's other images an export from chainmark listed (ground-truth crops, evidence)."""
    out = []
    for i, item in enumerate(c.get(record, EVIDENCE_KEY, list, EVIDENCE_KEY, required=False, default=[])):
        where = f"{EVIDENCE_KEY}[{i}]"
        c.expect(item, dict, where)
        role = c.get(item, "role", str, f"{where}.role", required=False, default="evidence")
        if role not in ROLES or role == "query_image":
            raise c.fail(f"{where}.role", f"must be one of {', '.join(r for r in ROLES if r != 'query_image')}")
        step = c.get(item, "step", (int, type(None)), f"{where}.step", required=False)
        if step is not None and not 0 <= step < n_steps:
            raise c.fail(f"{where}.step", f"names no step of {CHAIN_KEY} (it has {n_steps})")
        out.append(_evidence_asset(c.get(item, "path", str, f"{where}.path"), role, step, c, src, f"{where}.path"))
    return out


def _evidence_asset(rel: Any, role: str, step: int | None, c: Checker, src: DatasetRoot, field: str) -> AssetSpec:
    c.expect(rel, str, field)
    rel = safe_relpath(rel, c, field)
    return AssetSpec(read_asset(src, rel, c, field, image=True), rel, role, step_index=step)


def link_checkpoints(
    checkpoints: list[CheckpointSpec], c: Checker, src: DatasetRoot, assets: list[AssetSpec], n_steps: int
) -> None:
    """A checkpoint's ``step`` (index into the chain) and ``gt_image`` (a file of the export) as links."""
    for i, cp in enumerate(checkpoints):
        links = cp.meta.pop("links", {})
        where = f"process_evaluation.checkpoints[{i}]"
        step = links.get("step")
        if step is not None:
            if not isinstance(step, int) or isinstance(step, bool) or not 0 <= step < n_steps:
                raise c.fail(f"{where}.step", f"names no step of {CHAIN_KEY} (it has {n_steps})")
            cp.step_index = step
        gt = links.get("gt_image")
        if gt is not None:
            c.expect(gt, str, f"{where}.gt_image")
            rel = safe_relpath(gt, c, f"{where}.gt_image")
            known = [n for n, a in enumerate(assets) if a.original_path == rel]
            if not known:
                assets.append(_evidence_asset(rel, "evidence", None, c, src, f"{where}.gt_image"))
            cp.gt_asset_index = known[0] if known else len(assets) - 1


def parse_checkpoint(cp: Any, c: Checker, where: str) -> CheckpointSpec:
    c.expect(cp, dict, where)
    spec = CheckpointSpec(key=c.get(cp, "id", str, f"{where}.id"), axis=c.get(cp, "axis", str, f"{where}.axis"))
    tools = c.get(cp, "tools", list, f"{where}.tools", required=False, default=[])
    for k, t in enumerate(tools):
        c.expect(t, str, f"{where}.tools[{k}]")
    spec.tools = list(tools)
    spec.description = c.get(cp, "description", (str, type(None)), f"{where}.description", required=False)
    for key in CHECK_KEYS:
        setattr(spec, key, c.get(cp, key, (dict, type(None)), f"{where}.{key}", required=False))
    vc = spec.visual_check
    if vc is not None:
        c.get(vc, "question", str, f"{where}.visual_check.question")
        c.get(vc, "expected_answer", str, f"{where}.visual_check.expected_answer")
    if spec.code_check is not None:
        c.get(spec.code_check, "verifier", str, f"{where}.code_check.verifier", required=False)
    spec.meta = {"keys": list(cp)}
    links = {k: cp[k] for k in CHECKPOINT_LINKS if k in cp}
    if links:
        spec.meta["links"] = links  # resolved (and removed) by link_checkpoints
    known = ("id", "axis", "tools", "description", *CHECK_KEYS, *CHECKPOINT_LINKS)
    extra = {k: v for k, v in cp.items() if k not in known}
    if extra:
        spec.meta["extra"] = extra
    return spec


# ------------------------------------------------------------------ dataset out


def checkpoint_dict(cp: Any, links: dict[str, Any] | None = None) -> dict[str, Any]:
    """A checkpoint as the task file holds it; ``links``: its ``step`` and ``gt_image`` in this export."""
    values: dict[str, Any] = {
        "id": cp.key,
        "axis": cp.axis,
        "tools": list(cp.tools or []),
        "description": cp.description,
    }
    for key in CHECK_KEYS:
        values[key] = getattr(cp, key)
    values.update((cp.meta or {}).get("extra") or {})
    values.update(links or {})
    keys = (cp.meta or {}).get("keys")
    if keys is None:  # authored in chainmark: leave out what is empty
        return {k: v for k, v in values.items() if v not in (None, []) or k in ("id", "axis")}
    out = {k: values.get(k) for k in keys}
    out.update({k: v for k, v in values.items() if k not in out and v not in (None, [])})
    return out


def image_paths(bundle: TaskBundle) -> list[tuple[Any, Any, str]]:
    links = bundle.assets_in("query_image")
    ident = image_id(bundle.task.source_id) or bundle.task.source_id
    out = []
    for n, (link, asset) in enumerate(links, start=1):
        suffix = f"_{n}" if len(links) > 1 else ""
        out.append(
            (
                link,
                asset,
                export_relpath(link.original_path) or f"images/image_{ident}{suffix}{extension_for(asset.mime)}",
            )
        )
    return out


def evidence_paths(bundle: TaskBundle) -> list[tuple[Any, Any, str]]:
    """Every image of the task besides its query images (step outputs, ground-truth crops, evidence),
    then each checkpoint's ground-truth image linked to no step or role, named under ``image_cause/``."""
    ident = image_id(bundle.task.source_id) or bundle.task.source_id
    links = sorted((p for p in bundle.assets if p[0].role != "query_image"), key=lambda p: (p[0].role, p[0].ordinal))
    linked = {asset.id for _, asset in links}
    loose = {cp.gt_asset_id: bundle_asset(bundle, cp.gt_asset_id) for cp in bundle.checkpoints if cp.gt_asset_id}
    entries: list[tuple[Any, Any]] = links + [(None, a) for aid, a in loose.items() if aid not in linked and a]
    out = []
    for n, (link, asset) in enumerate(entries, start=1):
        kept = export_relpath(link.original_path) if link is not None else None
        role = link.role if link is not None else "evidence"
        own = f"{EVIDENCE_DIR}/image_{ident}_{role}_{n}{extension_for(asset.mime)}"
        out.append((link, asset, kept if kept and kept.startswith(f"{EVIDENCE_DIR}/") else own))
    return out


def bundle_asset(bundle: TaskBundle, asset_id: int) -> Any:
    """The Asset row a checkpoint's ground truth names, when the task links it (else None: not exported)."""
    for _, asset in bundle.assets:
        if asset.id == asset_id:
            return asset
    return None


def chain_parts(bundle: TaskBundle) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[int, dict[str, Any]]]:
    """The reference chain, the task's other images and each checkpoint's links, as the task file holds them."""
    step_at = {step.id: n for n, step in enumerate(bundle.steps)}
    images = evidence_paths(bundle)
    chain = [step_dict(n, step) for n, step in enumerate(bundle.steps)]
    evidence = []
    for link, _, rel in images:
        step = step_at.get(link.step_id) if link is not None else None
        if link is not None and link.role == "artifact" and step is not None:
            chain[step].setdefault("output_paths", []).append(rel)
        else:
            evidence.append({"path": rel, "role": link.role if link is not None else "evidence", "step": step})
    path_of = {asset.id: rel for _, asset, rel in images}
    cp_links = {}
    for cp in bundle.checkpoints:
        found = {"step": step_at.get(cp.step_id), "gt_image": path_of.get(cp.gt_asset_id)}
        cp_links[cp.id] = {k: v for k, v in found.items() if v is not None}
    return chain, [{k: v for k, v in e.items() if v is not None} for e in evidence], cp_links


def step_dict(n: int, step: Any) -> dict[str, Any]:
    """One reference step in the shape of a runner's ``tool_use_list`` entry (empty fields left out)."""
    values = {
        "index": n,
        "tool_name": step.tool_name,
        "arguments": step.tool_args,
        "output": step.result,
        "output_text": step.result_text,
        "thought": step.thought,
        "final_answer": step.final_answer,
        "meta": step.meta or None,
    }
    return {k: v for k, v in values.items() if v is not None}


def build_record(bundle: TaskBundle) -> dict[str, Any]:
    task = bundle.task
    base = task.source_record if isinstance(task.source_record, dict) else {}
    record = dict(base)
    record["task_id"] = (task.meta or {}).get("task_id") or base.get("task_id") or task.source_id
    meta = dict(base.get("meta") or {})
    level: Any = task.level
    if level is not None and level.isdigit() and not isinstance(meta.get("level"), str):
        level = int(level)
    domain = task.domain if task.domain is not None else task.category
    meta.update({"level": level, "domain": domain})
    if task.category != domain:
        meta["category"] = task.category
    meta.setdefault("turncase", "single_turn")
    record["meta"] = meta
    images = image_paths(bundle)
    inp = dict(base.get("input") or {})
    inp["prompt"] = task.query
    if images and not inp.get("image"):  # images are found by file name; input.image is informative
        inp["image"] = images[0][2]
    record["input"] = inp
    spec = task.answer_spec or {}
    golden = {
        "value": spec.get("value", ""),
        "match_type": spec.get("kind") if spec.get("kind") in MATCH_TYPES else "contains",
    }
    if "tolerance" in spec:
        golden["tolerance"] = spec["tolerance"]
    record["golden_answer"] = golden
    chain, evidence, cp_links = chain_parts(bundle)
    for key, value in ((CHAIN_KEY, chain), (EVIDENCE_KEY, evidence)):
        if value or key in base:
            record[key] = value
    pe = dict(base.get("process_evaluation") or {})
    pe["checkpoints"] = [checkpoint_dict(cp, cp_links.get(cp.id)) for cp in bundle.checkpoints]
    pe["ordering_constraints"] = [
        {"id": o.key, "sequence": list(o.sequence), "max_gap": o.max_gap} for o in bundle.orderings
    ]
    eff = {
        k: getattr(task, k)
        for k in ("reference_tool_calls", "max_tool_calls", "penalty_per_extra_call")
        if getattr(task, k) is not None
    }
    if eff or "efficiency" in pe:
        pe["efficiency"] = eff
    record["process_evaluation"] = pe
    return record


def write(
    bundles: list[TaskBundle], settings: dict[str, Any], root: Path, read_blob: Callable[[str], bytes]
) -> list[Path]:
    written = []
    for b in bundles:
        record = b.task.source_record if b.verbatim else build_record(b)
        written.append(write_json(root, f"json/{b.task.source_id}.json", record))
        for _, asset, rel in image_paths(b) + evidence_paths(b):
            written.append(write_file(root, rel, read_blob(asset.sha256)))
    return written


# ------------------------------------------------------------------ run folders in


def _task_dirs(path: Path) -> tuple[list[Path], list[str]]:
    """Run folders the reference scores (those with ``run_meta.json`` or at least ``orig.png``) and notes
    on the folders it leaves out."""
    if not path.is_dir():
        raise FormatError(path, message="expected a run folder (one sub-folder per task)")
    if any(os.path.lexists(path / f) for f in (*RUN_FILES, "orig.png")):
        return [path], []
    dirs, ignored = [], []
    for d in sorted(p for p in path.iterdir() if p.is_dir() and not p.is_symlink()):
        if os.path.lexists(d / "run_meta.json") or os.path.lexists(d / "orig.png"):
            dirs.append(d)
        elif any(os.path.lexists(d / f) for f in RUN_FILES):
            ignored.append(d.name)
    if not dirs:
        raise FormatError(
            path,
            message="no task run folders found (each holds run_meta.json, or at least orig.png "
            "when the run did not finish)",
        )
    notes = (
        [
            f"{len(ignored)} folder(s) without run_meta.json or orig.png skipped, as the reference evaluator "
            f"skips them: {', '.join(ignored[:10])}{' …' if len(ignored) > 10 else ''}"
        ]
        if ignored
        else []
    )
    return dirs, notes


def _saved_metrics(texts: dict[str, str], binaries: dict[str, bytes]) -> dict[str, Any] | None:
    """``tool_images/metrics.json`` as the reference's ``require_metrics`` reads it: valid JSON or not."""
    rel = "tool_images/metrics.json"
    if rel not in texts and rel not in binaries:
        return None
    try:
        return {"path": rel, "valid": True, "value": json.loads(texts[rel] if rel in texts else binaries[rel])}
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        return {"path": rel, "valid": False, "error": str(exc)}


def _walk(folder: Path) -> list[str]:
    """Every entry below ``folder`` that is not a directory, as relative paths; links to folders are not
    entered (a link is read, and refused, as a file)."""
    out: list[str] = []
    stack = [""]
    while stack:
        rel_dir = stack.pop()
        with os.scandir(folder / rel_dir if rel_dir else folder) as entries:
            for entry in entries:
                rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
                if entry.is_dir(follow_symlinks=False):
                    stack.append(rel)
                else:
                    out.append(rel)
    return sorted(out)


def _snapshot(folder: Path, src: DatasetRoot) -> tuple[dict[str, str], dict[str, bytes]]:
    """Every file of one task's run folder: only regular files inside the run folder, each under the size
    cap, their total under the record cap, images decodable under the pixel limit."""
    texts: dict[str, str] = {}
    binaries: dict[str, bytes] = {}
    c = Checker(folder, folder.name)
    for rel in _walk(folder):
        suffix = os.path.splitext(rel)[1].lower()
        field = f"file {rel}"
        try:
            data = src.read(folder / rel, image=suffix in RUN_IMAGE_EXTS)
        except FileNotFoundError:  # gone since the folder was listed
            continue
        except UnsafeFile as exc:
            raise FormatError(folder / rel, folder.name, field, str(exc)) from None
        c.charge(len(data), src.limits.record_bytes, field)
        if suffix in (".json", ".txt", ".py", ".md", ".log", ".jsonl"):
            try:
                texts[rel] = data.decode("utf-8")
                continue
            except UnicodeDecodeError:
                pass
        binaries[rel] = data
    return texts, binaries


def _loads(text: str, file: Path, src: DatasetRoot) -> Any:
    """The runner's JSON as its own readers take it: the files are stored verbatim, so a repeated key loses
    nothing here and the last value wins, as in the reference; the import lists it as a warning."""
    return parse_json(text, file, src, keep_last=True)


def read_run(path: Path) -> RunSpec:
    from store.blobs import sha256_of

    trajectories = []
    modes = set()
    src = DatasetRoot(path)
    dirs, notes = _task_dirs(path)
    incomplete = []
    for d in dirs:
        texts, binaries = _snapshot(d, src)
        tool_list = (
            _loads(texts["tool_use_list.json"], d / "tool_use_list.json", src) if "tool_use_list.json" in texts else []
        )
        run_meta = _loads(texts["run_meta.json"], d / "run_meta.json", src) if "run_meta.json" in texts else None
        if "conversation.json" in texts:
            _loads(texts["conversation.json"], d / "conversation.json", src)
        c = Checker(d / "tool_use_list.json", d.name)
        c.expect(tool_list, list, "(file)")
        if run_meta is not None:
            Checker(d / "run_meta.json", d.name).expect(run_meta, dict, "(file)")
            modes.add(str(run_meta.get("mode") or "atomic"))
        task_key = _task_of(d.name, run_meta, notes)
        if task_key is None:
            continue
        events = tool_events(tool_list, c, binaries)
        answer_raw = texts.get("model_answer.txt")
        if answer_raw is not None:
            events.append(EventSpec(ev.ANSWER, ev.answer(answer_raw.strip(), answer_raw)))
        usage = (run_meta or {}).get("usage") if isinstance((run_meta or {}).get("usage"), dict) else {}
        native: dict[str, Any] = {"files": texts, "blobs": {rel: sha256_of(data) for rel, data in binaries.items()}}
        metrics = _saved_metrics(texts, binaries)
        if metrics is not None:
            native["saved_metrics"] = metrics
        if run_meta is None:
            native["incomplete"] = True
            incomplete.append(d.name)
        trajectories.append(
            TrajectorySpec(
                task_key,
                d.name,
                events,
                final_answer=None if answer_raw is None else answer_raw.strip(),
                status="done" if run_meta is not None else "failed",
                error=None if run_meta is not None else "incomplete run: no run_meta.json",
                usage=usage or {},
                native=native,
                blobs=list(binaries.values()),
            )
        )
    if incomplete:
        notes.insert(
            0,
            f"{len(incomplete)} incomplete run(s) without run_meta.json imported as failed trajectories "
            f"(scored S = V = 0 with a wrong answer, as the reference does): "
            f"{', '.join(incomplete[:10])}{' …' if len(incomplete) > 10 else ''}",
        )
    mode = "code" if modes == {"general"} else "atomic"
    return RunSpec(
        mode, trajectories, {"layout": "run-folders", "source_mode": sorted(modes)}, notes=notes, warnings=src.warnings
    )


def _task_of(folder: str, run_meta: Any, notes: list[str]) -> str | None:
    """The task a run folder is scored against: the reference reads the task file ``run_meta.json`` names
    (its stem is the task's id here), not the folder's name. A complete run that names no task file is one
    the reference cannot score: left out, with a note. An incomplete run (no ``run_meta.json``) keeps its
    folder's name."""
    if run_meta is None:
        return folder
    task_file = run_meta.get("task_file")
    if not isinstance(task_file, str) or not task_file.strip():
        notes.append(f"{folder}: run_meta.json names no task_file, so the reference evaluator cannot score it: skipped")
        return None
    key = PurePath(task_file.replace("\\", "/")).stem
    if key != folder:
        notes.append(f"{folder}: scored against task {key}, the task_file its run_meta.json names (as the reference)")
    return key


def tool_events(tool_list: list[Any], c: Checker, binaries: dict[str, bytes]) -> list[EventSpec]:
    by_name = {Path(rel).name: data for rel, data in binaries.items() if rel.startswith("tool_images/")}
    out: list[EventSpec] = []
    for i, item in enumerate(tool_list):
        where = f"[{i}]"
        c.expect(item, dict, where)
        tool = c.get(item, "tool_name", str, f"{where}.tool_name")
        raw_name = c.get(item, "raw_tool_name", (str, type(None)), f"{where}.raw_tool_name", required=False)
        args = item.get("arguments")
        output = item.get("output")
        call_id = str(item.get("index", i))
        if tool in CODE_EXEC_NAMES or raw_name in CODE_EXEC_NAMES:
            a = args if isinstance(args, dict) else {}
            o = output if isinstance(output, dict) else {}
            out.append(
                EventSpec(
                    ev.CODE_EXEC,
                    {
                        "code": a.get("code", ""),
                        "stdout": o.get("stdout", ""),
                        "stderr": o.get("stderr", ""),
                        "exit_code": o.get("exit_code"),
                        "timed_out": bool(o.get("timed_out", False)),
                        "ops": [],
                        "asset_ids": [],
                        "native": item,
                    },
                )
            )
            continue
        call = ev.tool_call(tool, args if isinstance(args, dict) else {"value": args}, call_id)
        call.update({"raw_name": raw_name, "index": item.get("index", i)})
        for extra in ("timestamp", "turn"):
            if extra in item:
                call[extra] = item[extra]
        out.append(EventSpec(ev.TOOL_CALL, call))
        ok = isinstance(output, dict) and str(output.get("ok", "true")).lower() not in ("false", "0", "none")
        images = []
        if isinstance(output, dict):
            paths = [output.get("output_path")] + list(output.get("output_paths") or [])
            seen = set()
            for p in paths:
                if isinstance(p, str) and Path(p).name in by_name and Path(p).name not in seen:
                    seen.add(Path(p).name)
                    images.append(by_name[Path(p).name])
        text = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)
        out.append(
            EventSpec(
                ev.TOOL_RESULT,
                ev.tool_result(
                    tool, text, call_id=call_id, ok=ok, data=output if isinstance(output, dict) else {"output": output}
                ),
                failed=not ok,
                assets=images,
            )
        )
    return out


# ------------------------------------------------------------------ run folders out


def _png(data: bytes) -> bytes:
    if data.startswith(b"\x89PNG"):
        return data
    from PIL import Image

    with Image.open(io.BytesIO(data)) as im:
        buf = io.BytesIO()
        im.save(buf, "PNG")
        return buf.getvalue()


def write_run(run: RunBundle, path: Path, read_blob: Callable[[str], bytes]) -> list[Path]:
    written: list[Path] = []
    for tb in run.trajectories:
        d = path / tb.task.source_id
        native = tb.trajectory.native
        if run.run.kind == "imported" and isinstance(native, dict) and "files" in native:
            for rel, text in native["files"].items():
                written.append(write_file(d, rel, text))
            for rel, sha in (native.get("blobs") or {}).items():
                written.append(write_file(d, rel, read_blob(sha)))
            continue
        written.extend(_build_run_dir(run, tb, d, read_blob))
    return written


def _build_run_dir(run: RunBundle, tb: Any, d: Path, read_blob: Callable[[str], bytes]) -> list[Path]:
    written = []
    task_bundle = run.task_bundles.get(tb.task.id)
    origs = task_bundle.assets_in("query_image") if task_bundle else []
    orig_names = ["orig.png"] if len(origs) == 1 else [f"orig_{i}.png" for i in range(1, len(origs) + 1)]
    for name_, (_, asset) in zip(orig_names, origs):
        written.append(write_file(d, name_, _png(read_blob(asset.sha256))))
    results = {e.payload.get("call_id"): e for e in tb.events if e.kind == ev.TOOL_RESULT}
    calls: list[dict[str, Any]] = []  # native tool calls (search, or every tool in atomic mode)
    ops: list[dict[str, Any]] = []  # code mode: the image operations the AST tracer found, one entry each
    execs: list[dict[str, Any]] = []  # code mode: the code runs themselves
    n_images = 0
    messages: list[dict[str, Any]] = []
    for e in tb.events:
        p = e.payload
        stamp = e.started_at.isoformat() if e.started_at else None
        if e.kind == ev.TOOL_CALL:
            res = results.get(p.get("call_id"))
            output: dict[str, Any] = dict(res.payload.get("data") or {}) if res else {}
            if res and not output:
                output = {"ok": "true" if res.payload.get("ok") else "false", "text": res.payload.get("text", "")}
            for _, asset in tb.event_assets.get(res.id, []) if res else []:
                n_images += 1
                fname = Path(str(output.get("output_path") or "")).name or f"transformed_image_{n_images}.png"
                if not output.get("output_path"):
                    output["output_path"] = f"tool_images/{fname}"
                written.append(write_file(d, f"tool_images/{fname}", read_blob(asset.sha256)))
            calls.append(
                {
                    "tool_name": p.get("name"),
                    "raw_tool_name": p.get("raw_name") or p.get("name"),
                    "arguments": p.get("arguments"),
                    "output": output,
                    "timestamp": stamp,
                }
            )
        elif e.kind == ev.CODE_EXEC:
            saved: dict[str, str] = {}  # file name the code saved → where it is in the export
            names = [Path(str(f)).name for f in p.get("files") or []]
            for k, (_, asset) in enumerate(tb.event_assets.get(e.id, [])):
                n_images += 1
                fname = names[k] if k < len(names) and names[k] else f"transformed_image_{n_images}.png"
                saved[fname] = f"tool_images/{fname}"
                written.append(write_file(d, f"tool_images/{fname}", _png(read_blob(asset.sha256))))
            for op in p.get("ops") or []:
                save = op.get("save")
                where = saved.get(Path(str(save)).name) if save else None
                ops.append(
                    {
                        "tool_name": "python_image_processing",
                        "raw_tool_name": "python_image_processing",
                        "arguments": {"op": op.get("op"), "save": save, "line": op.get("line")},
                        "output": {
                            "ok": True,
                            "output_path": where or save,
                            "output_paths": [where] if where else [],
                            **({"declared_only": True} if op.get("declared_only") else {}),
                        },
                        "timestamp": stamp,
                    }
                )
            execs.append(
                {
                    "tool_name": "run_visual_processing_code",
                    "raw_tool_name": "script_exec",
                    "arguments": {"code": p.get("code", "")},
                    "output": {
                        "stdout": p.get("stdout", ""),
                        "stderr": p.get("stderr", ""),
                        "exit_code": p.get("exit_code"),
                        "timed_out": p.get("timed_out", False),
                        "output_paths": list(saved.values()),
                    },
                    "timestamp": stamp,
                }
            )
        elif e.kind == ev.USER_MESSAGE:
            messages.append({"role": p.get("role", "user"), "content": p.get("content")})
        elif e.kind == ev.MODEL_MESSAGE:
            messages.append({"role": "assistant", "content": p.get("content"), "tool_calls": p.get("tool_calls") or []})
    # the reference's general (code) mode lists native calls, then traced ops, then code runs, and numbers
    # them after joining; its effective call count is native calls + traced ops (code runs excluded)
    tool_list = [{"index": n, **entry} for n, entry in enumerate(calls + ops + execs)]
    effective = len(calls) + len(ops)
    mode = "general" if run.run.mode == "code" else "atomic"
    model = run.endpoint.model if run.endpoint else (run.run.name or "chainmark")
    meta = {
        "task_id": (tb.task.meta or {}).get("task_id") or tb.task.source_id,
        "task_file": f"json/{tb.task.source_id}.json",
        "mode": mode,
        "driver": "chainmark",
        "model": model,
        "temperature": ((run.endpoint.params if run.endpoint else {}) or {}).get("temperature"),
        "usage": tb.trajectory.usage or {},
        "effective_tool_calls": effective,
        "total_images": n_images,
        "paths": {"run_dir": str(d), "orig": orig_names[0] if orig_names else None, "processed_dir": "tool_images"},
        "warnings": [] if tb.trajectory.error is None else [tb.trajectory.error],
    }
    answer = tb.trajectory.final_answer or ""
    written.append(write_json(d, "tool_use_list.json", tool_list))
    written.append(write_json(d, "run_meta.json", meta))
    written.append(write_file(d, "model_answer.txt", answer))
    written.append(
        write_json(
            d,
            "conversation.json",
            {
                "task_id": meta["task_id"],
                "tools": sorted({t["tool_name"] for t in tool_list}),
                "images": orig_names,
                "messages": messages,
                "final_answer": answer,
            },
        )
    )
    return written
