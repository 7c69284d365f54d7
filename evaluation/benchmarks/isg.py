"""ISG-Bench profile: ``ISG-eval.py`` (what is judged) + ``calculate_performance.py`` (how it adds up).

Levels per item: structure (the output's text/image sequence equals the golden one), image (DSG
yes/no questions on generated images, yes / all questions), block (1–10 relation scores between
parts, mean over judged questions), holistic (1–10 overall score against the golden answer).
Defaults exactly as the aggregation script: no output → block 1, image 0, holistic 1; wrong
structure → block 1, image 0; a block list whose scores cannot be summed → 1; holistic missing or
first output block empty → 1. Faithful mode reproduces the prerequisite bug (every image question
with a non-empty ``Preliminary`` list is skipped and counts as "no"); fixed mode asks it when all
its prerequisite questions were answered yes, and accepts numeric strings as block scores.
Faithful also reads judge replies as the reference does (``json.loads`` of the whole text) and fails an
item as a whole where ``ISG-eval.py`` raises inside it (``ItemError``: structure 0, image 0, block 1,
holistic 1); ``reference_conformance`` replays chainmark's judge replies to the reference to prove it.

Where the parts come from: golden = answer spec ``interleaved`` (or ``source_record.Golden``),
scene graph = ``source_record.predict``, query = ``source_record.Query``, output = the ANSWER
event's ``blocks`` (``[{"type", "content" | "asset_id"}]``) or ``native.output``.
"""

from __future__ import annotations

import json
from typing import Any, Callable

from evaluation.benchmarks.base import ScoreContext, mean, result, usage_stats
from evaluation.scoring.results import ScoreResult
from evaluation.judges.reference_prompts import PromptSource
from evaluation.scoring.items import Item, JudgeAnswer, JudgeRequest
from store import safe_json

SUM_CATEGORY = {
    "Style Transfer": ("Art Style Transfer", "Scene Attribute Transfer", "Photo Variation", "Portrait Variation"),
    "Progressive": ("Animation Images", "Animation Text-Image", "Attribute Transfer"),
    "3D Scene": ("3D_object", "multi-Perspective Scene Generation"),
    "Image Decomposition": ("Realistic Object Detection", "Imaginary Object Detection"),
    "Image-Text Complementation": ("HowTo", "Scientific"),
    "Temporal Prediction": ("Prediction", "painting"),
    "Visual Story Telling": ("visual storytelling text-image", "visual storytelling image", "visual storytelling text"),
    "VQA": ("Object_VQA", "Historical"),
}
REFERENCE_CATEGORY = {"Style Transfer": "Style Transer"}  # the aggregation's own spelling
BLOCK_JUDGE, IMAGE_JUDGE, HOLISTIC_JUDGE = "isg-block", "isg-image", "isg-holistic"
CORRECTIONS = {
    "isg-other-category": "items whose subcategory is outside the aggregation's mapping count under 'Other' "
    "(the reference drops them)",
    "isg-image-prerequisites": "an image question is asked when all its Preliminary questions were answered yes "
    "(the reference skips every question that has prerequisites)",
    "isg-block-numeric-strings": "block scores given as numeric strings are read as numbers (the reference falls "
    "back to 1 for the whole item)",
    "isg-item-errors": "a missing output image or an unusable judge reply fails only the questions it concerns "
    "(the reference fails the whole item: structure 0, image 0, block 1, holistic 1)",
    "isg-lenient-judge-json": "judge replies are read as JSON even inside code fences or text (the reference "
    "treats them as invalid)",
    "isg-category-table": "the category table lists only categories with items (with 'Other'), spells 'Style "
    "Transfer' and leaves a value out where there is none (the reference prints all eight, 0.0000 for an empty "
    "one, and 'Style Transer')",
}


class ItemError(Exception):
    """Where ISG-eval.py raises inside an item's evaluation: the item keeps only ``{"error": …}``."""


def reply_of(got: JudgeAnswer, ctx: ScoreContext) -> Any:
    """The judge reply as the reference reads it: ``json.loads`` of the whole text (an error dict if that
    fails); fixed mode takes chainmark's lenient parse (JSON found inside fences or chatter)."""
    if got.raw_output is None:
        return got.parsed
    try:
        strict = safe_json.loads(got.raw_output.strip())
    except json.JSONDecodeError:
        strict = {"error": "Invalid JSON response", "raw_output": got.raw_output}
    if (
        strict != got.parsed
        and isinstance(got.parsed, dict)
        and "error" not in got.parsed
        and ctx.correct("isg-lenient-judge-json")
    ):
        return got.parsed
    return strict


def has_key(value: Any, key: str) -> bool:
    """``key in value`` as Python evaluates it on a reply of any JSON type; raises where Python does."""
    if isinstance(value, (dict, list, str)):
        return key in value
    raise ItemError(f"argument of type {type(value).__name__!r} is not iterable")


def get_key(value: Any, key: str) -> Any:
    if isinstance(value, dict):
        return value[key]
    raise ItemError(f"{type(value).__name__} indices must be integers")


def ask(ctx: ScoreContext, req: JudgeRequest, replies: dict[str, str]) -> JudgeAnswer | None:
    """Ask the oracle; remember the raw reply per question (the conformance check replays it to the reference)."""
    got = ctx.oracle.ask(req)
    if got is not None and got.raw_output is not None:
        replies[req.target_part] = got.raw_output
    return got


REQUIREMENTS = {
    "score": "Give a score from 1 to 10 for how well the relation holds (10 = perfectly).",
    "yes_no": "Answer 'Yes' if the relation holds and 'No' otherwise.",
}


def category_of(item: Item, mode: str) -> str | None:
    sub = item.task.get("subcategory") or item.source.get("Category") or item.task.get("category")
    for cat, subs in SUM_CATEGORY.items():
        if sub in subs or sub == cat:
            return cat
    cat = item.task.get("category")
    if cat in SUM_CATEGORY:
        return cat
    return "Other" if mode == "fixed" else None


def golden_of(item: Item) -> list[dict[str, Any]]:
    spec = item.task.get("answer_spec") or {}
    if spec.get("kind") == "interleaved":
        return list(spec.get("golden") or [])
    return list(item.source.get("Golden") or [])


def output_of(item: Item) -> list[dict[str, Any]] | None:
    """The output blocks; image blocks without an ``asset_id`` take the answer event's assets in order."""
    for e in reversed(item.events):
        if e["kind"] == "answer":
            blocks = (e.get("payload") or {}).get("blocks")
            if isinstance(blocks, list):
                linked = iter(e.get("assets") or [])
                out = []
                for b in blocks:
                    if b.get("type") == "image" and b.get("asset_id") is None and not b.get("missing"):
                        aid = next(linked, None)
                        b = {**b, "asset_id": aid} if aid is not None else b
                    out.append(b)
                return out
    nat = item.native
    if isinstance(nat, dict) and "output" in nat:
        return nat["output"]
    return None


def _ref(part: dict[str, Any]) -> Any:
    """What a judge is shown for a part: text, or an image reference (asset id or path; None if missing)."""
    if part.get("type") == "image":
        if part.get("missing"):
            return None
        return part.get("asset_id") if part.get("asset_id") is not None else part.get("content")
    return part.get("content") or ""


def rename(item: Item, output: list[dict[str, Any]]) -> dict[str, tuple[str, Any]]:
    """Token → (kind, value): ``<gen_textN>``/``<gen_imgN>`` for the output, ``<query_…>`` for the query."""
    out: dict[str, tuple[str, Any]] = {}
    counters = {"text": 0, "image": 0}
    for part in output:
        kind = "text" if part.get("type") == "text" else "image"
        counters[kind] += 1
        out[f"<gen_{'text' if kind == 'text' else 'img'}{counters[kind]}>"] = (kind, _ref(part))
    counters = {"text": 0, "image": 0}
    query = item.source.get("Query") or [{"type": "text", "content": item.task.get("query") or ""}]
    qassets = iter(item.query_assets())
    for part in query:
        kind = "text" if part.get("type") == "text" else "image"
        counters[kind] += 1
        ref = _ref(part)
        if kind == "image":
            ref = next(qassets, ref)
        out[f"<query_{'text' if kind == 'text' else 'img'}{counters[kind]}>"] = (kind, ref)
    return out


def image_questions(item: Item) -> list[dict[str, Any]] | None:
    qa = (item.source.get("predict") or {}).get("image_qa")
    if qa is None:
        return None
    if isinstance(qa, list):
        return qa
    if isinstance(qa, dict) and qa:
        return list(qa[next(iter(qa))] or [])
    return []


def score_image(
    item: Item, renamed: dict[str, tuple[str, Any]], ctx: ScoreContext, traj: int, replies: dict[str, str]
) -> tuple[float, list[dict[str, Any]]]:
    """Yes / all questions. Faithful: a prerequisite id (an int) is never a token, so every question with
    prerequisites is skipped; a prerequisite that is a token but no question id, a question without its
    keys, a missing image or a ``Judge`` that is not a string fails the item (ItemError), as there."""
    faithful = ctx.mode == "faithful"
    qa = (item.source.get("predict") or {}).get("image_qa")
    if faithful and isinstance(qa, dict) and not qa:
        raise ItemError("list index out of range")  # the first key of an empty dict
    questions = image_questions(item)
    if not questions:
        return 0.0, []
    answered: dict[Any, str] = {}
    rows = []
    for q in questions:
        if faithful and not ("id" in q and "Preliminary" in q):
            raise ItemError(f"KeyError: {'id' if 'id' not in q else 'Preliminary'!r}")
        answered[q.get("id")] = "No"
        row = {"id": q.get("id"), "question": q.get("Question"), "judge": None}
        prelim = q.get("Preliminary") or []
        if prelim and ctx.correct("isg-image-prerequisites"):
            skip = any(answered.get(p) != "Yes" for p in prelim)
        else:
            skip = False
            for p in prelim:  # ids are ints, keys are tokens: this skips
                if p not in renamed:
                    skip = True
                    break
                if faithful and p not in answered:
                    raise ItemError(f"KeyError: {p!r}")
                if answered.get(p) != "Yes":
                    skip = True
                    break
        if faithful and not skip and "image" not in q:
            raise ItemError("KeyError: 'image'")
        if skip or q.get("image") not in renamed:
            row["skipped"] = True
            rows.append(row)
            continue
        ref = renamed[q["image"]][1]
        if ref is None or (faithful and "Question" not in q):
            if faithful or not ctx.correct("isg-item-errors"):
                raise ItemError(f"image {q['image']} cannot be read" if ref is None else "KeyError: 'Question'")
            row["skipped"] = True
            rows.append(row)
            continue
        req = JudgeRequest.make(IMAGE_JUDGE, traj, f"image:{q.get('id')}", {"question": q.get("Question") or ""}, [ref])
        got = ask(ctx, req, replies)
        if got is None:
            row["pending"] = True
            rows.append(row)
            continue
        value = reply_of(got, ctx)
        row["judge"] = value
        try:
            if value is not None and has_key(value, "Judge"):
                judge = get_key(value, "Judge")
                if not isinstance(judge, str):
                    raise ItemError(f"'{type(judge).__name__}' object has no attribute 'lower'")
                if judge.lower() == "yes":
                    answered[q.get("id")] = "Yes"
        except ItemError:
            if faithful or not ctx.correct("isg-item-errors"):
                raise
        rows.append(row)
    yes = sum(
        1
        for r in rows
        if isinstance(r.get("judge"), dict)
        and isinstance(r["judge"].get("Judge"), str)
        and r["judge"]["Judge"].lower() == "yes"
    )
    return yes / len(rows), rows


def _block_request(
    i: int, q: dict[str, Any], renamed: dict[str, tuple[str, Any]], which: str, traj: int
) -> JudgeRequest:
    (skind, sval), (okind, oval) = renamed[q["subject"]], renamed[q["object"]]
    question = str(q.get("Question") or "")
    images = [v for k, v in ((skind, sval), (okind, oval)) if k == "image"]
    if skind == okind == "image":
        inputs, texts = "Image 1 and Image 2 are attached.", ""
    elif skind == okind == "text":
        question = question.replace(q["subject"], " `Text 1` ").replace(q["object"], " `Text 2` ")
        inputs, texts = "Text 1 and Text 2 are given below.", f"Text 1: {sval}\nText 2: {oval}"
    else:
        text = sval if skind == "text" else oval
        question = question.replace(str(text), " `Text` ")
        inputs, texts = "One image is attached and one text is given below.", f"Text: {text}"
    return JudgeRequest.make(
        BLOCK_JUDGE,
        traj,
        f"block:{i}:{which}",
        {"inputs": inputs, "texts": texts, "question": question, "requirement": REQUIREMENTS[which]},
        images,
    )


def score_block(
    item: Item, renamed: dict[str, tuple[str, Any]], ctx: ScoreContext, traj: int, replies: dict[str, str]
) -> tuple[float | None, list[dict[str, Any]]]:
    """Mean of the Score judgements. Faithful, as the aggregation reads them: a reply that makes
    ``'Judge' in reply`` or ``reply['Judge']`` raise, or values that cannot be summed (strings, None),
    give the whole item 1; bools count as 0/1; no usable value gives 1. A question showing a missing
    image fails the item (ItemError)."""
    questions = list(((item.source.get("predict") or {}).get("block_qa") or {}).get("questions") or [])
    if not questions:
        return None, []  # the aggregation appends nothing for an empty block list
    faithful = ctx.mode == "faithful"
    rows = []
    broken = False
    for i, q in enumerate(questions):
        row: dict[str, Any] = {"index": i, "question": q.get("Question")}
        if "subject" in q and "object" in q and q["subject"] in renamed and q["object"] in renamed and "Question" in q:
            if any(renamed[q[k]][0] == "image" and renamed[q[k]][1] is None for k in ("subject", "object")):
                if faithful or not ctx.correct("isg-item-errors"):
                    raise ItemError(f"an image of block question {i} cannot be read")
                rows.append(row)
                continue
            for which in ("score", "yes_no"):
                got = ask(ctx, _block_request(i, q, renamed, which, traj), replies)
                if got is None:
                    row[f"{which}_pending"] = True
                else:
                    row[which] = reply_of(got, ctx)
                    row[f"{which}_asked"] = True
        rows.append(row)
    values = []
    for r in rows:
        if not r.get("score_asked"):
            continue
        v = r.get("score")
        try:
            if has_key(v, "Judge") if v is not None else _raise_none():
                values.append(get_key(v, "Judge"))
        except ItemError:
            if faithful or not ctx.correct("isg-item-errors"):
                broken = True  # the aggregation's try: the whole item counts 1
    if broken or not values:
        return 1.0, rows
    nums = []
    for v in values:
        if isinstance(v, (int, float)):  # bools included: sum() adds them as 0/1
            if isinstance(v, bool) and ctx.mode == "fixed":
                return 1.0, rows
            nums.append(float(v))
        elif ctx.correct("isg-block-numeric-strings"):
            try:
                nums.append(float(str(v).strip()))
            except ValueError:
                return 1.0, rows
        else:
            return 1.0, rows  # sum() over a string raises in the reference → default 1
    return sum(nums) / len(nums), rows


def _raise_none() -> bool:
    raise ItemError("argument of type 'NoneType' is not iterable")


def _parts(blocks: list[dict[str, Any]], assets: list[int] | None = None) -> list[dict[str, Any]]:
    it = iter(assets or [])
    out = []
    for b in blocks:
        if b.get("type") == "image":
            ref = b.get("asset_id") if b.get("asset_id") is not None else next(it, b.get("content"))
            out.append({"type": "image", "ref": ref})
        else:
            out.append({"type": "text", "text": str(b.get("content") or "").replace("\n", " ")})
    return out


def score_holistic(
    item: Item, output: list[dict[str, Any]], ctx: ScoreContext, traj: int, replies: dict[str, str]
) -> tuple[float, Any]:
    """The overall score as the aggregation reads it: taken as given (a bool counts 0/1) when the reply has
    ``overall_score`` and the output's first block is not empty text; otherwise 1. An output image that
    cannot be read fails the judge call (the reference catches it): 1, nothing asked."""
    if any(p.get("type") == "image" and _ref(p) is None for p in output):
        return 1.0, {"error": "an output image cannot be read"}
    golden_assets = [
        a["asset_id"] for a in sorted(item.task_assets, key=lambda a: a.get("ordinal", 0)) if a.get("role") == "golden"
    ]
    query = item.source.get("Query") or [{"type": "text", "content": item.task.get("query") or ""}]
    req = JudgeRequest.make(
        HOLISTIC_JUDGE,
        traj,
        "holistic",
        {
            "query": _parts(query, item.query_assets()),
            "output": _parts(output),
            "golden": _parts(golden_of(item), golden_assets),
        },
    )
    got = ask(ctx, req, replies)
    if got is None:
        return 1.0, {"pending": True}
    value = reply_of(got, ctx)
    if not value or not output or output[0].get("content") == "":
        return 1.0, value
    try:
        if not has_key(value, "overall_score"):
            return 1.0, value
        score = get_key(value, "overall_score")
    except ItemError:
        return 1.0, value  # (the reference's aggregation stops here; fixed and faithful count 1)
    if isinstance(score, (int, float)) and (ctx.mode == "faithful" or not isinstance(score, bool)):
        return float(score), value
    fallback = got.score if got.score is not None else 1.0
    return float(fallback) if ctx.mode == "fixed" else 1.0, value


# The image judge's prompt (DSG), read from the user's checkout (``chainmark judges import-prompts isg
# PATH``); the reference sends the image, then that prompt. The block and holistic judges assemble
# several prompts and requirement texts in code, so they keep chainmark's own templates.
REFERENCE_PROMPTS = [
    PromptSource(IMAGE_JUDGE, "ISG_eval/get_judge_prompt.py", "", "_DSG_PROMPT", ()),
]


def category_table(
    groups: dict[str, list[dict[str, Any]]], agg: Callable[[list[dict[str, Any]]], dict[str, Any]], ctx: ScoreContext
) -> dict[str, dict[str, Any]]:
    """The per-category table as ``calculate_performance.py`` prints it: all eight categories in its order,
    under its names ('Style Transer'), 0 where a category has no item. Fixed mode lists the categories that
    have items, 'Style Transfer' spelled right and 'Other' included, with no value where there is none."""
    if ctx.correct("isg-category-table"):
        return {c: agg(rows) for c, rows in groups.items() if rows}
    table = {}
    for cat in SUM_CATEGORY:
        values = agg(groups[cat])
        table[REFERENCE_CATEGORY.get(cat, cat)] = {k: 0.0 if v is None else v for k, v in values.items()}
    return table


class ISGProfile:
    name = "isg"
    formats = ("isg", "isg-bench")
    judges = (BLOCK_JUDGE, IMAGE_JUDGE, HOLISTIC_JUDGE)
    item_judge = HOLISTIC_JUDGE  # the per-item score is this judge's verdict: ISG answers are judged
    reference_prompts = REFERENCE_PROMPTS

    def score(self, items: list[Item], ctx: ScoreContext) -> ScoreResult:
        per_item = []
        pending_before = len(getattr(ctx.oracle, "pending", []))
        for it in items:
            traj = int(it.trajectory.get("id") or 0)
            output = output_of(it)
            row: dict[str, Any] = {
                "trajectory_id": traj,
                "task_id": it.task.get("id"),
                "item_id": str(it.task.get("source_id")),
                "category": category_of(it, ctx.mode),
            }
            if output is None:
                row.update(structure=False, image=0.0, block=1.0, holistic=1.0, no_output=True)
                per_item.append(row)
                continue
            golden = golden_of(it)
            structure = [p.get("type") == "text" for p in output] == [p.get("type") == "text" for p in golden]
            row["structure"] = structure
            replies: dict[str, str] = {}
            try:
                if structure:
                    renamed = rename(it, output)
                    row["image"], row["image_detail"] = score_image(it, renamed, ctx, traj, replies)
                    row["block"], row["block_detail"] = score_block(it, renamed, ctx, traj, replies)
                else:
                    row["image"], row["block"] = 0.0, 1.0
                row["holistic"], row["holistic_detail"] = score_holistic(it, output, ctx, traj, replies)
            except ItemError as exc:  # ISG-eval.py keeps only {"error": …}: every level at its default
                row.update(structure=False, image=0.0, block=1.0, holistic=1.0, error=str(exc))
                row.pop("image_detail", None), row.pop("block_detail", None)
            row["judge_replies"] = replies
            per_item.append(row)

        def agg(rows: list[dict[str, Any]]) -> dict[str, Any]:
            blocks = [r["block"] for r in rows if r.get("block") is not None]
            return {
                "items": len(rows),
                "structure": (sum(bool(r["structure"]) for r in rows) / len(rows)) if rows else None,
                "image": mean([r["image"] for r in rows]),
                "block": mean(blocks),
                "holistic": mean([r["holistic"] for r in rows]),
            }

        cats = category_table(
            {c: [r for r in per_item if r["category"] == c] for c in [*SUM_CATEGORY, "Other"]}, agg, ctx
        )
        counted = [r for r in per_item if r["category"] is not None]
        if any(r["category"] == "Other" for r in per_item):
            ctx.correct("isg-other-category")
        notes = []
        if len(counted) < len(per_item):
            notes.append(
                f"{len(per_item) - len(counted)} item(s) have a subcategory outside ISG's mapping and are "
                "dropped, as the reference aggregation drops them"
            )
        pending = len(getattr(ctx.oracle, "pending", [])) - pending_before
        return result(
            self.name,
            ctx,
            agg(counted),
            by_category=cats,
            per_item=per_item,
            notes=notes,
            pending=pending,
            usage=usage_stats(items),
        )

    def item_score(self, row: dict[str, Any]) -> float | None:
        """Per-task score in [0, 1] for run comparison: the holistic 1–10 score mapped onto [0, 1]."""
        h = row.get("holistic")
        return (float(h) - 1) / 9 if isinstance(h, (int, float)) else None

    def item_pending(self, row: dict[str, Any]) -> str:
        """Why the holistic judge's verdict is not in this item's score ("" when it is); the score is
        then the reference's default holistic 1."""
        if row.get("no_output"):
            return "the answer has no interleaved output for the judge"
        if row.get("error"):
            return f"judging failed ({row['error']})"
        detail = row.get("holistic_detail")
        if isinstance(detail, dict) and detail.get("pending"):
            return "no verdict yet"
        if isinstance(detail, dict) and detail.get("error"):
            return f"judging failed ({detail['error']})"
        return ""


PROFILE = ISGProfile()


# ------------------------------------------------------------------ conformance with ISG-eval.py

LEVELS = ("structure", "image", "block", "holistic")
REPLIES_FILE = "isg-judge-replies.json"


def reference_name(category: str) -> str:
    return REFERENCE_CATEGORY.get(category, category).replace(" ", "_")


def conformance_ours(score_result: ScoreResult) -> dict[str, Any]:
    """Per category the four levels under the aggregation's printed names (an empty list prints 0),
    per item the four values, and the raw judge replies scoring used (replayed to the reference)."""
    by_cat = score_result.by_category
    metrics = {}
    for cat in SUM_CATEGORY:
        values = by_cat.get(REFERENCE_CATEGORY.get(cat, cat)) or by_cat.get(cat) or {}
        for level in LEVELS:
            v = values.get(level)
            metrics[f"{reference_name(cat)}.{level}"] = 0 if v is None else v
    items, replies = {}, {}
    for row in score_result.per_item:
        if row.get("item_id") is None:
            continue
        replies[str(row["item_id"])] = row.get("judge_replies") or {}
        if row.get("category") in SUM_CATEGORY:
            items[str(row["item_id"])] = {level: row.get(level) for level in LEVELS}
    return {"metrics": metrics, "items": items, "judge_replies": replies}


def reference_conformance(export_dir: Any, reference: Any, python: str) -> dict[str, Any]:
    """``ISG-eval.py`` then ``calculate_performance.py`` from ``reference`` on the exported prediction lines
    (``drivers/isg_driver.py``), with the exported dataset as ``--GT_file`` and dataset + run files as
    ``--root``; its judges get the very replies chainmark's judges gave (``chainmark-scores.json`` beside
    the export holds them), so structure, defaults and aggregation are compared item by item."""
    import shutil
    from pathlib import Path

    from evaluation.conformance.runner import DRIVERS, run_driver

    export_dir = Path(export_dir)
    work = export_dir.parent
    preds = export_dir / "predictions.jsonl" if export_dir.is_dir() else export_dir
    dataset = work / "dataset"
    root = work / "isg-root"
    for src in (dataset, preds.parent):
        shutil.copytree(src, root, dirs_exist_ok=True)
    saved = work / "chainmark-scores.json"
    replies = json.loads(saved.read_text(encoding="utf-8")).get("judge_replies", {}) if saved.exists() else {}
    (work / REPLIES_FILE).write_text(json.dumps(replies, ensure_ascii=False), encoding="utf-8")
    out = run_driver(
        python,
        DRIVERS / "isg_driver.py",
        [
            "--reference",
            str(reference),
            "--gt",
            str(dataset / "ISG-Bench.jsonl"),
            "--predictions",
            str(preds),
            "--root",
            str(root),
            "--replies",
            str(work / REPLIES_FILE),
        ],
    )
    notes = []
    if out.get("errors"):
        notes.append(
            f"ISG-eval.py failed {len(out['errors'])} item(s) (scored at the defaults): "
            + "; ".join(f"{k}: {v}" for k, v in list(out["errors"].items())[:5])
        )
    if out.get("unanswered"):
        notes.append(
            f"{out['unanswered']} reference judge call(s) had no chainmark verdict to replay "
            f"(e.g. {out.get('unanswered_sample', [])[:3]})"
        )
    return {"metrics": out.get("metrics") or {}, "items": out.get("items") or {}, "notes": notes}
