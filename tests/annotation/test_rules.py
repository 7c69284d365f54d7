from __future__ import annotations

from typing import Any

from annotation.rules import check_task

TWO_STEPS: list[dict[str, Any]] = [{"tool_name": "OCR"}, {"tool_name": "Calculator"}, {"is_final": True}]
ANSWER = {"kind": "whitelist", "groups": [["58"]]}


def codes(*args, **kw):
    return [w.code for w in check_task(*args, **kw)]


def test_a_good_task_has_no_warnings():
    assert codes("How many days will this bottle last our family of five?", ANSWER, TWO_STEPS, image_count=1) == []


def test_query_that_names_a_tool():
    assert "query-names-tool" in codes("Please detect the orange in the photo.", ANSWER, TWO_STEPS, image_count=1)
    assert "query-names-tool" in codes("Use OCR to read the sign.", ANSWER, TWO_STEPS, image_count=1)


def test_fewer_than_two_steps():
    assert "too-few-steps" in codes("How long will it last?", ANSWER, [{"tool_name": "OCR"}], image_count=1)


def test_time_sensitive_search_and_its_fix():
    steps = [{"tool_name": "GoogleSearch"}, {"tool_name": "Calculator"}]
    q = "What is the current QS ranking of the university shown in the photo?"
    found = codes(q, ANSWER, steps, image_count=1)
    assert "time-sensitive-search" in found and "search-without-evidence" in found
    pinned = "What was the 2023 QS ranking of the university shown in the photo?"
    assert "time-sensitive-search" not in codes(pinned, ANSWER, steps, image_count=1, evidence_count=1)
    assert codes(pinned, ANSWER, steps, image_count=1, evidence_count=1) == []


def test_search_that_memory_could_answer():
    steps = [{"tool_name": "GoogleSearch"}, {"tool_name": "Calculator"}]
    assert "search-not-needed" in codes(
        "In which city is the university in the photo?", ANSWER, steps, image_count=1, evidence_count=1
    )


def test_missing_answer_unless_the_task_generates_an_image():
    assert "missing-answer" in codes("How far is it?", {"kind": "none"}, TWO_STEPS, image_count=1)
    gen = [{"tool_name": "OCR"}, {"tool_name": "TextToImage"}]
    assert "missing-answer" not in codes("Make a poster from this menu.", {"kind": "none"}, gen, image_count=1)


def test_gta_image_count_language_and_alias_boundaries():
    assert "no-image" in codes("How many?", ANSWER, TWO_STEPS)
    assert "too-many-images" in codes("How many?", ANSWER, TWO_STEPS, image_count=3)
    assert "non-english" in codes("这是什么?", ANSWER, TWO_STEPS, image_count=1)
    assert "alias-boundary" in codes(
        "What temperature?", {"kind": "whitelist", "groups": [["-3"]]}, TWO_STEPS, image_count=1
    )
    assert "no-image" not in codes("How many?", ANSWER, TWO_STEPS, style="atp")


def test_a_chain_tool_the_tool_list_does_not_offer():
    q = "How many days will this bottle last our family of five?"
    found = check_task(q, ANSWER, TWO_STEPS, image_count=1, tools_offered=["OCR"])
    assert [(w.code, "Calculator" in w.message) for w in found] == [("chain-tool-not-offered", True)]
    assert codes(q, ANSWER, TWO_STEPS, image_count=1, tools_offered=["OCR", "Calculator", "ImageDescription"]) == []
    assert codes(q, ANSWER, TWO_STEPS, image_count=1, tools_offered=[]) == []  # no list: the whole set
