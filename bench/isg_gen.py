"""Generated ISG-Bench datasets for the import benchmark: ``ISG-Bench.jsonl`` (one item a line: a text and an
image in the query, a text and an image in the golden answer, the scene-graph questions) and the images."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bench.gta_gen import tiny_png

CATEGORIES = ["Prediction", "HowTo", "Object_VQA", "Art Style Transfer", "visual storytelling image"]


def line(i: int, query_image: str, golden_image: str) -> dict[str, Any]:
    return {
        "id": f"{i:06d}",
        "Category": CATEGORIES[i % len(CATEGORIES)],
        "Query": [
            {"type": "text", "content": f"Item {i}: show what happens next in this scene."},
            {"type": "image", "content": query_image},
        ],
        "Golden": [
            {"type": "text", "content": f"The scene of item {i} continues: the ball rolls {i % 17} metres."},
            {"type": "image", "content": golden_image},
        ],
        "predict": {
            "structure": {"Query": ["<query_text1>", "<query_img1>"], "Answer": ["<gen_text1>", "<gen_img1>"]},
            "block_tuple": {"relation": [["<gen_text1>", "<query_img1>", "describes"]]},
            "block_qa": {
                "questions": [
                    {
                        "subject": "<gen_text1>",
                        "object": "<query_img1>",
                        "relation": "describes",
                        "Question": f"Does the text describe the image of item {i}?",
                    }
                ]
            },
            "image_tuple": [["entity", "ball", "<gen_img1>"]],
            "image_qa": {"questions": [{"image": "<gen_img1>", "Question": "A ball?", "id": 0, "Preliminary": []}]},
        },
    }


def write_dataset(root: Path, n: int, query_images: int | None = None, golden_images: int = 1000) -> Path:
    """``n`` items; ``query_images`` (default n: one per item) and ``golden_images`` distinct images,
    shared round-robin."""
    images = root / "images"
    images.mkdir(parents=True, exist_ok=True)
    queries = query_images or n
    for k in range(queries):
        (images / f"q_{k}.png").write_bytes(tiny_png(k))
    for k in range(golden_images):
        (images / f"g_{k}.png").write_bytes(tiny_png(queries + k))
    with (root / "ISG-Bench.jsonl").open("w", encoding="utf-8") as out:
        for i in range(n):
            item = line(i, f"images/q_{i % queries}.png", f"images/g_{i % golden_images}.png")
            out.write(json.dumps(item, ensure_ascii=False) + "\n")
    return root
