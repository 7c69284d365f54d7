"""Broken input of every kind ends in a FormatError that names the file, and writes nothing."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from annotation.formats import FormatError
from annotation.formats.api import import_dataset, import_run
from tests.formats.conftest import row_counts
from tests.formats.fixtures import gta_step_predictions, write_atp, write_gta, write_isg, write_mme, write_vtc

FUZZ = settings(
    max_examples=int(os.environ.get("CHAINMARK_FUZZ_EXAMPLES", "30")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=6,
)


def _paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out.extend(_paths(v, prefix + (k,)))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out.extend(_paths(v, prefix + (i,)))
    return out


def _replace(value: Any, path: tuple, new: Any) -> Any:
    if not path:
        return new
    value = json.loads(json.dumps(value))
    target = value
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = new
    return value


def _same_kind(a: Any, b: Any) -> bool:
    return type(a) is type(b) or (
        isinstance(a, (int, float))
        and isinstance(b, (int, float))
        and not isinstance(a, bool)
        and not isinstance(b, bool)
    )


def _expect_clean(engine, blobs, action: Callable[[], Any], *, must_fail: bool) -> None:
    before = row_counts(engine)
    try:
        action()
    except FormatError as exc:
        assert str(exc) and exc.file
        assert row_counts(engine) == before
        return
    assert not must_fail, "broken input was accepted"


@pytest.fixture
def work():
    d = Path(tempfile.mkdtemp(prefix="cm-fuzz-"))
    yield d
    shutil.rmtree(d, ignore_errors=True)


@FUZZ
@given(cut=st.floats(0.0, 0.999))
def test_truncated_json_files(engine, blobs, work: Path, cut: float) -> None:
    for name, writer, rel in (("gta", write_gta, "dataset.json"), ("agentic-mme", write_mme, "json/0001.json")):
        root = work / f"{name}-{cut}"
        writer(root)
        text = (root / rel).read_text(encoding="utf-8").rstrip()
        (root / rel).write_text(text[: int(len(text) * cut)], encoding="utf-8")
        _expect_clean(engine, blobs, lambda: import_dataset(engine, blobs, name, root), must_fail=True)


@FUZZ
@given(data=st.data())
def test_wrong_types_in_gta_records(engine, blobs, work: Path, data) -> None:
    root = work / "gta"
    src = write_gta(root, n=3) if not root.exists() else json.loads((root / "dataset.json").read_text())
    original = json.loads(json.dumps(src))
    path = data.draw(st.sampled_from(_paths(original["1"])), label="path")
    old = original["1"]
    for key in path:
        old = old[key]
    new = data.draw(json_values.filter(lambda v: not _same_kind(v, old)), label="new value")
    mutated = dict(original)
    mutated["1"] = _replace(original["1"], path, new)
    (root / "dataset.json").write_text(json.dumps(mutated), encoding="utf-8")
    try:
        _expect_clean(
            engine, blobs, lambda: import_dataset(engine, blobs, "gta", root, benchmark="fuzz"), must_fail=False
        )
    finally:
        (root / "dataset.json").write_text(json.dumps(original), encoding="utf-8")


@FUZZ
@given(data=st.data())
def test_wrong_types_in_agentic_mme_tasks(engine, blobs, work: Path, data) -> None:
    root = work / "mme"
    if not root.exists():
        write_mme(root, n=2)
    original = json.loads((root / "json/0000.json").read_text())
    path = data.draw(st.sampled_from(_paths(original)[1:]), label="path")
    old = original
    for key in path:
        old = old[key]
    new = data.draw(json_values.filter(lambda v: not _same_kind(v, old)), label="new value")
    (root / "json/0000.json").write_text(json.dumps(_replace(original, path, new)))
    try:
        _expect_clean(
            engine, blobs, lambda: import_dataset(engine, blobs, "agentic-mme", root, benchmark="fuzz"), must_fail=False
        )
    finally:
        (root / "json/0000.json").write_text(json.dumps(original))


def test_missing_images(engine, blobs, work: Path) -> None:
    """Every image of every format's fixture, missing in turn (29 imports), makes its import fail and
    write nothing. Every case, not a sample: 30 drawn indices over five formats were 150 imports that
    repeated most of these cases and could miss some."""
    # (Agentic-MME's reference finds image_N_1..k by counting up, so a missing *last* image of a
    # multi-image task is indistinguishable from a shorter list; the fixture here has single images.)
    for name, writer in (
        ("gta", write_gta),
        ("agentic-mme", lambda r: write_mme(r, multi=None)),
        ("isg", write_isg),
        ("vtc", write_vtc),
        ("atp", write_atp),
    ):
        root = work / name
        writer(root)
        images = sorted(p for p in root.rglob("*") if p.suffix in (".png", ".jpg"))
        assert images, name
        for victim in images:
            data = victim.read_bytes()
            victim.unlink()
            try:
                _expect_clean(engine, blobs, lambda: import_dataset(engine, blobs, name, root), must_fail=True)
            finally:
                victim.write_bytes(data)


@FUZZ
@given(
    row=st.integers(1, 4),
    cells=st.lists(st.text(alphabet='ab\t"“”[]', max_size=6), min_size=1, max_size=14),
    target=st.sampled_from(["VTC-Bench.tsv", "VTC-Bench_GTToolChain.tsv"]),
)
def test_bad_tsv_rows(engine, blobs, work: Path, row: int, cells: list[str], target: str) -> None:
    root = work / "vtc"
    if not root.exists():
        write_vtc(root)
    path = root / target
    original = path.read_text(encoding="utf-8")
    lines = original.splitlines(keepends=True)
    lines.insert(row, "\t".join(cells) + "\n")
    path.write_text("".join(lines), encoding="utf-8")
    try:
        _expect_clean(
            engine, blobs, lambda: import_dataset(engine, blobs, "vtc", root, benchmark="fuzz"), must_fail=False
        )
    finally:
        path.write_text(original, encoding="utf-8")


@FUZZ
@given(line=st.integers(0, 2), junk=st.text(max_size=30))
def test_broken_jsonl_lines(engine, blobs, work: Path, line: int, junk: str) -> None:
    for name, writer, rel in (("isg", write_isg, "ISG-Bench.jsonl"), ("atp", write_atp, "data.jsonl")):
        root = work / name
        if not root.exists():
            writer(root)
        original = (root / rel).read_text(encoding="utf-8")
        lines = original.splitlines()
        lines[line] = lines[line][: len(lines[line]) // 2] + junk
        (root / rel).write_text("\n".join(lines) + "\n", encoding="utf-8")
        try:
            _expect_clean(
                engine,
                blobs,
                lambda: import_dataset(engine, blobs, name, root, benchmark=f"fuzz-{name}"),
                must_fail=False,
            )
        finally:
            (root / rel).write_text(original, encoding="utf-8")


@FUZZ
@given(data=st.data())
def test_broken_gta_predictions(engine, blobs, work: Path, data) -> None:
    root = work / "gta"
    if not root.exists():
        write_gta(root, n=2)
        import_dataset(engine, blobs, "gta", root)
    src = json.loads((root / "dataset.json").read_text())
    preds = gta_step_predictions(src)
    path = data.draw(st.sampled_from(_paths(preds["0"])[1:]), label="path")
    new = data.draw(json_values, label="new value")
    preds["0"] = _replace(preds["0"], path, new)
    if data.draw(st.booleans(), label="truncate"):
        text = json.dumps(preds)[:-3]
    else:
        text = json.dumps(preds)
    (work / "p.json").write_text(text)
    _expect_clean(engine, blobs, lambda: import_run(engine, blobs, "gta", work / "p.json", "gta"), must_fail=False)
