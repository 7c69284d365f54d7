"""The checkpoint engine: stepwise S/V/R checks of a trajectory, one-to-one event matching, ordering
constraints with a maximum gap, the efficiency penalty — Agentic-MME's process evaluation, generalised.

The engine reads a *tool-use list* (one entry per tool call or per traced code operation, the shape
Agentic-MME logs) built from Event rows by ``tool_use_list``. Visual and search checks are answered
by judges through the oracle (``items.JudgeOracle``): a visual check asks one question per produced
image and passes if *any* image passes; a search check asks one question about the unused searches.

Faithful mode keeps the reference's quirks: in code mode the list is ordered [searches] + [traced
ops] + [code runs] (not chronological), ``require_op`` may reuse an event another checkpoint
already claimed, and only the first original image is the visual fallback. Fixed mode orders by
time, makes ``require_op`` one-to-one too, and falls back to every query image.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from evaluation.scoring.items import Item, JudgeOracle, JudgeRequest
from evaluation.scoring.matchers import amme_check_answer, amme_expected_from_description, check_mode

SEARCH_TOOLS = ("google_search", "google_lens_search", "fetch_webpage", "download_image")
PRIMITIVES_AUTO = ("crop", "rotate", "resize", "enhance", "flip")  # verify_<x>_ast → require_op:<x>
PRIMITIVES_OP = ("crop", "rotate", "flip", "resize", "enhance")  # fallback op extraction order
VISUAL_JUDGE = "amme-visual"
SEARCH_JUDGE = "amme-search"


# ------------------------------------------------------------------ tool-use list


_NOTHING: dict[str, Any] = {}  # an absent payload, only ever read


def _split_events(events: list[dict[str, Any]]) -> tuple[list[tuple[int, dict[str, Any]]], list[tuple[int, Any]]]:
    """(event index, tool_call event) and (event index, tool_result payload) pairs, in event order: one pass."""
    results: list[tuple[int, Any]] = []
    calls: list[tuple[int, dict[str, Any]]] = []
    for j, r in enumerate(events):
        kind = r["kind"]
        if kind == "tool_result":
            results.append((j, r.get("payload") or {}))
        elif kind == "tool_call":
            calls.append((j, r))
    return calls, results


def _pair(events: list[dict[str, Any]], i: int, call_payload: Any, results: list[tuple[int, Any]]) -> Any:
    """The first unused tool_result after event i that answers the call (by call id, else by name), taken
    out of ``results`` (each result answers one call); None when there is none."""
    call_id = call_payload.get("call_id")
    key, want = ("call_id", call_id) if call_id else ("name", call_payload.get("name"))
    for k, (j, rp) in enumerate(results):
        if j > i and rp.get(key) == want:
            del results[k]  # the unused ones stay, in order
            return events[j]
    return None


def _paired_results(events: list[dict[str, Any]]) -> dict[int, dict[str, Any]]:
    """tool_call event index → its tool_result event (by call id, else the next result of that name)."""
    pairs: dict[int, dict[str, Any]] = {}
    calls, results = _split_events(events)
    if not results:
        return pairs
    for i, e in calls:
        found = _pair(events, i, e.get("payload") or {}, results)
        if found is not None:
            pairs[i] = found
    return pairs


def _call_entry(call: dict[str, Any], result: dict[str, Any] | None, p: Any = None) -> dict[str, Any]:
    """One tool call's tool-use entry (``p``: the call's payload, when the caller has it already)."""
    if p is None:
        p = call.get("payload") or {}
    rp = (result.get("payload") or _NOTHING) if result else _NOTHING
    data = rp.get("data")
    failed = call.get("failed")
    ok = bool(rp.get("ok", not failed)) and not failed
    if data:
        output = {**data, "ok": ok, "asset_ids": list(rp.get("asset_ids") or ())}
        if "context" not in output:
            output["context"] = rp.get("text") or ""
        if p.get("declared_only") or data.get("declared_only"):
            output["declared_only"] = True
    else:  # no data to merge: the same keys, in the same order
        output = {"ok": ok, "asset_ids": list(rp.get("asset_ids") or ()), "context": rp.get("text") or ""}
        if p.get("declared_only"):
            output["declared_only"] = True
    args = p.get("arguments")
    name = p.get("name")
    return {
        "tool_name": name or "",
        "raw_tool_name": p.get("raw_name") or name or "",
        "arguments": args if isinstance(args, dict) else {},
        "output": output,
        "event_id": call.get("id"),
        "ordinal": call.get("ordinal", 0),
    }


def _call_entries(events: list[dict[str, Any]]) -> list[tuple[Any, int, dict[str, Any]]]:
    """(ordinal, 0, entry) per tool call in event order, each call paired with its result on the way
    (``_paired_results``'s pairing, without a second walk over the events)."""
    calls, results = _split_events(events)
    out = []
    for i, e in calls:
        p = e.get("payload") or {}
        found = _pair(events, i, p, results) if results else None
        out.append((e.get("ordinal", 0), 0, _call_entry(e, found, p)))
    return out


def _by_ordinal(calls: list[tuple[Any, int, dict[str, Any]]]) -> list[dict[str, Any]]:
    """The entries in ordinal order (a stable sort), numbered; events come in ordinal order, so the sort
    is skipped when the ordinals already never go down (it would leave them as they are)."""
    for k in range(1, len(calls)):
        if calls[k][0] < calls[k - 1][0]:
            calls = sorted(calls, key=_first)
            break
    entries = [c[2] for c in calls]
    for n, entry in enumerate(entries):
        entry["index"] = n
    return entries


def _first(entry: tuple[Any, ...]) -> Any:
    return entry[0]


def tool_use_list(item: Item, *, code_mode: bool, mode: str = "faithful") -> tuple[list[dict[str, Any]], int]:
    """The tool-use list and the effective call count, as Agentic-MME derives them.

    Atomic mode: every tool call, in order; effective = all of them. Code mode: native (search)
    calls, then the ops the AST tracer found in each code run, then the code runs themselves;
    effective = native calls + traced ops (code runs excluded).
    """
    check_mode(mode)
    events = item.events
    calls = _call_entries(events)
    if not code_mode:
        entries = _by_ordinal(calls)
        return entries, len(entries)
    ops: list[tuple[int, int, dict[str, Any]]] = []
    runs: list[tuple[int, int, dict[str, Any]]] = []
    for e in events:
        if e["kind"] != "code_exec":
            continue
        p = e.get("payload") or {}
        for k, op in enumerate(p.get("ops") or []):
            ops.append(
                (
                    e.get("ordinal", 0),
                    k,
                    {
                        "tool_name": "python_image_processing",
                        "raw_tool_name": "python_image_processing",
                        "arguments": {"op": op.get("op"), "save": op.get("save"), "line": op.get("line")},
                        "output": {
                            "ok": True,
                            "output_path": op.get("save"),
                            **({"declared_only": True} if op.get("declared_only") else {}),
                        },
                        "event_id": e.get("id"),
                        "ordinal": e.get("ordinal", 0),
                    },
                )
            )
        runs.append(
            (
                e.get("ordinal", 0),
                10_000,
                {
                    "tool_name": "run_visual_processing_code",
                    "raw_tool_name": "script_exec",
                    "arguments": {},
                    "output": {
                        "ok": p.get("exit_code") == 0 and not p.get("timed_out"),
                        "asset_ids": list(p.get("asset_ids") or []),
                    },
                    "event_id": e.get("id"),
                    "ordinal": e.get("ordinal", 0),
                },
            )
        )
    if mode == "faithful":
        ordered = [c[2] for c in sorted(calls, key=lambda c: c[0])] + [o[2] for o in ops] + [r[2] for r in runs]
    else:
        ordered = [x[2] for x in sorted(calls + ops + runs, key=lambda x: (x[0], x[1]))]
    for n, entry in enumerate(ordered):
        entry["index"] = n
    return ordered, len(calls) + len(ops)


_TRANSFORMED = re.compile(r"^transformed_image_(\d+)\.png$", re.IGNORECASE)


def _native_files(item: Item) -> dict[str, Any] | None:
    native = item.native
    if isinstance(native, dict) and isinstance(native.get("files"), dict):
        return {**native["files"], **(native.get("blobs") or {})}
    return None


def native_tool_use_list(item: Item) -> tuple[list[dict[str, Any]], int] | None:
    """An imported run folder's own ``tool_use_list.json`` (indices as written) and the effective call
    count its ``run_meta.json`` states, which is what the reference reads; None for other runs.

    Entries map to the imported events in order (one tool call, or one code run, per entry).
    """
    native = item.native if isinstance(item.native, dict) else {}
    files = native.get("files") if isinstance(native.get("files"), dict) else {}
    if "tool_use_list.json" not in files:
        return None
    try:
        raw = json.loads(files["tool_use_list.json"])
        meta = json.loads(files["run_meta.json"]) if "run_meta.json" in files else {}
    except (json.JSONDecodeError, TypeError):
        return None
    if not isinstance(raw, list) or not all(isinstance(e, dict) for e in raw):
        return None
    pairs = _paired_results(item.events)
    anchors = [(i, e) for i, e in enumerate(item.events) if e["kind"] in ("tool_call", "code_exec")]
    uses = []
    for k, entry in enumerate(raw):
        i, ev = anchors[k] if k < len(anchors) else (None, {})
        result = pairs.get(i) if i is not None else None
        assets = list(((result or ev).get("payload") or {}).get("asset_ids") or []) if ev else []
        out = entry.get("output") if isinstance(entry.get("output"), dict) else {}
        args = entry.get("arguments") if isinstance(entry.get("arguments"), dict) else {}
        uses.append(
            {
                "tool_name": entry.get("tool_name") or "",
                "raw_tool_name": entry.get("raw_tool_name") or "",
                "arguments": args,
                "output": {**out, "asset_ids": assets},
                "index": int(entry.get("index", 0)),
                "event_id": ev.get("id"),
                "ordinal": ev.get("ordinal", 0),
            }
        )
    effective = meta.get("effective_tool_calls", len(raw)) if isinstance(meta, dict) else len(raw)
    return uses, int(effective)


def transformed_image_count(item: Item) -> int:
    """``require_images`` counts ``tool_images/transformed_image_<n>.png`` files (readable or not) in an
    imported run folder; elsewhere the images the run's tools produced."""
    files = _native_files(item)
    if files is None:
        return len(item.produced_assets())
    return sum(1 for rel in files if rel.startswith("tool_images/") and _TRANSFORMED.match(rel[len("tool_images/") :]))


def produced_metrics(item: Item) -> dict[str, Any] | None:
    """Measurements a run saved (Agentic-MME's ``tool_images/metrics.json``): ``metrics`` dicts in payloads."""
    found: dict[str, Any] | None = None
    for e in item.events:
        p = e.get("payload") or {}
        m = p.get("metrics") if e["kind"] == "code_exec" else (p.get("data") or {}).get("metrics")
        if isinstance(m, dict):
            found = {**(found or {}), **m}
    return found


def saved_metrics(item: Item) -> tuple[str, Any]:
    """The run's metrics file as the reference reads it: ("missing"|"invalid"|"ok", parsed JSON).

    An imported run folder brings its own ``tool_images/metrics.json`` (mapped into the native
    record on import as ``saved_metrics``); a chainmark run's are the ``metrics`` its tools reported.
    """
    native = item.native if isinstance(item.native, dict) else {}
    saved = native.get("saved_metrics")
    if isinstance(saved, dict):
        return ("ok", saved.get("value")) if saved.get("valid") else ("invalid", None)
    found = produced_metrics(item)
    return ("missing", None) if found is None else ("ok", found)


class ReferenceCrash(Exception):
    """The reference evaluator raises on this trajectory, and so leaves it out of every number."""


# ------------------------------------------------------------------ engine


@dataclass
class CheckpointOutcome:
    """One CheckpointResult row to be: which checkpoint, passed, by which event, decided how."""

    checkpoint_id: int | None
    key: str
    passed: bool
    matched_event_id: int | None
    method: str
    detail: dict[str, Any] = field(default_factory=dict)


def _names(ev: dict[str, Any]) -> list[str]:
    """The use's tool name, raw tool name and its arguments' tool_name, raw_tool_name and op: stripped,
    lower-cased, the empty ones left out."""
    args = ev.get("arguments") or _NOTHING
    names = []
    for raw in (
        ev.get("tool_name"),
        ev.get("raw_tool_name"),
        args.get("tool_name"),
        args.get("raw_tool_name"),
        args.get("op"),
    ):
        if raw:
            name = str(raw).strip()
            if name:
                names.append(name.lower())
    return names


def _declared_only(ev: dict[str, Any]) -> bool:
    return bool((ev.get("output") or {}).get("declared_only"))


OpRow = tuple[int, bool, str, str]  # a tool use as ``require_op`` reads it: index, declared only, tool, op


def op_table(uses: list[dict[str, Any]]) -> list[OpRow]:
    """Each use's index, declared-only flag and lower-cased tool name and ``op`` argument, worked out once
    per trajectory rather than once per checkpoint that looks for an operation."""
    return [
        (
            ev["index"],
            bool((ev.get("output") or _NOTHING).get("declared_only")),  # _declared_only, inlined
            str(ev.get("tool_name") or "").lower(),
            str((ev.get("arguments") or _NOTHING).get("op") or "").lower(),
        )
        for ev in uses
    ]


def _require_op(table: list[OpRow], op: str, used: set[int], one_to_one: bool) -> tuple[bool, int | None]:
    op = op.lower().strip()
    for index, declared, tool, arg_op in table:
        if declared or (one_to_one and index in used):
            continue
        if tool == op or arg_op == op:
            return True, index
    return False, None


# Names the reference's verifier module defines or imports. Its dispatcher calls any of them with the
# checkpoint's keyword arguments (run_dir, run_meta, task_cfg, checkpoint, tool_use_list); by behaviour:
# the example custom verifier requires a crop, ``Path`` returns a path (truthy: a pass), and every other
# one raises TypeError (wrong signature, or a typing construct that cannot be instantiated).
MODULE_PASSES = {"Path"}
MODULE_REQUIRES_OP = {"example_custom_verifier": "crop"}
MODULE_RAISES = {
    "require_op",
    "require_transformed_images",
    "auto_verifier_from_name",
    "dispatch_verifier",
    "_is_declared_only",
    "VerifyResult",
    "dataclass",
    "list_transformed_pngs",
    "read_json",
    "Any",
    "Dict",
    "List",
    "Optional",
}


def _require_metrics(key: str | None, state: str, value: Any, mode: str) -> tuple[bool, int | None, dict[str, Any]]:
    if state == "missing":
        return False, None, {"reason": "metrics.json missing"}
    if state == "invalid":
        return False, None, {"reason": "metrics.json invalid"}
    if isinstance(value, dict):
        if key and key not in value:
            return False, None, {"reason": "metrics key missing", "key": key}
        return True, 0, {"metrics_keys": list(value)}
    # Not an object: the reference tests ``key in value`` (lists and strings allow it) and then asks
    # the value for its keys, which raises.
    if key and isinstance(value, (list, str)) and key not in value:
        return False, None, {"reason": "metrics key missing", "key": key}
    if mode == "faithful":
        raise ReferenceCrash(f"metrics.json holds a {type(value).__name__}, not an object")
    return False, None, {"reason": "metrics.json is not an object"}


@lru_cache(maxsize=1024)
def _verifier_plan(verifier: str) -> tuple[str, Any]:
    """What a (stripped, non-empty) verifier name asks for: ("op", operation), ("images", minimum
    count), ("metrics", key or None) or ("other", the name); worked out once per distinct name, not
    once per checkpoint of every trajectory."""
    if verifier.startswith("verify_") and verifier.endswith("_ast"):
        low = verifier.lower()
        for prim in PRIMITIVES_AUTO:
            if prim in low:
                verifier = f"require_op:{prim}"
                break
    if verifier.startswith("require_op:"):
        return "op", verifier.split(":", 1)[1]
    if verifier.startswith("require_images"):
        parts = verifier.split(":")
        return "images", int(parts[1]) if len(parts) > 1 and parts[1].strip().isdigit() else 1
    if verifier.startswith("require_metrics"):
        parts = verifier.split(":")
        return "metrics", parts[1].strip() if len(parts) > 1 and parts[1].strip() else None
    return "other", verifier


def _dispatch_verifier(verifier: str, w: _Walk) -> tuple[bool, int | None, dict[str, Any]]:
    """A code check's verifier on the walk's uses; the operation table, image count and saved metrics
    are worked out only for the verifiers that read them."""
    verifier = (verifier or "").strip()
    if not verifier:
        return True, None, {"note": "empty verifier counts as a pass"}
    kind, arg = _verifier_plan(verifier)
    mode = w.mode
    if kind == "op":
        ok, hit = _require_op(w.ops(), arg, w.used, mode == "fixed")
        return ok, hit, {"op": arg}
    if kind == "images":
        count = w.produced_images()
        ok = count >= arg
        return ok, (0 if ok else None), {"count": count, "min_count": arg}
    if kind == "metrics":
        state, value = w.metrics()
        return _require_metrics(arg, state, value, mode)
    if verifier in MODULE_REQUIRES_OP:
        op = MODULE_REQUIRES_OP[verifier]
        ok, hit = _require_op(w.ops(), op, w.used, mode == "fixed")
        return ok, hit, {"op": op, "verifier_function": verifier}
    if mode == "faithful" and verifier in MODULE_PASSES:
        return True, None, {"note": f"{verifier}(...) returns a truthy object", "verifier_function": verifier}
    if mode == "faithful" and verifier in MODULE_RAISES:
        raise ReferenceCrash(f"verifier {verifier!r} is called with the checkpoint's arguments and raises")
    return False, None, {"reason": "unknown verifier", "verifier": verifier}


@dataclass
class _Walk:
    """What scoring one trajectory's checkpoints shares: uses already claimed by a checkpoint (each tool
    use satisfies at most one), judgements still pending, and what a judge or verifier needs."""

    item: Item
    uses: list[dict[str, Any]]
    mode: str
    oracle: JudgeOracle
    traj_id: int
    used: set[int] = field(default_factory=set)
    pending: int = 0
    _metrics: Any = None
    _produced: int | None = None
    _ops: list[OpRow] | None = None

    def ops(self) -> list[OpRow]:
        if self._ops is None:
            self._ops = op_table(self.uses)
        return self._ops

    def metrics(self) -> Any:
        """The run folder's saved metrics (read once per trajectory, for any verifier that asks)."""
        if self._metrics is None:
            self._metrics = (saved_metrics(self.item),)
        return self._metrics[0]

    def produced_images(self) -> int:
        if self._produced is None:
            self._produced = transformed_image_count(self.item)
        return self._produced

    def claim(self, index: int | None) -> None:
        if index is not None:
            self.used.add(index)

    def unclaimed(self) -> list[dict[str, Any]]:
        """Tool uses no checkpoint has claimed yet and that were really executed (not only declared)."""
        return [ev for ev in self.uses if ev["index"] not in self.used and not _declared_only(ev)]


@dataclass
class _Verdict:
    passed: bool = False
    hit: int | None = None
    method: str = "rule"
    extra: dict[str, Any] = field(default_factory=dict)


def _search_axis(cp: dict[str, Any], w: _Walk) -> _Verdict:
    """S: a judged google_search (all unclaimed queries at once), or any google_lens_search use."""
    key, v = cp["key"], _Verdict()
    tools = {str(t).lower() for t in cp.get("tools") or []}
    if "google_search" in tools:
        searches = [
            ev
            for ev in w.unclaimed()
            if str(ev.get("tool_name") or "").lower() == "google_search"
            and (ev.get("arguments") or {}).get("query", "")
        ]
        if not searches:
            return v
        queries = [str(ev["arguments"]["query"]) for ev in searches]
        contexts = [str((ev.get("output") or {}).get("context", "")) for ev in searches]
        v.method = "judge"
        desc = cp.get("description") or ""
        got = w.oracle.ask(
            JudgeRequest.make(
                SEARCH_JUDGE,
                w.traj_id,
                f"search:{key}",
                {
                    "description": desc,
                    "expected": amme_expected_from_description(desc) or "",
                    "queries": queries,
                    "results": [c[:500] for c in contexts[:3]],
                },
            )
        )
        if got is None:
            w.pending += 1
            v.extra["search_check"] = {"passed": False, "pending": True, "queries_evaluated": queries}
            return v
        ok = (got.label or "").upper() == "PASS"
        if ok:
            v.passed, v.hit = True, searches[0]["index"]
            w.claim(v.hit)
        v.extra["search_check"] = {
            "passed": ok,
            "judge_response": got.raw_output,
            "judge": got.judge_name,
            "queries_evaluated": queries,
        }
    elif "google_lens_search" in tools:
        for ev in w.unclaimed():
            if str(ev.get("tool_name") or "").lower() == "google_lens_search":
                v.passed, v.hit = True, ev["index"]
                w.claim(v.hit)
                v.extra["matched_by"] = "google_lens_search"
                break
    else:
        v.extra["error"] = "S-axis checkpoint must name google_search or google_lens_search"
    return v


def _code_check(cp: dict[str, Any], w: _Walk, v: _Verdict) -> bool:
    """V's tool part: the verifier, else the operation the verifier names, else any listed tool."""
    verifier = str((cp.get("code_check") or _NOTHING).get("verifier") or "")
    ok, vhit, vdetail = _dispatch_verifier(verifier, w)
    if ok:
        v.hit = vhit
        w.claim(vhit)
        v.extra["code_check"] = {"verifier": verifier, "passed": True, "hit_index": vhit, "detail": vdetail}
        return True
    op = _verifier_op(verifier)
    if op:
        ok, ohit = _require_op(w.ops(), op, w.used, True)
        if ok:
            v.hit = ohit
            w.claim(ohit)
            v.extra["matched_by"] = "verifier_op"
            return True
    if cp.get("tools"):
        wanted = {str(t).lower() for t in cp["tools"]}
        used = w.used
        for ev in w.uses:  # ``w.unclaimed()``, walked without a list first (a match returns at once)
            if ev["index"] not in used and not _declared_only(ev) and not wanted.isdisjoint(_names(ev)):
                v.hit = ev["index"]
                w.claim(v.hit)
                v.extra["matched_by"] = "tools_list"
                return True
    return False


@lru_cache(maxsize=1024)
def _verifier_op(verifier: str) -> str | None:
    """The first of ``PRIMITIVES_OP`` a verifier's lower-cased name contains (once per distinct name)."""
    low = verifier.lower()
    return next((p for p in PRIMITIVES_OP if p in low), None)


def _images_to_judge(w: _Walk) -> tuple[list[Any], bool]:
    """The produced images; without any, the query image (faithful: the run folder's orig*.png first,
    as the reference does). Returns (images, fell back to the original)."""
    images = list(w.item.produced_assets())
    if images:
        return images, False
    query = w.item.query_assets()
    images = query[:1] if w.mode == "faithful" else query
    if w.mode == "faithful":
        native = w.item.native_assets
        origs = [native[k] for k in ["orig.png", *sorted(native)] if k in native and re.fullmatch(r"orig.*\.png", k)]
        images = origs[:1] or images
    return images, bool(images)


def _visual_check(cp: dict[str, Any], w: _Walk, v: _Verdict) -> bool:
    """V's judged part: a judge answers the question on each image in turn until one contains the
    expected answer (later images are asked only after an earlier one said no, like the reference)."""
    v.method = "judge"
    vc = cp["visual_check"] or {}
    images, fallback = _images_to_judge(w)
    judged: list[dict[str, Any]] = []
    expected = str(vc.get("expected_answer") or "").strip()
    visual_ok, waiting = False, 0
    if w.mode == "faithful" and not expected and images:
        # The reference tests ``expected in answer``: an empty expected answer passes on the first
        # image whatever the judge says (an error text too), so no judge is needed.
        visual_ok = True
        judged.append({"asset_id": images[0], "passed": True, "note": "empty expected answer"})
        images = []
    for asset in images:
        got = w.oracle.ask(
            JudgeRequest.make(
                VISUAL_JUDGE, w.traj_id, f"visual:{cp['key']}:{asset}", {"question": vc.get("question") or ""}, [asset]
            )
        )
        if got is None:
            waiting += 1
            judged.append({"asset_id": asset, "pending": True, "passed": False})
            break
        said = str((got.parsed or {}).get("answer") if isinstance(got.parsed, dict) else "") or str(
            got.raw_output or ""
        )
        ok = expected.lower() in said.strip().lower()
        judged.append({"asset_id": asset, "judge_answer": said, "judge": got.judge_name, "passed": ok})
        if ok:
            visual_ok = True
            break
    if waiting and not visual_ok:
        w.pending += waiting
    had_images = bool(images) or bool(judged)
    v.extra["visual_check"] = (
        {
            "question": vc.get("question"),
            "expected_answer": expected,
            "judge_results": judged,
            "passed": visual_ok,
            "images_checked": len(judged),
            "fallback_to_original": fallback,
        }
        if had_images
        else {"error": "no images to check", "passed": False}
    )
    return visual_ok


def _visual_axis(cp: dict[str, Any], w: _Walk) -> _Verdict:
    """V: the code check and/or the visual check; both must pass when both are given."""
    v = _Verdict()
    has_tool, has_visual = cp.get("code_check") is not None, cp.get("visual_check") is not None
    tool_ok = _code_check(cp, w, v) if has_tool else False
    visual_ok = _visual_check(cp, w, v) if has_visual else False
    if has_tool and has_visual:
        v.passed = tool_ok and visual_ok
    elif has_tool or has_visual:
        v.passed = tool_ok or visual_ok
    else:
        v.extra["error"] = "V-axis checkpoint needs code_check or visual_check"
    return v


def _ordering(
    item: Item, results: dict[str, dict[str, Any]], hits: dict[str, int | None]
) -> tuple[int, list[dict[str, Any]]]:
    """R: each ordering constraint passes when its checkpoints passed at increasing uses, gaps ≤ max_gap."""
    passed, details = 0, []
    for oc in item.ordering:
        max_gap = int(oc.get("max_gap") or 0)
        ok, indices = True, []
        for cid in oc.get("sequence") or []:
            if not results.get(cid, _NOTHING).get("passed") or hits.get(cid) is None:
                ok = False
                break
            indices.append(int(hits[cid]))  # type: ignore[arg-type]
        if ok:
            ok = all(b >= a and (b - a - 1) <= max_gap for a, b in zip(indices, indices[1:]))
        passed += ok
        details.append({"key": oc.get("key"), "passed": ok, "indices": indices, "max_gap": max_gap})
    return passed, details


def evaluate_process(
    item: Item,
    uses: list[dict[str, Any]],
    effective_calls: int,
    *,
    mode: str,
    oracle: JudgeOracle,
    answer: str | None = None,
) -> dict[str, Any]:
    """Score one trajectory's checkpoints; returns per-checkpoint results, S/V/R, penalty, PQS, outcomes.
    ``answer``: the item's ``final_answer()`` when the caller has it already."""
    check_mode(mode)
    w = _Walk(item, uses, mode, oracle, int(item.trajectory.get("id") or 0))
    if answer is None:
        answer = item.final_answer()
    by_index: dict[Any, dict[str, Any]] | None = None  # built when the first checkpoint hits a use
    results: dict[str, dict[str, Any]] = {}
    hits: dict[str, int | None] = {}
    outcomes: list[CheckpointOutcome] = []
    s_ids: list[str] = []  # the S and V checkpoints S and V are the pass rates of
    v_ids: list[str] = []

    for cp in item.checkpoints:
        key, axis = cp["key"], cp.get("axis") or ""
        answer_check = cp.get("answer_check")
        if axis == "S":
            s_ids.append(key)
        elif axis == "V":
            if answer_check is not None:  # a final-answer check, kept out of V
                results[key] = {"axis": axis}
                hits[key] = None
                outcomes.append(
                    CheckpointOutcome(
                        cp.get("id"),
                        key,
                        amme_check_answer(answer_check, answer),
                        None,
                        "rule",
                        {"final_answer_checkpoint": True, "excluded_from": "V"},
                    )
                )
                continue
            v_ids.append(key)
        method = "rule"
        if axis == "S" or axis == "V":
            v = _search_axis(cp, w) if axis == "S" else _visual_axis(cp, w)
            method = v.method
            res = {"axis": axis, "passed": v.passed, "hit_index": v.hit, **v.extra}
        elif axis == "R" and answer_check is not None:
            res = {
                "axis": axis,
                "passed": amme_check_answer(answer_check, answer),
                "hit_index": len(uses),
                "answer_check": answer_check,
            }
        elif axis == "R":
            res = {"axis": axis, "passed": False, "error": "R checkpoint without answer_check"}
        else:
            res = {"axis": axis, "passed": False, "error": f"unknown axis {axis!r}"}
        results[key] = res
        hit = hits[key] = res.get("hit_index")
        event_id = None
        if hit is not None:
            if by_index is None:
                by_index = {ev["index"]: ev for ev in uses}
            if hit in by_index:
                event_id = by_index[hit]["event_id"]
        detail = res.copy()  # the result without "passed" (every branch above sets it), keys in order
        del detail["passed"]
        outcomes.append(CheckpointOutcome(cp.get("id"), key, bool(res["passed"]), event_id, method, detail))

    r_pass, order_details = _ordering(item, results, hits)
    r_total = len(item.ordering)
    S = sum(results[k]["passed"] for k in s_ids) / len(s_ids) if s_ids else None
    V = sum(results[k]["passed"] for k in v_ids) / len(v_ids) if v_ids else None
    R = r_pass / r_total if r_total else 1.0
    ref_calls = int(item.task.get("reference_tool_calls") or 0)
    per_call = float(item.task.get("penalty_per_extra_call") or 0.0)
    max_calls = int(item.task.get("max_tool_calls") or 0)
    excess = max(0, effective_calls - ref_calls)
    penalty = min(1.0, excess * per_call)
    if max_calls > 0 and effective_calls > max_calls:
        penalty = 1.0
    valid = [s for s in (S, V) if s is not None]
    base = sum(valid) / len(valid) if valid else 0.0
    return {
        "checkpoint_results": results,
        "ordering_results": order_details,
        "scores": {"S": S, "V": V, "R": R, "base": base, "penalty": penalty, "PQS": base * (1.0 - penalty)},
        "efficiency": {
            "effective_tool_calls": effective_calls,
            "reference_tool_calls": ref_calls,
            "max_tool_calls": max_calls,
            "excess_calls": excess,
        },
        "outcomes": outcomes,
        "pending_judgements": w.pending,
    }
