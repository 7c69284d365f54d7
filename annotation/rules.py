"""Authoring rules as warnings on a task (GTA annotator guide, appendix C.3, in our own words).

Warnings never block saving; they tell the annotator what a reviewer would send back. Each warning
has a stable code so the TUI can show and filter them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Sequence

SEARCH_TOOLS = {"GoogleSearch", "google_search", "google_lens_search", "fetch_webpage", "Search"}
GENERATION_TOOLS = {"TextToImage", "ImageStylization", "DrawBox", "AddText", "Plot", "Diffusion", "Edit"}

# Words in a query that name a tool outright (rule 5: "Please detect the orange" names a detector).
TOOL_WORDS = {
    "ocr": "OCR",
    "detect": "TextToBbox",
    "detector": "TextToBbox",
    "bounding box": "TextToBbox",
    "bbox": "TextToBbox",
    "calculator": "Calculator",
    "google": "GoogleSearch",
    "search engine": "GoogleSearch",
    "draw a box": "DrawBox",
    "drawbox": "DrawBox",
    "solver": "Solver",
    "stylize": "ImageStylization",
    "crop the image": "crop",
    "use the tool": "tool",
    "call the tool": "tool",
    "use a tool": "tool",
}
# Rule 10: search questions whose answer drifts with time unless pinned to a date or source.
_TIME_SENSITIVE = re.compile(
    r"\b(current(ly)?|now|today|latest|recent(ly)?|this (year|month|week)|nowadays|at present|"
    r"so far|up to date|still)\b",
    re.IGNORECASE,
)
_PINNED = re.compile(
    r"\b(1[89]\d\d|20\d\d)\b|according to|\bon (the )?\w+('s)? (website|site|page)\b|"
    r"\bas of\b|wikipedia",
    re.IGNORECASE,
)
_NON_ASCII_LETTER = re.compile(r"[^\x00-\x7F]")


@dataclass(frozen=True)
class Warning:
    code: str
    message: str


def check_task(
    query: str,
    answer_spec: dict[str, Any],
    steps: Sequence[dict[str, Any]] = (),
    *,
    image_count: int = 0,
    evidence_count: int = 0,
    style: str = "gta",
    tools_offered: Sequence[str] = (),
) -> list[Warning]:
    """Return the authoring warnings for a task.

    ``steps`` are reference steps as dicts with ``tool_name`` / ``is_final``. ``style`` switches
    rules that only one benchmark's guide has (GTA's English-only and image-count rules).
    """
    out: list[Warning] = []
    lower = query.lower()
    for word, tool in TOOL_WORDS.items():
        if re.search(rf"\b{re.escape(word)}\b", lower):
            out.append(
                Warning(
                    "query-names-tool", f"the query names a tool ('{word}' → {tool}); describe the goal, not the tool"
                )
            )
            break
    tool_steps = [s for s in steps if s.get("tool_name") and not s.get("is_final")]
    if len(tool_steps) < 2:
        out.append(
            Warning(
                "too-few-steps", f"the reference chain has {len(tool_steps)} tool step(s); a task needs two or more"
            )
        )
    used = {s.get("tool_name") for s in tool_steps}
    missing = [
        t for t in dict.fromkeys(s.get("tool_name") for s in tool_steps) if tools_offered and t not in tools_offered
    ]
    if missing:
        out.append(
            Warning(
                "chain-tool-not-offered",
                f"the reference chain calls {', '.join(map(str, missing))}, which the task's tool list does not "
                "offer; add it to the list (or clear the list to offer the whole tool set)",
            )
        )
    kind = answer_spec.get("kind", "none")
    generates = bool(used & GENERATION_TOOLS)
    if kind == "none" and not generates:
        out.append(
            Warning(
                "missing-answer",
                "the task has no answer but generates no text or image; give a single definitive answer",
            )
        )
    if used & SEARCH_TOOLS:
        if _TIME_SENSITIVE.search(query) and not _PINNED.search(query):
            out.append(
                Warning(
                    "time-sensitive-search",
                    "a search question whose answer can change over time; pin a year, a source or a website",
                )
            )
        elif not _PINNED.search(query):
            out.append(
                Warning(
                    "search-not-needed",
                    "a search question should need searching (time-bound or source-specific), "
                    "not be answerable from a model's memory",
                )
            )
        if evidence_count == 0:
            out.append(
                Warning(
                    "search-without-evidence",
                    "search questions need evidence: the URL and a screenshot that contains the answer",
                )
            )
    if style == "gta":
        if image_count == 0:
            out.append(Warning("no-image", "a task is based on one or two image files; attach one"))
        elif image_count > 2:
            out.append(Warning("too-many-images", f"{image_count} images attached; the guide allows one or two"))
        if _NON_ASCII_LETTER.search(query):
            out.append(Warning("non-english", "query and answer must be in English"))
    if kind == "whitelist":
        for group in answer_spec.get("groups") or []:
            for alias in group:
                if alias and (not alias[0].isalnum() or not alias[-1].isalnum()) and alias[0] != "_":
                    out.append(
                        Warning(
                            "alias-boundary",
                            f"alias {alias!r} starts or ends with a non-word character; GTA's \\b "
                            "matching (faithful mode) can never match it",
                        )
                    )
                    break
    return out
