"""The store-backed judge oracle: answers a scorer's ``JudgeRequest`` from stored Verdict rows.

A verdict answers a request when it is about the same target and was made from the very same prompt
(same template version, same rendered text, same image bytes: the prompt hash). So a changed
checkpoint or a re-run trajectory never silently reuses an old verdict. When several judges answered
the same prompt, the ones named in ``prefer`` win, then the oldest judge; ``only`` restricts to them,
and ``only_template`` narrows that restriction to one template's questions: a judge being run sees
only its own verdicts for its own questions, yet every judge's verdicts for the questions its prompt
is built from (ATP's chief judge reads the precision and recall inspectors' reports).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from evaluation.judges.parsers import ASK_AGAIN_PARSERS, UNPARSED
from evaluation.judges.reference_prompts import template_for
from evaluation.judges.templates import Template, TemplateError, prompt_hash, render, required_variables
from evaluation.scoring.items import Item, JudgeAnswer, JudgeRequest
from store.core_tables import Reader, asset, connection_of, judge, verdict


class PromptBuilder:
    """Renders requests and hashes their images (asset ids via the items' hashes or the DB; paths by bytes)."""

    def __init__(
        self,
        session: Reader | None,
        asset_sha: dict[int, str] | None = None,
        mode: str = "faithful",
        benchmark: str | None = None,
    ):
        self.session = session
        self.asset_sha = dict(asset_sha or {})
        self.mode = mode
        self.benchmark = benchmark  # whose authored rubric the rubric judge's questions use
        self.templates: dict[str, Template] = {}  # judge → the template its questions were rendered with
        self._needed: dict[str, frozenset[str] | None] = {}  # judge → its template's variables

    def image_sha(self, ref: Any) -> str:
        if isinstance(ref, int) and not isinstance(ref, bool):
            if ref not in self.asset_sha:
                found = (
                    connection_of(self.session).execute(sa.select(asset.c.sha256).where(asset.c.id == ref)).first()
                    if self.session is not None
                    else None
                )
                if found is None:
                    raise LookupError(f"judge prompt names asset {ref}, which does not exist")
                self.asset_sha[ref] = found.sha256
            return self.asset_sha[ref]
        path = Path(str(ref))
        if path.is_file():
            return hashlib.sha256(path.read_bytes()).hexdigest()
        # An image we cannot read (e.g. a path from another machine): scoring can still look verdicts
        # up by name; asking a judge about it fails with a clear error when the image is sent.
        return hashlib.sha256(f"unresolved:{ref}".encode()).hexdigest()

    def template(self, judge: str) -> Template:
        tpl = self.templates.get(judge)
        if tpl is None:
            tpl = self.templates[judge] = template_for(self.session, judge, self.mode, self.benchmark)
        return tpl

    def build(self, req: JudgeRequest) -> tuple[Template, list[dict[str, Any]], str]:
        tpl = self.template(req.judge)
        messages = render(tpl, req.vars, list(req.images))
        return tpl, messages, prompt_hash(tpl, messages, self.image_sha)

    def check(self, req: JudgeRequest) -> None:
        """Fail where ``build`` would (a variable the template needs, an asset that does not exist) without
        rendering or hashing: a question no verdict can answer needs no prompt hash."""
        tpl = self.template(req.judge)
        if req.judge not in self._needed:
            self._needed[req.judge] = required_variables(tpl)
        needed = self._needed[req.judge]
        if needed is None:  # interleaved parts: only rendering checks them
            render(tpl, req.vars, list(req.images))
        else:
            given = {k for k, _ in req.variables}
            missing = sorted(needed - given)
            if missing:
                raise TemplateError(
                    f"template {tpl.ref} needs variable {missing[0]!r}; given: {', '.join(sorted(given))}"
                )
        for ref in req.images:
            if isinstance(ref, int) and not isinstance(ref, bool):
                self.image_sha(ref)


class StoreOracle:
    """Answers from Verdict rows of the given trajectories; remembers every unanswered request."""

    def __init__(
        self,
        session: Reader,
        items: list[Item],
        *,
        prefer: list[str] | None = None,
        only: bool = False,
        only_template: str | None = None,
        mode: str = "faithful",
        benchmark: str | None = None,
        ask_again: int = 1,
    ):
        self.prefer = list(prefer or [])
        self.only = only
        # A judge run's oracle: a question of ``only_template`` whose newest verdict has no usable score
        # (a parser in ASK_AGAIN_PARSERS) is pending again until it has this many such verdicts.
        self.ask_again = ask_again
        self.only_template = only_template
        shas: dict[int, str] = {}
        for it in items:
            shas.update(it.asset_sha)
        self.prompts = PromptBuilder(session, shas, mode, benchmark)
        self.pending: list[JudgeRequest] = []
        self.used_judges: set[str] = set()
        # (judge id, judge name, the verdict's row: id, label, score, parsed, raw_output) per question
        self._index: dict[tuple[str, int, str, str], list[tuple[int, str, Any]]] = {}
        self._parts: set[tuple[str, int, str]] = set()  # (template, target, part) some verdict answered
        ids = [int(it.trajectory["id"]) for it in items if it.trajectory.get("id") is not None]
        conn = connection_of(session)
        v, j = verdict.c, judge.c
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            rows = conn.execute(
                sa.select(
                    v.id,
                    v.label,
                    v.score,
                    v.parsed,
                    v.raw_output,
                    v.target_id,
                    v.target_part,
                    v.prompt_hash,
                    j.id.label("judge_id"),
                    j.name.label("judge_name"),
                    j.template.label("judge_template"),
                )
                .join_from(verdict, judge, j.id == v.judge_id)
                .where(v.target_kind == "trajectory", v.target_id.in_(chunk))
                .order_by(v.id)
            ).all()
            for r in rows:
                key = (r.judge_template, r.target_id, r.target_part, r.prompt_hash or "")
                self._index.setdefault(key, []).append((r.judge_id or 0, r.judge_name, r))
                self._parts.add(key[:3])

    def _choose(self, found: list[tuple[int, str, Any]], template: str) -> tuple[str, Any] | None:
        if self.only and self.only_template in (None, template):
            found = [f for f in found if f[1] in self.prefer]
        if not found:
            return None
        ranked = sorted(
            found,
            key=lambda f: (self.prefer.index(f[1]) if f[1] in self.prefer else len(self.prefer), f[0], -(f[2].id or 0)),
        )
        return ranked[0][1], ranked[0][2]

    def _asks_again(self, template: str, name: str, v: Any, found: list[tuple[int, str, Any]]) -> bool:
        """Whether the chosen verdict ``v`` (by judge ``name``) has no usable score and may be asked again:
        only in a judge run (``ask_again`` > 1) of this template, for parsers that ask again, and while the
        judge has fewer unparsable verdicts about this prompt than ``ask_again``."""
        if self.ask_again <= 1 or v.label != UNPARSED or template != self.only_template:
            return False
        if self.prompts.template(template).parser not in ASK_AGAIN_PARSERS:
            return False
        tries = sum(1 for f in found if f[1] == name and f[2].label == UNPARSED)
        return tries < self.ask_again

    def ask(self, request: JudgeRequest) -> JudgeAnswer | None:
        if (request.judge, request.target_id, request.target_part) not in self._parts:
            # No verdict about this question at all, whatever its prompt: pending, without the prompt
            # hash (rendering and hashing were most of scoring an unjudged VTC run's judge rows).
            self.prompts.check(request)
            self.pending.append(request)
            return None
        _, _, h = self.prompts.build(request)
        found = self._index.get((request.judge, request.target_id, request.target_part, h), [])
        chosen = self._choose(found, request.judge)
        if chosen is None:
            self.pending.append(request)
            return None
        name, v = chosen
        if self._asks_again(request.judge, name, v, found):
            self.pending.append(request)
            return None
        self.used_judges.add(name)
        return JudgeAnswer(
            label=v.label, score=v.score, parsed=v.parsed, raw_output=v.raw_output, judge_name=name, verdict_id=v.id
        )
