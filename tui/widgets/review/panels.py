"""Panels of the review screens: the target being judged, and the verdicts/ratings beside it.

They take plain dicts (from ``annotation.review.rating_view`` or the adjudication reader) and render
Rich text; no panel reads the database.
"""

from __future__ import annotations

import json
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Static

from tui.safe_text import visible
from tui.widgets.review.event_text import clip, event_summary, value_text


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def report_text(verdict: dict[str, Any], limit: int = 4000) -> str:
    """A judge's report as the person rating it needs it: the label/score it gave (when it gave one),
    then the report itself — its raw output when kept, else the parsed fields, else the rationale."""
    lines = []
    given = [f"{k} {verdict[k]}" for k in ("label", "score") if verdict.get(k) is not None]
    if given:
        lines.append("  ".join(given))
    raw = str(verdict.get("raw_output") or "").strip()
    parsed = verdict.get("parsed")
    rationale = str(verdict.get("rationale") or "").strip()
    if raw:
        lines.append(raw)
    elif parsed:
        lines.append(json.dumps(parsed, ensure_ascii=False, indent=2, sort_keys=True))
    if rationale and rationale not in raw:
        lines.append(rationale)
    text = "\n".join(lines) or "(the judge gave no report)"
    return (text if len(text) <= limit else text[:limit] + " …") + "\n"


def content_text(content: dict[str, Any], *, max_events: int = 60) -> Text:
    """The material to judge: task query, trajectory events and answer, checkpoint, event or verdict."""
    out = Text()

    def head(title: str) -> None:
        if out:
            out.append("\n")
        out.append(visible(title) + "\n", style="bold")

    task = content.get("task")
    if task:
        head(
            f"Task {task.get('id')} (rev {task.get('revision')})"
            + (f" · {task['category']}" if task.get("category") else "")
        )
        out.append(visible(task.get("query"), keep_newlines=True) + "\n")
    if content.get("part"):
        head("Part")
        out.append(visible(content["part"], keep_newlines=True) + "\n")
    cp = content.get("checkpoint")
    if cp:
        head(f"Checkpoint {cp.get('key')} · axis {cp.get('axis')}")
        if cp.get("description"):
            out.append(visible(cp["description"], keep_newlines=True) + "\n")
        for name in ("visual_check", "search_check", "answer_check"):
            if cp.get(name):
                out.append(f"{name.replace('_', ' ')}: ", style="dim")
                out.append(_json(cp[name]) + "\n")
    events = content.get("events")
    if events:
        head(f"Trajectory ({len(events)} events)")
        for e in events[:max_events]:
            style = "red" if e.get("failed") else ""
            out.append(f"{e.get('ordinal'):>3} ", style="dim")
            out.append(
                event_summary(e.get("kind", ""), e.get("payload"), bool(e.get("failed")), 160) + "\n", style=style
            )
        if len(events) > max_events:
            out.append(f"    … {len(events) - max_events} more events\n", style="dim")
    for key, title in (("event", "Event"), ("matched_event", "Matched event")):
        e = content.get(key)
        if e:
            head(f"{title} {e.get('ordinal')} · {e.get('kind')}")
            out.append(event_summary(e.get("kind", ""), e.get("payload"), bool(e.get("failed")), 600) + "\n")
    if content.get("checkpoint") is not None and "matched_event" not in content:
        out.append("no event matched this checkpoint\n", style="dim")
    auto = content.get("automatic_result")
    if auto:
        head("Automatic result")
        mark = ("✓ pass", "green") if auto.get("passed") else ("✗ fail", "red")
        out.append(mark[0], style=mark[1])
        out.append(f"  ({auto.get('method')})\n", style="dim")
    verdict = content.get("verdict")
    if verdict:
        head(f"Judge report by {verdict.get('judge')}")
        out.append(visible(report_text(verdict), keep_newlines=True))
    traj = content.get("trajectory")
    if traj:
        head(f"Final answer (trajectory {traj.get('id')}, {traj.get('status')})")
        out.append(visible(str(traj.get("final_answer") or "—"), keep_newlines=True) + "\n")
    return out


def evidence_text(gold: str, score: str, right: bool | None, score_hidden: bool, note: str = "") -> Text:
    """The gold answer and the run's own score of the answer, one line each."""
    out = Text()
    if gold:
        out.append("\nGold answer: ", style="bold")
        out.append(visible(gold, keep_newlines=True) + "\n")
    if score_hidden:
        out.append("Run's score: ", style="bold")
        out.append("hidden until you rate (blind)\n", style="yellow")
    elif score:
        out.append("Run's score: ", style="bold")
        out.append(visible(score) + "\n", style="dim" if right is None else "bold green" if right else "bold red")
    if note:
        out.append(visible(note) + "\n", style="yellow")
    return out


class VerdictCard(Static):
    """One rater's judgement: name, value, rationale or comment."""

    DEFAULT_CSS = """
    VerdictCard { width: 1fr; height: auto; border: round $panel-lighten-2; padding: 0 1; }
    VerdictCard.-human { border: round $success-darken-1; }
    VerdictCard.-final { border: double $accent; }
    """


def verdict_card(v: dict[str, Any]) -> VerdictCard:
    text = Text()
    text.append(visible(str(v.get("judge")), keep_newlines=True), style="bold")
    value = v.get("label") if v.get("label") is not None else v.get("score")
    text.append(f"  {value_text(value)}")
    if v.get("label") is not None and v.get("score") is not None:
        text.append(f" ({v['score']:g})" if isinstance(v["score"], (int, float)) else f" ({v['score']})")
    text.append("\n")
    text.append(visible(str(v.get("rationale") or ""), keep_newlines=True), style="italic")
    return VerdictCard(text)


def rating_card(r: dict[str, Any]) -> VerdictCard:
    text = Text()
    text.append(visible(str(r.get("annotator")), keep_newlines=True), style="bold")
    text.append(f"  {value_text(r.get('value'))}")
    if r.get("stale"):
        text.append("  stale", style="yellow")
    if r.get("comment"):
        text.append("\n" + clip(r["comment"], 400), style="italic")
    return VerdictCard(text, classes="-human")


def adjudication_card(a: dict[str, Any]) -> VerdictCard:
    text = Text()
    text.append(visible(f"final by {a.get('reviewer')}"), style="bold")
    text.append(f"  {value_text(a.get('final_value'))}\n")
    text.append(visible(str(a.get("rationale") or ""), keep_newlines=True), style="italic")
    return VerdictCard(text, classes="-final")


class JudgementsPanel(VerticalScroll):
    """Judges side by side, then human ratings side by side, then any adjudication."""

    DEFAULT_CSS = """
    JudgementsPanel { height: auto; max-height: 16; }
    JudgementsPanel > Horizontal { height: auto; }
    JudgementsPanel > .hidden-note { color: $warning; height: auto; }
    """

    def compose(self) -> ComposeResult:
        yield Static("", classes="hidden-note")
        yield Horizontal(classes="verdicts")
        yield Horizontal(classes="ratings")
        yield Horizontal(classes="finals")

    def show(
        self,
        verdicts: list[dict[str, Any]],
        ratings: list[dict[str, Any]],
        adjudications: list[dict[str, Any]],
        hidden: list[str],
    ) -> None:
        note = ""
        if hidden:
            note = "blind: " + ", ".join(h.replace("_", " ") for h in hidden) + " hidden until you rate"
        elif not verdicts and not ratings:
            note = "no verdicts or other ratings yet"
        self.query_one(".hidden-note", Static).update(note)
        for cls, cards in (
            ("verdicts", [verdict_card(v) for v in verdicts]),
            ("ratings", [rating_card(r) for r in ratings]),
            ("finals", [adjudication_card(a) for a in adjudications]),
        ):
            box = self.query_one(f".{cls}", Horizontal)
            box.remove_children()
            if cards:
                box.mount_all(cards)
