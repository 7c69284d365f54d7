"""Differential test set for Agentic-MME: tasks (``json/NNNN.json`` + ``images/``) and one run folder per
task in the reference runners' layout, full of the cases where two scorers can disagree.

Why: ``--mode faithful`` must equal ``evaluation/eval_runs_search.py`` per item. Hand-written fixtures
only cover what their author thought of; this writes hundreds of seeded, varied cases: incomplete run
folders (only ``orig.png``; a tool list but no ``run_meta.json``; neither), ``tool_images/metrics.json``
(valid, invalid, a list), every kind of verifier name (auto-mapped ``verify_*_ast``, ``require_*``, names
of the reference verifier module's functions, empty, unknown), unicode, ``$`` and signed numbers, empty
answers, repeated and declared-only tool calls, corrupt images, ordering constraints with gaps.

Images are flat colours so a scripted judge can answer by looking at them (``judge_answer``): both
scorers then get the same visual verdicts without a real model.

    python bench/conformance/gen_agentic_mme.py OUT [--tasks 300] [--seed 7]

writes ``OUT/dataset`` (import with ``chainmark import agentic-mme``) and ``OUT/runs/<model>``
(``chainmark import-run agentic-mme``; the reference's ``--runs_dir``).
"""

from __future__ import annotations

import argparse
import io
import json
import random
from pathlib import Path
from typing import Any

from PIL import Image

COLOURS = {"red": (220, 20, 20), "green": (20, 200, 20), "blue": (20, 20, 220)}
ANSWERS = ["7", "42", "-3", "3.5", "$120", "東京タワー", "Ünïcødé café", "1999", "JA8089", "0", "12", "yes"]
VERIFIERS = [
    "verify_crop_ast",
    "verify_rotate_image_ast",
    "verify_flip_ast",
    "verify_zoom_ast",
    "require_op:crop",
    "require_op:enhance",
    "require_images",
    "require_images:2",
    "require_images:x",
    "require_metrics",
    "require_metrics:psnr",
    "require_metrics_json",
    "example_custom_verifier",
    "require_op",
    "dispatch_verifier",
    "Path",
    "PRIMITIVES",
    "VerifyResult",
    "",
    "crop_check",
    "totally_unknown",
    "resize_then_crop",
]
OPS = ["crop", "rotate", "flip", "resize", "enhance"]


def png(colour: str, size: int = 12) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (size, size), COLOURS[colour]).save(buf, "PNG")
    return buf.getvalue()


def judge_answer(image_bytes: bytes) -> str:
    """The scripted visual judge: names the image's dominant colour (what both scorers are told)."""
    with Image.open(io.BytesIO(image_bytes)) as im:
        r, g, b = im.convert("RGB").resize((1, 1)).getpixel((0, 0))
    name = max((("red", r), ("green", g), ("blue", b)), key=lambda kv: kv[1])[0]
    return f"The image is mostly {name}."


def golden(rng: random.Random) -> dict[str, Any]:
    value = rng.choice(ANSWERS)
    kind = rng.choices(["contains", "exact", "numeric"], [6, 2, 2])[0]
    out: dict[str, Any] = {"value": value, "match_type": kind}
    if kind == "numeric":
        out["value"] = rng.choice(["7", "3.5", "-3", "12"])
        if rng.random() < 0.5:
            out["tolerance"] = rng.choice([0, 0.5, 1])
    return out


def model_answer(rng: random.Random, gold: dict[str, Any]) -> str | None:
    v = str(gold["value"])
    return rng.choice(
        [
            None,
            "",
            v,
            f"The answer is {v}.",
            f"Answer: {v}",
            f"It was {v}17 or so",
            v.upper(),
            f"  {v}  ",
            "I cannot tell.",
            f"therefore the answer is {v}",
            "Ünïcødé café",
            "2017",
        ]
    )


def checkpoints(rng: random.Random) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    cps: list[dict[str, Any]] = []
    for n in range(rng.randint(0, 4)):
        axis = rng.choices(["S", "V", "R"], [3, 6, 1])[0]
        cid = f"{axis.lower()}{n}"
        if axis == "S":
            tools = rng.choice(
                [["google_search"], ["google_lens_search"], ["crop"], ["google_search", "fetch_webpage"]]
            )
            cps.append(
                {
                    "id": cid,
                    "axis": "S",
                    "tools": tools,
                    "description": rng.choice(
                        [
                            "Find the operator (expected to find: JAL)",
                            "Search the tower's height",
                            "検索 expected: 333 m",
                        ]
                    ),
                }
            )
        elif axis == "V":
            cp: dict[str, Any] = {
                "id": cid,
                "axis": "V",
                "tools": rng.choice([[], ["crop"], ["rotate"], ["zoom"]]),
                "description": "visual step",
            }
            shape = rng.choices(["code", "visual", "both", "answer", "none"], [4, 3, 3, 1, 1])[0]
            if shape in ("code", "both"):
                cp["code_check"] = {"verifier": rng.choice(VERIFIERS)}
            if shape in ("visual", "both"):
                cp["visual_check"] = {
                    "question": "Which colour dominates?",
                    "expected_answer": rng.choice(["red", "green", "blue", "Red", "", "mostly"]),
                }
            if shape == "answer":
                cp["answer_check"] = {"match_type": "contains", "target": "7"}
            cps.append(cp)
        else:
            if rng.random() < 0.8:
                cps.append(
                    {
                        "id": cid,
                        "axis": "R",
                        "answer_check": rng.choice(
                            [
                                {"match_type": "exact", "target": "7"},
                                {"match_type": "contains", "target": "4"},
                                {"match_type": "string", "target": "answer"},
                                {"match_type": "numeric", "target": "7", "tolerance": 1},
                                {"match_type": "keyword_inclusion", "keywords": ["tower", "7"], "min_matches": 1},
                                {
                                    "match_type": "extraction_match",
                                    "targets": [{"key": "n", "value": "42", "tolerance": 0}],
                                },
                                {"match_type": "weird", "target": "the"},
                            ]
                        ),
                    }
                )
            else:
                cps.append({"id": cid, "axis": "R"})
    orders = []
    ids = [c["id"] for c in cps]
    if len(ids) >= 2 and rng.random() < 0.6:
        orders.append({"id": "o1", "sequence": rng.sample(ids, 2), "max_gap": rng.choice([0, 1, 3])})
    return cps, orders


def task_record(rng: random.Random, n: int) -> dict[str, Any]:
    cps, orders = checkpoints(rng)
    pe: dict[str, Any] = {"checkpoints": cps, "ordering_constraints": orders}
    if rng.random() < 0.85:
        pe["efficiency"] = {
            "reference_tool_calls": rng.randint(0, 4),
            "max_tool_calls": rng.choice([0, 4, 8]),
            "penalty_per_extra_call": rng.choice([0.0, 0.1, 0.25]),
        }
    meta: dict[str, Any] = {"domain": rng.choice(["travel", "science", "商品"]), "turncase": "single_turn"}
    if rng.random() < 0.9:
        meta["level"] = rng.choice([1, 2, 3, 1, 2, 3, 4])
    return {
        "task_id": f"amme_{n:04d}",
        "meta": meta,
        "input": {
            "prompt": rng.choice(["What is shown? ", "東京の塔は？", "Price in $?"]) + str(n),
            "image": f"images/image_{n:04d}.png",
        },
        "golden_answer": golden(rng),
        "process_evaluation": pe,
    }


def tool_calls(
    rng: random.Random, run_dir: Path, general: bool, corrupt_images: bool = True
) -> tuple[list[dict[str, Any]], dict[str, bytes]]:
    entries: list[dict[str, Any]] = []
    images: dict[str, bytes] = {}
    for _ in range(rng.choice([0, 1, 2, 3, 4, 6])):
        kind = rng.choices(["op", "search", "lens", "declared", "repeat", "other"], [6, 3, 1, 1, 1, 1])[0]
        if kind == "repeat" and entries:
            entries.append(json.loads(json.dumps(entries[-1])))
            continue
        if kind in ("op", "declared", "repeat"):
            op = rng.choice(OPS)
            out: dict[str, Any] = {"ok": "true"}
            if kind == "declared":
                out["declared_only"] = True
            elif rng.random() < 0.85:
                name = f"transformed_image_{len(images) + 1}.png"
                readable = rng.random() > 0.05 or not corrupt_images  # same draws either way
                images[name] = png(rng.choice(list(COLOURS))) if readable else b"not an image"
                out["output_path"] = str(run_dir / "tool_images" / name)
            if general:
                entries.append(
                    {
                        "tool_name": op,
                        "raw_tool_name": "python_image_processing",
                        "arguments": {"op": op, "save": "x.png", "line": 3},
                        "output": out,
                    }
                )
            else:
                entries.append(
                    {
                        "tool_name": op,
                        "raw_tool_name": op,
                        "arguments": {"image_index": 0, "bbox_2d": [0, 0, 500, 500]},
                        "output": out,
                    }
                )
        elif kind == "search":
            q = rng.choice(["JAL operator", "tower height PASSME", "東京タワー 高さ", ""])
            entries.append(
                {
                    "tool_name": "google_search",
                    "raw_tool_name": "google_search",
                    "arguments": {"query": q},
                    "output": {"ok": "true", "context": rng.choice(["JAL flies it", "333 m", "nothing"])},
                }
            )
        elif kind == "lens":
            entries.append(
                {
                    "tool_name": "google_lens_search",
                    "raw_tool_name": "google_lens_search",
                    "arguments": {"image_index": 0},
                    "output": {"ok": "true", "context": "similar"},
                }
            )
        else:
            entries.append(
                {
                    "tool_name": "calculator",
                    "raw_tool_name": "calculator",
                    "arguments": {"expression": "6*7"},
                    "output": {"ok": "true", "result": "42"},
                }
            )
    if general and entries:
        entries.append(
            {
                "tool_name": "run_visual_processing_code",
                "raw_tool_name": "script_exec",
                "arguments": {"code": "print(1)"},
                "output": {"stdout": "1\n", "exit_code": 0},
            }
        )
    for i, e in enumerate(entries):
        e["index"] = i
        e["timestamp"] = "2026-01-01T00:00:00Z"
    return entries, images


def write_run_folder(
    rng: random.Random, run_dir: Path, task_file: Path, record: dict[str, Any], corrupt_images: bool = True
) -> str:
    run_dir.mkdir(parents=True)
    shape = rng.choices(["full", "orig_only", "no_meta", "nothing"], [88, 6, 4, 2])[0]
    if shape != "nothing":
        (run_dir / "orig.png").write_bytes(png(rng.choice(list(COLOURS))))
    general = rng.random() < 0.2
    entries, images = tool_calls(rng, run_dir, general, corrupt_images)
    if shape == "orig_only":
        return shape
    (run_dir / "tool_use_list.json").write_text(json.dumps(entries, ensure_ascii=False, indent=2), encoding="utf-8")
    if images or rng.random() < 0.1:
        (run_dir / "tool_images").mkdir()
        for name, data in images.items():
            (run_dir / "tool_images" / name).write_bytes(data)
        metrics = rng.choices(["none", "dict", "dict_nokey", "invalid", "list"], [5, 3, 2, 1, 1])[0]
        if metrics != "none":
            text = {
                "dict": '{"psnr": 31.5, "ssim": 0.9}',
                "dict_nokey": '{"ssim": 0.9}',
                "invalid": "{psnr: oops",
                "list": '["psnr"]',
            }[metrics]
            (run_dir / "tool_images" / "metrics.json").write_text(text, encoding="utf-8")
    answer = model_answer(rng, record["golden_answer"])
    if answer is not None:
        (run_dir / "model_answer.txt").write_text(answer, encoding="utf-8")
    if shape in ("no_meta", "nothing"):
        return shape
    effective = len([e for e in entries if e["tool_name"] != "run_visual_processing_code"])
    meta = {
        "task_id": record["task_id"],
        "task_file": str(task_file.resolve()),
        "mode": "general_rollout" if general else "atomic",
        "driver": "generator",
        "model": "gen-model",
        "temperature": 0.0,
        "usage": {"api_calls": 1, "prompt_tokens": 10, "completion_tokens": 5},
        "effective_tool_calls": effective,
        "total_images": len(images) + 1,
        "paths": {
            "run_dir": str(run_dir),
            "orig": str(run_dir / "orig.png"),
            "processed_dir": str(run_dir / "tool_images"),
        },
        "warnings": [],
    }
    (run_dir / "run_meta.json").write_text(json.dumps(meta, ensure_ascii=False, indent=2), encoding="utf-8")
    return shape


def generate(
    out: Path, tasks: int = 300, seed: int = 7, model: str = "gen-model", corrupt_images: bool = True
) -> dict[str, int]:
    """``corrupt_images=False`` writes every tool image readable: ``import-run`` refuses a run folder holding
    an undecodable image, so the set that goes through the CLI has none."""
    rng = random.Random(seed)
    dataset, runs = out / "dataset", out / "runs" / model
    (dataset / "json").mkdir(parents=True)
    (dataset / "images").mkdir()
    runs.mkdir(parents=True)
    shapes: dict[str, int] = {}
    for n in range(1, tasks + 1):
        record = task_record(rng, n)
        task_file = dataset / "json" / f"{n:04d}.json"
        task_file.write_text(json.dumps(record, ensure_ascii=False, indent=2), encoding="utf-8")
        (dataset / "images" / f"image_{n:04d}.png").write_bytes(png(rng.choice(list(COLOURS))))
        shape = write_run_folder(rng, runs / f"{n:04d}", task_file, record, corrupt_images)
        shapes[shape] = shapes.get(shape, 0) + 1
    return shapes


def sets(out: Path, n: int = 300) -> list[dict[str, Any]]:
    """What ``bench/conformance/run.py`` imports: the tasks and the run folders, no judges asked (the
    conformance hook gives the reference a judge that refuses, so on both sides every judged check fails)."""
    generate(out, n, corrupt_images=False)
    return [{"label": "runs", "format": "agentic-mme", "dataset": out / "dataset", "run": out / "runs" / "gen-model"}]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--tasks", type=int, default=300)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    print(json.dumps(generate(args.out, args.tasks, args.seed)))


if __name__ == "__main__":
    main()
