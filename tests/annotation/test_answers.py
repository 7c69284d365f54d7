from __future__ import annotations

import pytest

from annotation.answers import AnswerSpecError, describe, validate_answer_spec

VALID = [
    {"kind": "whitelist", "groups": [["58", "fifty-eight"]], "blacklist": None},
    {"kind": "whitelist", "groups": [["Fri"], ["16"]], "blacklist": [["Tue"]]},
    {"kind": "references", "references": ["a red bicycle"]},
    {"kind": "exact", "value": "4471"},
    {"kind": "contains", "value": "27", "variants": ["twenty-seven"]},
    {"kind": "numeric", "value": "3.5", "tolerance": 0.1},
    {"kind": "mcq", "options": {"A": "1", "B": "2"}, "letter": "B"},
    {"kind": "interleaved", "golden": [{"type": "text", "content": "x"}, {"type": "image", "content": "g.png"}]},
    {"kind": "none"},
]


@pytest.mark.parametrize("spec", VALID)
def test_valid_specs_pass(spec):
    assert validate_answer_spec(spec) is spec


@pytest.mark.parametrize(
    ("spec", "field", "hint"),
    [
        ("58", "kind", "object"),
        ({"kind": "guess"}, "kind", "one of"),
        ({"kind": "whitelist", "groups": []}, "groups", "non-empty"),
        ({"kind": "whitelist", "groups": [["58", ""]]}, "groups[0][1]", "non-empty string"),
        ({"kind": "whitelist", "groups": [["a"]], "blacklist": [[]]}, "blacklist[0]", "non-empty"),
        ({"kind": "numeric", "value": "many"}, "value", "must be a number"),
        ({"kind": "numeric", "value": 3, "tolerance": -1}, "tolerance", "non-negative"),
        ({"kind": "exact"}, "value", "required"),
        ({"kind": "mcq", "options": {"A": "1", "B": "2"}, "letter": "C"}, "letter", "option letters"),
        ({"kind": "mcq", "options": {"AB": "1", "B": "2"}, "letter": "B"}, "options.AB", "single letters"),
        ({"kind": "interleaved", "golden": [{"type": "video", "content": "x"}]}, "golden[0].type", "text"),
        ({"kind": "references", "references": "one"}, "references", "list"),
    ],
)
def test_invalid_specs_name_the_field(spec, field, hint):
    with pytest.raises(AnswerSpecError) as err:
        validate_answer_spec(spec)
    assert err.value.field == field
    assert hint in str(err.value)


def test_describe_is_short_and_human():
    assert describe(VALID[1]) == "Fri & 16"
    assert describe(VALID[5]) == "3.5 ± 0.1"
    assert describe(VALID[6]) == "B. 2"
    assert describe({"kind": "none"}) == "—"
