"""Export of tasks authored in the TUI (issue 16 item 4): an image attached from the annotator's disk
keeps its absolute path as provenance; every format must still export it, under its own file name."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from PIL import Image

from annotation import tasks as authoring
from annotation.formats.api import export_dataset
from annotation.formats.base import export_relpath
from store import session_scope
from tests.support.must import must

FORMATS = ["gta", "agentic-mme", "atp", "isg", "vtc"]


def _png() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (30, 20), "green").save(out, "PNG")
    return out.getvalue()


@pytest.mark.parametrize("fmt", FORMATS)
def test_an_image_attached_by_absolute_path_exports(engine, blobs, tmp_path: Path, fmt: str) -> None:
    data = _png()
    with session_scope(engine, "tester") as s:
        authoring.ensure_benchmark(s, "authored", fmt)
        task = authoring.create_task(
            s, "authored", "What colour is it?", answer_spec={"kind": "exact", "value": "green"}
        )
        authoring.attach_asset(s, blobs, must(task.id), data, original_path=str(tmp_path / "photos" / "leaf.png"))
        authoring.add_step(s, must(task.id), final_answer="green")
    out = tmp_path / "export"
    export_dataset(engine, blobs, fmt, "authored", out)
    written = [p for p in out.rglob("*") if p.is_file() and p.read_bytes() == data]
    assert len(written) == 1, sorted(str(p) for p in out.rglob("*"))
    assert written[0].is_relative_to(out)


def test_export_relpath_keeps_only_names_inside_the_folder() -> None:
    assert export_relpath("image/a.png") == "image/a.png"
    assert export_relpath("image\\a.png") == "image/a.png"
    for outside in ("/home/me/a.png", "../a.png", "C:/Users/me/a.png", "C:\\a.png", "", None, "a/../../b.png"):
        assert export_relpath(outside) is None, outside
