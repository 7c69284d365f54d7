"""The registry's contract: exact seed names per set, schema checks, errors instead of exceptions."""

from __future__ import annotations

import pytest

from evaluation.tools import (
    ToolContext,
    UnknownToolSet,
    execute,
    get_tool_set,
    parse_plan_calls,
    tool_set_names,
    validate_plan_call,
)
from evaluation.tools.sets.vtc import VOCABULARY_NAMES, tools_for, vocabulary_of
from tests.support.must import must

GTA_NAMES = [
    "OCR",
    "ImageDescription",
    "RegionAttributeDescription",
    "TextToBbox",
    "CountGivenObject",
    "MathOCR",
    "Calculator",
    "Solver",
    "Plot",
    "GoogleSearch",
    "DrawBox",
    "AddText",
    "TextToImage",
    "ImageStylization",
]
MME_OPS = [
    "crop",
    "rotate",
    "flip",
    "resize",
    "enhance",
    "grayscale",
    "autocontrast",
    "blur",
    "sharpen",
    "denoise",
    "edge_detect",
    "invert",
    "equalize",
    "threshold",
]


def test_sets_and_exact_names() -> None:
    assert tool_set_names() == ["gta", "agentic-mme", "vtc", "atp"]
    assert get_tool_set("gta").names() == GTA_NAMES
    assert get_tool_set("agentic-mme").names() == MME_OPS + ["google_search", "google_lens_search", "fetch_webpage"]
    vtc = get_tool_set("vtc")
    assert len(vtc.names()) == 35 and all(n.startswith("opencv_") for n in vtc.names())
    assert "opencv_sharpen" not in vtc.names() and "opencv_sharpen" in vtc.names(include_extras=True)
    assert get_tool_set("atp").names() == ["Reference", "Diffusion", "Search", "Code", "Edit"]


def test_unknown_set_names_the_known_ones() -> None:
    with pytest.raises(UnknownToolSet, match="known tool sets: gta, agentic-mme, vtc, atp"):
        get_tool_set("nope")
    with pytest.raises(KeyError):
        get_tool_set("nope")


def test_openai_format_and_gta_toolmeta() -> None:
    ts = get_tool_set("gta")
    fn = ts.openai_tools(["TextToBbox"])[0]
    assert fn["type"] == "function" and fn["function"]["name"] == "TextToBbox"
    params = fn["function"]["parameters"]
    assert params["required"] == ["image", "text"] and params["properties"]["top1"] == {
        "type": "boolean",
        "description": params["properties"]["top1"]["description"],
        "default": True,
    }
    meta = ts.toolmeta()
    assert list(meta) == GTA_NAMES
    assert meta["GoogleSearch"]["inputs"][1] == {
        "type": "int",
        "name": "k",
        "description": "Select the first k results",
        "optional": True,
        "default": 10,
        "filetype": None,
    }
    assert meta["Plot"]["outputs"] == [
        {"type": "image", "name": None, "description": None, "optional": False, "default": None, "filetype": None}
    ]
    assert meta["CountGivenObject"]["outputs"][0]["type"] == "int"
    assert {t.name: t.category for t in ts.all_tools()}["CountGivenObject"] == "logic"


def test_vtc_vocabulary_mapping_covers_all_32_names() -> None:
    assert len(VOCABULARY_NAMES) == 32
    assert all(tools_for(v) for v in VOCABULARY_NAMES)
    assert tools_for("Sharpen") == ["opencv_sharpen"]
    assert tools_for("Convert Color") == ["opencv_colorspace_gray", "opencv_colorspace_hsv", "opencv_colorspace_lab"]
    assert tools_for("Zoom in") == ["opencv_crop", "opencv_zoom_in"]
    assert vocabulary_of("opencv_convertscaleabs") == "Adjust Brightness"
    assert vocabulary_of("opencv_features") is None


def test_bad_calls_come_back_as_errors() -> None:
    ctx = ToolContext()
    r = execute("gta", "NoSuchTool", {}, ctx)
    assert not r.ok and "has no tool 'NoSuchTool'" in r.error
    r = execute("gta", "Calculator", "{not json", ctx)
    assert not r.ok and must(r.error).startswith("arguments are not valid JSON")
    r = execute("gta", "Calculator", {}, ctx)
    assert not r.ok and r.error == "Calculator is missing required field expression"
    r = execute("agentic-mme", "flip", {"image_index": 0, "direction": "diagonal"}, ctx)
    assert not r.ok and "direction must be one of" in r.error
    r = execute("agentic-mme", "flip", {"image_index": 0}, ctx)
    assert not r.ok and "invalid image index 0; valid indices: none" in r.error
    r = execute("atp", "Search", {"query": "eiffel tower"}, ctx)
    assert not r.ok and "plan-only" in r.error


def test_plan_calls_parse_and_validate() -> None:
    text = (
        'Intro. <tool>{"tool_name": "Reference", "description": "the diagram", "params": {"img_index": 2}}</tool>'
        " middle <tool>```json\n{'tool_name': 'Search', 'description': 'photo', 'params': {'query': 'x'},}\n```"
        '</tool> end <tool>{"tool_name": "Diffusion", "description": "d", "params": {"prompt": "a cat"}}'
    )
    calls = parse_plan_calls(text)
    assert [c["tool_name"] for c in calls] == ["Reference", "Search", "Diffusion"]
    assert [c["repaired"] for c in calls] == [False, True, True]
    assert calls[2]["closed"] is False
    assert text[calls[0]["start"] : calls[0]["end"]].startswith("<tool>") and text[: calls[0]["end"]].endswith(
        "</tool>"
    )
    assert all(validate_plan_call(c["payload"]) == (True, None) for c in calls)
    assert parse_plan_calls("<tool>not json</tool>")[0]["parse_error"].startswith("not a JSON object")

    ok, err = validate_plan_call({"tool_name": "search", "description": "d", "params": {"query": "q"}})
    assert not ok and "did you mean 'Search'" in err
    assert validate_plan_call({"tool_name": "Edit", "description": "d", "params": {"img_index": 1}}) == (
        False,
        "Edit.params is missing required field prompt",
    )
    assert validate_plan_call({"tool_name": "Reference", "params": {"img_index": 1}}) == (
        False,
        "payload is missing description",
    )
    assert validate_plan_call('{"tool_name": "Reference", "description": "d", "params": {"img_index": "a"}}')[1] == (
        "Reference.params.img_index must be integer, got str 'a'"
    )
