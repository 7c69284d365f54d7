"""Small datasets in each benchmark's layout, written by the tests themselves (images made with Pillow)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw


def png(seed: int, size: tuple[int, int] = (24, 16)) -> bytes:
    """A tiny distinct PNG: a coloured rectangle with a mark whose place depends on ``seed``."""
    im = Image.new("RGB", size, ((seed * 37) % 256, (seed * 91) % 256, (seed * 53) % 256))
    ImageDraw.Draw(im).rectangle([seed % size[0], 2, seed % size[0] + 3, 6], fill=(255, 255, 255))
    buf = io.BytesIO()
    im.save(buf, "PNG")
    return buf.getvalue()


def jpg(seed: int) -> bytes:
    im = Image.new("RGB", (20, 20), ((seed * 11) % 256, 40, 200))
    buf = io.BytesIO()
    im.save(buf, "JPEG", quality=80)
    return buf.getvalue()


def _write(root: Path, rel: str, data: bytes) -> None:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(data)


# ------------------------------------------------------------------ GTA

TOOLMETA = {
    "OCR": {
        "name": "OCR",
        "description": "This tool can recognize all text on the input image.",
        "inputs": [
            {
                "type": "image",
                "name": "image",
                "description": None,
                "optional": False,
                "default": None,
                "filetype": None,
            }
        ],
        "outputs": [
            {
                "type": "text",
                "name": None,
                "description": "OCR results.",
                "optional": False,
                "default": None,
                "filetype": None,
            }
        ],
    },
    "Calculator": {
        "name": "Calculator",
        "description": "A calculator tool.",
        "inputs": [
            {
                "type": "text",
                "name": "expression",
                "description": None,
                "optional": False,
                "default": None,
                "filetype": None,
            }
        ],
        "outputs": [
            {"type": "text", "name": None, "description": None, "optional": False, "default": None, "filetype": None}
        ],
    },
    "DrawBox": {
        "name": "DrawBox",
        "description": "Draw a box.",
        "inputs": [
            {
                "type": "image",
                "name": "image",
                "description": None,
                "optional": False,
                "default": None,
                "filetype": None,
            },
            {"type": "text", "name": "bbox", "description": None, "optional": False, "default": None, "filetype": None},
        ],
        "outputs": [
            {"type": "image", "name": None, "description": None, "optional": False, "default": None, "filetype": None}
        ],
    },
}


def gta_record(i: int, kind: str = "whitelist") -> dict[str, Any]:
    img = f"image/image_{i}.jpg"
    dialogs: list[dict[str, Any]] = [
        {"role": "user", "content": f"Question {i}: how many days does the bottle last for {i + 2} people?"},
        {
            "role": "assistant",
            "tool_calls": [{"type": "function", "function": {"name": "OCR", "arguments": {"image": img}}}],
            "thought": "Read the label first.",
        },
        {"role": "tool", "name": "OCR", "content": {"type": "text", "content": f"(1, 2, 3, 4) {290 + i} SOFTGELS"}},
        {
            "role": "assistant",
            "tool_calls": [
                {
                    "type": "function",
                    "function": {"name": "Calculator", "arguments": {"expression": f"{290 + i} / {i + 2}"}},
                }
            ],
            "thought": "Divide.",
        },
        {"role": "tool", "name": "Calculator", "content": {"type": "text", "content": str((290 + i) // (i + 2))}},
    ]
    if kind == "none":
        dialogs[3:] = [
            {
                "role": "assistant",
                "tool_calls": [
                    {
                        "type": "function",
                        "function": {"name": "DrawBox", "arguments": {"image": img, "bbox": "(1, 2, 3, 4)"}},
                    }
                ],
                "thought": "Mark it.",
            },
            {"role": "tool", "name": "DrawBox", "content": {"type": "image", "content": "image/dummy.jpg"}},
        ]
    dialogs.append({"role": "assistant", "content": str((290 + i) // (i + 2))})
    gt: Any = {"whitelist": [[str((290 + i) // (i + 2))]], "blacklist": None}
    if kind == "references":
        gt = [f"It lasts about {(290 + i) // (i + 2)} days.", "Roughly two months."]
    elif kind == "none":
        gt = None
    elif kind == "blacklist":
        gt = {"whitelist": [["58", "fifty-eight"], ["days"]], "blacklist": [["59"]]}
    tools = [TOOLMETA["OCR"], TOOLMETA["DrawBox" if kind == "none" else "Calculator"]]
    return {
        "tools": tools,
        "files": [{"type": "image", "path": img, "url": f"https://example.invalid/{i}.jpg"}],
        "dialogs": dialogs,
        "gt_answer": gt,
    }


def write_gta(root: Path, n: int = 4) -> dict[str, Any]:
    kinds = ["whitelist", "references", "none", "blacklist"]
    data = {str(i): gta_record(i, kinds[i % len(kinds)]) for i in range(n)}
    root.mkdir(parents=True, exist_ok=True)
    (root / "dataset.json").write_text(json.dumps(data, indent=4), encoding="utf-8")
    (root / "toolmeta.json").write_text(json.dumps(TOOLMETA, indent=4), encoding="utf-8")
    for i in range(n):
        _write(root, f"image/image_{i}.jpg", jpg(i))
    return data


def gta_step_predictions(data: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for key, rec in data.items():
        gold = [m for m in rec["dialogs"] if m["role"] == "assistant"]
        preds: list[dict[str, Any]] = []
        for k, g in enumerate(gold):
            if "tool_calls" in g:
                fn = g["tool_calls"][0]["function"]
                args = dict(fn["arguments"])
                if k == 1:
                    args = {"expression": "1 + 1"}  # a wrong argument, on purpose
                preds.append(
                    {
                        "role": "assistant",
                        "tool_calls": [{"type": "function", "function": {"name": fn["name"], "arguments": args}}],
                    }
                )
            else:
                preds.append({"role": "assistant", "content": f"The answer is {g['content']}"})
        if key == "1":
            preds[0] = {
                "role": "assistant",
                "tool_calls": [{"type": "function", "function": {"name": "NoSuchTool", "arguments": "{bad json"}}],
                "error": {"type": "ParseError", "msg": "bad"},
            }
        out[key] = {"gold": gold, "prediction": preds, "origin_prompt": [{"role": "user", "content": "x"}], "steps": []}
    return out


def gta_e2e_predictions(data: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for key, rec in data.items():
        steps: list[dict[str, Any]] = [
            {"role": "assistant", "content": "I should read the label.", "meta": {"type": "thought"}}
        ]
        for m in rec["dialogs"][1:]:
            if m["role"] == "assistant" and "tool_calls" in m:
                steps.append({"role": "assistant", "tool_calls": m["tool_calls"]})
            elif m["role"] == "tool":
                steps.append({"role": "tool", "content": [m["content"]]})
            else:
                steps.append({"role": "assistant", "content": m["content"]})
        out[key] = {"gold": [rec["dialogs"][1:]], "prediction": [steps], "origin_prompt": [], "steps": []}
    return out


# ------------------------------------------------------------------ Agentic-MME


def mme_record(i: int) -> dict[str, Any]:
    ident = f"{i:04d}"
    return {
        "task_id": f"L{1 + i % 3}_Test_Domain_Item_{ident}",
        "meta": {
            "level": 1 + i % 3,
            "domain": ["Finance", "Science"][i % 2],
            "turncase": "single_turn",
            "original_image_link": f"https://example.invalid/{ident}",
        },
        "input": {"prompt": f"Read the number on sign {i} and add {i}.", "image": f"images/image_{ident}.png"},
        "golden_answer": {
            "value": str(100 + i),
            "match_type": ["contains", "exact", "numeric"][i % 3],
            "tolerance": 0.5,
        },
        "process_evaluation": {
            "checkpoints": [
                {
                    "id": "V1_crop",
                    "axis": "V",
                    "tools": ["crop"],
                    "description": "Crop the sign.",
                    "code_check": {"tool": "python_image_processing", "verifier": "verify_crop_ast"},
                    "visual_check": {"question": "Is the sign readable?", "expected_answer": "Yes"},
                },
                {
                    "id": "S1_search",
                    "axis": "S",
                    "tools": ["google_search"],
                    "description": "Search the sign (expected to find: 1962)",
                },
                {
                    "id": "V_final_answer",
                    "axis": "V",
                    "answer_check": {"match_type": "contains", "target": str(100 + i)},
                },
            ],
            "ordering_constraints": [{"id": "O1", "sequence": ["V1_crop", "S1_search"], "max_gap": 2}],
            "efficiency": {"reference_tool_calls": 2, "max_tool_calls": 6, "penalty_per_extra_call": 0.1},
        },
    }


def write_mme(root: Path, n: int = 3, multi: int | None = 1) -> dict[str, Any]:
    """Task ``multi`` gets two images (image_NNNN_1/_2); the others one."""
    out = {}
    for i in range(n):
        ident = f"{i:04d}"
        rec = mme_record(i)
        out[ident] = rec
        _write(root, f"json/{ident}.json", json.dumps(rec, indent=2).encode())
        if i == multi:
            _write(root, f"images/image_{ident}_1.png", png(10 + i))
            _write(root, f"images/image_{ident}_2.jpg", jpg(20 + i))
        else:
            _write(root, f"images/image_{ident}.png", png(10 + i))
    return out


def write_mme_run(root: Path, ident: str = "0000") -> Path:
    """A hand-written atomic-mode run folder for one task: crop, search, answer."""
    d = root / ident
    _write(d, "orig.png", png(10))
    _write(d, "tool_images/transformed_image_1.png", png(77))
    tool_list = [
        {
            "index": 0,
            "tool_name": "crop",
            "raw_tool_name": "crop",
            "arguments": {"image_index": 0, "bbox_2d": [100, 100, 500, 500], "zoom_scale": 2.0},
            "output": {
                "ok": "true",
                "op": "crop",
                "source_image_index": 0,
                "new_image_index": 1,
                "output_path": "/abs/runs/atomic/m/0000/tool_images/transformed_image_1.png",
                "size": [24, 16],
            },
            "timestamp": "2026-01-01T00:00:01",
            "turn": 1,
        },
        {
            "index": 1,
            "tool_name": "google_search",
            "raw_tool_name": "google_search",
            "arguments": {"query": "sign 1962 airline"},
            "output": {"tool": "google_search", "query": "sign 1962 airline", "context": "Founded in 1962."},
            "timestamp": "2026-01-01T00:00:02",
            "turn": 2,
        },
    ]
    _write(d, "tool_use_list.json", json.dumps(tool_list, indent=2).encode())
    meta = {
        "task_id": "L1_Test_Domain_Item_0000",
        "task_file": f"json/{ident}.json",
        "mode": "atomic",
        "driver": "openai",
        "model": "m",
        "temperature": 0.0,
        "usage": {"api_calls": 3, "prompt_tokens": 900, "completion_tokens": 120, "total_tokens": 1020},
        "effective_tool_calls": 2,
        "total_images": 1,
        "paths": {"run_dir": "x"},
        "warnings": [],
    }
    _write(d, "run_meta.json", json.dumps(meta, indent=2).encode())
    _write(d, "model_answer.txt", b"The answer is <answer>100</answer>\n")
    conv = {
        "task_id": meta["task_id"],
        "tools": ["crop", "google_search"],
        "images": ["orig.png"],
        "messages": [{"role": "user", "content": "Read the number"}],
        "final_answer": "100",
    }
    _write(d, "conversation.json", json.dumps(conv).encode())
    _write(d, "raw_model_output_turn_1.txt", b"calling crop")
    return d


# ------------------------------------------------------------------ ISG


def isg_line(i: int) -> dict[str, Any]:
    ident = f"{i:04d}"
    return {
        "id": ident,
        "Category": ["Prediction", "HowTo", "Object_VQA"][i % 3],
        "Query": [
            {"type": "text", "content": f"Show what happens next in scene {i}."},
            {"type": "image", "content": f"images/{ident}_q1.png"},
        ],
        "Golden": [
            {"type": "text", "content": f"The scene {i} continues."},
            {"type": "image", "content": f"images/{ident}_g1.png"},
            {"type": "image", "content": f"images/{ident}_g2.png"},
        ],
        "predict": {
            "structure": {
                "Query": ["<query_text1>", "<query_img1>"],
                "Answer": ["<gen_text1>", "<gen_img1>", "<gen_img2>"],
            },
            "block_tuple": {"relation": [["<gen_text1>", "<query_img1>", "describes"]]},
            "block_qa": {
                "questions": [
                    {
                        "subject": "<gen_text1>",
                        "object": "<query_img1>",
                        "relation": "describes",
                        "Question": "Does it describe?",
                    }
                ]
            },
            "image_tuple": [["entity", "hands", "<gen_img1>"]],
            "image_qa": {"questions": [{"image": "<gen_img1>", "Question": "Hands?", "id": 0, "Preliminary": []}]},
        },
    }


def write_isg(root: Path, n: int = 3) -> list[dict[str, Any]]:
    lines = [isg_line(i) for i in range(n)]
    root.mkdir(parents=True, exist_ok=True)
    (root / "ISG-Bench.jsonl").write_text(
        "".join(json.dumps(l, ensure_ascii=False) + "\n" for l in lines), encoding="utf-8"
    )
    for i in range(n):
        ident = f"{i:04d}"
        for j, name in enumerate(("q1", "g1", "g2")):
            _write(root, f"images/{ident}_{name}.png", png(100 + i * 3 + j))
    return lines


# ------------------------------------------------------------------ VTC


VTC_HEADER = ["index", "id", "category", "image", "question", "answer", "A", "B", "C", "D"]


def vtc_rows() -> list[dict[str, str]]:
    return [
        {
            "index": "1",
            "id": "ocr_1",
            "category": "ocr",
            "image": "images/ocr/ocr_1.jpg",
            "question": "The sign is mirrored. What does it say?",
            "answer": "光陽機車",
            "A": "",
            "B": "",
            "C": "",
            "D": "",
            "model_tools_gt": '["Crop", "Flip", "Resize", "Sharpen"]',
        },
        {
            "index": "2",
            "id": "counting_1",
            "category": "counting",
            "image": "images/counting/counting_1.jpg",
            "question": "How many people face us?",
            "answer": "B",
            "A": "6",
            "B": "5",
            "C": "3",
            "D": "4",
            "model_tools_gt": "[\u201cConvert Color\u201d, \u201cBinarize\u201d, \u201cDraw Contours\u201d]",
        },
        {
            "index": "3",
            "id": "math_1",
            "category": "math",
            "image": "images/math/math_1.jpg",
            "question": '"Quoted" question: which colour is rarest?',
            "answer": "Green",
            "A": "Green",
            "B": "All have the same quantity",
            "C": "Blue",
            "D": "Red",
            "model_tools_gt": '["Zoom in", "Color Filter", "Measure Area"]',
        },
        {
            "index": "4",
            "id": "perceptual_Restoration_1",
            "category": "perceptual",
            "image": "images/perceptual_restoration/perceptual_Restoration_1.jpg",
            "question": "Read the blurred number plate and give every character in order please",
            "answer": "AB 12 CD 3456 X",
            "A": "",
            "B": "",
            "C": "",
            "D": "",
            "model_tools_gt": '["Denoise", "Sharpen"]',
        },
    ]


def _tsv(rows: list[dict[str, str]], header: list[str]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, delimiter="\t", lineterminator="\n")
    w.writerow(header)
    for r in rows:
        w.writerow([r.get(c, "") for c in header])
    return buf.getvalue()


def write_vtc(root: Path) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """The two TSVs, deliberately not row-aligned: different orders, and one id in each file only."""
    rows = vtc_rows()
    gt = rows[:]
    main = [{k: v for k, v in r.items() if k != "model_tools_gt"} for r in reversed(rows[:3])]
    main.append(
        {
            "index": "9",
            "id": "spatial_1",
            "category": "spatial",
            "image": "images/spatial/spatial_1.jpg",
            "question": "Which is left?",
            "answer": "A",
            "A": "cup",
            "B": "dog",
            "C": "",
            "D": "",
        }
    )
    root.mkdir(parents=True, exist_ok=True)
    (root / "VTC-Bench.tsv").write_text(_tsv(main, VTC_HEADER), encoding="utf-8")
    (root / "VTC-Bench_GTToolChain.tsv").write_text(_tsv(gt, VTC_HEADER + ["model_tools_gt"]), encoding="utf-8")
    for n, r in enumerate(rows + [main[-1]]):
        _write(root, r["image"], jpg(200 + n))
    return main, gt


def read_tsv_cells(path: Path) -> list[list[str]]:
    with path.open(encoding="utf-8", newline="") as fh:
        return [row for row in csv.reader(fh, delimiter="\t")]


# ------------------------------------------------------------------ ATP


def atp_line(i: int) -> dict[str, Any]:
    ident = f"trace-{i}"
    gt = (
        "Start by checking the parts list.\n"
        '<tool>{"tool_name": "Reference", "description": "the exploded view", "params": {"img_index": 1}}</tool>\n'
        "Then tighten the bolts as shown.\n"
        '<tool>{"tool_name": "Edit", "description": "circle the bolts", "params": {"img_index": 0, '
        '"prompt": "circle the two bolts"}}</tool>\n'
        '<tool>{"tool_name": "Search", "description": "the product", "params": {"query": "model X '
        + str(i)
        + '"}}</tool>'
    )
    line: dict[str, Any] = {
        "trace_id": ident,
        "query": f"How do I assemble shelf {i}?",
        "image_query": f"images/{ident}_q.png" if i % 2 == 0 else None,
        "doc": [f"Manual part {i}a: parts.", f"Manual part {i}b: bolts."],
        "images": [f"images/{ident}_d0.png", f"images/{ident}_d1.png"],
        "gt": gt,
        "category": "Manual",
        "intent": "Operation Guide",
    }
    if i == 1:
        line["images"] = [[f"images/{ident}_d0.png"], [f"images/{ident}_d1.png"]]
        line["doc"] = [f"Manual part {i}a: parts.", f"Manual part {i}b: bolts."]
    return line


def write_atp(root: Path, n: int = 3) -> list[dict[str, Any]]:
    lines = [atp_line(i) for i in range(n)]
    root.mkdir(parents=True, exist_ok=True)
    (root / "data.jsonl").write_text("".join(json.dumps(l, ensure_ascii=False) + "\n" for l in lines), "utf-8")
    for i, line in enumerate(lines):
        paths = [line["image_query"]] if line["image_query"] else []
        for item in line["images"]:
            paths.extend(item if isinstance(item, list) else [item])
        for j, p in enumerate(paths):
            _write(root, p, png(300 + i * 5 + j))
    return lines
