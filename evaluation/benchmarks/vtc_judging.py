"""VTC-Bench's judge step for a row the rules marked wrong: which judge, how often, which replies count.

As in the reference: a row with option columns goes to the MCQ letter extractor, any other row to
the yes/no evaluator (even when its answer is a lone letter and the rules treated it as MCQ). A
reply the reference cannot read is asked again, up to five tries, at temperature ``try × 0.1``
(MCQ) or ``try × 0.5`` (yes/no); each try is its own question (target part ``answer``,
``answer#try2`` …) so ``chainmark judge`` asks the next one only when the previous reply failed.
Faithful acceptance: the stripped reply must be all upper-case letters (MCQ; ``"A."`` fails) or
exactly yes/no in any case (``"Yes."`` fails). Fixed mode reads replies leniently.
"""

from __future__ import annotations

from typing import Any

from evaluation.benchmarks.base import ScoreContext
from evaluation.scoring.items import JudgeAnswer, JudgeRequest

MCQ_JUDGE, OPEN_JUDGE = "vtc-mcq-extract", "vtc-open-judge"
TRIES = 5
TEMPERATURE_STEP = {MCQ_JUDGE: 0.1, OPEN_JUDGE: 0.5}
API_FAILURE = "Failed to obtain answer via API."


def part_of(attempt: int) -> str:
    return "answer" if attempt == 0 else f"answer#try{attempt + 1}"


def question_vars(sheet: Any, mcq: bool, mode: str) -> dict[str, Any]:
    if mode == "faithful":
        options = "".join(f"{k}. {v} " for k, v in sheet.options.items())
    else:
        options = "\n".join(f"{k}. {v}" for k, v in sorted(sheet.options.items()))
    if mcq:
        return {"question": sheet.question, "options": options, "prediction": sheet.prediction}
    return {"question": sheet.question, "answer": sheet.answer, "prediction": sheet.prediction}


def faithful_reply(answer: str, mcq: bool, got: JudgeAnswer) -> tuple[bool, float]:
    """(accepted, hit) for one reply, by the reference's rules."""
    res = (got.raw_output or "").strip()
    if API_FAILURE in res:
        return False, 0.0
    if mcq:
        if not (res.isupper() and res.isalpha()):
            return False, 0.0
        expected = "".join(sorted(part.lower() for part in answer.split(", ")))
        return True, 1.0 if "".join(sorted(c.lower() for c in res)) == expected else 0.0
    low = res.lower().strip()
    if low not in ("yes", "no"):
        return False, 0.0
    return True, 1.0 if low == "yes" else 0.0


def fixed_reply(sheet: Any, mcq: bool, got: JudgeAnswer) -> tuple[bool, float]:
    if (got.label or "") == "unparsed" or got.label is None:
        return False, 0.0
    if not mcq:
        return True, 1.0 if got.label.lower() == "yes" else 0.0
    picked = (
        sorted({str(c).lower() for c in ((got.parsed or {}).get("letters") or [])} - {"z"})
        if isinstance(got.parsed, dict)
        else []
    )
    answer = sheet.answer.strip()
    by_text = [k.lower() for k, v in sheet.options.items() if v.strip().lower() == answer.lower()]
    wanted = [answer.lower()] if len(answer) == 1 else by_text or sorted(p.strip().lower() for p in answer.split(","))
    return True, 1.0 if picked and picked == sorted(wanted) else 0.0


def ask_judge(ctx: ScoreContext, traj: int, sheet: Any) -> dict[str, Any] | None:
    """The judge's verdict for one row ({label, judge, tries, hit}), or None while a try is unanswered."""
    mcq = bool(sheet.options)
    judge = MCQ_JUDGE if mcq else OPEN_JUDGE
    variables = question_vars(sheet, mcq, ctx.mode)
    replies = []
    for attempt in range(TRIES):
        params = {"temperature": round(attempt * TEMPERATURE_STEP[judge], 6)}
        got = ctx.oracle.ask(JudgeRequest.make(judge, traj, part_of(attempt), variables, params=params))
        if got is None:
            return None
        ok, hit = faithful_reply(sheet.answer, mcq, got) if ctx.mode == "faithful" else fixed_reply(sheet, mcq, got)
        replies.append(got.raw_output)
        if ok:
            return {
                "label": got.label,
                "judge": got.judge_name,
                "kind": "mcq" if mcq else "yes/no",
                "tries": attempt + 1,
                "hit": hit,
            }
    return {
        "label": None,
        "judge": judge,
        "kind": "mcq" if mcq else "yes/no",
        "tries": TRIES,
        "hit": 0.0,
        "failed": f"no readable reply in {TRIES} tries: {replies!r}"[:300],
    }
