"""Dataset and run folders are untrusted: links out of the folder, FIFOs, devices, decompression bombs,
oversize files and JSON with repeated keys are refused with a FormatError naming file, record and field,
and nothing is written (issue 14, item 4)."""

from __future__ import annotations

import json
import os
import struct
import threading
import zlib
from pathlib import Path
from typing import Callable

import pytest
from sqlmodel import Session, select

from annotation.formats import FormatError
from annotation.formats.api import import_dataset, import_run
from store.models import Trajectory
from tests.formats.fixtures import png, write_atp, write_gta, write_isg, write_mme, write_mme_run, write_vtc

WRITERS: dict[str, Callable[[Path], object]] = {
    "gta": write_gta,
    "agentic-mme": write_mme,
    "isg": write_isg,
    "vtc": write_vtc,
    "atp": write_atp,
}
IMPORT_TIMEOUT = 60  # seconds; only reached when an import hangs (the FIFO case before the fix)


def first_image(root: Path) -> Path:
    """The dataset's first image file (every fixture has at least one)."""
    return sorted(p for p in root.rglob("*") if p.suffix in (".png", ".jpg"))[0]


def bomb_png(side: int = 20000) -> bytes:
    """A 1-bit PNG of ``side``² pixels (400 million by default) that compresses to about 50 KB."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    row = b"\0" * (1 + (side + 7) // 8)
    comp = zlib.compressobj(9)
    idat = b"".join(comp.compress(row) for _ in range(side)) + comp.flush()
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", side, side, 1, 0, 0, 0, 0))
        + chunk(b"IDAT", idat)
        + chunk(b"IEND", b"")
    )


def call_with_timeout(fn: Callable[[], object]) -> object:
    """Run ``fn`` in a thread; fail (instead of hanging the suite) if it does not finish in time."""
    done = threading.Event()
    box: dict[str, object] = {}

    def run() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # handed to the test thread
            box["error"] = exc
        finally:
            done.set()

    threading.Thread(target=run, daemon=True).start()
    assert done.wait(IMPORT_TIMEOUT), "the import hung"
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box.get("value")


def refused(engine, blobs, fmt: str, path: Path, counts) -> FormatError:
    before = counts()
    with pytest.raises(FormatError) as info:
        call_with_timeout(lambda: import_dataset(engine, blobs, fmt, path))
    assert counts() == before  # all or nothing
    return info.value


# ------------------------------------------------------------------ hostile image files, every format


def link_to(target: str) -> Callable[[Path, Path], None]:
    def make(image: Path, tmp: Path) -> None:
        image.unlink()
        image.symlink_to(target)

    return make


def link_outside(image: Path, tmp: Path) -> None:
    outside = tmp / "elsewhere" / "secret.png"
    outside.parent.mkdir()
    outside.write_bytes(png(5))
    image.unlink()
    image.symlink_to(outside)


def fifo(image: Path, tmp: Path) -> None:
    image.unlink()
    os.mkfifo(image)


def bomb(image: Path, tmp: Path) -> None:
    image.write_bytes(bomb_png())


def not_an_image(image: Path, tmp: Path) -> None:
    image.write_bytes(b"#!/bin/sh\necho this is no picture\n")


HOSTILE = {
    "link to /etc/passwd": (link_to("/etc/passwd"), "outside the dataset folder"),
    "link to a file outside the root": (link_outside, "outside the dataset folder"),
    "link to /proc/self/environ": (link_to("/proc/self/environ"), "outside the dataset folder"),
    "link to /dev/zero": (link_to("/dev/zero"), "outside the dataset folder"),
    "FIFO": (fifo, "FIFO"),
    "decompression bomb": (bomb, "pixel limit"),
    "not an image": (not_an_image, "not a readable image"),
}


@pytest.mark.parametrize("fmt", sorted(WRITERS))
@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_image_is_refused_naming_file_record_and_field(
    engine, blobs, tmp_path: Path, counts, fmt: str, case: str
) -> None:
    root = tmp_path / "src"
    WRITERS[fmt](root)
    image = first_image(root)
    make, reason = HOSTILE[case]
    make(image, tmp_path)
    err = refused(engine, blobs, fmt, root, counts)
    assert reason in err.message
    assert image.relative_to(root).as_posix() in str(err)
    assert err.record is not None and err.field is not None


@pytest.mark.parametrize("fmt", sorted(WRITERS))
def test_oversize_image_is_refused(engine, blobs, tmp_path: Path, counts, monkeypatch, fmt: str) -> None:
    root = tmp_path / "src"
    WRITERS[fmt](root)
    image = first_image(root)
    image.write_bytes(image.read_bytes() + b"\0" * (1024 * 1024 + 1))
    monkeypatch.setenv("CHAINMARK_MAX_IMAGE_MB", "1")
    err = refused(engine, blobs, fmt, root, counts)
    assert "over the 1.0 MB limit" in err.message and err.field is not None


@pytest.mark.parametrize("fmt", sorted(WRITERS))
def test_link_inside_the_root_is_followed(engine, blobs, tmp_path: Path, fmt: str) -> None:
    """The documented policy: a link is fine while it stays inside the dataset folder."""
    root = tmp_path / "src"
    WRITERS[fmt](root)
    image = first_image(root)
    moved = root / "store" / ("kept" + image.suffix)
    moved.parent.mkdir()
    image.rename(moved)
    image.symlink_to(os.path.relpath(moved, image.parent))
    assert import_dataset(engine, blobs, fmt, root).created > 0


def test_root_reached_through_a_link_is_fine(engine, blobs, tmp_path: Path) -> None:
    write_gta(tmp_path / "real")
    (tmp_path / "alias").symlink_to(tmp_path / "real")
    assert import_dataset(engine, blobs, "gta", tmp_path / "alias").created == 4


@pytest.mark.parametrize("case", ["link to /etc/passwd", "FIFO", "link to /dev/zero"])
def test_the_dataset_file_itself_must_be_a_regular_file_inside(
    engine, blobs, tmp_path: Path, counts, case: str
) -> None:
    root = tmp_path / "src"
    write_isg(root)
    data = root / "ISG-Bench.jsonl"
    HOSTILE[case][0](data, tmp_path)
    err = refused(engine, blobs, "isg", root, counts)
    assert err.file.endswith("ISG-Bench.jsonl")


def test_record_cap_counts_all_files_of_a_record(engine, blobs, tmp_path: Path, counts, monkeypatch) -> None:
    root = tmp_path / "src"
    write_atp(root, n=1)
    line = json.loads((root / "data.jsonl").read_text())
    big = png(1, size=(700, 700))
    noise = os.urandom(len(big))  # make each image ~0.6 MB, still decodable: append bytes after IEND
    for rel in line["images"]:
        (root / rel).write_bytes(big + noise * (600_000 // len(noise) + 1))
    monkeypatch.setenv("CHAINMARK_MAX_RECORD_MB", "1")
    err = refused(engine, blobs, "atp", root, counts)
    assert "record limit" in err.message and err.record == "line 1 (trace_id trace-0)"


def test_bad_limit_setting_is_one_clear_error(engine, blobs, tmp_path: Path, monkeypatch) -> None:
    write_gta(tmp_path / "src")
    monkeypatch.setenv("CHAINMARK_MAX_IMAGE_MB", "lots")
    with pytest.raises(
        FormatError, match="CHAINMARK_MAX_IMAGE_MB .setting max_image_mb.: input should be a valid integer"
    ):
        import_dataset(engine, blobs, "gta", tmp_path / "src")


# ------------------------------------------------------------------ run imports


def mme_run(engine, blobs, tmp_path: Path) -> Path:
    write_mme(tmp_path / "src", n=1)
    import_dataset(engine, blobs, "agentic-mme", tmp_path / "src")
    return write_mme_run(tmp_path / "runs")


@pytest.mark.parametrize(
    "case",
    [
        "link to /proc/self/environ",
        "link to /etc/passwd",
        "link to /dev/zero",
        "FIFO",
        "link to a file outside the root",
    ],
)
def test_agentic_mme_run_folder_with_a_hostile_entry_stores_nothing(
    engine, blobs, tmp_path: Path, counts, monkeypatch, case: str
) -> None:
    monkeypatch.setenv("CHAINMARK_CANARY", "sk-canary-7f3a")
    run_dir = mme_run(engine, blobs, tmp_path)
    target = run_dir / "leak.txt"
    target.write_text("placeholder")
    HOSTILE[case][0](target, tmp_path)
    before = counts()
    with pytest.raises(FormatError) as info:
        call_with_timeout(lambda: import_run(engine, blobs, "agentic-mme", tmp_path / "runs", "agentic-mme"))
    assert counts() == before
    err = info.value
    assert err.field == "file leak.txt" and err.record == "0000"
    assert "sk-canary-7f3a" not in str(err)


def test_agentic_mme_run_folder_link_to_a_folder_outside_is_refused(engine, blobs, tmp_path: Path, counts) -> None:
    run_dir = mme_run(engine, blobs, tmp_path)
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("secret")
    (run_dir / "more").symlink_to(tmp_path / "outside")
    before = counts()
    with pytest.raises(FormatError, match="outside the dataset folder"):
        import_run(engine, blobs, "agentic-mme", tmp_path / "runs", "agentic-mme")
    assert counts() == before


def test_agentic_mme_run_tool_image_bomb_is_refused(engine, blobs, tmp_path: Path) -> None:
    run_dir = mme_run(engine, blobs, tmp_path)
    (run_dir / "tool_images" / "transformed_image_1.png").write_bytes(bomb_png())
    with pytest.raises(FormatError, match="pixel limit") as info:
        import_run(engine, blobs, "agentic-mme", tmp_path / "runs", "agentic-mme")
    assert info.value.field == "file tool_images/transformed_image_1.png"


def test_isg_output_image_link_is_refused(engine, blobs, tmp_path: Path, counts) -> None:
    lines = write_isg(tmp_path / "src")
    import_dataset(engine, blobs, "isg", tmp_path / "src")
    pred = tmp_path / "pred"
    (pred / "gen").mkdir(parents=True)
    (pred / "gen" / "0.png").symlink_to("/etc/passwd")
    out = dict(lines[0], output=[{"type": "image", "content": "gen/0.png"}])
    (pred / "out.jsonl").write_text(json.dumps(out) + "\n")
    before = counts()
    with pytest.raises(FormatError) as info:
        import_run(engine, blobs, "isg", pred / "out.jsonl", "isg")
    assert counts() == before
    assert (info.value.record, info.value.field) == ("line 1", "output[0].content")


@pytest.mark.parametrize(
    "fmt,write_data,file",
    [
        ("gta", write_gta, "gta_bench.json"),
        ("atp", write_atp, "outputs.jsonl"),
        ("vtc", write_vtc, "results_1.jsonl"),
    ],
)
@pytest.mark.parametrize("case", ["FIFO", "link to /proc/self/environ"])
def test_predictions_file_must_be_a_regular_file_inside(
    engine, blobs, tmp_path: Path, counts, fmt: str, write_data, file: str, case: str
) -> None:
    write_data(tmp_path / "src")
    import_dataset(engine, blobs, fmt, tmp_path / "src")
    pred = tmp_path / "pred"
    pred.mkdir()
    (pred / file).write_text("{}")
    HOSTILE[case][0](pred / file, tmp_path)
    before = counts()
    with pytest.raises(FormatError) as info:
        call_with_timeout(lambda: import_run(engine, blobs, fmt, pred, fmt))
    assert counts() == before and info.value.file.endswith(file)


def test_vtc_response_list_link_is_refused(engine, blobs, tmp_path: Path) -> None:
    write_vtc(tmp_path / "src")
    import_dataset(engine, blobs, "vtc", tmp_path / "src")
    res = tmp_path / "res"
    res.mkdir()
    line = {"item_id": "counting_1", "agent_answer": "B", "full_response": "<answer>B</answer>", "status": "success"}
    (res / "results_1.jsonl").write_text(json.dumps(line) + "\n")
    (res / "response_list_counting_1.json").symlink_to("/proc/self/environ")
    with pytest.raises(FormatError, match="outside the dataset folder") as info:
        import_run(engine, blobs, "vtc", res, "vtc")
    assert info.value.file.endswith("response_list_counting_1.json")


# ------------------------------------------------------------------ duplicate JSON keys


def test_gta_duplicate_sample_index_is_an_error_naming_it(engine, blobs, tmp_path: Path, counts) -> None:
    root = tmp_path / "src"
    data = write_gta(root)
    body = ",\n".join(f'"{k}": {json.dumps(v)}' for k, v in data.items())
    (root / "dataset.json").write_text("{" + body + f',\n"1": {json.dumps(data["0"])}' + "}")
    err = refused(engine, blobs, "gta", root, counts)
    assert err.file.endswith("dataset.json") and err.field == "'1'" and "duplicate key" in err.message


def test_gta_predictions_duplicate_key_is_a_listed_note(engine, blobs, tmp_path: Path) -> None:
    """OpenCompass reads predictions with json.load, which keeps the last of a repeated key: chainmark does
    the same and says so (a dataset file's repeated key stays an error, above)."""
    write_gta(tmp_path / "src")
    import_dataset(engine, blobs, "gta", tmp_path / "src")
    (tmp_path / "gta_bench.json").write_text('{"0": {"prediction": [1], "prediction": []}}')
    summary = import_run(engine, blobs, "gta", tmp_path / "gta_bench.json", "gta")
    assert any("'prediction'" in n and "last" in n for n in summary.notes)


@pytest.mark.parametrize("fmt,file", [("isg", "ISG-Bench.jsonl"), ("atp", "data.jsonl")])
def test_jsonl_duplicate_key_names_file_line_and_key(
    engine, blobs, tmp_path: Path, counts, fmt: str, file: str
) -> None:
    root = tmp_path / "src"
    WRITERS[fmt](root)
    lines = (root / file).read_text().splitlines()
    lines[1] = lines[1][:-1] + ', "zz_note": "x", "zz_other": "y", "zz_note": "z"}'
    (root / file).write_text("\n".join(lines) + "\n")
    err = refused(engine, blobs, fmt, root, counts)
    assert (err.record, err.field) == ("line 2", "'zz_note'")


def test_agentic_mme_task_duplicate_key_is_an_error(engine, blobs, tmp_path: Path, counts) -> None:
    root = tmp_path / "src"
    write_mme(root, n=2)
    text = (root / "json" / "0001.json").read_text()
    (root / "json" / "0001.json").write_text(text.replace('"task_id"', '"task_id": "dup",\n  "task_id"', 1))
    err = refused(engine, blobs, "agentic-mme", root, counts)
    assert err.file.endswith("0001.json") and err.field == "'task_id'"


def test_agentic_mme_run_file_duplicate_key_is_a_listed_warning(engine, blobs, tmp_path: Path) -> None:
    """The runner's files are stored verbatim and its readers keep the last value: a warning, not an error."""
    run_dir = mme_run(engine, blobs, tmp_path)
    meta = (run_dir / "run_meta.json").read_text()
    dup = meta.replace('"mode": "atomic"', '"mode": "general", "mode": "atomic"', 1)
    (run_dir / "run_meta.json").write_text(dup)
    summary = import_run(engine, blobs, "agentic-mme", tmp_path / "runs", "agentic-mme")
    assert len(summary.warnings) == 1
    assert "run_meta.json" in summary.warnings[0] and "'mode'" in summary.warnings[0]
    assert summary.mode == "atomic"  # the last value, as the reference reads it
    with Session(engine) as s:
        traj = s.exec(select(Trajectory).where(Trajectory.run_id == summary.run_id)).one()
        assert traj.native["files"]["run_meta.json"] == dup  # kept verbatim


def test_vtc_results_line_duplicate_key_is_an_error(engine, blobs, tmp_path: Path) -> None:
    write_vtc(tmp_path / "src")
    import_dataset(engine, blobs, "vtc", tmp_path / "src")
    res = tmp_path / "res"
    res.mkdir()
    (res / "results_1.jsonl").write_text('{"item_id": "counting_1", "agent_answer": "B", "agent_answer": "C"}\n')
    with pytest.raises(FormatError) as info:
        import_run(engine, blobs, "vtc", res, "vtc")
    assert (info.value.record, info.value.field) == ("line 1", "'agent_answer'")
