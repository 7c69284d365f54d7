"""Final-answer extraction as the seed harnesses do it: a closed ``<answer>`` tag, then an unclosed
one, then the raw text (Agentic-MME, VTC), plus VTC/InternVL's ``<|answer|>`` form."""

from __future__ import annotations

import re

_CLOSED = re.compile(r"<answer>(.*?)</answer>", re.DOTALL | re.IGNORECASE)
_UNCLOSED = re.compile(r"<answer>(.*)", re.DOTALL | re.IGNORECASE)
_INTERNVL = re.compile(r"<\|answer\|>(.*?)<\|answer\|>", re.DOTALL)
_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)


def extract_answer(text: str | None) -> tuple[str, str]:
    """``(answer, extracted_by)`` with extracted_by one of tag / unclosed-tag / internvl-tag / raw / empty."""
    if not text:
        return "", "empty"
    m = _CLOSED.search(text)
    if m:
        return m.group(1).strip(), "tag"
    m = _INTERNVL.search(text)
    if m:
        return m.group(1).strip(), "internvl-tag"
    m = _UNCLOSED.search(text)
    if m:
        return m.group(1).strip(), "unclosed-tag"
    return _THINK.sub("", text).strip(), "raw"


def has_answer_tag(text: str | None) -> bool:
    return bool(text) and ("<answer>" in text.lower() or "<|answer|>" in text)  # type: ignore[operator]
