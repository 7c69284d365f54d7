"""Everything the trajectory viewer shows, read in one worker call and aligned step by step.

The reference chain (ReferenceStep rows) and the model's trajectory (Event rows grouped into steps:
a call with its result, a code run, a planned call, the answer) are aligned by a weighted longest
common subsequence: a checkpoint whose reference step was matched to a model event anchors that
pair; otherwise equal tool names pair up. Checkpoint marks sit on the row of their matched event
(else on their reference step's row); verdicts and human ratings sit beside the item they rate.
In step mode each prediction is anchored to the gold step it was made for (its ``gold_index``) and
carries the GTA step scorer's own ToolAcc/ArgAcc decision. The run's own score of the item comes
from the benchmark profile (``evaluation.scoring.item_outcome``); judgements that contradict it, or
the step they judge, are found by ``evaluation.contradictions`` and placed on their rows.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from sqlmodel import Session, select, col

from annotation.answers import describe
from annotation.review.blind import BlindScope, blind_scope
from evaluation.contradictions import (
    EXTRACTORS,
    Claim,
    Contradiction,
    Extraction,
    about_answer,
    contradictions,
    literal_contradictions,
    polarity,
    read_letters,
    reads_the_answer,
)
from evaluation.scoring.item_outcome import ItemOutcome, StepMark, trajectory_outcome
from store import events as ev
from store.models import (
    Annotator,
    Asset,
    Benchmark,
    Checkpoint,
    CheckpointResult,
    Event,
    HumanRating,
    Judge,
    ReferenceStep,
    Run,
    Task,
    TaskAsset,
    Trajectory,
    Verdict,
)
from tui.screens.runs.step_details import (
    ModelCost,
    RawEvent,
    model_cost,
    raw_event,
    span_seconds,
    split_code,
    without_code,
)
from tui.widgets.review.event_text import clip, event_assets


@dataclass(frozen=True)
class Step:
    """One step on either side: a reference step or a group of model events."""

    side: str  # "ref" | "model"
    name: str  # tool name, "answer", "code", "error", ...
    thought: str
    call: str
    result: str
    ok: bool = True
    event_ids: tuple[int, ...] = ()
    step_id: int | None = None
    asset_ids: tuple[int, ...] = ()
    ordinal: int = 0
    code: str = ""  # code the step ran (code mode, Solver/Plot), shown as code and nowhere else
    seconds: float | None = None  # how long the step's own events took
    cost: ModelCost = ModelCost()  # the model calls that led to it
    raw: tuple[RawEvent, ...] = ()  # the stored events behind it, as they are


@dataclass(frozen=True)
class Judgement:
    """A verdict or a human rating, as shown beside what it rates."""

    who: str
    value: str
    note: str
    human: bool
    label: str | None = None  # a verdict's own label (what contradiction checks read)
    part: str = ""  # the part of the target it judges ("" for the whole)
    ref: str = ""  # "verdict:ID" / "rating:ID"
    read: frozenset[str] | None = None  # an extractor's verdict: the option letters it read in the answer


@dataclass(frozen=True)
class Mark:
    key: str
    axis: str
    description: str
    passed: bool
    method: str
    score: float | None
    judgements: tuple[Judgement, ...] = ()
    hidden: bool = False  # blind: the automatic pass/fail is not shown until the viewer has rated


@dataclass(frozen=True)
class Row:
    ref: Step | None
    model: Step | None
    marks: tuple[Mark, ...] = ()
    judgements: tuple[Judgement, ...] = ()
    steps: tuple[StepMark, ...] = ()  # step mode: the scorer's ToolAcc/ArgAcc decision on this gold step
    contradictions: tuple[Contradiction, ...] = ()  # judgements on this row that contradict the outcome


@dataclass(frozen=True)
class TrajectoryView:
    id: int
    run_id: int
    run_name: str
    mode: str
    task_id: int
    source_id: str
    benchmark: str
    query: str
    expected: str
    status: str
    final_answer: str
    usage: dict[str, Any]
    error: str
    rows: list[Row]
    unplaced: list[Mark]
    judgements: list[Judgement]
    siblings: list[int]
    images: dict[int, str] = field(default_factory=dict)  # asset id → sha256 (images only)
    task_images: tuple[str, ...] = ()  # sha256 of the task's own input images, in order
    hidden: list[str] = field(default_factory=list)  # what blind mode hides from this viewer
    task_revision: int = 1  # the revision the trajectory ran on
    current_revision: int = 1  # the task's revision now
    outcome: ItemOutcome | None = None  # the run's own score of this item (None: hidden by blind mode)
    gold: str = ""  # the gold answer, readable
    contradictions: list[tuple[int | None, Contradiction]] = field(default_factory=list)  # (row, what)

    @property
    def contradiction_rows(self) -> list[int]:
        """Rows carrying a contradiction, in order (what ``x`` walks)."""
        return sorted({k for k, _ in self.contradictions if k is not None})

    @property
    def edited_after_run(self) -> bool:
        return self.task_revision < self.current_revision

    @property
    def passed(self) -> int:
        return sum(m.passed for r in self.rows for m in r.marks if not m.hidden) + sum(
            m.passed for m in self.unplaced if not m.hidden
        )

    @property
    def checkpoints(self) -> int:
        return sum(1 for r in self.rows for m in r.marks if not m.hidden) + sum(
            1 for m in self.unplaced if not m.hidden
        )


def token_total(usage: dict[str, Any]) -> int:
    """Tokens a trajectory used: ``total_tokens`` when recorded, else prompt + completion (never
    all three summed, which counts everything twice)."""

    def num(key: str) -> int:
        v = usage.get(key)
        return int(v) if isinstance(v, (int, float)) else 0

    return num("total_tokens") or num("prompt_tokens") + num("completion_tokens")


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _prediction(pred: Any) -> tuple[str, Any, str, str, str]:
    """``(tool name, arguments, code, thought, error)`` of a GTA predicted step: a call (``tool_calls``
    of OpenAI shape, or a flat ``name``/``arguments``) or a final answer (``content``)."""
    if not isinstance(pred, dict):
        return "step", pred, "", "", ""
    thought = str(pred.get("thought") or "")
    error = pred.get("error")
    problem = f"{error.get('type', '')}: {error.get('msg', '')}" if isinstance(error, dict) else _text(error)
    calls = pred.get("tool_calls") or []
    fn = calls[0].get("function") or calls[0] if calls and isinstance(calls[0], dict) else pred
    if isinstance(fn, dict) and (fn.get("name") or fn.get("tool")):
        name = str(fn.get("name") or fn.get("tool"))
        args, code = split_code(name, fn.get("arguments"))
        return name, args, code, thought, problem
    if "content" in pred:
        return "answer", pred.get("content"), "", thought, problem
    return "step", pred, "", thought, problem


def model_steps(events: list[Event]) -> list[Step]:
    """Group events into steps: a model message's text becomes the thought of the step it leads to;
    the events before a step (what was sent, the model's reply) join its raw events."""
    steps: list[dict[str, Any]] = []
    thought = ""
    lead: list[Event] = []  # user/model messages since the last step
    for e in events:
        p = e.payload or {}
        if e.kind == ev.USER_MESSAGE:
            lead.append(e)
            continue
        if e.kind == ev.MODEL_MESSAGE:
            text = p.get("content") or p.get("reasoning") or ""
            thought = (thought + "\n" + text).strip() if thought else text
            lead.append(e)
            continue
        if e.kind == ev.TOOL_RESULT:
            target = next(
                (
                    s
                    for s in reversed(steps)
                    if s["kind"] == ev.TOOL_CALL
                    and s["result"] is None
                    and (not p.get("call_id") or s["call_id"] == p.get("call_id"))
                ),
                None,
            )
            if target is not None:
                ok = bool(p.get("ok", True)) and not e.failed
                target["result"] = p.get("error") if not ok and p.get("error") else p.get("text")
                target["ok"] = target["ok"] and ok
                target["events"].append(e.id)
                target["own"].append(e)
                target["raw"] += lead + [e]
                lead = []
                target["assets"] += event_assets(p)
                continue
        name, call, result, ok, code = e.kind, "", None, not e.failed, ""
        if e.kind == ev.TOOL_CALL:
            name = str(p.get("name"))
            args, code = split_code(name, p.get("arguments"))
            call = _text(args) if args or not code else ""
        elif e.kind == ev.TOOL_RESULT:  # a result with no call before it
            name, result = str(p.get("name")), p.get("text")
        elif e.kind == ev.CODE_EXEC:
            ops = [str(o.get("op")) for o in p.get("ops") or []]
            name = "code" + (f" ({', '.join(ops)})" if ops else "")
            code, result = p.get("code") or "", (p.get("stdout") or "") + (p.get("stderr") or "")
            ok = ok and p.get("exit_code", 0) == 0 and not p.get("timed_out")
        elif e.kind == ev.PLAN_CALL:
            name = str(p.get("tool_name"))
            args, code = split_code(name, p.get("params"))
            call = _text(args) if args or not code else ""
            ok = ok and bool(p.get("valid", True))
            result = p.get("error")
        elif e.kind == ev.STEP_PREDICTION:
            name, args, code, own_thought, problem = _prediction(p.get("prediction"))
            call = _text(args) if args or not code else ""
            result = problem or None
            ok = ok and not problem  # a prediction that carried an error is a failed step
            thought = own_thought or thought  # the parsed thought, not the whole ReAct text again
        elif e.kind == ev.ANSWER:
            name, call = "answer", p.get("text") or ""
        elif e.kind == ev.ERROR:
            name, call, ok = "error", f"{p.get('type', '')}: {p.get('message', '')}", False
        steps.append(
            {
                "kind": e.kind,
                "name": name,
                "thought": without_code(thought, code),
                "call": call,
                "code": code,
                "result": result,
                "ok": ok,
                "events": [e.id],
                "own": [e],
                "raw": lead + [e],
                "lead": [m for m in lead if m.kind == ev.MODEL_MESSAGE],
                "assets": event_assets(p),
                "call_id": p.get("call_id"),
                "ordinal": e.ordinal,
            }
        )
        thought, lead = "", []
    if thought or lead:
        steps.append(
            {
                "kind": ev.MODEL_MESSAGE,
                "name": "message",
                "thought": thought,
                "call": "",
                "code": "",
                "result": None,
                "ok": True,
                "events": [],
                "own": [],
                "raw": lead,
                "lead": [m for m in lead if m.kind == ev.MODEL_MESSAGE],
                "assets": [],
                "call_id": None,
                "ordinal": events[-1].ordinal,
            }
        )
    return [
        Step(
            "model",
            s["name"],
            s["thought"],
            s["call"],
            _text(s["result"]),
            s["ok"],
            tuple(i for i in s["events"] if i is not None),
            None,
            tuple(s["assets"]),
            s["ordinal"],
            code=s["code"],
            seconds=span_seconds(s["own"]),
            cost=model_cost(s["lead"]),
            raw=tuple(raw_event(x) for x in s["raw"]),
        )
        for s in steps
    ]


def reference_steps(session: Session, task_id: int) -> list[Step]:
    rows = session.exec(
        select(ReferenceStep).where(ReferenceStep.task_id == task_id).order_by(col(ReferenceStep.ordinal))
    ).all()
    artifacts: dict[int, list[int]] = {}
    for link in session.exec(
        select(TaskAsset)
        .where(TaskAsset.task_id == task_id, TaskAsset.role == "artifact")
        .order_by(col(TaskAsset.ordinal), col(TaskAsset.id))
    ).all():
        if link.step_id is not None:
            artifacts.setdefault(link.step_id, []).append(link.asset_id)
    out = []
    for r in rows:
        if r.is_final:
            out.append(
                Step(
                    "ref",
                    "answer",
                    r.thought or "",
                    r.final_answer or "",
                    "",
                    True,
                    (),
                    r.id,
                    tuple(artifacts.get(r.id or 0, [])),
                    r.ordinal,
                )
            )
        else:
            args, code = split_code(r.tool_name or "", r.tool_args)
            out.append(
                Step(
                    "ref",
                    r.tool_name or "step",
                    without_code(r.thought or "", code),
                    _text(args) if args or not code else "",
                    r.result_text or _text(r.result),
                    True,
                    (),
                    r.id,
                    tuple(artifacts.get(r.id or 0, [])),
                    r.ordinal,
                    code=code,
                )
            )
    return out


def _norm(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch.isalnum())


def align(ref: list[Step], model: list[Step], anchors: set[tuple[int, int]]) -> list[tuple[int | None, int | None]]:
    """Weighted LCS: anchored pairs weigh 3, same tool name 1; everything else is a gap on one side."""
    n, m = len(ref), len(model)
    score = [[0.0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            best = max(score[i + 1][j], score[i][j + 1])
            w = 3.0 if (i, j) in anchors else (1.0 if _norm(ref[i].name) == _norm(model[j].name) else 0.0)
            if w:
                best = max(best, w + score[i + 1][j + 1])
            score[i][j] = best
    pairs: list[tuple[int | None, int | None]] = []
    i = j = 0
    while i < n and j < m:
        w = 3.0 if (i, j) in anchors else (1.0 if _norm(ref[i].name) == _norm(model[j].name) else 0.0)
        if w and score[i][j] == w + score[i + 1][j + 1]:
            pairs.append((i, j))
            i, j = i + 1, j + 1
        elif score[i + 1][j] >= score[i][j + 1]:
            pairs.append((i, None))
            i += 1
        else:
            pairs.append((None, j))
            j += 1
    pairs += [(k, None) for k in range(i, n)] + [(None, k) for k in range(j, m)]
    return pairs


def _value(label: Any, score: Any) -> str:
    if label is not None and score is not None:
        return f"{label} ({score:g})" if isinstance(score, (int, float)) else f"{label} ({score})"
    return str(label if label is not None else score)


def _judgements(
    session: Session, kind: str, ids: list[int], blind: BlindScope | None = None, hide: bool = False
) -> dict[int, list[Judgement]]:
    """Verdicts and current human ratings on targets of one kind, by target id; with ``hide`` (blind
    mode) only the viewer's own ratings."""
    out: dict[int, list[Judgement]] = {}
    if not ids:
        return out
    if hide:
        mine = blind.actor if blind is not None else None
        if not mine:
            return out
    vstmt = (
        select(Verdict, Judge.name, Judge.template)
        .join(Judge, Judge.id == Verdict.judge_id)  # type: ignore[arg-type]
        .where(Verdict.target_kind == kind, Verdict.target_id.in_(ids))  # type: ignore[attr-defined]
        .order_by(Verdict.id)  # type: ignore[arg-type]
    )
    for v, name, template in [] if hide else session.exec(vstmt).all():
        where = f" [{v.target_part}]" if v.target_part else ""
        out.setdefault(v.target_id, []).append(
            Judgement(
                name + where,
                _value(v.label, v.score),
                v.rationale or "",
                False,
                label=v.label,
                part=v.target_part or "",
                ref=f"verdict:{v.id}",
                read=read_letters(v.label, v.parsed) if template in EXTRACTORS else None,
            )
        )
    rstmt = (
        select(HumanRating, Annotator.name)
        .join(Annotator, col(Annotator.id) == col(HumanRating.annotator_id))
        .where(HumanRating.target_kind == kind, HumanRating.target_id.in_(ids))  # type: ignore[attr-defined]
        .order_by(col(HumanRating.id))
    )
    latest: dict[tuple[Any, ...], Judgement] = {}
    for r, name in session.exec(rstmt).all():
        if hide and name != mine:
            continue
        value = r.value
        text = ", ".join(f"{k}={v}" for k, v in value.items()) if isinstance(value, dict) else str(value)
        where = f" [{r.target_part}]" if r.target_part else ""
        latest[(r.target_id, r.annotator_id, r.target_part, r.scale)] = Judgement(
            f"{name}{where} ({r.scale})", text, r.comment or "", True
        )
    for (tid, *_), j in latest.items():
        out.setdefault(tid, []).append(j)
    return out


def gold_turns(ref: list[Step]) -> list[int]:
    """Indexes of the reference steps that are gold assistant turns (a tool call or the answer), in
    the order a step-by-step run's ``gold_index`` counts them."""
    return [i for i, st in enumerate(ref) if st.name != "step"]


def predictions_by_gold_index(model: list[Step], events: list[Event]) -> dict[int, int]:
    """Gold index → the model step holding the step-by-step prediction made for it."""
    by_id = {e.id: e for e in events}
    out: dict[int, int] = {}
    for j, st in enumerate(model):
        for eid in st.event_ids:
            e = by_id.get(eid)
            k = (e.payload or {}).get("gold_index") if e is not None and e.kind == ev.STEP_PREDICTION else None
            if isinstance(k, int):
                out.setdefault(k, j)
    return out


def _hidden_parts(hide: bool, hide_checks: bool, run_hidden: bool) -> list[str]:
    """What blind mode withholds from this viewer, as the judgements panel names it."""
    parts = ["verdicts", "other_ratings", "adjudications", "per-item score"] if hide else []
    parts += ["checkpoint results"] if hide_checks else []
    if run_hidden:
        parts += ["model"] + ([] if hide else ["per-item score"])
    return parts


def trajectory_view(session: Session, trajectory_id: int, viewer: str | None = None) -> TrajectoryView:
    """The viewer's picture of a trajectory; ``viewer`` (the acting person) brings blind mode:
    judgements they still have to rate blind on this trajectory are left out (``hidden`` says what)."""
    traj = session.get(Trajectory, trajectory_id)
    if traj is None:
        raise LookupError(f"no trajectory with id {trajectory_id}")
    scope = blind_scope(session, viewer)
    hide = scope.hides_trajectory(trajectory_id)
    hide_checks = scope.hides_checks(trajectory_id)
    run = session.get(Run, traj.run_id)
    task = session.get(Task, traj.task_id)
    assert run is not None and task is not None
    bench = session.get(Benchmark, task.benchmark_id)
    events = list(
        session.exec(
            select(Event).where(Event.trajectory_id == trajectory_id).order_by(col(Event.ordinal), col(Event.id))
        ).all()
    )
    model = model_steps(events)
    ref = reference_steps(session, task.id or 0)
    step_index = {s.step_id: i for i, s in enumerate(ref)}
    event_index = {eid: j for j, s in enumerate(model) for eid in s.event_ids}

    cps = {c.id: c for c in session.exec(select(Checkpoint).where(Checkpoint.task_id == task.id)).all()}
    results = list(
        session.exec(
            select(CheckpointResult)
            .where(CheckpointResult.trajectory_id == trajectory_id)
            .order_by(col(CheckpointResult.id))
        ).all()
    )
    cr_judgements = _judgements(session, "checkpoint_result", [r.id or 0 for r in results], scope, hide)
    anchors: set[tuple[int, int]] = set()
    placed: list[tuple[Mark, int | None, int | None, Checkpoint, CheckpointResult]] = []
    for r in results:
        cp = cps.get(r.checkpoint_id)
        if cp is None:
            continue
        mark = Mark(
            cp.key,
            cp.axis,
            cp.description or "",
            False if hide_checks else r.passed,
            "" if hide_checks else r.method,
            None if hide_checks else r.score,
            tuple(cr_judgements.get(r.id or 0, [])),
            hidden=hide_checks,
        )
        i = step_index.get(cp.step_id) if cp.step_id is not None else None
        j = event_index.get(r.matched_event_id) if r.matched_event_id is not None else None
        if i is not None and j is not None:
            anchors.add((i, j))
        placed.append((mark, i, j, cp, r))
    gold_rows = gold_turns(ref)
    predicted_at = predictions_by_gold_index(model, events) if run.mode == "step" else {}
    # step mode: each prediction sits beside the gold step it was asked for, whatever tool it chose
    anchors |= {(gold_rows[k], j) for k, j in predicted_at.items() if 0 <= k < len(gold_rows)}

    pairs = align(ref, model, anchors)
    row_of_model = {j: k for k, (_, j) in enumerate(pairs) if j is not None}
    row_of_ref = {i: k for k, (i, _) in enumerate(pairs) if i is not None}
    row_model = [model[j] if j is not None else None for _, j in pairs]
    answer_rows = [k for k, m in enumerate(row_model) if m is not None and m.name == "answer"]
    answer_row = answer_rows[-1] if answer_rows else None  # what judgements of the answer are about
    marks_at: dict[int, list[Mark]] = {}
    unplaced: list[Mark] = []
    claims: list[tuple[int | None, Claim]] = []
    for mark, i, j, cp, r in placed:
        k = row_of_model.get(j) if j is not None else (row_of_ref.get(i) if i is not None else None)
        if k is None:
            unplaced.append(mark)
        else:
            marks_at.setdefault(k, []).append(mark)
        if not hide_checks:
            on_answer = bool(cp.answer_check) or (i is not None and ref[i].name == "answer")
            step = row_model[k] if k is not None else None
            claims.append(
                (
                    answer_row if on_answer and k is None else k,
                    Claim(
                        f"checkpoint:{r.id}",
                        f"checkpoint {cp.key}",
                        r.passed,
                        "answer" if on_answer else "step",
                        step_failed=step is not None and not step.ok,
                    ),
                )
            )
    ev_judgements = _judgements(session, "event", [e.id or 0 for e in events], scope, hide)
    row_judgements: list[tuple[Judgement, ...]] = []
    for k, m in enumerate(row_model):
        js = tuple(x for eid in (m.event_ids if m else ()) for x in ev_judgements.get(eid, []))
        row_judgements.append(js)
        for x in js:
            if not x.human and m is not None:
                on_answer = m.name == "answer"
                claims.append(
                    (k, Claim(x.ref, x.who, polarity(x.label), "answer" if on_answer else "step", step_failed=not m.ok))
                )

    top: list[Judgement] = []
    misread: list[Contradiction] = []  # extractions that read another option than the answer names
    for kind in ("trajectory", "block_question", "image_question"):
        found = _judgements(session, kind, [trajectory_id], scope, hide).get(trajectory_id, [])
        top += found
        if kind == "trajectory":
            claims += [
                (answer_row, Claim(x.ref, x.who, polarity(x.label), "answer"))
                for x in found
                if not x.human and about_answer(x.part)
            ]
            misread = literal_contradictions(
                [Extraction(x.ref, x.who, x.read) for x in found if x.read is not None and reads_the_answer(x.part)],
                traj.final_answer,
            )

    run_hidden = scope.why_hidden([traj.run_id])  # blind work on this run: no model name, no run score
    outcome = None if hide or run_hidden else trajectory_outcome(session, trajectory_id)
    steps_at: dict[int, list[StepMark]] = {}
    for sm in outcome.steps if outcome else ():
        j = predicted_at.get(sm.gold_index)
        k = row_of_model.get(j) if j is not None else None
        if k is None and 0 <= sm.gold_index < len(gold_rows):
            k = row_of_ref.get(gold_rows[sm.gold_index])
        if k is not None:
            steps_at.setdefault(k, []).append(sm)
    where = {c.ref: k for k, c in claims} | {c.ref: answer_row for c in misread}
    # A score decided by a misreading of the answer is no measure of the other judgements.
    right = None if misread or outcome is None else outcome.right
    found_all = misread + contradictions([c for _, c in claims], right, outcome.score if outcome else None)
    flagged = [(where.get(c.ref), c) for c in found_all]
    rows = [
        Row(
            ref[i] if i is not None else None,
            row_model[k],
            tuple(marks_at.get(k, [])),
            row_judgements[k],
            tuple(steps_at.get(k, [])),
            tuple(c for at, c in flagged if at == k),
        )
        for k, (i, _) in enumerate(pairs)
    ]
    siblings = list(
        session.exec(select(Trajectory.id).where(Trajectory.run_id == traj.run_id).order_by(col(Trajectory.id))).all()
    )
    asset_ids = {a for s in ref + model for a in s.asset_ids}
    images = (
        {
            a.id: a.sha256
            for a in session.exec(select(Asset).where(Asset.id.in_(asset_ids))).all()  # type: ignore[union-attr]
            if a.mime.startswith("image/")
        }
        if asset_ids
        else {}
    )
    task_images = tuple(
        session.exec(
            select(Asset.sha256)
            .join(TaskAsset, TaskAsset.asset_id == Asset.id)  # type: ignore[arg-type]
            .where(TaskAsset.task_id == task.id, TaskAsset.role == "query_image")
            .order_by(TaskAsset.ordinal)  # type: ignore[arg-type]
        ).all()
    )
    spec = task.answer_spec or {}
    expected = _text({k: v for k, v in spec.items() if k != "kind"}) if spec.get("kind") not in (None, "none") else ""
    return TrajectoryView(
        id=trajectory_id,
        run_id=run.id or 0,
        run_name=f"run {run.id}" if run_hidden else run.name or f"run {run.id}",
        mode=run.mode,
        task_id=task.id or 0,
        source_id=task.source_id,
        benchmark=bench.name if bench else "",
        query=task.query,
        expected=expected,
        status=traj.status,
        final_answer=traj.final_answer or "",
        usage=dict(traj.usage or {}),
        error=clip(traj.error or "", 400),
        rows=rows,
        unplaced=unplaced,
        judgements=top,
        siblings=siblings,
        images={k: v for k, v in images.items() if k is not None},
        task_images=task_images,
        hidden=_hidden_parts(hide, hide_checks, bool(run_hidden)),
        task_revision=traj.task_revision,
        current_revision=task.revision,
        outcome=outcome,
        gold=describe(spec) if spec.get("kind") not in (None, "none") else "",
        contradictions=flagged,
    )
