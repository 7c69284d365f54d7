"""``chainmark tools list`` and ``chainmark tools run`` end to end through click."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from PIL import Image

from tests.tools.conftest import png, quadrants
from tui.cli import cli


def invoke(*args: str, db: Path | None = None):  # type: ignore[no-untyped-def]
    base = ["--db", str(db)] if db is not None else []
    return CliRunner().invoke(cli, [*base, *args], catch_exceptions=False)


def test_list_counts_per_set() -> None:
    counts = {}
    for name in ("gta", "agentic-mme", "vtc", "atp"):
        r = invoke("tools", "list", "--set", name, "--json")
        assert r.exit_code == 0
        counts[name] = len(json.loads(r.output))
    assert counts == {"gta": 14, "agentic-mme": 17, "vtc": 35, "atp": 5}
    gta = [row["name"] for row in json.loads(invoke("tools", "list", "--set", "gta", "--json").output)]
    assert gta[:3] == ["OCR", "ImageDescription", "RegionAttributeDescription"] and "ImageStylization" in gta
    assert len(json.loads(invoke("tools", "list", "--set", "vtc", "--extras", "--json").output)) == 37
    text = invoke("tools", "list", "--set", "agentic-mme").output
    assert "crop" in text and "image_index*, bbox_2d*, zoom_scale, label" in text


def test_run_saves_images_and_records_assets(tmp_path: Path) -> None:
    image = tmp_path / "q.png"
    image.write_bytes(png(Image.fromarray(quadrants())))
    out = tmp_path / "out"
    r = invoke(
        "tools",
        "run",
        "crop",
        "--image",
        str(image),
        "--args",
        '{"bbox_2d": [0, 0, 500, 500]}',
        "--out",
        str(out),
        db=tmp_path / "c.db",
    )
    assert r.exit_code == 0, r.output
    assert r.output.splitlines() == [
        "Created image 1 (crop of image 0), size 100x50.",
        f"saved image: {out / 'transformed_image_1.png'} (asset 1)",
    ]
    with Image.open(out / "transformed_image_1.png") as im:
        assert im.size == (100, 50) and im.getpixel((5, 5)) == (255, 0, 0)


def test_run_json_and_errors(tmp_path: Path) -> None:
    r = invoke("tools", "run", "Calculator", "--args", '{"expression": "290 / 5"}', "--no-db", "--json")
    assert r.exit_code == 0 and json.loads(r.output)["text"] == "58"
    image = tmp_path / "q.png"
    image.write_bytes(png(quadrants()))
    r = invoke(
        "tools",
        "run",
        "opencv_flip",
        "--image",
        str(image),
        "--args",
        '{"param": {"direction": "up"}}',
        "--no-db",
        "--out",
        str(tmp_path / "o"),
    )
    assert r.exit_code == 1 and "param.direction must be one of horizontal, vertical" in r.output
    r = invoke("tools", "run", "Nope", "--no-db")
    assert r.exit_code == 2 and "no tool set has a tool 'Nope'" in r.output
    r = invoke("tools", "run", "Search", "--set", "atp", "--args", '{"query": "x"}', "--no-db")
    assert r.exit_code == 1 and "plan-only" in r.output
