"""Turn a judge model's raw text into a verdict: label, score, rationale, parsed JSON.

Each template names its parser. Parsers never raise on bad model output: an unparsable reply is
stored as a verdict with ``label="unparsed"`` and ``parsed={"error": …}`` (the raw output is kept),
so scorers treat it the way the reference code treats a judge failure, and a human can look at it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Callable

from store import safe_json

UNPARSED = "unparsed"
# Parsers whose unparsable reply a judge run asks again (``judge_attempts`` times in all, each attempt
# under its own replay key): a chief score that is missing or off the scale is a slip of the model,
# not an answer; asking again at temperature 0 with the same key would only replay it.
ASK_AGAIN_PARSERS = frozenset({"score_0_100"})


@dataclass
class Parsed:
    label: str | None
    score: float | None
    rationale: str | None
    parsed: Any
    ok: bool = True


def _bad(raw: str, why: str) -> Parsed:
    return Parsed(UNPARSED, None, None, {"error": why, "raw_output": raw}, ok=False)


def extract_json(raw: str) -> Any:
    """The first JSON object in the text (code fences and chatter around it are tolerated)."""
    text = raw.strip()
    fence = re.search(r"```(?:json)?\s*(.*?)```", text, re.S)
    if fence:
        text = fence.group(1).strip()
    if safe_json.too_deep_at(text) is not None:  # no object inside it is readable either
        raise ValueError(f"the reply's JSON is nested more than {safe_json.MAX_DEPTH} levels deep")
    try:
        return safe_json.loads(text)
    except json.JSONDecodeError:
        pass
    start = text.find("{")
    while start != -1:
        depth, in_str, esc = 0, False, False
        for i in range(start, len(text)):
            ch = text[i]
            if in_str:
                esc = (ch == "\\") and not esc
                if ch == '"' and not esc:
                    in_str = False
                continue
            if ch == '"':
                in_str = True
            elif ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0:
                    try:
                        return safe_json.loads(text[start : i + 1])
                    except json.JSONDecodeError:
                        break
        start = text.find("{", start + 1)
    raise ValueError("no JSON object found")


def _num(v: Any) -> float | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return float(v)
    try:
        return float(str(v).strip())
    except (TypeError, ValueError):
        return None


def free_text(raw: str) -> Parsed:
    """A short free answer (Agentic-MME's visual judge): the answer is the whole text."""
    text = (raw or "").strip()
    return Parsed(text.split("\n")[0][:120] if text else "", None, None, {"answer": text})


def pass_fail(raw: str) -> Parsed:
    """``VERDICT: PASS|FAIL`` on the first line, ``REASONING: …`` (Agentic-MME's search judge)."""
    text = (raw or "").strip()
    if not text:
        return _bad(raw, "empty reply")
    first = text.split("\n")[0].upper()
    passed = "PASS" in first
    reasoning = next((ln.split(":", 1)[1].strip() for ln in text.split("\n") if ln.startswith("REASONING:")), "")
    return Parsed(
        "PASS" if passed else "FAIL", 1.0 if passed else 0.0, reasoning, {"passed": passed, "reasoning": reasoning}
    )


def json_judge(raw: str) -> Parsed:
    """``{"Judge": …, "Reason": …}`` (ISG block/image judges); Judge may be a score or Yes/No."""
    try:
        obj = extract_json(raw or "")
    except ValueError:
        return _bad(raw, "Invalid JSON response")
    if not isinstance(obj, dict):
        return _bad(raw, "JSON is not an object")
    judge = obj.get("Judge")
    return Parsed(
        None if judge is None else str(judge)[:120], _num(judge), obj.get("Reason"), obj, ok=judge is not None
    )


def json_holistic(raw: str) -> Parsed:
    """ISG holistic: dimension scores plus ``overall_score`` (1–10) and ``final_thoughts``."""
    try:
        obj = extract_json(raw or "")
    except ValueError:
        return _bad(raw, "Invalid JSON response")
    if not isinstance(obj, dict):
        return _bad(raw, "JSON is not an object")
    score = _num(obj.get("overall_score"))
    return Parsed(None if score is None else f"{score:g}", score, obj.get("final_thoughts"), obj, ok=score is not None)


def score_0_10(raw: str) -> Parsed:
    """GTA-2 checkpoint judge: ``{"score": 0–10, "analysis": …}``."""
    try:
        obj = extract_json(raw or "")
    except ValueError:
        return _bad(raw, "Invalid JSON response")
    score = _num(obj.get("score")) if isinstance(obj, dict) else None
    if score is None:
        return _bad(raw, "no numeric 'score'")
    return Parsed(f"{score:g}", score, obj.get("analysis"), obj)


def letters(raw: str) -> Parsed:
    """VTC MCQ extractor: the option letter(s) the answer chose, or Z for none."""
    text = (raw or "").strip()
    found = sorted({c.upper() for c in re.findall(r"\b([A-Ea-eZz])\b", text)})
    if not found:
        return _bad(raw, "no option letter")
    return Parsed("".join(found), None, None, {"letters": found})


def yes_no(raw: str) -> Parsed:
    """VTC open-answer judge: yes or no."""
    low = (raw or "").strip().lower()
    m = re.search(r"\b(yes|no)\b", low)
    if not m:
        return _bad(raw, "neither yes nor no")
    return Parsed(m.group(1), 1.0 if m.group(1) == "yes" else 0.0, None, {"answer": m.group(1)})


def json_object(raw: str) -> Parsed:
    """Any JSON object; label/score taken from 'label'/'score' keys when present (ATP agents)."""
    try:
        obj = extract_json(raw or "")
    except ValueError:
        return _bad(raw, "Invalid JSON response")
    if not isinstance(obj, dict):
        return _bad(raw, "JSON is not an object")
    score = _num(obj.get("score", obj.get("final_score")))
    label = obj.get("label") or obj.get("tier")
    return Parsed(
        None if label is None else str(label)[:120],
        score,
        obj.get("rationale") or obj.get("reason") or obj.get("summary"),
        obj,
    )


def score_0_100(raw: str) -> Parsed:
    """ATP's Chief Judge: a JSON object whose ``score`` (or ``final_score``) lies in 0–100. A reply without
    one, or with 150, is unparsed: a score outside the scale would move FS past its bounds."""
    found = json_object(raw)
    if not found.ok:
        return found
    if found.score is None:
        return _bad(raw, "no numeric 'score'")
    if not 0 <= found.score <= 100:
        return _bad(raw, f"score {found.score:g} is outside 0-100")
    return found


PARSERS: dict[str, Callable[[str], Parsed]] = {
    "score_0_100": score_0_100,
    "free_text": free_text,
    "pass_fail": pass_fail,
    "json_judge": json_judge,
    "json_holistic": json_holistic,
    "score_0_10": score_0_10,
    "letters": letters,
    "yes_no": yes_no,
    "json_object": json_object,
}


def parse(parser: str, raw: str) -> Parsed:
    if parser not in PARSERS:
        raise ValueError(f"unknown judge output parser {parser!r}; known: {', '.join(sorted(PARSERS))}")
    return PARSERS[parser](raw)
