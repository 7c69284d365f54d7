"""VTC-Bench faithful scoring against behaviours measured on the reference scorer (issue 15, items 4, 5, 6, 11)."""

from __future__ import annotations

from evaluation.benchmarks import ScoreContext, get_profile
from evaluation.benchmarks.vtc_sheet import read_xlsx_column, round_trip
from evaluation.scoring.items import DictOracle, NoJudges
from evaluation.scoring.matchers import vtc_rule_mcq, vtc_rule_open
from tests.scoring.builders import answer, item, ja

GT = "VTC-Bench_GTToolChain.tsv"


def vtc_item(row: dict[str, str], prediction: object, traj_id: int = 1):
    full = {
        "index": "1",
        "id": "t1",
        "category": "color",
        "question": "Which one?",
        "A": "",
        "B": "",
        "C": "",
        "D": "",
        **row,
    }
    native = {"result": {"item_id": full["id"], "agent_answer": prediction}}
    text = prediction if isinstance(prediction, str) else str(prediction)
    return item(
        {
            "source_id": full["id"],
            "source_record": {GT: full},
            "category": full["category"],
            "answer_spec": {"kind": "exact", "value": full["answer"]},
        },
        [answer(text)],
        traj_id=traj_id,
        trajectory={"id": traj_id, "native": native},
    )


def score(items, mode="faithful", oracle=None):
    return get_profile("vtc").score(items, ScoreContext(mode=mode, oracle=oracle or NoJudges()))


# ------------------------------------------------------------------ item 4: MCQ rules


def test_second_scenario_stops_at_a_leading_option_letter() -> None:
    # "banana" starts with b: the reference reads it as option B (absent here) and returns 0.
    assert vtc_rule_mcq("banana", "banana", {"D": "banana"}) == 0.0
    assert vtc_rule_mcq("egg", "egg", {"A": "egg"}) == 0.0  # e is a letter a-g too
    assert vtc_rule_mcq("banana", "banana", {"B": "banana"}) == 1.0  # ...and B is that option
    assert vtc_rule_mcq("it is banana", "banana", {"D": "banana"}) == 1.0  # scenario 3
    assert vtc_rule_mcq("F", "F", {}) == 1.0  # letters up to g
    assert vtc_rule_mcq("h.", "h", {"H": "x"}) == 0.0


def test_answer_given_as_option_text_is_scored_as_text() -> None:
    row = {"answer": "triangle", "A": "circle", "B": "triangle", "C": "square", "D": "star"}
    res = score([vtc_item(row, "triangle"), vtc_item({**row, "id": "t2"}, "B", traj_id=2)])
    rules = [r["rule"] for r in res.per_item]
    assert rules == [1.0, 1.0]


def test_open_rule_contains_the_normalised_answer() -> None:
    assert vtc_rule_open("it says hello   world", "hello world") == 1.0


# ------------------------------------------------------------------ item 5: the judge step


def test_lone_letter_answer_without_options_goes_to_the_yes_no_judge() -> None:
    oracle = NoJudges()
    res = score([vtc_item({"answer": "B"}, "option B")], oracle=oracle)
    assert res.per_item[0]["mcq"] is True and res.per_item[0]["rule"] == 0.0
    assert [r.judge for r in oracle.pending] == ["vtc-open-judge"]
    assert oracle.pending[0].vars["answer"] == "B"


def test_mcq_judge_reply_acceptance_and_retry() -> None:
    row = {"answer": "C", "A": "1", "B": "2", "C": "3", "D": "4"}
    it = vtc_item(row, "I pick the third")
    # "A." is not all letters: rejected, the second try is asked at temperature 0.1.
    oracle = DictOracle({("vtc-mcq-extract", "answer"): ja("A", raw="A.")})
    res = score([it], oracle=oracle)
    assert res.per_item[0]["judge"] == "pending"
    assert oracle.pending[0].target_part == "answer#try2" and dict(oracle.pending[0].params) == {"temperature": 0.1}
    # A reply of upper-case letters is read; letters beyond D count (up to G and more): "C" hits, "G" misses.
    for reply, final in (("C", 1.0), ("G", 0.0), ("CA", 0.0)):
        oracle = DictOracle(
            {("vtc-mcq-extract", "answer"): ja("x", raw="A."), ("vtc-mcq-extract", "answer#try2"): ja("x", raw=reply)}
        )
        assert score([it], oracle=oracle).per_item[0]["final"] == final, reply


def test_yes_no_reply_acceptance() -> None:
    it = vtc_item({"answer": "Paris"}, "the capital")
    for replies, final in ((["Yes."] * 5, 0.0), (["Yes.", " yes "], 1.0), (["YES"], 1.0), (["no"], 0.0)):
        answers = {
            ("vtc-open-judge", "answer" if n == 0 else f"answer#try{n + 1}"): ja("x", raw=r)
            for n, r in enumerate(replies)
        }
        got = score([it], oracle=DictOracle(answers)).per_item[0]
        assert got["final"] == final, replies
    got = score(
        [it],
        oracle=DictOracle(
            {("vtc-open-judge", "answer" if n == 0 else f"answer#try{n + 1}"): ja("x", raw="Yes.") for n in range(5)}
        ),
    ).per_item[0]
    assert got["judge"]["tries"] == 5 and "failed" in got["judge"]


def test_mcq_judge_prompt_lists_options_as_the_reference_does() -> None:
    oracle = NoJudges()
    score([vtc_item({"answer": "C", "A": "1", "B": "2", "C": "3", "D": "4"}, " maybe third ")], oracle=oracle)
    assert oracle.pending[0].vars["options"] == "A. 1 B. 2 C. 3 D. 4 "
    assert oracle.pending[0].vars["prediction"] == " maybe third "  # not stripped


# ------------------------------------------------------------------ item 6: the spreadsheet round trip


def test_round_trip_cells() -> None:
    col = read_xlsx_column(
        [
            "=1+1",
            "{=A1}",
            "",
            None,
            "NA",
            "None",
            "x" * 40000,
            "a\x01b",
            "mailto:me@x.org",
            "internal:Sheet1!A1",
            "http://" + "a" * 2100,
            3.0,
            True,
            "keep",
        ]
    )
    assert col[:6] == [0, 0, None, None, None, None]
    assert len(col[6]) == 32767 and col[7] == "a_x0001_b" and col[8] == "me@x.org" and col[9] == "Sheet1!A1"
    assert col[10] is None and col[11] == 3 and col[12] is True and col[13] == "keep"
    # A column of numbers (with a gap) becomes float, as pandas reads it.
    assert round_trip({"answer": ["12", "", "3"]}, {"answer"})["answer"] == [12.0, None, 3.0]


def test_faithful_reproduces_the_round_trip_and_fixed_does_not() -> None:
    items = [
        vtc_item({"id": "f", "answer": "0"}, "=SUM(A1:A2)", 1),
        vtc_item({"id": "long", "answer": "END"}, "x" * 40000 + "END", 2),
        vtc_item({"id": "empty", "answer": "NA"}, "", 3),
        vtc_item({"id": "num", "answer": "3"}, 3.0, 4),
    ]
    faithful = [r["rule"] for r in score(items).per_item]
    fixed = [r["rule"] for r in score(items, "fixed").per_item]
    assert faithful == [1.0, 0.0, 1.0, 1.0]
    assert fixed == [0.0, 1.0, 0.0, 1.0]  # "3.0" vs "3": equal by the math check


# ------------------------------------------------------------------ item 11: fixed mode


def test_fixed_mode_does_the_math_check_and_names_its_corrections() -> None:
    assert vtc_rule_open("1/2", "0.5", "fixed") == 1.0
    assert vtc_rule_open("\\frac{1}{2}", "0.5", "fixed") == 1.0
    assert vtc_rule_open("1/2", "0.5", "faithful") == 0.0
    assert vtc_rule_open("0.6", "0.5", "fixed") == 0.0
    items = [vtc_item({"answer": "0.5"}, "1/2")]
    fixed = score(items, "fixed")
    assert fixed.per_item[0]["rule"] == 1.0
    assert any(c.startswith("vtc-math-verify") for c in fixed.corrections)
    assert score(items).corrections == []


def test_fixed_mode_reads_judge_letters_leniently_and_maps_option_text() -> None:
    row = {"answer": "triangle", "A": "circle", "B": "triangle", "C": "square", "D": "star"}
    it = vtc_item(row, "my pick is the three-sided one")
    fixed = score(
        [it], "fixed", DictOracle({("vtc-mcq-extract", "answer"): ja("B", parsed={"letters": ["B"]}, raw="B.")})
    )
    assert fixed.per_item[0]["final"] == 1.0
    assert fixed.corrections == sorted(["vtc-no-sheet-round-trip", "vtc-math-verify", "vtc-judge-letters"])
    # Faithful: "B." is not read; and even "B" would not equal the text answer's letters.
    faithful = score([it], oracle=DictOracle({("vtc-mcq-extract", "answer"): ja("B", raw="B")}))
    assert faithful.per_item[0]["final"] == 0.0


def test_reference_runner_says_what_is_missing(tmp_path) -> None:
    import pytest

    from evaluation.benchmarks.vtc import reference_conformance
    from evaluation.benchmarks.vtc_reference import ReferenceRunError

    with pytest.raises(ReferenceRunError, match="is not a VTC-Bench checkout"):
        reference_conformance(tmp_path, tmp_path / "nowhere", "python3")
    scorer = tmp_path / "ref" / "eval" / "eval" / "VLMEvalKit" / "vlmeval" / "dataset" / "image_vqa.py"
    scorer.parent.mkdir(parents=True)
    scorer.write_text("")
    (tmp_path / "export").mkdir()
    with pytest.raises(ReferenceRunError, match="needs one task table"):
        reference_conformance(tmp_path / "export", tmp_path / "ref", "python3")
