"""``judge_run``: ask one judge every question a run's scorer still needs it to answer.

How it finds the questions: it scores the run with an oracle that only knows this judge's verdicts;
every request the profile made for this judge and got no answer for is a question to ask. Some
questions only exist after others are answered (Agentic-MME's one-to-one search matching, ATP's chief
judge that reads the two inspectors' reports), so this repeats until nothing new comes up.
Model calls happen outside any write transaction; each answer (its reply in the replay cache, and its
verdict) is written the moment it arrives, so a killed or refused judge run keeps every answered call.

A queued judge (``evaluation.judges.queue``) runs the same function on one trajectory at a time
(``trajectory_ids``) with a ``guard``: checked inside each answer's write transaction, it says whether
the worker still holds the work item; when it does not, nothing is written and the run stops.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from evaluation.benchmarks import ScoreContext
from evaluation.judges.client import (
    JudgeError,
    cache_key,
    cached_replies,
    call_params,
    complete,
    resolve_images,
)
from evaluation.judges.oracle import StoreOracle
from evaluation.modelcall.endpoint import EndpointSpec
from evaluation.judges.parsers import ASK_AGAIN_PARSERS, parse
from evaluation.judges.reference_prompts import template_for
from evaluation.judges.rubrics import RUBRIC_JUDGE, RubricError
from evaluation.judges.templates import Template
from evaluation.modelcall.replay_key import replay_key
from evaluation.scoring.embedding import HashingEmbedder
from evaluation.scoring.loader import LoadedRun, load_run
from evaluation.scoring.runner import profile_for
from store import read_only, session_scope
from store.blobs import BlobStore
from store.dialects import conflict_insert, is_postgresql
from store.models import Judge, ModelEndpoint, ReplayCache, Verdict, utcnow
from store.settings import current as current_settings


def ensure_judge(
    engine: Engine, judge: str, endpoint: str, actor: str | None = None, mode: str = "faithful"
) -> tuple[str, EndpointSpec]:
    """The Judge row for (template, endpoint), named ``<judge>@<endpoint>``; created on first use."""
    setup = judge_setup(engine, judge, endpoint, mode, actor)
    return setup.name, setup.endpoint


def _keep_reply(s: Session, key: str, request: dict[str, Any], response: dict[str, Any]) -> None:
    """Record a judge reply in the replay cache unless the key is there. On PostgreSQL queued judge
    workers may record the same question at once (two runs with the same answer): the first wins,
    the others' verdicts are still written."""
    if is_postgresql(s):
        row = {"key": key, "kind": "judge", "request": request, "response": response, "created_at": utcnow()}
        cache = ReplayCache.__table__  # type: ignore[attr-defined]
        s.execute(conflict_insert(s)(cache).values(**row).on_conflict_do_nothing(index_elements=["key"]))
    elif s.exec(select(ReplayCache.id).where(ReplayCache.key == key)).first() is None:
        s.add(ReplayCache(key=key, kind="judge", request=request, response=response))


@dataclass(frozen=True)
class JudgeSetup:
    """What ``ensure_judge`` settles for (template, endpoint, mode): the Judge row, the endpoint (its
    key is still read from the environment at each call) and the template its prompts are built from.
    A queued worker keeps it for a few seconds across items (``SetupCache``)."""

    name: str
    judge_id: int
    endpoint: EndpointSpec
    template: Template


def judge_setup(engine: Engine, judge: str, endpoint: str, mode: str, actor: str | None = None) -> JudgeSetup:
    """``ensure_judge``'s work, keeping the row's id and the template (one transaction)."""
    with session_scope(engine, actor=actor) as s:
        tpl = template_for(s, judge, mode)
        ep = s.exec(select(ModelEndpoint).where(ModelEndpoint.name == endpoint)).first()
        if ep is None:
            known = ", ".join(s.exec(select(ModelEndpoint.name)).all()) or "none"
            raise JudgeError(f"no model endpoint named {endpoint!r} (known: {known})")
        name = f"{judge}@{endpoint}"
        row = s.exec(select(Judge).where(Judge.name == name)).first()
        if row is None:
            row = Judge(name=name, endpoint_id=ep.id, template=judge, template_version=tpl.version, params=tpl.params)
            s.add(row)
            s.flush()
        elif row.template_version != tpl.version:
            row.template_version, row.params = tpl.version, tpl.params
        return JudgeSetup(name, int(row.id or 0), EndpointSpec.of(ep), tpl)


class SetupCache:
    """``JudgeSetup``s for one worker process, each reused for ``ttl`` seconds: a template imported or
    an endpoint edited while items are judged is picked up within that time, as by a fresh worker."""

    def __init__(self, ttl: float = 10.0):
        self.ttl = ttl
        self._lock = threading.Lock()
        self._held: dict[tuple[str, str, str], tuple[float, JudgeSetup]] = {}

    def get(self, engine: Engine, judge: str, endpoint: str, mode: str, actor: str | None = None) -> JudgeSetup:
        key = (judge, endpoint, mode)
        with self._lock:
            held = self._held.get(key)
        if held is not None and held[0] > time.monotonic():
            return held[1]
        setup = judge_setup(engine, judge, endpoint, mode, actor)
        with self._lock:
            self._held[key] = (time.monotonic() + self.ttl, setup)
        return setup


def _prepare(
    engine: Engine,
    run_id: int,
    judge: str,
    endpoint: str,
    mode: str,
    actor: str | None,
    trajectory_ids: list[int] | None,
    setup: JudgeSetup | None = None,
    rubric_version: str | None = None,
) -> tuple[JudgeSetup, Any, LoadedRun]:
    if setup is None:
        setup = judge_setup(engine, judge, endpoint, mode, actor)
    with session_scope(read_only(engine)) as s:
        loaded = load_run(s, run_id, trajectory_ids)
    profile = profile_for(loaded)
    if judge not in profile.judges:
        raise JudgeError(f"the {profile.name} profile has no judge {judge!r}; its judges: {', '.join(profile.judges)}")
    if judge == RUBRIC_JUDGE:
        setup = replace(setup, template=_rubric(engine, str(loaded.benchmark.get("name") or ""), mode, rubric_version))
    elif rubric_version is not None:
        raise JudgeError(f"--rubric-version is for the {RUBRIC_JUDGE} judge, not {judge!r}")
    return setup, profile, loaded


def _rubric(engine: Engine, benchmark: str, mode: str, version: str | None) -> Template:
    """The rubric the benchmark's questions are asked with: its authored version ``version`` (else its
    newest), or the built-in template when its author wrote none."""
    try:
        with session_scope(read_only(engine)) as s:
            return template_for(s, RUBRIC_JUDGE, mode, benchmark, version)
    except RubricError as exc:
        raise JudgeError(str(exc)) from None


def check_judge(engine: Engine, run_id: int, judge: str, endpoint: str, mode: str, actor: str | None = None) -> str:
    """What ``judge_run`` checks first (the run, the endpoint, the profile's judges), without asking:
    for queueing. Returns the judge's name."""
    return _prepare(engine, run_id, judge, endpoint, mode, actor, [])[0].name


def judge_run(
    engine: Engine,
    blobs: BlobStore,
    run_id: int,
    judge: str,
    endpoint: str,
    *,
    mode: str = "faithful",
    max_rounds: int = 64,
    limit: int | None = None,
    actor: str | None = None,
    trajectory_ids: list[int] | None = None,
    guard: Callable[[Session], bool] | None = None,
    setup: JudgeSetup | None = None,
    rubric_version: str | None = None,
) -> dict[str, Any]:
    """``setup``: a ``JudgeSetup`` for (judge, endpoint, mode) made beforehand (a queued worker reuses
    one across items); made here when not given. The run is read once: only verdicts change between
    rounds, and each round reads those afresh. ``rubric_version``: for the rubric judge, the authored
    rubric version to ask with (default: the benchmark's newest, or the built-in when none was written).
    A reply without a usable score (``ASK_AGAIN_PARSERS``) is asked again, under a new replay key, up to
    the ``judge_attempts`` setting in all."""
    setup, profile, loaded = _prepare(
        engine, run_id, judge, endpoint, mode, actor, trajectory_ids, setup, rubric_version
    )
    attempts = current_settings().judge_attempts
    judge_name, ep = setup.name, setup.endpoint
    template = setup.template.describe()
    if judge == RUBRIC_JUDGE and not setup.template.source:
        template = f"{setup.template.ref}, the built-in rubric: {loaded.benchmark.get('name')!r} has no authored rubric"
    stats: dict[str, Any] = {
        "judge": judge_name,
        "template": template,
        "asked": 0,
        "model_calls": 0,
        "cache_hits": 0,
        "verdicts": 0,
        "unparsed": 0,
        "asked_again": 0,  # questions asked again after a reply without a usable score
        "rounds": 0,
        "lost": False,  # with a guard: the work item was taken over, this round's verdicts not written
    }
    seen: set[tuple[int, str, str]] = set()  # (target, part, replay key) asked in this run
    for _ in range(max_rounds):
        with session_scope(read_only(engine)) as s:
            # Only this judge answers its own questions; other judges' verdicts still feed the
            # prompts built from them (ATP's chief reads the inspectors' reports).
            oracle = StoreOracle(
                s,
                loaded.items,
                prefer=[judge_name],
                only=True,
                only_template=judge,
                mode=mode,
                benchmark=str(loaded.benchmark.get("name") or ""),
                ask_again=attempts,
            )
            oracle.prompts.templates.setdefault(judge, setup.template)  # other judges' as before
            # Judges never need embeddings; a hashing embedder keeps this pass light.
            ctx = ScoreContext(
                mode=mode, run_mode=loaded.run.get("mode") or "atomic", oracle=oracle, embedder_factory=HashingEmbedder
            )
            profile.score(loaded.items, ctx)
            todo: list[tuple[Any, ...]] = []
            for req in oracle.pending:
                if req.judge != judge:
                    continue
                tpl, messages, h = oracle.prompts.build(req)
                params = call_params(ep, {**tpl.params, **dict(req.params)})
                todo.append((req, tpl, messages, h, params, cache_key(h, ep, params)))
            todo = _current_attempts(s, todo, attempts)
            todo = [t for t in todo if (t[0].target_id, t[0].target_part, t[5]) not in seen]
            seen.update((t[0].target_id, t[0].target_part, t[5]) for t in todo)
            if limit is not None:
                todo = todo[: max(0, limit - stats["asked"])]
            stats["asked_again"] += sum(1 for t in todo if t[5] != t[7] and t[6] is None)
            todo = [t[:7] for t in todo]
            resolved = [(t, resolve_images(s, blobs, t[2]) if t[6] is None else None) for t in todo]
        if not todo:
            break
        stats["rounds"] += 1
        asked = _ask_and_store(engine, actor, guard, setup, resolved, stats)
        if asked is None:
            return stats
        stats["asked"] += asked
        if limit is not None and stats["asked"] >= limit:
            break
    return stats


def attempt_key(key: str, attempt: int) -> str:
    """The replay key of the ``attempt``-th asking of the question whose first key is ``key``: the first is
    ``key`` itself (caches written before attempts existed still answer), each later one its own."""
    return key if attempt <= 1 else replay_key("judge", {"again": key, "attempt": attempt})


def _current_attempts(s: Session, todo: list[tuple[Any, ...]], attempts: int) -> list[tuple[Any, ...]]:
    """Each question as ``(req, tpl, messages, hash, params, key, cached reply, first key)``, at the first
    attempt whose reply is not recorded yet or is usable: a recorded reply without a usable score is not
    served again, the next attempt's key is asked instead. When every attempt's reply is recorded and
    unusable, the last one is served (its verdict is unparsable; the score counts it as pending)."""
    tries = {
        t[5]: [attempt_key(t[5], n) for n in range(1, (attempts if t[1].parser in ASK_AGAIN_PARSERS else 1) + 1)]
        for t in todo
    }
    replies = cached_replies(s, [k for keys in tries.values() for k in keys])
    out = []
    for t in todo:
        tpl, keys = t[1], tries[t[5]]
        chosen = next((k for k in keys if k not in replies or parse(tpl.parser, replies[k]).ok), keys[-1])
        out.append((*t[:5], chosen, replies.get(chosen), t[5]))
    return out


def _ask_and_store(
    engine: Engine,
    actor: str | None,
    guard: Callable[[Session], bool] | None,
    setup: JudgeSetup,
    resolved: list[tuple[tuple[Any, ...], Any]],
    stats: dict[str, Any],
) -> int | None:
    """A round's questions: those answered from the cache stored together, then each model call stored
    the moment it is answered (its own transaction), so a kill loses no answered call and a rerun finds
    it in the replay cache instead of paying for it again. How many were asked; None when the guard
    says the work item is no longer this worker's (nothing more is written)."""
    cached = [
        (req, tpl, h, params, key, reply, None)
        for (req, tpl, _m, h, params, key, reply), _w in resolved
        if reply is not None
    ]
    stats["cache_hits"] += len(cached)
    if cached and not _store_answers(engine, actor, guard, setup, cached, stats):
        return None
    asked = len(cached)
    for (req, tpl, _messages, h, params, key, reply), wire in resolved:
        if reply is not None:
            continue
        answer = _ask(setup.endpoint, wire or [], params, stats)
        stats["model_calls"] += 1
        if not _store_answers(
            engine, actor, guard, setup, [(req, tpl, h, params, key, answer["content"], answer)], stats
        ):
            return None
        asked += 1
    return asked


def _ask(ep: EndpointSpec, wire: list[dict[str, Any]], params: dict[str, Any], stats: dict[str, Any]) -> dict[str, Any]:
    """One call to the judge; a failure says how many answers of this run were stored before it."""
    try:
        return complete(ep, wire, params)
    except JudgeError as exc:
        exc.kept = int(stats["verdicts"])
        raise


def _store_answers(
    engine: Engine,
    actor: str | None,
    guard: Callable[[Session], bool] | None,
    setup: JudgeSetup,
    answers: list[tuple[Any, ...]],
    stats: dict[str, Any],
) -> bool:
    """Write ``answers`` (replies to keep, and their verdicts) in one transaction; False, and nothing
    written, when the guard says the work item is no longer this worker's."""
    ep = setup.endpoint
    unparsed = 0
    with session_scope(engine, actor=actor) as s:
        if guard is not None and not guard(s):
            stats["lost"] = True
            return False
        for req, tpl, h, params, key, text, reply in answers:
            if reply is not None:
                _keep_reply(
                    s,
                    key,
                    {
                        "prompt_hash": h,
                        "template": tpl.ref,
                        "endpoint": ep.name,
                        "model": ep.model,
                        "params": params,
                        "target": [req.target_kind, req.target_id, req.target_part],
                    },
                    {"content": text, "usage": reply.get("usage"), "model": reply.get("model")},
                )
            p = parse(tpl.parser, text)
            unparsed += not p.ok
            s.add(
                Verdict(
                    judge_id=setup.judge_id,
                    target_kind=req.target_kind,
                    target_id=req.target_id,
                    target_part=req.target_part,
                    label=p.label,
                    score=p.score,
                    rationale=p.rationale,
                    parsed=p.parsed,
                    raw_output=text,
                    prompt_hash=h,
                    template_version=tpl.version,
                )
            )
    stats["verdicts"] += len(answers)
    stats["unparsed"] += unparsed
    return True
