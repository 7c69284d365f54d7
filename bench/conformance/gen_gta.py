"""A differential GTA set: ``dataset.json`` + images and OpenCompass prediction files (step and end-to-end
layouts) full of the cases where a re-implementation drifts from ``gta_bench.py``.

Edge cases: signed and currency aliases (``-3``, ``$5``), unicode, blacklists, subjective reference lists,
image-generation queries (``gt_answer`` null) scored by argument similarity, empty answers, argument
paths in every spelling (the loader's absolute path, relative, ``wrong/…`` suffixes), errored and repeated
tool calls, missing and extra predicted turns, thoughts between calls. Deterministic for a seed.

Cases that make the reference itself crash (``"tool_calls": []``, gold tools outside its four categories,
an empty end-to-end prediction) are left out of the main set; ``--crashers`` adds them to a separate file.
"""

from __future__ import annotations

import argparse
import io
import json
import random
from pathlib import Path
from typing import Any

from PIL import Image

ABS_ROOT = "/abs/opencompass/data/gta_dataset"  # where the loader's absolute gold paths point
TOOLS = [
    "OCR",
    "ImageDescription",
    "RegionAttributeDescription",
    "TextToBbox",
    "DrawBox",
    "AddText",
    "GoogleSearch",
    "Calculator",
    "Solver",
    "Plot",
    "MathOCR",
    "CountGivenObject",
    "TextToImage",
    "ImageStylization",
]
IMAGE_TOOLS = {
    "OCR",
    "ImageDescription",
    "RegionAttributeDescription",
    "TextToBbox",
    "DrawBox",
    "AddText",
    "MathOCR",
    "CountGivenObject",
    "ImageStylization",
}
IMAGEGEN = ["DrawBox", "AddText", "Plot", "TextToImage", "ImageStylization"]
WORDS = [
    "fish oil",
    "3 days",
    "-3",
    "$5",
    "5$",
    "3.",
    "€12,50",
    "naïve café",
    "東京",
    "x²",
    "O'Brien",
    "C++",
    "e.g.",
    "(a)",
    "50%",
    "1/2",
    "−7",
    "yes",
    "no",
    "",
    " ",
    "58",
    "58 days",
    "fifty-eight",
    "Ünïcödé",
    "a|b",
    "[x]",
]
SUBJECTIVE = [
    "The image shows a red bus parked near a café.",
    "A cat sitting on a windowsill in the sun.",
    "Two people are hiking up a snowy mountain.",
    "A bar chart of yearly sales, rising every year.",
]


def png(seed: int) -> bytes:
    im = Image.new("RGB", (6, 6), (seed * 37 % 256, seed * 91 % 256, seed * 13 % 256))
    buf = io.BytesIO()
    im.save(buf, "PNG")
    return buf.getvalue()


def _args(rng: random.Random, tool: str, image: str | None) -> dict[str, Any]:
    if tool in IMAGE_TOOLS and image:
        extra = (
            {"text": rng.choice(WORDS)}
            if tool in ("AddText", "RegionAttributeDescription", "TextToBbox", "CountGivenObject")
            else {}
        )
        return {"image": image, **extra}
    if tool == "Calculator":
        return {"expression": rng.choice(["290/5", "290 / 5", "-3*2", "1e3", "(2+3)**2"])}
    if tool == "GoogleSearch":
        return {"query": rng.choice(WORDS) or "empty", "k": rng.choice([1, 3, 10])}
    if tool in ("TextToImage", "Plot", "Solver"):
        return {"keywords" if tool == "TextToImage" else "command": rng.choice(SUBJECTIVE)}
    return {"text": rng.choice(WORDS)}


def _gt_answer(rng: random.Random, kind: str) -> Any:
    if kind == "null":
        return None
    if kind == "refs":
        return rng.sample(SUBJECTIVE, rng.randint(1, 3))
    groups = [[rng.choice(WORDS[:19]) or "58" for _ in range(rng.randint(1, 3))] for _ in range(rng.randint(1, 2))]
    black = [[rng.choice(["no", "-3", "$5", "東京"])]] if rng.random() < 0.3 else None
    return {"whitelist": groups, "blacklist": black}


def make_task(rng: random.Random, i: int) -> tuple[dict[str, Any], list[str]]:
    kind = rng.choices(["whitelist", "refs", "null"], [6, 2, 2])[0]
    files = [f"image/image_{i}_{k}.png" for k in range(rng.randint(0, 2))]
    n_calls = rng.randint(0 if kind != "null" else 1, 4)
    tools = [rng.choice(IMAGEGEN if kind == "null" and k == n_calls - 1 else TOOLS) for k in range(n_calls)]
    dialogs: list[dict[str, Any]] = [{"role": "user", "content": f"Task {i}: {rng.choice(WORDS)} — what is it?"}]
    for t in tools:
        image = rng.choice(files) if files else None
        dialogs.append(
            {
                "role": "assistant",
                "thought": f"use {t}",
                "tool_calls": [{"type": "function", "function": {"name": t, "arguments": _args(rng, t, image)}}],
            }
        )
        dialogs.append({"role": "tool", "name": t, "content": {"type": "text", "content": rng.choice(WORDS) or "ok"}})
    gt = _gt_answer(rng, kind)
    final = gt["whitelist"][0][0] if isinstance(gt, dict) else gt[0] if isinstance(gt, list) else "done"
    dialogs.append({"role": "assistant", "content": final})
    record = {
        "tools": [{"name": t} for t in sorted(set(tools) | {"OCR"})],
        "files": [{"type": "image", "path": f, "url": None} for f in files],
        "dialogs": dialogs,
        "gt_answer": gt,
    }
    return record, files


def absolutise(step: dict[str, Any], files: list[str]) -> dict[str, Any]:
    """The loader's ``organize_dialogs``: argument values naming a dataset file become absolute paths."""
    if "tool_calls" not in step:
        return step
    out = json.loads(json.dumps(step))
    args = out["tool_calls"][0]["function"]["arguments"]
    for k, v in list(args.items()):
        if isinstance(v, str) and v in files:
            args[k] = f"{ABS_ROOT}/{v}"
    return out


def spell_path(rng: random.Random, value: Any, files: list[str]) -> Any:
    if not (isinstance(value, str) and value.startswith(ABS_ROOT)):
        return value
    rel = value[len(ABS_ROOT) + 1 :]
    return rng.choice(
        [value, value, rel, f"wrong/{rel}", f"/tmp/{rel}", rel.replace("image/", "img/"), (files[0] if files else rel)]
    )


def predict_step_turn(rng: random.Random, gold: dict[str, Any], files: list[str], gt: Any) -> dict[str, Any]:
    r = rng.random()
    if "tool_calls" in gold:
        fn = gold["tool_calls"][0]["function"]
        if r < 0.15:  # answers instead of calling
            return {"role": "assistant", "content": rng.choice(WORDS)}
        name = fn["name"] if r < 0.75 else rng.choice(TOOLS)
        args = {k: spell_path(rng, v, files) for k, v in fn["arguments"].items()}
        if rng.random() < 0.2:
            args = {**args, "extra": rng.choice([1, "1", None])}
        step: dict[str, Any] = {
            "role": "assistant",
            "tool_calls": [{"type": "function", "function": {"name": name, "arguments": args}}],
        }
        if rng.random() < 0.15:
            step["error"] = {"type": rng.choice(["ActionNotFound", "ArgsError"]), "msg": "bad"}
        if rng.random() < 0.1:  # two calls in one turn: only the first counts
            step["tool_calls"].append({"type": "function", "function": {"name": "OCR", "arguments": {}}})
        return step
    if r < 0.15:
        return {
            "role": "assistant",
            "tool_calls": [{"type": "function", "function": {"name": rng.choice(TOOLS), "arguments": {}}}],
        }
    if isinstance(gt, dict) and rng.random() < 0.6:
        alias = rng.choice(rng.choice(gt["whitelist"]))
        content = rng.choice(
            [
                alias,
                f"The answer is {alias}.",
                f"({alias})",
                f"{alias}{rng.choice(['', 's', '!'])}",
                alias.upper(),
                f"maybe {rng.choice(WORDS)} or {alias}",
            ]
        )
    elif isinstance(gt, list) and rng.random() < 0.6:
        content = rng.choice(gt) if rng.random() < 0.5 else rng.choice(SUBJECTIVE)
    else:
        content = rng.choice(WORDS)
    return {"role": "assistant", "content": content}


def step_record(rng: random.Random, record: dict[str, Any], files: list[str]) -> dict[str, Any]:
    gold = [absolutise(m, files) for m in record["dialogs"] if m["role"] == "assistant"]
    preds = [predict_step_turn(rng, g, files, record["gt_answer"]) for g in gold]
    r = rng.random()
    if r < 0.08:
        preds = preds[:-1]  # a missing turn: zip stops early
    elif r < 0.14:
        preds = preds + [{"role": "assistant", "content": "extra"}]
    return {"origin_prompt": [], "prediction": preds, "gold": gold}


def e2e_record(rng: random.Random, record: dict[str, Any], files: list[str]) -> dict[str, Any]:
    gold = [absolutise(m, files) for m in record["dialogs"][1:]]
    steps: list[dict[str, Any]] = []
    gold_calls = [g for g in gold if "tool_calls" in g]
    plan = [json.loads(json.dumps(g)) for g in gold_calls if rng.random() < 0.7]
    plan += [
        {
            "role": "assistant",
            "tool_calls": [
                {
                    "type": "function",
                    "function": {
                        "name": rng.choice(TOOLS),
                        "arguments": _args(rng, rng.choice(TOOLS), files[0] if files else None),
                    },
                }
            ],
        }
        for _ in range(rng.randint(0, 2))
    ]
    rng.shuffle(plan)
    if plan and rng.random() < 0.2:
        plan.append(json.loads(json.dumps(plan[0])))  # a repeated call
    for call in plan:
        fn = call["tool_calls"][0]["function"]
        if fn["name"] in IMAGEGEN and rng.random() < 0.5:
            fn["arguments"] = {
                k: (rng.choice(SUBJECTIVE) if isinstance(v, str) else v) for k, v in fn["arguments"].items()
            }
        if rng.random() < 0.3:
            steps.append(
                {
                    "role": "assistant",
                    "content": rng.choice(["Let me think.", "先看图片", ""]),
                    "meta": {"type": "thought"},
                }
            )
        step = {"role": "assistant", "tool_calls": call["tool_calls"][:1]}
        if rng.random() < 0.15:
            step["error"] = {"type": "ToolError", "msg": "failed"}
        steps.append(step)
        steps.append({"role": "tool", "content": [{"type": "text", "content": rng.choice(WORDS) or "ok"}]})
    if rng.random() < 0.85 or not steps:
        final = predict_step_turn(rng, {"role": "assistant", "content": ""}, files, record["gt_answer"])
        if "tool_calls" in final:
            final = {"role": "assistant", "content": rng.choice(WORDS)}
        steps.append(final)
    return {"origin_prompt": [], "prediction": [steps], "gold": [gold]}


def generate(out: Path, n: int = 300, seed: int = 15) -> dict[str, Path]:
    """Write ``out/dataset`` (dataset.json, toolmeta.json, image/) and ``out/step`` / ``out/e2e`` predictions."""
    rng = random.Random(seed)
    dataset, step, e2e = {}, {}, {}
    images: dict[str, bytes] = {}
    for i in range(n):
        record, files = make_task(rng, i)
        dataset[str(i)] = record
        for f in files:
            images[f] = png(len(images))
        step[str(i)] = step_record(rng, record, files)
        e2e[str(i)] = e2e_record(rng, record, files)
    root = out / "dataset"
    for rel, data in images.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    root.mkdir(parents=True, exist_ok=True)
    (root / "dataset.json").write_text(json.dumps(dataset, ensure_ascii=False, indent=1), encoding="utf-8")
    (root / "toolmeta.json").write_text(json.dumps({t: {"name": t} for t in TOOLS}), encoding="utf-8")
    paths = {"dataset": root}
    for name, preds in (("step", step), ("e2e", e2e)):
        (out / name).mkdir(parents=True, exist_ok=True)
        (out / name / "gta_bench.json").write_text(json.dumps(preds, ensure_ascii=False, indent=1), encoding="utf-8")
        paths[name] = out / name / "gta_bench.json"
    return paths


def sets(out: Path, n: int = 300) -> list[dict[str, Any]]:
    """What ``bench/conformance/run.py`` imports: one dataset, two prediction files."""
    paths = generate(out, n)
    return [
        {"label": layout, "format": "gta", "dataset": paths["dataset"], "run": paths[layout], "options": {}}
        for layout in ("step", "e2e")
    ]


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("-n", type=int, default=300)
    ap.add_argument("--seed", type=int, default=15)
    a = ap.parse_args()
    print(json.dumps({k: str(v) for k, v in generate(a.out, a.n, a.seed).items()}))
