"""What a harness child process sends its parent for each finished trajectory (``procs.py``): the
replay-cache row of a tool list, the same for every trajectory of a run, crosses the pipe once per
child; the parent puts it back, so every trajectory commits the rows a one-process run commits."""

from __future__ import annotations

import pickle
from datetime import datetime, timezone
from typing import Any

from evaluation.harness.procs import _restore_tools, _share_tools, _unsendable
from evaluation.harness.recorder import CacheEntry, FinishedTrajectory, Recorder

SCHEMA = {"tools": [{"type": "function", "function": {"name": "crop", "description": "a-marker-of-the-schema"}}]}
OTHER = {"tools": [{"type": "function", "function": {"name": "zoom", "description": "another-schema"}}]}


def _item(n: int, cache: list[CacheEntry]) -> FinishedTrajectory:
    rec = Recorder()
    rec.add("answer", {"text": str(n), "raw": None, "extracted_by": "raw"})
    now = datetime(2026, 1, 1, tzinfo=timezone.utc)
    return FinishedTrajectory(n, rec, "done", str(n), {"api_calls": 1}, None, cache, 1, now)


def _caches() -> list[list[CacheEntry]]:
    return [
        [CacheEntry("t1", "tools", None, SCHEMA), CacheEntry(f"m{n}", "model", {"q": n}, {"a": n})] for n in range(3)
    ] + [
        [
            CacheEntry("t1", "tools", None, SCHEMA),
            CacheEntry("m3", "model", {"q": 3}, {"a": 3}),
            CacheEntry("t2", "tools", None, OTHER),
        ]
    ]


def _rows(cache: list[CacheEntry]) -> list[tuple[Any, ...]]:
    return [(c.key, c.kind, c.request, c.response) for c in cache]


def test_a_tool_list_crosses_the_pipe_once_and_every_trajectory_commits_its_row() -> None:
    sent: set[str] = set()
    known: dict[str, Any] = {}
    received = []
    for n, cache in enumerate(_caches()):
        item, shared = _share_tools(_item(n, list(cache)), sent)
        wire = pickle.dumps(("done", n, item, {}, 1, shared))
        assert (b"a-marker-of-the-schema" in wire) == (n == 0)  # sent in full by the first result only
        _, _, got, _, _, shared = pickle.loads(wire)
        _restore_tools(got, shared, known)
        received.append(got)
    assert [_rows(r.cache) for r in received] == [_rows(c) for c in _caches()]  # same rows, same order


def test_a_tool_list_whose_first_result_could_not_be_sent_goes_in_full_again() -> None:
    sent: set[str] = set()
    item, shared = _share_tools(_item(0, _caches()[0]), sent)
    put: list[Any] = []

    class Out:
        def put(self, msg: Any) -> None:
            put.append(msg)

    _unsendable(Out(), None, ("done", 0, item, {}, 1, shared), TypeError("cannot pickle"), sent)  # type: ignore[arg-type]
    assert put[0][2].status == "failed" and put[0][5] == []
    again, shared = _share_tools(_item(1, _caches()[1]), sent)
    assert shared == [] and _rows(again.cache) == _rows(_caches()[1])
