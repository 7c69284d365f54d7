"""ISG prediction import as ``ISG-eval.py`` reads it (issue 15, item 9): output images under ``--root``,
and the reference CLI's default ``--end -1`` that leaves the last item out."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from annotation.formats.api import import_dataset, import_run
from annotation.formats.errors import FormatError
from tests.formats.fixtures import png, write_isg


def _predictions(tmp_path: Path, lines: list) -> Path:
    """Outputs name images relative to an ISG_eval-style root, not to the JSONL's folder."""
    root = tmp_path / "ISG_eval"
    preds = []
    for i, line in enumerate(lines):
        preds.append(
            {
                **line,
                "output": [
                    {"type": "text", "content": f"next {i}"},
                    {"type": "image", "content": f"gen/{i}_a.png"},
                    {"type": "image", "content": str(root / "abs" / f"{i}_b.png")},
                ],
            }
        )
        (root / "gen").mkdir(parents=True, exist_ok=True)
        (root / "gen" / f"{i}_a.png").write_bytes(png(700 + i))
        (root / "abs").mkdir(exist_ok=True)
        (root / "abs" / f"{i}_b.png").write_bytes(png(800 + i))  # exists as given: used as it is
    out = tmp_path / "results" / "model.jsonl"
    out.parent.mkdir(parents=True)
    out.write_text("".join(json.dumps(p) + "\n" for p in preds), encoding="utf-8")
    return out


def test_output_images_resolve_under_root_as_the_reference_does(engine, blobs, tmp_path: Path) -> None:
    lines = write_isg(tmp_path / "src")
    import_dataset(engine, blobs, "isg", tmp_path / "src")
    file = _predictions(tmp_path, lines)
    with pytest.raises(FormatError, match="not found"):
        import_run(engine, blobs, "isg", file, "isg")  # next to the JSONL: not there
    summary = import_run(engine, blobs, "isg", file, "isg", root=str(tmp_path / "ISG_eval"))
    assert summary.trajectories == 3 and summary.assets == 6


def test_root_reads_nothing_outside_it(engine, blobs, tmp_path: Path) -> None:
    """An output image named by an absolute path outside --root is not read (hostile predictions could name
    any file); the import refuses it, naming the field."""
    lines = write_isg(tmp_path / "src")
    import_dataset(engine, blobs, "isg", tmp_path / "src")
    file = _predictions(tmp_path, lines)
    outside = tmp_path / "elsewhere.png"
    outside.write_bytes(png(900))
    text = file.read_text(encoding="utf-8").replace(str(tmp_path / "ISG_eval" / "abs" / "0_b.png"), str(outside))
    file.write_text(text, encoding="utf-8")
    with pytest.raises(FormatError, match="outside") as info:
        import_run(engine, blobs, "isg", file, "isg", root=str(tmp_path / "ISG_eval"))
    assert info.value.field == "output[2].content"


def test_drop_last_leaves_out_the_last_line_like_end_minus_one(engine, blobs, tmp_path: Path, db_path) -> None:
    from tui.cli import cli

    lines = write_isg(tmp_path / "src")
    import_dataset(engine, blobs, "isg", tmp_path / "src")
    file = _predictions(tmp_path, lines)
    out = CliRunner().invoke(
        cli,
        ["import-run", "isg", str(file), "-b", "isg", "--root", str(tmp_path / "ISG_eval"), "--drop-last"],
        env={"CHAINMARK_DB": str(db_path)},
    )
    assert out.exit_code == 0, out.output
    assert "2 trajectories" in out.output and "--end -1" in out.output


def test_root_is_refused_for_formats_that_do_not_take_it(engine, blobs, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="takes no option root"):
        import_run(engine, blobs, "gta", tmp_path / "x.json", "gta", root=str(tmp_path))


def test_with_root_a_missing_output_image_is_kept_as_missing_with_a_note(engine, blobs, tmp_path: Path) -> None:
    """ISG-eval.py does not refuse such a line: the judge calls that show the image fail (the scorer
    reproduces that); without --root a missing file stays a clear error."""
    from sqlmodel import Session, select

    from store.models import Event

    lines = write_isg(tmp_path / "src")
    import_dataset(engine, blobs, "isg", tmp_path / "src")
    file = _predictions(tmp_path, lines)
    (tmp_path / "ISG_eval" / "gen" / "1_a.png").unlink()
    summary = import_run(engine, blobs, "isg", file, "isg", root=str(tmp_path / "ISG_eval"))
    assert summary.trajectories == 3 and summary.assets == 5
    assert any(
        "1 output image(s) found neither as given nor under --root" in n and "gen/1_a.png" in n for n in summary.notes
    )
    with Session(engine) as s:
        blocks = [e.payload["blocks"] for e in s.exec(select(Event).where(Event.kind == "answer")).all()]
    assert sum(1 for bl in blocks for b in bl if b.get("missing")) == 1


def test_export_of_an_imported_run_puts_output_images_beside_the_lines(engine, blobs, tmp_path: Path) -> None:
    """So ``ISG-eval.py --root <export>`` finds them; the lines themselves stay verbatim."""
    from annotation.formats.api import export_run

    lines = write_isg(tmp_path / "src")
    import_dataset(engine, blobs, "isg", tmp_path / "src")
    file = _predictions(tmp_path, lines)
    summary = import_run(engine, blobs, "isg", file, "isg", root=str(tmp_path / "ISG_eval"))
    export_run(engine, blobs, "isg", summary.run_id, tmp_path / "out")
    exported = [json.loads(x) for x in (tmp_path / "out" / "predictions.jsonl").read_text().splitlines()]
    assert exported == [json.loads(x) for x in file.read_text().splitlines()]
    assert (tmp_path / "out" / "gen" / "2_a.png").read_bytes() == (
        tmp_path / "ISG_eval" / "gen" / "2_a.png"
    ).read_bytes()
