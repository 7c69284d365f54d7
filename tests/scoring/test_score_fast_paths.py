"""The fast paths of ``chainmark score`` give what the general ones gave: stored CheckpointResult rows
byte for byte (plain ``executemany`` on SQLite vs Core statements), and the same ``ScoreResult``
whether its per-item rows and outcomes are checked by the plain loop or by the validators."""

from __future__ import annotations

import json
import math
import random
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, cast

import pytest
import sqlalchemy as sa
from pydantic import ValidationError

from evaluation.benchmarks import get_profile
from evaluation.benchmarks.base import ScoreContext
from evaluation.scoring import runner
from evaluation.scoring.checkpoints import CheckpointOutcome
from evaluation.scoring.embedding import HashingEmbedder
from evaluation.scoring.items import NoJudges
from evaluation.scoring.results import ScoreResult
from store import make_engine, session_scope
from store.migrate import upgrade
from tests.support.scoring_runs import PROFILES, amme_item, gta_item, vtc_item, write_run

FIXED_NOW = datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=timezone.utc)


def _outcomes(engine: sa.engine.Engine, rng: random.Random, flip: bool) -> list[tuple[int, CheckpointOutcome]]:
    """Outcomes over the run's real trajectories, checkpoints and events, with awkward values: repeated
    keys (the last wins), no checkpoint id (skipped), scores of every type, unicode, NaN, nesting."""
    with engine.connect() as c:
        trajs = [r[0] for r in c.execute(sa.text("SELECT id FROM trajectory ORDER BY id"))]
        cps = [r[0] for r in c.execute(sa.text("SELECT id FROM checkpoint ORDER BY id"))]
        events = [r[0] for r in c.execute(sa.text("SELECT id FROM event ORDER BY id"))]
    scores = [None, 0, 1, 7.5, -0.0, 1e-300, float("nan"), True, "0.9"]
    out = []
    for k in range(400):
        traj, cp = rng.choice(trajs), rng.choice(cps)
        detail = {
            "score": rng.choice(scores),
            "note": rng.choice(["", "ünïcødé ✓", 'quote " and \\ back', "\u0000nul", "日本語"]),
            "nested": {"list": [1, 2.5, None, {"a": [True, False]}], "empty": {}},
            "flip": flip,
        }
        passed = rng.random() < 0.5
        event = rng.choice([None, rng.choice(events)])
        method = rng.choice(["rule", "judge"])
        cp_id = None if k % 37 == 0 else cp
        out.append((traj, CheckpointOutcome(cp_id, f"K{k}", passed != flip, event, method, detail)))
    return out


def _table(engine: sa.engine.Engine) -> list[tuple]:
    with engine.connect() as c:
        return list(
            c.execute(
                sa.text(
                    "SELECT id, trajectory_id, checkpoint_id, quote(passed), quote(score), quote(matched_event_id), "
                    "method, scoring_mode, quote(detail), quote(created_at) FROM checkpointresult ORDER BY id"
                )
            )
        )


def test_sqlite_writer_stores_what_core_statements_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner, "utcnow", lambda: FIXED_NOW)
    tables = []
    for name in ("core", "plain"):
        engine = make_engine(tmp_path / f"{name}.db")
        upgrade(engine)
        write_run(engine, "agentic-mme", 40)
        if name == "core":
            monkeypatch.setattr(runner, "_write_sqlite", runner._write_core)
        else:
            monkeypatch.undo()
            monkeypatch.setattr(runner, "utcnow", lambda: FIXED_NOW)
        written = []
        # insert, update, the same rows again (an unchanged row is left as stored), insert
        for mode, flip in (("faithful", False), ("faithful", True), ("faithful", True), ("fixed", False)):
            with session_scope(engine) as s:
                written.append(runner.write_outcomes(s, _outcomes(engine, random.Random(3), flip), mode))
        tables.append((written, _table(engine)))
        engine.dispose()
    (core_n, core_rows), (plain_n, plain_rows) = tables
    assert core_n == plain_n and core_rows == plain_rows
    assert len(core_rows) > 300  # inserts and updates both happened
    assert any("NaN" in r[8] for r in plain_rows) and any("\\u00fc" in r[8] for r in plain_rows)


BUILDERS = {"gta": gta_item, "agentic-mme": amme_item, "vtc": vtc_item}


@pytest.mark.parametrize("profile", sorted(PROFILES))
@pytest.mark.parametrize("mode", ["faithful", "fixed"])
def test_plain_row_check_builds_the_validated_result(profile: str, mode: str) -> None:
    rng = random.Random(11)
    items = [BUILDERS[profile](i, rng) for i in range(150)]

    def ctx() -> ScoreContext:
        return ScoreContext(mode=mode, run_mode=PROFILES[profile], oracle=NoJudges(), embedder_factory=HashingEmbedder)

    fast = get_profile(profile).score(items, ctx())
    fields = fast.model_dump(exclude={"per_item", "outcomes"})
    slow = ScoreResult(**fields, per_item=fast.per_item, outcomes=fast.outcomes)
    assert fast.model_dump() == slow.model_dump() and fast.outcomes == slow.outcomes
    assert fast.public(per_item=True) == slow.public(per_item=True)
    assert {"per_item", "outcomes"} <= fast.model_fields_set


def _fields() -> dict:
    return {"profile": "gta", "mode": "faithful", "run_mode": "react", "metrics": {"x": 1.0}}


def test_rows_the_loop_does_not_recognise_still_go_through_the_validators() -> None:
    # a trajectory id the validators refuse
    for bad in ({"trajectory_id": True}, {"trajectory_id": "3"}, {"trajectory_id": None}, {}):
        with pytest.raises(ValidationError):
            ScoreResult.with_rows([{"trajectory_id": 1}, bad], [], **_fields())
        with pytest.raises(ValidationError):
            ScoreResult(**_fields(), per_item=[{"trajectory_id": 1}, bad])
    # outcomes the validators coerce: the same coercion
    odd: Any = [(1, "a"), ("2", "b"), [3, "c"]]
    assert ScoreResult.with_rows([], odd, **_fields()).outcomes == ScoreResult(**_fields(), outcomes=odd).outcomes
    with pytest.raises(ValidationError):
        ScoreResult.with_rows([], cast(Any, [(1, "a", "extra")]), **_fields())
    # a row keyed by something other than a string: validated (and refused) as before
    with pytest.raises(ValidationError):
        ScoreResult.with_rows([cast(Any, {"trajectory_id": 1, 2: "x"})], [], **_fields())
    assert not math.isnan(ScoreResult.with_rows([{"trajectory_id": 4}], [], **_fields()).per_item[0]["trajectory_id"])


def _public(engine: sa.engine.Engine, run_id: int, mode: str) -> str:
    res = runner.score_run(engine, run_id, mode=mode, embedder="hashing", write=False)
    return json.dumps(res.public(per_item=True), sort_keys=True, default=str)


@pytest.mark.parametrize("mode", ["faithful", "fixed"])
def test_a_run_scored_in_chunks_gives_the_whole_runs_result(
    engine: sa.engine.Engine, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    """GTA runs larger than ``runner.CHUNK`` are loaded and scored a chunk at a time (flat memory at
    100k): the JSON, per-item rows included, is the one-pass result wherever the chunks are cut. Some
    tasks carry checkpoint trees (judged checkpoints, none judged yet: pending per chunk oracle)."""
    run_id = write_run(engine, "gta", 61)
    with engine.begin() as c:
        tasks = [r[0] for r in c.execute(sa.text("SELECT id FROM task ORDER BY id"))]
        for n, task in enumerate(tasks[::5]):
            parent = c.execute(
                sa.text(
                    "INSERT INTO checkpoint (task_id, key, ordinal, axis, description, tools, weight, meta) "
                    "VALUES (:t, :k, 0, 'V', 'root', '[]', 1.0, '{}') RETURNING id"
                ),
                {"t": task, "k": f"root{n}"},
            ).scalar_one()
            for k in range(n % 3):
                c.execute(
                    sa.text(
                        "INSERT INTO checkpoint (task_id, parent_id, key, ordinal, axis, description, tools, "
                        "weight, meta) VALUES (:t, :p, :k, :o, 'V', 'leaf', '[]', 2.0, '{}')"
                    ),
                    {"t": task, "p": parent, "k": f"leaf{n}.{k}", "o": k + 1},
                )
    monkeypatch.setattr(runner, "CHUNK", 100_000)
    whole = _public(engine, run_id, mode)
    for size in (1, 7, 60):
        monkeypatch.setattr(runner, "CHUNK", size)
        assert _public(engine, run_id, mode) == whole, size
    assert '"pending_judgements": 0' not in whole  # the checkpoint trees were asked about


def _uncached_iscorrect(pred: str, ref: dict, mode: str) -> bool:
    """``gta_iscorrect`` as it was before its patterns were cached: ``re.search`` on the pattern text."""
    from evaluation.scoring.matchers import _alias_pattern

    whitelist = ref.get("whitelist") or []
    count = sum(1 for a in whitelist if re.search(_alias_pattern(a, mode), pred, re.IGNORECASE))
    if count != len(whitelist):
        return False
    blacklist = ref.get("blacklist")
    if not blacklist:
        return True
    return not re.search(_alias_pattern([x for a in blacklist for x in a], mode), pred, re.IGNORECASE)


def test_cached_alias_patterns_match_as_the_uncached_ones() -> None:
    from evaluation.scoring.matchers import gta_iscorrect

    rng = random.Random(5)
    words = ["58", "-3", "$5", "3.", "Days", "day", "ünï", "a+b", "(x)", "", " 7 "]
    preds = ["the answer is 58 days", "-3 degrees", "costs $5.", "3. ok", "ÜNÏ day", "a+b=(x)", "", "7"]
    for _ in range(3000):
        ref = {
            "whitelist": [rng.sample(words, rng.randint(1, 3)) for _ in range(rng.randint(0, 2))],
            "blacklist": rng.choice([None, [], [rng.sample(words, 2)]]),
        }
        pred, mode = rng.choice(preds), rng.choice(["faithful", "fixed"])
        assert gta_iscorrect(pred, ref, mode) == _uncached_iscorrect(pred, ref, mode), (pred, ref, mode)
    for bad in ({"whitelist": [None]}, {"whitelist": [[5]]}, {"whitelist": [[["x"]]]}):
        with pytest.raises(TypeError):
            _uncached_iscorrect("x", bad, "faithful")
        with pytest.raises(TypeError):
            gta_iscorrect("x", bad, "faithful")
