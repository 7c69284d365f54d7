"""A differential ISG-Bench set: ``ISG-Bench.jsonl`` + images, prediction lines (the item plus ``output``)
whose images live under an ``ISG_eval``-style ``--root``, and a scripted judge whose replies are nasty.

Edge cases: outputs whose text/image sequence differs from the golden one (counts, order), empty and
missing outputs, an empty first text block, unicode and newlines, output images given relative to the
root, absolute, or missing (nowhere, or an empty path); scene graphs with prerequisite ids and
prerequisite tokens, questions on ``<all>`` or tokens the output lacks, questions without their keys,
``image_qa`` as a bare list, a dict or an empty dict; subcategories outside the aggregation's mapping;
the last line left out (``--end -1``). The judge (``judge_reply``) answers from pools per judge: valid
JSON, fenced or chatty JSON, bools, numeric strings, ``null``, lists, replies without the key. Replies the
reference's *aggregation script* itself would crash on (a string or null ``overall_score``, a bare number
as the holistic reply) are left out: they stop its whole run, not one item.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import random
from pathlib import Path
from typing import Any

from PIL import Image

SUBCATEGORIES = [
    "Art Style Transfer",
    "Scene Attribute Transfer",
    "Photo Variation",
    "Portrait Variation",
    "Animation Images",
    "Animation Text-Image",
    "Attribute Transfer",
    "3D_object",
    "multi-Perspective Scene Generation",
    "Realistic Object Detection",
    "Imaginary Object Detection",
    "HowTo",
    "Scientific",
    "Prediction",
    "painting",
    "visual storytelling text-image",
    "visual storytelling image",
    "visual storytelling text",
    "Object_VQA",
    "Historical",
]
UNMAPPED = "Semantic Segmentation"
TEXTS = [
    "A cat sits on the mat.",
    "Step 2: whisk the eggs\nthen fold.",
    "東京の夜景 🌃",
    "naïve café — $5",
    "Le château d'Ève",
    "x² + y² = r²",
    "   ",
    "Ответ: да",
    "<gen_text1> follows",
    "Final frame.",
]
IMAGE_REPLIES = (
    ['{"Judge": "Yes", "Reason": "visible"}'] * 24
    + ['{"Judge": "No", "Reason": "absent"}'] * 12
    + [
        '{"Judge": "yes"}',
        '{"Judge": "YES "}',
        '```json\n{"Judge": "Yes"}\n```',
        'Sure. {"Judge": "Yes"}',
        '{"Judge": true}',
        '{"Judge": 1}',
        '{"Reason": "no verdict"}',
        "[]",
        '["Judge"]',
        "null",
        "{}",
        '"Judge"',
    ]
)
BLOCK_REPLIES = ['{"Judge": 7, "Reason": "ok"}', '{"Judge": 9}', '{"Judge": 4}', '{"Judge": 10}'] * 8 + [
    '{"Judge": 3.5}',
    '{"Judge": "Yes"}',
    '{"Judge": "8"}',
    '{"Judge": true}',
    '{"Judge": false}',
    '{"Judge": null}',
    '```json\n{"Judge": 6}\n```',
    '{"Reason": "no score"}',
    "null",
    "5",
    "[1]",
    '"no"',
]
HOLISTIC_REPLIES = [
    '{"overall_score": 7, "final_thoughts": "fine"}',
    '{"overall_score": 6.5}',
    '{"overall_score": 9}',
    '{"overall_score": 3}',
] * 3 + [
    '{"overall_score": 0}',
    '{"overall_score": 10}',
    '{"overall_score": true}',
    '{"overall_score": false}',
    '```json\n{"overall_score": 8}\n```',
    '{"coherence": {"score": 5}}',
    "{}",
    "null",
    "[]",
    '"fine"',
]


def judge_reply(messages: list[dict[str, Any]]) -> str:
    """The scripted judge: which chainmark judge asks is read from its prompt; the reply is picked from that
    judge's pool by a hash of the whole request, so the same question always gets the same reply."""
    text = json.dumps(messages, sort_keys=True, ensure_ascii=False)
    pool = (
        HOLISTIC_REPLIES if "overall_score" in text else IMAGE_REPLIES if "yes/no question" in text else BLOCK_REPLIES
    )
    return pool[int(hashlib.sha256(text.encode()).hexdigest(), 16) % len(pool)]


def _png(seed: int) -> bytes:
    img = Image.new("RGB", (8, 8), ((seed * 37) % 256, (seed * 91) % 256, (seed * 53) % 256))
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return buf.getvalue()


def _sequence(rng: random.Random) -> list[str]:
    return [rng.choice(["text", "image"]) for _ in range(rng.randint(1, 5))]


def _tokens(kinds: list[str], prefix: str) -> list[str]:
    out, n = [], {"text": 0, "image": 0}
    for k in kinds:
        n[k] += 1
        out.append(f"<{prefix}_{'text' if k == 'text' else 'img'}{n[k]}>")
    return out


def _scene_graph(rng: random.Random, gold: list[str], query: list[str]) -> dict[str, Any]:
    tokens = _tokens(gold, "gen") + _tokens(query, "query")
    pool = tokens + ["<all>", "<gen_img9>", "<gen_text9>"]
    block = []
    for _ in range(rng.randint(0, 4)):
        q: dict[str, Any] = {"subject": rng.choice(pool), "object": rng.choice(pool), "relation": "follows"}
        q["Question"] = f"Does {q['subject']} follow {q['object']}? ({rng.choice(TEXTS)})"
        if rng.random() < 0.06:
            del q[rng.choice(["Question", "object"])]
        block.append(q)
    images = [t for t in tokens if "img" in t] + ["<gen_img9>"]
    image_qa = []
    for k in range(rng.randint(0, 4)):
        q = {
            "id": k,
            "image": rng.choice(images),
            "Question": f"Is there a {rng.choice(['cat', 'café', '東京'])}?",
            "Preliminary": [],
        }
        r = rng.random()
        if r < 0.25 and k:
            q["Preliminary"] = [rng.randrange(k)]
        elif r < 0.30:
            q["Preliminary"] = [rng.choice(images)]  # a token, not an id
        elif r < 0.33:
            del q["image"]
        image_qa.append(q)
    shape = rng.random()
    qa: Any = image_qa if shape < 0.45 else {"questions": image_qa} if shape < 0.97 else {}
    return {"block_qa": {"questions": block}, "image_qa": qa}


def _output(rng: random.Random, ident: str, gold: list[str], root: Path, abs_dir: Path) -> Any:
    r = rng.random()
    if r < 0.04:
        return "absent"
    if r < 0.08:
        return None
    if r < 0.11:
        return []
    kinds = list(gold)
    r = rng.random()
    if r < 0.12:
        kinds = kinds + [rng.choice(["text", "image"])]
    elif r < 0.2 and len(kinds) > 1:
        kinds = kinds[::-1] if kinds != kinds[::-1] else kinds[1:]
    elif r < 0.24:
        kinds = ["text" if k == "image" else "image" for k in kinds]
    out = []
    for n, kind in enumerate(kinds):
        if kind == "text":
            out.append({"type": "text", "content": "" if n == 0 and rng.random() < 0.08 else rng.choice(TEXTS)})
            continue
        where = rng.random()
        if where < 0.08:
            content = f"gen/{ident}_{n}_nowhere.png"  # missing
        elif where < 0.1:
            content = ""
        elif where < 0.3:
            path = abs_dir / f"{ident}_{n}.png"
            path.write_bytes(_png(int(ident) * 10 + n))
            content = str(path)
        else:
            content = f"gen/{ident}_{n}.png"
            (root / "gen").mkdir(parents=True, exist_ok=True)
            (root / content).write_bytes(_png(int(ident) * 10 + n + 5))
        out.append({"type": "image", "content": content})
    return out


def generate(out: Path, n: int = 300, seed: int = 15) -> dict[str, Path]:
    rng = random.Random(seed)
    dataset, root = out / "dataset", out / "ISG_eval"
    abs_dir = (root / "abs").resolve()  # absolute paths inside --root: chainmark reads nothing outside it
    for d in (dataset / "images", root, abs_dir, out / "results"):
        d.mkdir(parents=True, exist_ok=True)
    gt_lines, pred_lines = [], []
    for k in range(n):
        ident = f"{k:04d}"
        query_kinds = rng.choice([["text"], ["text", "image"], ["image"], ["text", "image", "image"]])
        gold = _sequence(rng)
        query, golden = [], []
        for m, kind in enumerate(query_kinds):
            if kind == "text":
                query.append({"type": "text", "content": rng.choice([t for t in TEXTS if t.strip()])})
            else:
                rel = f"images/{ident}_q{m}.png"
                (dataset / rel).write_bytes(_png(k * 7 + m))
                query.append({"type": "image", "content": rel})
        for m, kind in enumerate(gold):
            if kind == "text":
                golden.append({"type": "text", "content": rng.choice(TEXTS)})
            else:
                rel = f"images/{ident}_g{m}.png"
                (dataset / rel).write_bytes(_png(k * 11 + m + 3))
                golden.append({"type": "image", "content": rel})
        category = UNMAPPED if rng.random() < 0.03 else rng.choice(SUBCATEGORIES)
        line = {
            "id": ident,
            "Category": category,
            "Query": query,
            "Golden": golden,
            "predict": _scene_graph(rng, gold, query_kinds),
        }
        gt_lines.append(line)
        pred = json.loads(json.dumps(line))
        output = _output(rng, ident, gold, root, abs_dir)
        if output != "absent":
            pred["output"] = output
        pred_lines.append(pred)
    (dataset / "ISG-Bench.jsonl").write_text(
        "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in gt_lines), encoding="utf-8"
    )
    preds = out / "results" / "model.jsonl"
    preds.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in pred_lines), encoding="utf-8")
    return {"dataset": dataset, "run": preds, "root": root}


def sets(out: Path, n: int = 300) -> list[dict[str, Any]]:
    """What ``bench/conformance/run.py`` imports: the dataset, the prediction lines (images under ``--root``,
    the last line dropped as ``--end -1`` does) and the judges to ask with the scripted replies."""
    paths = generate(out, n)
    return [
        {
            "label": "root",
            "format": "isg",
            "dataset": paths["dataset"],
            "run": paths["run"],
            "options": {"root": str(paths["root"]), "drop_last": True},
            "judges": {"names": ["isg-image", "isg-block", "isg-holistic"], "reply": judge_reply},
        }
    ]


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("-n", type=int, default=300)
    ap.add_argument("--seed", type=int, default=15)
    a = ap.parse_args()
    print(json.dumps({k: str(v) for k, v in generate(a.out, a.n, a.seed).items()}))
