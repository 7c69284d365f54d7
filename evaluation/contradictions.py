"""Judgements that contradict what happened: the thing a reviewer should look at first.

A judge that calls an answer correct while the run's own scoring marks it wrong (or the reverse), a
checkpoint that passed on a step whose tool call failed, a final-answer checkpoint that disagrees
with the answer's score: each is either a judge mistake or a scoring mistake, and both matter.
Evidence is checked both ways: an extractor that read another option than the one the model's answer
literally names (answer "A", extractor "B") contradicts the answer itself, and the score it decided
is then no measure of anyone else's judgement (``literal_contradictions``).

Pure functions over plain values: the screens gather the claims (verdicts and checkpoint results,
with what they are about) and the item's outcome; this module decides and words the contradiction.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

POSITIVE = frozenset({"yes", "y", "pass", "passed", "correct", "right", "true", "ok", "accept", "accepted", "good"})
NEGATIVE = frozenset(
    {"no", "n", "fail", "failed", "incorrect", "wrong", "false", "reject", "rejected", "bad", "notcorrect"}
)
ANSWER_PARTS = frozenset({"", "answer", "finalanswer"})
"""Verdict parts that judge the final answer (other parts judge a checkpoint, a block, an image...)."""


def _slug(value: object) -> str:
    return re.sub(r"[^0-9a-z]+", "", str(value).lower())


def polarity(label: object) -> bool | None:
    """True for a label that says correct/pass, False for wrong/fail, None for anything else (a score on
    a 1–10 scale, a free answer, a failure mode): only clear labels can contradict."""
    if label is None or isinstance(label, bool):
        return label if isinstance(label, bool) else None
    word = _slug(label)
    if word in POSITIVE:
        return True
    if word in NEGATIVE:
        return False
    return None


def about_answer(part: str) -> bool:
    """A verdict with this target part judges the final answer."""
    return _slug(part) in ANSWER_PARTS


@dataclass(frozen=True)
class Claim:
    """One judgement of the trajectory: who says what, about the answer or about one step."""

    ref: str  # the caller's handle (where to show it), passed back on the contradiction
    who: str  # "judge-a", "checkpoint cp1"
    says: bool | None  # positive (correct/pass) or negative; None: no clear claim
    about: Literal["answer", "step"]
    step_failed: bool = False  # for a step claim: the step's tool call failed or errored


@dataclass(frozen=True)
class Contradiction:
    ref: str
    who: str
    text: str  # "contradicts answer: scored wrong (0.00)"

    def line(self) -> str:
        return f"{self.who}: {self.text}"


def _score(score: float | None) -> str:
    return f" ({score:.2f})" if score is not None else ""


def contradictions(claims: list[Claim], right: bool | None, score: float | None = None) -> list[Contradiction]:
    """The claims that contradict the answer's own outcome (``right``: None when not scored, then no
    answer claim can contradict) or the step they judge; in the claims' order."""
    out = []
    for c in claims:
        if c.says is None:
            continue
        if c.about == "answer" and right is not None and c.says != right:
            text = f"contradicts answer: scored {'right' if right else 'wrong'}{_score(score)}"
            out.append(Contradiction(c.ref, c.who, text))
        elif c.about == "step" and c.says and c.step_failed:
            out.append(Contradiction(c.ref, c.who, "contradicts step: its tool call failed"))
    return out


def rating_contradictions(
    values: Mapping[str, Any], right: bool | None, score: float | None = None
) -> list[Contradiction]:
    """The raters (``human:ann``, ``judge:judge-a``) whose value on an answer-judging target is a clear
    yes/no label that contradicts the answer's own outcome, in the raters' order. Values on a 1–10
    scale, free text or dimension dicts make no clear claim and never contradict."""
    claims = [Claim(rater, rater, polarity(value), "answer") for rater, value in values.items()]
    return contradictions(claims, right, score)


EXTRACTORS = frozenset({"vtc-mcq-extract"})
"""Judge templates whose verdict is a reading of the model's answer (the option letters it chose)."""

_LEAD_IN = re.compile(r"^\s*(?:(?:the\s+)?(?:final\s+|correct\s+)?(?:answer|option|choice)\s*(?:is|:)?\s*)?", re.I)
_ONE_LETTER = re.compile(r"^[(\[]?([A-Za-z])[)\]]?[.:)]?$")
_LETTERS = re.compile(r"^[A-Z](?:\s*(?:,|and|&)?\s*[A-Z])*$")


def literal_choice(answer: str | None) -> frozenset[str] | None:
    """The option letters an answer names when it is nothing but a choice ("A", "(b)", "C.", "Answer: D",
    "The answer is B", "A, C"); None for anything else (a sentence, a number, an empty answer), where
    no reading of it can be called wrong by this check."""
    text = _LEAD_IN.sub("", (answer or "").strip(), count=1).strip()
    if len(text) > 40:
        return None
    one = _ONE_LETTER.match(text)
    if one:
        return frozenset({one.group(1).upper()})
    if _LETTERS.match(text):
        return frozenset(re.findall(r"[A-Z]", text))
    return None


@dataclass(frozen=True)
class Extraction:
    """An extractor's verdict: which letters it read in the model's answer (``Z`` or none: no option)."""

    ref: str
    who: str
    letters: frozenset[str]


def read_letters(label: object, parsed: object = None) -> frozenset[str]:
    """The letters an extraction verdict read, from its parsed ``letters`` or else its label ("BD")."""
    found = parsed.get("letters") if isinstance(parsed, Mapping) else None
    if not isinstance(found, list):
        found = list(str(label or ""))
    return frozenset(str(c).upper() for c in found if str(c).strip()) - {"Z"}


_ANSWER_TRY = re.compile(r"(?:answer)?(?:#try\d+)?")


def reads_the_answer(part: str) -> bool:
    """An extraction verdict on this part read the final answer (``answer``, ``answer#try2`` …)."""
    return _ANSWER_TRY.fullmatch(part or "") is not None


def literal_contradictions(extractions: list[Extraction], answer: str | None) -> list[Contradiction]:
    """The extraction the score used (the last, in verdict order: a retry follows an unreadable reply),
    when it read other letters than the model's answer literally names."""
    said = literal_choice(answer)
    if said is None:
        return []
    extractions = extractions[-1:]
    return [
        Contradiction(
            e.ref,
            e.who,
            f"contradicts the model's answer: it says {_letters(said)}, the extractor read {_letters(e.letters)}",
        )
        for e in extractions
        if e.letters != said
    ]


def _letters(letters: frozenset[str]) -> str:
    return ", ".join(sorted(letters)) or "no option"
