"""Three-way merge of a field two people edited: what only one side changed merges, what both
changed differently is marked and must be settled before it can be saved."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from annotation.merge import UnresolvedMerge, merge_text, merge_values, resolve

BASE = "Count the cups.\nUse the receipt.\nAnswer with a number.\n"


def test_changes_to_different_lines_both_survive():
    mine = "Count the red cups.\nUse the receipt.\nAnswer with a number.\n"
    theirs = "Count the cups.\nUse the receipt.\nAnswer with an integer.\n"
    merged = merge_text(BASE, mine, theirs)
    assert merged.conflicts == 0
    assert merged.text == "Count the red cups.\nUse the receipt.\nAnswer with an integer.\n"


def test_the_same_line_changed_differently_is_marked_with_both_sides():
    mine = "Count the red cups.\nUse the receipt.\nAnswer with a number.\n"
    theirs = "Count the blue cups.\nUse the receipt.\nAnswer with a number.\n"
    merged = merge_text(BASE, mine, theirs, who="bob")
    assert merged.conflicts == 1
    assert merged.text == (
        "<<<<<<< yours\nCount the red cups.\n=======\nCount the blue cups.\n>>>>>>> bob's\n"
        "Use the receipt.\nAnswer with a number.\n"
    )
    with pytest.raises(UnresolvedMerge, match="lines 1, 3, 5"):
        resolve(merged.text, "")


def test_one_line_fields_and_no_final_newline():
    assert merge_text("easy", "hard", "easy").text == "hard"
    merged = merge_text("easy", "hard", "medium", who="bob")
    assert merged.conflicts == 1 and merged.text.endswith(">>>>>>> bob's")
    assert resolve("hard", "easy") == "hard"


def test_answer_specs_merge_key_by_key_and_come_back_as_objects():
    base = {"kind": "number", "value": 3, "tolerance": 0}
    mine = {"kind": "number", "value": 4, "tolerance": 0}
    theirs = {"kind": "number", "value": 3, "tolerance": 0.5}
    merged = merge_values(base, mine, theirs)
    assert merged.conflicts == 0
    assert resolve(merged.text, base) == {"kind": "number", "value": 4, "tolerance": 0.5}
    with pytest.raises(UnresolvedMerge, match="JSON object"):
        resolve("[1]", base)
    with pytest.raises(UnresolvedMerge, match="not valid JSON"):
        resolve("{", base)


lines = st.lists(st.sampled_from(["a\n", "b\n", "c\n", "d\n", "e\n"]), max_size=8).map("".join)


@settings(max_examples=300, deadline=None)
@given(base=lines, mine=lines, theirs=lines)
def test_merge_laws(base, mine, theirs):
    assert merge_text(base, mine, base).text == mine  # only I changed it
    assert merge_text(base, base, theirs).text == theirs  # only they did
    assert merge_text(base, mine, mine).text == mine  # both the same way
    merged = merge_text(base, mine, theirs)
    if merged.conflicts == 0:  # whatever merges cleanly keeps every line either side added
        added = (set(mine.splitlines()) - set(base.splitlines())) | (set(theirs.splitlines()) - set(base.splitlines()))
        assert added <= set(merged.text.splitlines())


def test_an_answer_key_both_changed_is_marked_and_resolves_to_the_side_kept():
    base = {"kind": "number", "value": 3}
    merged = merge_values(
        base, {"kind": "number", "value": 4}, {"kind": "number", "value": 5, "unit": "cups"}, who="bob"
    )
    assert merged.conflicts == 1
    kept_mine = "\n".join(
        line
        for line in merged.text.splitlines()
        if not line.startswith(("<<<", "===", ">>>")) and '"value": 5' not in line
    )
    assert resolve(kept_mine, base) == {"kind": "number", "value": 4, "unit": "cups"}
