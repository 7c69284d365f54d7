"""A VTC-Bench differential set: a task table, images and a predictions file, full of the reference's quirks.

Writes ``VTC-Bench_GTToolChain.tsv`` (+ ``images/<category>/<id>.jpg``) and ``results_gen.jsonl`` the way
VTC-Bench's evaluator lays them out, so the same files can be scored by chainmark (``import vtc`` then
``import-run vtc``) and by the reference scorer. Every row is made to exercise a rule: letter answers
with every prefix form, answers given as option text, lone-letter answers without options, predictions
that start with a letter a–g, open answers of every shape, cells the xlsx trip changes (a leading
``=``, links, NA words, control characters, > 32,767 characters, JSON numbers, empty answers).

    python -m bench.conformance.gen_vtc OUT_DIR [--tasks 400] [--seed 7] [--import-quirks]

``--import-quirks`` adds what the reference tolerates in a predictions file: a repeated prediction
(the last one counts) and a prediction for an id not in the table (ignored).
"""

from __future__ import annotations

import argparse
import io
import json
import random
from pathlib import Path
from typing import Any

from PIL import Image

CATEGORIES = ["attention", "chart", "color", "counting", "math", "measure", "ocr", "perceptual", "spatial"]
WORDS = [
    "triangle",
    "circle",
    "red",
    "green",
    "blue",
    "banana",
    "apple",
    "dog",
    "cat",
    "seven",
    "east",
    "west",
    "north",
    "fig",
    "date",
    "egg",
    "gate",
    "ace",
    "bed",
    "光陽機車",
    "雞大爺",
    "Straße",
    "naïve",
]
COLUMNS = ["index", "id", "category", "image", "question", "answer", "A", "B", "C", "D", "model_tools_gt"]
TOOLS = ["Crop", "Rotate", "Binarize", "Convert Color", "Draw Contours", "Measure Area", "Flip", "Blur"]
LONG = 33000


def tiny_jpeg(seed: int) -> bytes:
    im = Image.new("RGB", (4, 4), (seed % 251, (seed * 7) % 251, (seed * 13) % 251))
    buf = io.BytesIO()
    im.save(buf, "JPEG", quality=50)
    return buf.getvalue()


def letter_prediction(rng: random.Random, letter: str, options: dict[str, str]) -> Any:
    text = options.get(letter, "")
    other = rng.choice([k for k in options if k != letter] or [letter])
    return rng.choice(
        [
            letter,
            letter.lower(),
            f"{letter}.",
            f"{letter}. {text}",
            f"{letter} {text}",
            f"{letter}-{text}",
            f"{letter}:",
            f"{letter})",
            f"({letter})",
            f"The answer is {letter}",
            text,
            text.upper(),
            other,
            f" {letter} ",
            f"{other}. {text}",
            "",
            None,
            "Z",
            f"{letter}{other}",
            f"{letter}, {other}",
            f"=({letter})",
            "NA",
            f"{letter}\x01",
            "A" * LONG,
        ]
    )


def open_prediction(rng: random.Random, answer: str) -> Any:
    return rng.choice(
        [
            answer,
            answer.upper(),
            f"It is {answer}.",
            f"  {answer}  ",
            answer.replace(" ", "   "),
            "unknown",
            f"{answer} {answer}",
            "",
            None,
            f"={answer}",
            f"http://example.org/{answer}",
            f"mailto:{answer}",
            "None",
            "nan",
            "n/a",
            answer + "\x0b",
            "x" * LONG + answer,
            42,
            3.0,
            2.5,
            True,
            "26,000",
            "0.50",
            f"${answer}$",
            "\\frac{1}{2}",
            "1/2",
            "180°",
            answer[:1],
            "b",
            "E",
        ]
    )


def make_row(rng: random.Random, n: int) -> tuple[dict[str, str], Any]:
    category = CATEGORIES[n % len(CATEGORIES)]
    ident = f"{category}_{n}"
    row = {
        "index": str(n + 1),
        "id": ident,
        "category": category,
        "image": f"images/{category}/{ident}.jpg",
        "question": rng.choice(
            [
                "Which shape is shown?",
                "What colour is the car?",
                "How many dogs?",
                "Read the sign.",
                "=SUM(A1)",
                "Pick one: “quoted”",
            ]
        ),
        "answer": "",
        "A": "",
        "B": "",
        "C": "",
        "D": "",
        "model_tools_gt": json.dumps(rng.sample(TOOLS, rng.randint(1, 4))),
    }
    kind = rng.choice(["letter", "letter", "letter", "text", "lone", "open", "open", "open"])
    if kind in ("letter", "text"):
        opts = rng.sample(WORDS, 4)
        if rng.random() < 0.15:
            opts[rng.randrange(4)] = rng.choice(["12", "3.5", "None", " ", "=1", "7"])
        options = dict(zip("ABCD", opts))
        row.update(options)
        letter = rng.choice("ABCD")
        row["answer"] = letter if kind == "letter" else options[letter]
        pred = (
            letter_prediction(rng, letter, options)
            if rng.random() < 0.7
            else rng.choice([options[letter], options[letter].title(), f"I think {options[letter]}", "banana", "egg"])
        )
    elif kind == "lone":
        letter = rng.choice("ABCD")
        row["answer"] = letter
        pred = rng.choice([letter, letter.lower(), f"{letter}.", f"option {letter}", "Yes", "", "banana"])
    else:
        answer = rng.choice(
            [
                "光陽機車",
                "42",
                "3.50",
                "007",
                "hello world",
                "Paris",
                "NA",
                "None",
                "=5",
                "0.5",
                "26000",
                "one two three four five six",
                "2",
                "y=2x-6.5",
                "a",
                "e",
                "x" * 10,
            ]
        )
        row["answer"] = answer
        pred = open_prediction(rng, answer)
    return row, pred


def generate(out: Path, tasks: int = 400, seed: int = 7, import_quirks: bool = False) -> dict[str, Any]:
    rng = random.Random(seed)
    out.mkdir(parents=True, exist_ok=True)
    rows, preds = [], []
    for n in range(tasks):
        row, pred = make_row(rng, n)
        rows.append(row)
        preds.append(pred)
        image = out / row["image"]
        image.parent.mkdir(parents=True, exist_ok=True)
        image.write_bytes(tiny_jpeg(n))
    lines = ["\t".join(COLUMNS)] + [
        "\t".join(r[c].replace("\t", " ").replace("\n", " ") for c in COLUMNS) for r in rows
    ]
    (out / "VTC-Bench_GTToolChain.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    results = []
    for n, (row, pred) in enumerate(zip(rows, preds)):
        if n % 17 == 5:
            continue  # no prediction: the reference scores the row as "nan"
        results.append(
            {
                "status": "success",
                "row_index": n,
                "item_index": row["index"],
                "item_id": row["id"],
                "category": row["category"],
                "image_path": row["image"],
                "question": row["question"],
                "ground_truth": row["answer"],
                "agent_answer": pred,
                "full_response": None,
                "options": {k: row[k] for k in "ABCD"},
                "conversation": [],
                "timestamp": None,
            }
        )
    if import_quirks:
        first = results[0]
        results.insert(1, {**first, "agent_answer": "a superseded answer"})
        results[0], results[1] = results[1], results[0]  # the superseded one first; the last one counts
        results.append({**first, "item_id": "not_in_the_table_1", "agent_answer": "x"})
    with (out / "results_gen.jsonl").open("w", encoding="utf-8") as fh:
        for r in results:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    return {"tasks": tasks, "predictions": len(results), "path": str(out)}


def sets(out: Path, n: int = 300) -> list[dict[str, Any]]:
    """What ``bench/conformance/run.py`` imports: the task table (+ images) and the predictions file."""
    generate(out, n)
    return [{"label": "gttoolchain", "format": "vtc", "dataset": out, "run": out / "results_gen.jsonl"}]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--tasks", type=int, default=400)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--import-quirks", action="store_true")
    args = ap.parse_args()
    print(json.dumps(generate(args.out, args.tasks, args.seed, args.import_quirks)))


if __name__ == "__main__":
    main()
