"""chainmark's own folder format: every answer-spec kind, steps with produced images, checkpoints
linked to steps, orderings and documents survive export → import → export byte for byte."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from PIL import Image

from annotation.formats.api import export_dataset, import_dataset
from annotation.formats.errors import FormatError
from annotation.formats.registry import get_format
from store import make_engine
from store.migrate import upgrade
from store.blobs import FolderBlobStore

SPECS = [
    {"kind": "whitelist", "groups": [["4", "four"]]},
    {"kind": "references", "references": ["a red leaf"]},
    {"kind": "exact", "value": "Paris", "variants": ["paris"]},
    {"kind": "contains", "value": "blue"},
    {"kind": "numeric", "value": 3.5, "tolerance": 0.1},
    {"kind": "mcq", "options": {"A": "cat", "B": "dog"}, "letter": "B"},
    {"kind": "interleaved", "golden": [{"type": "text", "content": "step one"}]},
    {"kind": "none"},
]


def png(color: str) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (4, 4), color).save(out, "PNG")
    return out.getvalue()


def authored_folder(root: Path) -> Path:
    (root / "pics").mkdir(parents=True)
    (root / "pics" / "q.png").write_bytes(png("red"))
    (root / "pics" / "crop.png").write_bytes(png("blue"))
    lines = []
    for i, spec in enumerate(SPECS):
        lines.append(
            {
                "id": f"t{i}",
                "query": f"question {i}",
                "answer_spec": spec,
                "category": "perception" if i % 2 else "reasoning",
                "level": str(1 + i % 3),
                "tools_offered": ["OCR", "Calculator"],
                "steps": [
                    {
                        "thought": "read it",
                        "tool_name": "OCR",
                        "tool_args": {"image": "0"},
                        "result_text": "4",
                        "result": {"text": "4"},
                        "is_final": False,
                        "final_answer": None,
                        "meta": {},
                    },
                    {
                        "thought": None,
                        "tool_name": None,
                        "tool_args": None,
                        "result_text": None,
                        "result": None,
                        "is_final": True,
                        "final_answer": "4",
                        "meta": {},
                    },
                ],
                "checkpoints": [
                    {"key": "cp1", "axis": "S", "tools": ["OCR"], "step": 0, "weight": 2.0},
                    {"key": "cp2", "axis": "V", "description": "crop", "step": None},
                ],
                "orderings": [{"key": "o1", "sequence": ["cp1", "cp2"], "max_gap": 1}],
                "documents": [{"title": "doc", "text": "some text", "meta": {}}],
                "images": [
                    {"path": "pics/q.png", "role": "query_image"},
                    {"path": "pics/crop.png", "role": "artifact", "step": 0},
                ],
            }
        )
    card = {"name": "mine", "format": "chainmark", "tool_set": "gta", "guidelines": "# Be exact", "description": "d"}
    (root / "benchmark.json").write_text(json.dumps(card), encoding="utf-8")
    (root / "tasks.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return root


def fresh(tmp_path: Path, name: str):
    eng = make_engine(tmp_path / f"{name}.db")
    upgrade(eng)
    return eng, FolderBlobStore(tmp_path / f"{name}.blobs")


def folder_bytes(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


SKIP = {"id", "benchmark_id", "task_id", "created_at", "updated_at", "recorded_at", "source_record", "step_id"}


def task_rows(engine) -> list[dict]:
    """Every task and its steps/checkpoints as plain values (ids, stamps and import bookkeeping left out;
    a checkpoint's step as the step's ordinal)."""
    from sqlmodel import Session, col, select

    from store.models import Checkpoint, ReferenceStep, Task

    def plain(row) -> dict:
        d = {k: v for k, v in row.model_dump().items() if k not in SKIP}
        if isinstance(d.get("meta"), dict):
            d["meta"] = {k: v for k, v in d["meta"].items() if k != "import"}
        return d

    out = []
    with Session(engine) as s:
        for t in s.exec(select(Task).order_by(Task.source_id)).all():
            steps = s.exec(
                select(ReferenceStep).where(ReferenceStep.task_id == t.id).order_by(col(ReferenceStep.ordinal))
            ).all()
            ordinal = {st.id: st.ordinal for st in steps}
            cps = s.exec(select(Checkpoint).where(Checkpoint.task_id == t.id).order_by(col(Checkpoint.ordinal))).all()
            out.append(
                {
                    "task": plain(t),
                    "steps": [plain(st) for st in steps],
                    "checkpoints": [{**plain(c), "step": ordinal.get(c.step_id)} for c in cps],
                }
            )
    return out


def test_export_import_export_is_byte_identical(tmp_path: Path) -> None:
    src = authored_folder(tmp_path / "src")
    eng1, blobs1 = fresh(tmp_path, "one")
    import_dataset(eng1, blobs1, "chainmark", src, "mine")
    export_dataset(eng1, blobs1, "chainmark", "mine", tmp_path / "out1")
    eng2, blobs2 = fresh(tmp_path, "two")
    import_dataset(eng2, blobs2, "chainmark", tmp_path / "out1", "mine")
    export_dataset(eng2, blobs2, "chainmark", "mine", tmp_path / "out2")
    first, second = folder_bytes(tmp_path / "out1"), folder_bytes(tmp_path / "out2")
    assert first == second
    assert task_rows(eng1) == task_rows(eng2)
    assert json.loads(second["benchmark.json"]) == {
        "name": "mine",
        "format": "chainmark",
        "tool_set": "gta",
        "guidelines": "# Be exact",
        "description": "d",
    }
    assert task_rows(eng2)[0]["checkpoints"][0]["step"] == 0
    assert sorted(k for k in first if k.startswith("images/")) == sorted(
        f"images/{__import__('hashlib').sha256(png(c)).hexdigest()}.png" for c in ("red", "blue")
    )
    lines = [json.loads(x) for x in first["tasks.jsonl"].decode().splitlines()]
    assert [x["answer_spec"] for x in lines] == SPECS
    assert lines[0]["checkpoints"][0]["step"] == 0 and lines[0]["checkpoints"][1]["step"] is None
    assert [(im["role"], im["step"]) for im in lines[0]["images"]] == [("query_image", None), ("artifact", 0)]
    assert lines[0]["orderings"] == [{"key": "o1", "sequence": ["cp1", "cp2"], "max_gap": 1}]
    assert lines[1]["category"] == "perception" and lines[1]["level"] == "2"
    eng1.dispose()
    eng2.dispose()


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda t: t.update(color="red"), "color"),
        (lambda t: t["checkpoints"][0].update(step=7), "checkpoints[0].step"),
        (lambda t: t["images"][0].update(path="../outside.png"), "images[0].path"),
        (lambda t: t.update(answer_spec={"kind": "numeric", "value": "x"}), "answer_spec"),
        (lambda t: t["orderings"][0].update(sequence=["cp9"]), "orderings[0].sequence"),
    ],
)
def test_a_bad_line_is_refused_naming_line_and_field(tmp_path: Path, change, field: str) -> None:
    src = authored_folder(tmp_path / "src")
    lines = (src / "tasks.jsonl").read_text().splitlines()
    bad = json.loads(lines[1])
    change(bad)
    lines[1] = json.dumps(bad)
    (src / "tasks.jsonl").write_text("\n".join(lines) + "\n")
    with pytest.raises(FormatError) as err:
        get_format("chainmark").read(src)
    assert "line 2" in str(err.value) and field in str(err.value)


def test_every_exported_line_is_valid_against_the_published_schema(tmp_path: Path) -> None:
    import jsonschema  # type: ignore[import-untyped]

    from store.schemas import json_schema

    src = authored_folder(tmp_path / "src")
    eng, blobs = fresh(tmp_path, "one")
    import_dataset(eng, blobs, "chainmark", src, "mine")
    export_dataset(eng, blobs, "chainmark", "mine", tmp_path / "out")
    schema = json_schema("tasks")
    lines = (tmp_path / "out" / "tasks.jsonl").read_text().splitlines()
    assert len(lines) == len(SPECS)
    for line in lines:
        jsonschema.validate(json.loads(line), schema)
    with pytest.raises(jsonschema.ValidationError):  # the schema is closed, as the reader is
        jsonschema.validate({**json.loads(lines[0]), "color": "red"}, schema)
    eng.dispose()


def scored(engine, blobs) -> dict:
    """Score one run (same model replies for every task) on the benchmark ``mine`` with the native profile."""
    from sqlmodel import select

    from evaluation.scoring.runner import score_run
    from store import session_scope
    from store.models import Task
    from tests.scoring.builders import answer, call, res, stored_run, stored_trajectory

    with session_scope(engine, "tester") as s:
        run = stored_run(s, "mine", "chainmark")
        for task in s.exec(select(Task).order_by(Task.source_id)).all():
            events = [call("OCR", {"image": "0"}, "c1"), res("OCR", "c1", "4"), answer("4")]
            stored_trajectory(s, run, task.id or 0, events, final_answer="4")
        run_id = run.id or 0
    out = score_run(engine, run_id, embedder="hashing", write=False)
    assert out.profile == "chainmark"
    return {"metrics": out.model_dump()["metrics"], "by_category": out.model_dump()["by_category"]}


def test_a_run_scores_the_same_on_the_reimported_benchmark(tmp_path: Path) -> None:
    src = authored_folder(tmp_path / "src")
    eng1, blobs1 = fresh(tmp_path, "one")
    import_dataset(eng1, blobs1, "chainmark", src, "mine")
    export_dataset(eng1, blobs1, "chainmark", "mine", tmp_path / "out1")
    eng2, blobs2 = fresh(tmp_path, "two")
    import_dataset(eng2, blobs2, "chainmark", tmp_path / "out1", "mine")
    first, second = scored(eng1, blobs1), scored(eng2, blobs2)
    assert first == second
    assert first["metrics"]["ToolAcc"] is not None  # the reference chain was aligned
    assert set(first["by_category"]) == {"perception", "reasoning", "level 1", "level 2", "level 3"}
    eng1.dispose()
    eng2.dispose()
