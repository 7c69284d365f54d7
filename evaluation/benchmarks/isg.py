"""ISG-Bench profile: ``ISG-eval.py`` (what is judged) + ``calculate_performance.py`` (how it adds up).

Levels per item: structure (the output's text/image sequence equals the golden one), image (DSG
yes/no questions on generated images, yes / all questions), block (1–10 relation scores between
parts, mean over judged questions), holistic (1–10 overall score against the golden answer).
Defaults exactly as the aggregation script: no output → block 1, image 0, holistic 1; wrong
structure → block 1, image 0; a block list whose scores cannot be summed → 1; holistic missing or
first output block empty → 1. Faithful mode reproduces the prerequisite bug (every image question
with a non-empty ``Preliminary`` list is skipped and counts as "no"); fixed mode asks it when all
its prerequisite questions were answered yes, and accepts numeric strings as block scores.

Where the parts come from: golden = answer spec ``interleaved`` (or ``source_record.Golden``),
scene graph = ``source_record.predict``, query = ``source_record.Query``, output = the ANSWER
event's ``blocks`` (``[{"type", "content" | "asset_id"}]``) or ``native.output``.
"""

from __future__ import annotations

from typing import Any

from evaluation.benchmarks.base import ScoreContext, mean, result, usage_stats
from evaluation.judges.reference_prompts import PromptSource
from evaluation.scoring.items import Item, JudgeRequest

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
BLOCK_JUDGE, IMAGE_JUDGE, HOLISTIC_JUDGE = "isg-block", "isg-image", "isg-holistic"
CORRECTIONS = {
    "isg-other-category": "items whose subcategory is outside the aggregation's mapping count under 'Other' "
                          "(the reference drops them)",
    "isg-image-prerequisites": "an image question is asked when all its Preliminary questions were answered yes "
                               "(the reference skips every question that has prerequisites)",
    "isg-block-numeric-strings": "block scores given as numeric strings are read as numbers (the reference falls "
                                 "back to 1 for the whole item)",
}
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
                    if b.get("type") == "image" and b.get("asset_id") is None:
                        aid = next(linked, None)
                        b = {**b, "asset_id": aid} if aid is not None else b
                    out.append(b)
                return out
    nat = item.native
    if isinstance(nat, dict) and "output" in nat:
        return nat["output"]
    return None


def _ref(part: dict[str, Any]) -> Any:
    """What a judge is shown for a part: text, or an image reference (asset id or path)."""
    if part.get("type") == "image":
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


def score_image(item: Item, renamed: dict[str, tuple[str, Any]], ctx: ScoreContext, traj: int) -> tuple[float, list[dict[str, Any]]]:
    questions = image_questions(item)
    if not questions:
        return 0.0, []
    answered: dict[Any, str] = {}
    rows = []
    for q in questions:
        answered[q.get("id")] = "No"
        row = {"id": q.get("id"), "question": q.get("Question"), "judge": None}
        prelim = q.get("Preliminary") or []
        if prelim and ctx.correct("isg-image-prerequisites"):
            skip = any(answered.get(p) != "Yes" for p in prelim)
        else:
            skip = any(p not in renamed for p in prelim)  # ids are ints, keys are tokens: always skips
        if skip or q.get("image") not in renamed:
            row["skipped"] = True
            rows.append(row)
            continue
        req = JudgeRequest.make(IMAGE_JUDGE, traj, f"image:{q.get('id')}", {"question": q.get("Question") or ""},
                                [renamed[q["image"]][1]])
        got = ctx.oracle.ask(req)
        if got is not None and isinstance(got.parsed, dict) and "Judge" in got.parsed:
            row["judge"] = got.parsed
            if str(got.parsed["Judge"]).lower() == "yes":
                answered[q.get("id")] = "Yes"
        elif got is None:
            row["pending"] = True
        rows.append(row)
    yes = sum(1 for r in rows if isinstance(r.get("judge"), dict) and str(r["judge"].get("Judge", "")).lower() == "yes")
    return yes / len(rows), rows


def _block_request(i: int, q: dict[str, Any], renamed: dict[str, tuple[str, Any]], which: str, traj: int) -> JudgeRequest:
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
    return JudgeRequest.make(BLOCK_JUDGE, traj, f"block:{i}:{which}", {
        "inputs": inputs, "texts": texts, "question": question, "requirement": REQUIREMENTS[which]}, images)


def score_block(item: Item, renamed: dict[str, tuple[str, Any]], ctx: ScoreContext, traj: int) -> tuple[float | None, list[dict[str, Any]]]:
    questions = list(((item.source.get("predict") or {}).get("block_qa") or {}).get("questions") or [])
    if not questions:
        return None, []  # the aggregation appends nothing for an empty block list
    rows = []
    broken = False
    for i, q in enumerate(questions):
        row: dict[str, Any] = {"index": i, "question": q.get("Question")}
        if "subject" in q and "object" in q and q["subject"] in renamed and q["object"] in renamed and "Question" in q:
            for which in ("score", "yes_no"):
                got = ctx.oracle.ask(_block_request(i, q, renamed, which, traj))
                if got is None:
                    row[f"{which}_pending"] = True
                elif not isinstance(got.parsed, dict):
                    broken = True  # the reference's None check raises → the whole item scores 1
                else:
                    row[which] = got.parsed
        rows.append(row)
    values = [r["score"]["Judge"] for r in rows if isinstance(r.get("score"), dict) and "Judge" in r["score"]]
    if broken or not values:
        return 1.0, rows
    nums = []
    for v in values:
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            nums.append(float(v))
        elif ctx.correct("isg-block-numeric-strings"):
            try:
                nums.append(float(str(v).strip()))
            except ValueError:
                return 1.0, rows
        else:
            return 1.0, rows  # sum() over a string raises in the reference → default 1
    return sum(nums) / len(nums), rows


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


def score_holistic(item: Item, output: list[dict[str, Any]], ctx: ScoreContext, traj: int) -> tuple[float, Any]:
    golden_assets = [a["asset_id"] for a in sorted(item.task_assets, key=lambda a: a.get("ordinal", 0)) if a.get("role") == "golden"]
    query = item.source.get("Query") or [{"type": "text", "content": item.task.get("query") or ""}]
    req = JudgeRequest.make(HOLISTIC_JUDGE, traj, "holistic", {
        "query": _parts(query, item.query_assets()), "output": _parts(output),
        "golden": _parts(golden_of(item), golden_assets)})
    got = ctx.oracle.ask(req)
    if got is None:
        return 1.0, {"pending": True}
    if not output or output[0].get("content") == "" or not isinstance(got.parsed, dict) \
            or "overall_score" not in got.parsed or got.score is None:
        return 1.0, got.parsed
    return float(got.score), got.parsed


# The image judge's prompt (DSG), read from the user's checkout (``chainmark judges import-prompts isg
# PATH``); the reference sends the image, then that prompt. The block and holistic judges assemble
# several prompts and requirement texts in code, so they keep chainmark's own templates.
REFERENCE_PROMPTS = [
    PromptSource(IMAGE_JUDGE, "ISG_eval/get_judge_prompt.py", "", "_DSG_PROMPT", ()),
]


class ISGProfile:
    name = "isg"
    formats = ("isg", "isg-bench")
    judges = (BLOCK_JUDGE, IMAGE_JUDGE, HOLISTIC_JUDGE)
    reference_prompts = REFERENCE_PROMPTS

    def score(self, items: list[Item], ctx: ScoreContext) -> dict[str, Any]:
        per_item = []
        pending_before = len(getattr(ctx.oracle, "pending", []))
        for it in items:
            traj = int(it.trajectory.get("id") or 0)
            output = output_of(it)
            row: dict[str, Any] = {"trajectory_id": traj, "task_id": it.task.get("id"),
                                   "category": category_of(it, ctx.mode)}
            if output is None:
                row.update(structure=False, image=0.0, block=1.0, holistic=1.0, no_output=True)
                per_item.append(row)
                continue
            golden = golden_of(it)
            structure = [p.get("type") == "text" for p in output] == [p.get("type") == "text" for p in golden]
            row["structure"] = structure
            if structure:
                renamed = rename(it, output)
                row["image"], row["image_detail"] = score_image(it, renamed, ctx, traj)
                row["block"], row["block_detail"] = score_block(it, renamed, ctx, traj)
            else:
                row["image"], row["block"] = 0.0, 1.0
            row["holistic"], row["holistic_detail"] = score_holistic(it, output, ctx, traj)
            per_item.append(row)

        def agg(rows: list[dict[str, Any]]) -> dict[str, Any]:
            blocks = [r["block"] for r in rows if r.get("block") is not None]
            return {"items": len(rows),
                    "structure": (sum(bool(r["structure"]) for r in rows) / len(rows)) if rows else None,
                    "image": mean([r["image"] for r in rows]), "block": mean(blocks),
                    "holistic": mean([r["holistic"] for r in rows])}

        cats = {c: agg([r for r in per_item if r["category"] == c]) for c in list(SUM_CATEGORY) + ["Other"]}
        cats = {k: v for k, v in cats.items() if v["items"]}
        counted = [r for r in per_item if r["category"] is not None]
        if any(r["category"] == "Other" for r in per_item):
            ctx.correct("isg-other-category")
        notes = []
        if len(counted) < len(per_item):
            notes.append(f"{len(per_item) - len(counted)} item(s) have a subcategory outside ISG's mapping and are "
                         "dropped, as the reference aggregation drops them")
        pending = len(getattr(ctx.oracle, "pending", [])) - pending_before
        return result(self.name, ctx, agg(counted), by_category=cats, per_item=per_item, notes=notes,
                      pending=pending, usage=usage_stats(items))

    def item_score(self, row: dict[str, Any]) -> float | None:
        """Per-task score in [0, 1] for run comparison: the holistic 1–10 score mapped onto [0, 1]."""
        h = row.get("holistic")
        return (float(h) - 1) / 9 if isinstance(h, (int, float)) else None


PROFILE = ISGProfile()
