"""Answer matchers against the reference rules, quirks included."""

from __future__ import annotations

import pytest

from evaluation.scoring.matchers import (
    amme_check_answer,
    amme_expected_from_description,
    amme_final_answer_correct,
    gta_iscorrect,
    match_answer_spec,
    vtc_is_mcq,
    vtc_rule_mcq,
    vtc_rule_open,
)


def test_gta_minus_three_never_matches_in_faithful_mode() -> None:
    ref = {"whitelist": [["-3"]], "blacklist": None}
    assert gta_iscorrect("-3", ref, "faithful") is False
    assert gta_iscorrect("the answer is -3", ref, "faithful") is False
    assert gta_iscorrect("-3", ref, "fixed") is True
    assert gta_iscorrect("answer: -3", ref, "fixed") is True
    # the quirk's other face: the alias is found only when glued to a word character
    assert gta_iscorrect("x-3", ref, "faithful") is True
    assert gta_iscorrect("x-3", ref, "fixed") is False


def test_gta_all_groups_and_blacklist() -> None:
    ref = {"whitelist": [["58", "fifty-eight"], ["days"]], "blacklist": [["59"]]}
    assert gta_iscorrect("58 Days", ref) is True  # case-insensitive
    assert gta_iscorrect("58", ref) is False  # every group must match
    assert gta_iscorrect("58 or 59 days", ref) is False  # blacklist
    assert gta_iscorrect("580 days", ref) is False  # word boundary


def test_vtc_mcq_letter_rules() -> None:
    opts = {"A": "6", "B": "5", "C": "3", "D": "4"}
    assert vtc_is_mcq("B", opts) and vtc_is_mcq("c", {}) and not vtc_is_mcq("光陽機車", {"A": ""})
    assert vtc_rule_mcq("B", "B", opts) == 1.0
    assert vtc_rule_mcq("b. 5 people", "B", opts) == 1.0
    assert vtc_rule_mcq("B-", "B", opts) == 1.0
    assert vtc_rule_mcq("B:", "B", opts) == 0.0  # ':' is not one of . space -
    assert vtc_rule_mcq("The answer is B", "B", opts) == 0.0  # goes to the judge


def test_vtc_mcq_answer_given_as_option_text() -> None:
    opts = {"A": "Green", "B": "Blue"}
    assert vtc_rule_mcq("A", "Green", opts) == 1.0
    assert vtc_rule_mcq("it is green", "Green", opts) == 1.0
    assert vtc_rule_mcq("Blue", "Green", opts) == 0.0


def test_vtc_open_rules_and_dead_math_branch() -> None:
    assert vtc_rule_open("光陽機車", "光陽機車") == 1.0
    assert vtc_rule_open("Hello   World", "hello world") == 1.0
    assert vtc_rule_open("it reads hello world", "hello world") == 1.0
    assert vtc_rule_open("one two three four five six", "two three four five six") == 0.0  # 5 words: no containment
    assert vtc_rule_open(".5", "0.5", "faithful") == 0.0
    assert vtc_rule_open(".5", "0.5", "fixed") == 1.0


def test_amme_answer_check_types() -> None:
    assert amme_check_answer({"match_type": "exact", "target": "1962"}, " 1962 ")
    assert not amme_check_answer({"match_type": "contains", "target": "Paris"}, "paris")  # case-sensitive
    assert amme_check_answer({"match_type": "string", "target": "Paris France"}, "paris")
    assert amme_check_answer({"match_type": "numeric", "target": "3.5", "tolerance": 0.2}, "3.6")
    assert amme_check_answer(
        {"match_type": "keyword_inclusion", "keywords": ["red", "car", "x"], "min_matches": 2}, "A RED car"
    )
    assert amme_check_answer(
        {"match_type": "extraction_match", "targets": [{"value": 12, "tolerance": 0.5}, {"value": 3}]}, "12.4 and 3"
    )
    assert not amme_check_answer({"match_type": "extraction_match", "targets": []}, "1")
    assert amme_check_answer({"match_type": "whatever", "target": "Bo"}, "bob")


@pytest.mark.parametrize(
    "answer,ok",
    [
        ("The answer is 1.", True),
        ("In 2017 there were 2 cars", False),
        ("Founded 2017. Final answer: 1", True),
        ("1", True),
    ],
)
def test_amme_final_answer_two_char_numeric_rule(answer: str, ok: bool) -> None:
    assert amme_final_answer_correct({"value": "1", "match_type": "contains"}, answer) is ok


def test_amme_final_answer_other_types() -> None:
    assert amme_final_answer_correct({"value": "1962"}, "It was 1962")
    assert amme_final_answer_correct({"value": "Boeing"}, "a boeing 747")
    assert not amme_final_answer_correct({"value": "3.5", "match_type": "numeric", "tolerance": 0.1}, "about 3.5")
    assert amme_expected_from_description("Search the operator (expected to find: 1962).") == "1962"
    assert amme_expected_from_description("Expected answer: Paris, France.") == "Paris, France"


def test_answer_spec_dispatch() -> None:
    assert match_answer_spec({"kind": "numeric", "value": "2", "tolerance": 0.5}, "2.4")
    assert match_answer_spec({"kind": "contains", "value": "x", "variants": ["cat"]}, "a Cat")
    assert match_answer_spec({"kind": "references", "references": ["a"]}, "a") is None
