"""Answer matchers shared by every benchmark profile, each reproducing one reference scorer exactly.

Why one module: the same question ("is this answer right?") is asked with five different rule sets,
and the differences (word boundaries, case, whitespace, option letters) move leaderboard numbers.
Every function is pure and cheap; where the reference has a bug there is a ``mode`` argument:
``"faithful"`` reproduces the reference, ``"fixed"`` does what the reference meant.
"""

from __future__ import annotations

import functools
import re
from typing import Any, Iterable

MODES = ("faithful", "fixed")


def check_mode(mode: str) -> str:
    if mode not in MODES:
        raise ValueError(f"scoring mode must be one of {', '.join(MODES)}; got {mode!r}")
    return mode


# ------------------------------------------------------------------ generic


def normalise(text: Any) -> str:
    """Lower case, collapse whitespace, strip: the usual 'normalised exact' comparison form."""
    return " ".join(str(text or "").lower().split())


def exact_match(pred: Any, target: Any, *, normalised: bool = True) -> bool:
    return normalise(pred) == normalise(target) if normalised else str(pred) == str(target)


def contains_match(pred: Any, target: Any, *, case_sensitive: bool = False) -> bool:
    p, t = str(pred or ""), str(target or "")
    return t in p if case_sensitive else t.lower() in p.lower()


def numeric_match(pred: Any, target: Any, tolerance: float = 0.0) -> bool:
    """``|float(pred) - float(target)| <= tolerance``; anything unparsable is simply wrong."""
    try:
        return abs(float(str(pred).strip()) - float(str(target).strip())) <= float(tolerance or 0.0)
    except (TypeError, ValueError):
        return False


# ------------------------------------------------------------------ GTA (opencompass gta_bench.py)


def _alias_pattern(aliases: Iterable[str], mode: str) -> str:
    body = "|".join(re.escape(a) for a in aliases)
    if mode == "faithful":
        # \b needs a word character beside it, so "-3" or "$5" can never match after a space.
        return r"\b(?:" + body + r")\b"
    return r"(?<!\w)(?:" + body + r")(?!\w)"


@functools.lru_cache(maxsize=4096)
def _alias_regex(aliases: tuple[str, ...], mode: str) -> re.Pattern[str]:
    """The compiled alias pattern (re's own cache holds 512 and is shared: a run's worth of answer
    aliases kept it recompiling)."""
    return re.compile(_alias_pattern(aliases, mode), re.IGNORECASE)


def _alias_search(aliases: Iterable[str], mode: str, pred: str) -> re.Match[str] | None:
    try:
        key = tuple(aliases)
        hash(key)
    except TypeError:  # not strings: fails below exactly as it always did
        return re.search(_alias_pattern(aliases, mode), pred, re.IGNORECASE)
    return _alias_regex(key, mode).search(pred)


def gta_iscorrect(pred: str, ref: dict[str, Any], mode: str = "faithful") -> bool:
    """GTA objective answer: every whitelist alias group must match, no blacklist alias may match.

    ``ref`` is GTA's ``{"whitelist": [[alias…]…], "blacklist": [[alias…]…] | null}``. Faithful mode
    uses the reference's ``\\b…\\b`` (so ``-3`` is never found); fixed mode uses look-arounds.
    """
    check_mode(mode)
    whitelist = ref.get("whitelist") or []
    count = sum(1 for aliases in whitelist if _alias_search(aliases, mode, pred))
    if count != len(whitelist):
        return False
    blacklist = ref.get("blacklist")
    if not blacklist:
        return True
    flat = [alias for aliases in blacklist for alias in aliases]
    return not _alias_search(flat, mode, pred)


# ------------------------------------------------------------------ VTC-Bench (VLMEvalKit image_vqa.py)

_MCQ_SEPARATORS = (".", " ", "-")
VTC_OPTION_LETTERS = "ABCDEFG"


def vtc_is_mcq(answer: str, options: dict[str, Any]) -> bool:
    """A row is MCQ when an option column A–G is present (any text, even blank) or the answer is one letter a–d.

    ``options`` holds the option cells; an empty one is absent (pandas reads it as NaN), one holding
    only spaces is present, as in the reference.
    """
    if any(v is not None and str(v) != "" for v in (options or {}).values()):
        return True
    a = str(answer or "").strip().lower()
    return len(a) == 1 and a in "abcd"


def vtc_rule_mcq(pred: str, answer: str, options: dict[str, Any]) -> float:
    """VTC's rule score for multiple choice (lower-cased, stripped): 1.0 or 0.0.

    Three scenarios, in the reference's order: a one-letter answer a–g needs the prediction to be
    that letter or start with it followed by '.', ' ' or '-'. Otherwise, a prediction starting with a
    letter a–g is read as that option's letter and nothing else is tried (so "banana" picks option
    B). Otherwise the prediction must contain an option's text that equals the answer.
    """
    p = str(pred if pred is not None else "").strip().lower()
    a = str(answer if answer is not None else "").strip().lower()
    opts = {
        str(k).strip().upper(): str(v).lower().strip()
        for k, v in (options or {}).items()
        if v is not None and str(v) != ""
    }
    first = p[:1]
    if len(a) == 1 and a in "abcdefg":
        if first == a and (len(p) == 1 or p[1] in _MCQ_SEPARATORS):
            return 1.0
        return 0.0
    if first and first in "abcdefg":
        return 1.0 if first.upper() in opts and opts[first.upper()] == a else 0.0
    for letter in VTC_OPTION_LETTERS:
        text = opts.get(letter)
        if text is not None and text in p and text == a:
            return 1.0
    return 0.0


def vtc_rule_open(pred: str, answer: str, mode: str = "faithful") -> float:
    """VTC's open-answer rule: exact, whitespace-normalised exact, then (answers < 5 words) containment
    of the normalised answer in the normalised prediction.

    The reference then calls a math-equivalence check whose result it drops (dead code: the rule
    returns 0). Fixed mode uses that check's verdict, as intended (``vtc_math_equal``).
    """
    check_mode(mode)
    p = str(pred if pred is not None else "").strip().lower()
    a = str(answer if answer is not None else "").strip().lower()
    if p == a:
        return 1.0
    pn, an = " ".join(p.split()), " ".join(a.split())
    if pn == an:
        return 1.0
    if len(an.split()) < 5 and an in pn:
        return 1.0
    if mode == "fixed" and vtc_math_equal(p, a):
        return 1.0
    return 0.0


_MATH_MAX_CHARS = 500  # longer texts are prose, not a formula; parsing them would only cost time
_MATHY = re.compile(r"[0-9\\=+*/^π√]")


def vtc_math_equal(pred: str, answer: str) -> bool:
    """Math-Verify's equivalence of the answer and the prediction (the check the reference meant to use)."""
    if len(pred) > _MATH_MAX_CHARS or len(answer) > _MATH_MAX_CHARS:
        return False
    if not (_MATHY.search(answer) and _MATHY.search(pred)):
        return False  # words without a number or operator are no formula (and parsing costs ~2 ms)
    import logging

    from math_verify import parse, verify  # type: ignore[import-untyped]

    logging.getLogger("math_verify").setLevel(logging.ERROR)
    try:
        gold = parse(answer, parsing_timeout=None)
        guess = parse(pred, parsing_timeout=None)  # type: ignore[arg-type]
        return bool(gold) and bool(guess) and bool(verify(gold, guess, timeout_seconds=None))  # type: ignore[arg-type]
    except Exception:  # noqa: BLE001 - an unparsable formula is simply not equal
        return False


def vtc_letters(text: str) -> list[str]:
    """The option letters a VTC MCQ extractor answered (``"A, C"`` → ``["a", "c"]``), sorted."""
    found = re.findall(r"\b([A-Za-z])\b", str(text or ""))
    return sorted({f.lower() for f in found})


# ------------------------------------------------------------------ Agentic-MME (eval_runs_search.py)


def amme_check_answer(answer_check: dict[str, Any], model_answer: str) -> bool:
    """An R-axis ``answer_check`` exactly as Agentic-MME's ``check_answer`` reads it."""
    cfg = answer_check or {}
    match_type = cfg.get("match_type", "exact")
    ans = (model_answer or "").strip()
    low = ans.lower()
    if match_type in ("exact", "exact_match"):
        return ans == cfg.get("target", "")
    if match_type == "contains":
        return str(cfg.get("target", "")) in ans
    if match_type == "string":
        target = str(cfg.get("target", "")).lower()
        return target in low or low in target
    if match_type == "numeric":
        return numeric_match(ans, cfg.get("target", "0"), cfg.get("tolerance", 0.0))
    if match_type == "keyword_inclusion":
        keywords = cfg.get("keywords", []) or []
        return sum(1 for kw in keywords if str(kw).lower() in low) >= int(cfg.get("min_matches", 1))
    if match_type == "extraction_match":
        targets = cfg.get("targets", []) or []
        if not targets:
            return False
        numbers = re.findall(r"[\d.]+", ans)
        for t in targets:
            try:
                value, tol = float(t.get("value", "")), float(t.get("tolerance", 0.0))
            except (TypeError, ValueError):
                return False
            if not any(_near(n, value, tol) for n in numbers):
                return False
        return True
    target = str(cfg.get("target", ""))
    return bool(target) and target.lower() in low


def _near(num: str, value: float, tol: float) -> bool:
    try:
        return abs(float(num) - value) <= tol
    except ValueError:
        return False


_FINAL_ANSWER_PATTERNS = tuple(
    re.compile(p)
    for p in (
        r"therefore[,\s]+(?:the\s+)?answer\s+is\s+([^\.\n]+)",
        r"(?:the\s+)?answer\s+is\s+([^\.\n]+)",
        r"answer:\s*([^\.\n]+)",
        r"final\s+answer:\s*([^\.\n]+)",
    )
)


@functools.lru_cache(maxsize=1024)
def _whole_word(value: str) -> re.Pattern[str]:
    """``\\b<value>\\b``, compiled once per golden value (a run has a handful of short numeric ones)."""
    return re.compile(r"\b" + re.escape(value) + r"\b")


def amme_final_answer_correct(golden: dict[str, Any], model_answer: str) -> bool:
    """Agentic-MME's Track-B ACC (``check_final_answer_only``), including the ≤2-char numeric rule."""
    value = str((golden or {}).get("value", "")).strip()
    match_type = (golden or {}).get("match_type", "contains")
    ans = (model_answer or "").strip()
    if match_type == "exact":
        return ans == value
    if match_type == "numeric":
        return numeric_match(ans, value, (golden or {}).get("tolerance", 0.0))
    if match_type == "contains":
        is_numeric = value.replace(".", "").replace("-", "").replace("+", "").isdigit()
        if is_numeric and len(value) <= 2:
            word = _whole_word(value)
            low = ans.lower()
            for pattern in _FINAL_ANSWER_PATTERNS:
                m = pattern.search(low)
                if m and word.search(m.group(1)):
                    return True
            return bool(word.search(ans))
    return value.lower() in ans.lower()


def amme_expected_from_description(description: str) -> str | None:
    """The expected answer a search checkpoint's description names, as the search judge extracts it."""
    patterns = (
        r"\(expected to find:\s*([^)]+)\)",
        r"\(expected answer:\s*([^)]+)\)",
        r"\(expected:\s*([^)]+)\)",
        r"expected to find:\s*([^\n\)]+)",
        r"expected answer:\s*([^\n\)]+)",
        r"expected:\s*([^\n\)]+)",
    )
    for pattern in patterns:
        m = re.search(pattern, description or "", re.IGNORECASE)
        if m:
            return m.group(1).strip().rstrip(".,;:")
    return None


# ------------------------------------------------------------------ answer specs (annotation.answers)


def match_answer_spec(spec: dict[str, Any], pred: str, mode: str = "faithful") -> bool | None:
    """Check an answer against a chainmark answer spec; None when the spec needs an embedder or judge."""
    kind = (spec or {}).get("kind", "none")
    if kind == "whitelist":
        return gta_iscorrect(pred, {"whitelist": spec.get("groups"), "blacklist": spec.get("blacklist")}, mode)
    if kind in ("exact", "contains", "numeric"):
        candidates = [spec.get("value")] + list(spec.get("variants") or [])
        for c in candidates:
            if kind == "exact" and exact_match(pred, c):
                return True
            if kind == "contains" and contains_match(pred, c):
                return True
            if kind == "numeric" and numeric_match(pred, c, spec.get("tolerance") or 0.0):
                return True
        return False
    if kind == "mcq":
        return vtc_rule_mcq(pred, spec.get("letter", ""), spec.get("options") or {}) >= 0.5
    return None
