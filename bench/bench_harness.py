"""Harness throughput: N tasks against the scripted OpenAI-compatible server with a fixed latency per
call, at -j J. Prints wall time ÷ ideal time (ideal = the waves of J tasks × rounds × latency; goal
≤ 1.05), the harness's CPU time per model call (its process only: event loop, database and reader
threads), the server's CPU time per call (another process, read from /proc on Linux), the time
before the first and after the last trajectory (setup/teardown), the mean observed call latency and
the load average. Harness and server share the machine's cores with whatever else runs: judge a
change by the CPU figures, and repeat a wall-clock run two or three times.

    .venv/bin/python bench/bench_harness.py [--tasks 500] [--latency 0.2] [-j 32] [--rounds 1] [--repeat N] [--whole]
        [--procs N] [--server-procs N] [--server python|nginx]

``--procs N`` runs the harness on N processes as ``chainmark run --procs N`` does (default: chosen
from -j, as the command chooses); the harness CPU then includes its children's, and
``harness_parent_cpu_ms_per_call`` is the parent's alone. ``--server-procs N`` runs N scripted
servers on one port (SO_REUSEPORT), so the server is not what limits a high -j. ``--server nginx``
answers with nginx and its echo module instead (bench/nginx_echo.py: the same text reply, a few µs
of C per call; one round only), so at -j 256 the harness, not the server, is what the two cores
run. ``loop_over_ideal`` is the in-loop ratio: the first progress report (the workers start) to
the last trajectory's end, ÷ ideal; ``harness_child_cpu_s`` lists each harness child's CPU (read
from /proc just before the run ends them) and ``events`` counts the stored events by kind, so two
servers' runs can be compared. ``--profile DIR`` writes a cProfile of each harness process there.

``--whole`` times the real console script instead, as a user runs it (``chainmark run -b … -e … -m
atomic -j J --json`` in a process of its own, after one untimed one-task run): wall ÷ ideal from exec
to exit, the start-up (exec → the first model call reaching the server), the teardown (the last
answer leaving the server → exit), and the process's own CPU time and peak RSS.

``--rounds 2`` makes every task call a real tool (crop) once before answering. ``--client-only`` makes
the same number of calls through the bare openai client (openai's aiohttp transport, same request
size, no harness, no send pacing): what the harness is compared with.
"""

from __future__ import annotations

import argparse
import collections
import gc
import io
import json
import math
import os
import multiprocessing as mp
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.user_env import NOTE, command_env, speed_note  # noqa: E402  (after the sys.path line)

# The console script users run (this checkout first on PYTHONPATH), else the module.
_SCRIPT = Path(sys.executable).with_name("chainmark")
CHAINMARK = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "tui.cli"]


def _serve(
    latency: float, rounds: int, port_out: "mp.Queue[Any]", asks: "mp.Queue[Any] | None" = None, port: int = 0
) -> None:
    """The scripted server, in a process of its own. With ``asks``, each item put there is answered
    on ``port_out`` with when the model calls since the last ask arrived (``time.time()``, comparable
    across processes): the whole-process bench times the command's start-up and teardown from them."""
    from tests.support.scripted_openai import ScriptedOpenAI, text, tool_calls

    arrivals: list[float] = []

    def handler(req):  # type: ignore[no-untyped-def]
        arrivals.append(req.received_at)
        done = sum(1 for m in req.messages if m.get("role") == "assistant")
        if done < rounds - 1:
            return tool_calls(("crop", {"image_index": 0, "bbox_2d": [0, 0, 500, 500]}))
        return text("<answer>red</answer>")

    server = ScriptedOpenAI(handler=handler, latency=latency).start(port, reuse_port=True)
    _warm_up(server.port)
    # The server's own pauses are not the harness's time: its startup heap (pytest, aiohttp) is
    # frozen, or a full collection in the server process stalls a whole wave (~50 ms, wave 2).
    gc.freeze()
    arrivals.clear()
    port_out.put(server.port)
    if asks is None:
        while True:
            time.sleep(3600)
    while asks.get() is not None:
        seen, arrivals[:] = list(arrivals), []
        port_out.put({"calls": len(seen), "first": min(seen, default=None), "last": max(seen, default=None)})


class _Servers:
    """The bench's endpoint: ``--server-procs`` scripted servers sharing one port (SO_REUSEPORT), or
    nginx (``--server nginx``). ``port``, ``cpu()`` (their CPU seconds so far), ``pids``, ``stop()``."""

    def __init__(self, args: argparse.Namespace):
        self.nginx: Any = None
        self.processes: list[Any] = []
        if args.server == "nginx":
            from bench.nginx_echo import NginxEcho, completion

            if args.rounds != 1:
                raise SystemExit("--server nginx answers every call the same way: --rounds 1 only")
            self.nginx = NginxEcho(args.latency, completion("<answer>red</answer>")).start()
            self.port = self.nginx.port
            return
        ctx = mp.get_context("spawn")
        ports: "mp.Queue[int]" = ctx.Queue()
        first = ctx.Process(target=_serve, args=(args.latency, args.rounds, ports), daemon=True)
        first.start()
        self.port = ports.get(timeout=30)
        self.processes = [first]
        for _ in range(args.server_procs - 1):
            self.processes.append(
                ctx.Process(target=_serve, args=(args.latency, args.rounds, ports, None, self.port), daemon=True)
            )
            self.processes[-1].start()
        for _ in self.processes[1:]:
            ports.get(timeout=30)

    @property
    def pids(self) -> set[int]:
        return {self.nginx.pid} if self.nginx is not None else {p.pid for p in self.processes}

    def cpu(self) -> float | None:
        figures = [_process_cpu(pid) for pid in self.pids]
        return None if any(f is None for f in figures) else sum(f for f in figures if f is not None)

    def stop(self) -> None:
        if self.nginx is not None:
            self.nginx.stop()
        for server in self.processes:
            server.terminate()


class _ChildCpu:
    """The CPU of each harness child process, sampled from /proc (a child's last sample is taken when
    the bench sees every trajectory end, before the pool ends the children). Processes that were
    already this one's children when it was made (servers, multiprocessing's helpers) are not counted."""

    def __init__(self) -> None:
        self.exclude = set(self._children())
        self.seen: dict[int, float] = {}
        self.parent_threads: dict[str, float] = {}
        self.main_before = _process_cpu(os.getpid(), threading.main_thread().native_id) or 0.0

    @staticmethod
    def _children() -> list[int]:
        try:
            return [int(p) for p in Path(f"/proc/{os.getpid()}/task/{os.getpid()}/children").read_text().split()]
        except OSError:
            return []

    def threads(self) -> dict[str, float]:
        """CPU seconds of each of this process's live threads since this was made, by thread name
        (the event loop is MainThread; the database thread, the pipe readers, … have the names the
        harness gives them)."""
        out: dict[str, float] = {}
        for thread in threading.enumerate():
            cpu = _process_cpu(os.getpid(), thread.native_id)
            if cpu is not None:
                cpu -= self.main_before if thread is threading.main_thread() else 0.0
                out[thread.name] = round(out.get(thread.name, 0.0) + cpu, 3)
        return out

    def sample(self) -> None:
        self.parent_threads = self.threads()
        for pid in self._children():
            if pid not in self.exclude:
                cpu = _process_cpu(pid)
                if cpu is not None:
                    self.seen[pid] = max(cpu, self.seen.get(pid, 0.0))


def _repeat(args: argparse.Namespace) -> None:
    """Each run in its own process (as ``chainmark run`` is), one after another; the machine's speed
    drifts between runs, so the median and the spread say more than any one figure."""
    argv = [
        "--tasks",
        str(args.tasks),
        "--latency",
        str(args.latency),
        "-j",
        str(args.concurrency),
        "--rounds",
        str(args.rounds),
    ]
    argv += ["--server-procs", str(args.server_procs), "--server", args.server]
    argv += ["--procs", str(args.procs)] if args.procs else []
    argv += ["--client-only"] if args.client_only else []
    argv += ["--whole"] if args.whole else []
    argv += [] if args.warm_up else ["--no-warm-up"]
    times, runs = args.repeat, []
    for _ in range(times):
        out = subprocess.run([sys.executable, __file__, *argv], check=True, capture_output=True, text=True).stdout
        runs.append(json.loads(out))
        print(json.dumps({k: runs[-1].get(k) for k in _REPEAT_FIELDS if k in runs[-1]}), flush=True)
    print(json.dumps(repeat_summary(runs), indent=2))


def repeat_summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The median, min and max wall ÷ ideal of RUNS, and the median of every other timed figure they have."""
    ratios = sorted(r["wall_over_ideal"] for r in runs)
    out: dict[str, Any] = {
        "runs": len(runs),
        "wall_over_ideal_median": round(statistics.median(ratios), 3),
        "wall_over_ideal_min": ratios[0],
        "wall_over_ideal_max": ratios[-1],
    }
    for key in _MEDIAN_FIELDS:
        values = [r[key] for r in runs if r.get(key) is not None]
        if values:
            out[f"{key}_median"] = round(statistics.median(values), 3)
    return out


_REPEAT_FIELDS = (
    "wall_over_ideal",
    "procs",
    "wall_s",
    "harness_cpu_ms_per_call",
    "server_cpu_ms_per_call",
    "client_cpu_ms_per_call",
    "cpu_s",
    "mean_call_latency_s",
    "setup_s",
    "startup_s",
    "loop_over_ideal",
    "teardown_s",
    "harness_parent_cpu_ms_per_call",
    "harness_child_cpu_s",
    "server_cpu_s",
    "max_rss_mb",
    "load_average",
)
_MEDIAN_FIELDS = (
    "wall_s",
    "loop_over_ideal",
    "startup_s",
    "setup_s",
    "teardown_s",
    "cpu_s",
    "harness_cpu_ms_per_call",
    "harness_parent_cpu_ms_per_call",
    "server_cpu_ms_per_call",
    "client_cpu_ms_per_call",
    "max_rss_mb",
)


def _warm_up(port: int) -> None:
    """One call through the server's whole path before it is timed, so its first-call costs
    (imports, caches) are not counted against the harness."""
    body = json.dumps({"model": "warm-up", "messages": [{"role": "user", "content": "hi"}]}).encode()
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/v1/chat/completions", data=body, headers={"content-type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        response.read()


def _process_cpu(pid: int | None, thread: int | None = None) -> float | None:
    """CPU seconds (user + system) used so far by another process (or one thread of a process), from
    /proc (Linux); None elsewhere."""
    path = f"/proc/{pid}/task/{thread}/stat" if thread is not None else f"/proc/{pid}/stat"
    try:
        fields = Path(path).read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _png() -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (64, 48), (200, 30, 30)).save(buf, "PNG")
    return buf.getvalue()


def colour_tasks(
    tmp: Path,
    tasks: int,
    port: int,
    mode: str,
    concurrency: int,  # type: ignore[no-untyped-def]
    url: str | None = None,
):
    """A throwaway database (SQLite in TMP, or the empty database at URL) with TASKS one-image colour
    questions, the scripted endpoint and a run in MODE: (engine, blobs, run id). Shared by the benches
    that drive the real harness."""
    from evaluation.harness import RunSpec, create_run
    from store import session_scope

    engine, blobs = colour_benchmark(tmp, tasks, port, url)
    with session_scope(engine, "bench") as s:
        run_id = int(create_run(s, RunSpec("bench", "scripted", mode, concurrency=concurrency)).id or 0)
    return engine, blobs, run_id


def colour_benchmark(tmp: Path, tasks: int, port: int, url: str | None = None):  # type: ignore[no-untyped-def]
    """The database of ``colour_tasks`` without the run: benchmark ``bench`` and endpoint ``scripted``."""
    from annotation import tasks as authoring
    from evaluation.harness import add_endpoint
    from store import make_engine, session_scope
    from store.blobs import FolderBlobStore
    from store.migrate import upgrade

    engine = make_engine(url or tmp / "bench.db")
    upgrade(engine)
    blobs = FolderBlobStore(tmp / "blobs")
    image = _png()
    with session_scope(engine, "bench") as s:
        authoring.ensure_benchmark(s, "bench", tool_set="agentic-mme")
        for i in range(tasks):
            t = authoring.create_task(
                s, "bench", f"What colour is it? ({i})", answer_spec={"kind": "contains", "value": "red"}
            )
            authoring.attach_asset(s, blobs, int(t.id or 0), image)
        add_endpoint(s, "scripted", f"http://127.0.0.1:{port}/v1", "scripted-model")
    return engine, blobs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tasks", type=int, default=500)
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("-j", "--concurrency", type=int, default=32)
    ap.add_argument("--rounds", type=int, default=1, help="model calls per task (tool calls = rounds - 1)")
    ap.add_argument(
        "--client-only",
        action="store_true",
        help="the same number of calls through the openai client alone: the floor under the harness",
    )
    ap.add_argument(
        "--procs",
        type=int,
        default=None,
        help="harness processes, as `chainmark run --procs` (default: chosen from -j, as the command does)",
    )
    ap.add_argument(
        "--server-procs",
        type=int,
        default=1,
        help="scripted server processes sharing the port, so the server is not what limits a high -j",
    )
    ap.add_argument(
        "--server",
        choices=("python", "nginx"),
        default="python",
        help="the endpoint: the scripted Python server (default) or nginx with its echo module (cheap; --rounds 1)",
    )
    ap.add_argument(
        "--whole",
        action="store_true",
        help="time the real console script `chainmark run … -j J` from exec to exit (start-up and teardown included)",
    )
    ap.add_argument(
        "--no-warm-up",
        dest="warm_up",
        action="store_false",
        help="with --whole: no untimed one-task run first (imports and the file cache may then be cold)",
    )
    ap.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="run the bench N times, each in a fresh process, and print every run and the median",
    )
    args = ap.parse_args()
    if args.repeat > 1:
        _repeat(args)
        return
    if args.client_only:
        _client_only(args)
        return
    if args.whole:
        if args.server != "python":
            raise SystemExit("--whole times the start-up from the scripted server's arrivals: --server python only")
        _whole(args)
        return

    from evaluation.harness import run_blocking
    from store import session_scope

    servers = _Servers(args)
    load_before = [round(x, 2) for x in os.getloadavg()]
    with tempfile.TemporaryDirectory() as tmp:
        engine, blobs, run_id = colour_tasks(Path(tmp), args.tasks, servers.port, "atomic", args.concurrency)
        from evaluation.harness.runner import _process_count

        procs = _process_count(engine, run_id, args.procs)
        children = _ChildCpu()
        cpu0 = resource.getrusage(resource.RUSAGE_SELF)
        kids0 = resource.getrusage(resource.RUSAGE_CHILDREN)  # the harness's own children, once reaped
        server_cpu0 = servers.cpu()
        marks: dict[str, float] = {}

        def on_progress(p) -> None:  # type: ignore[no-untyped-def]
            now = time.perf_counter()
            marks.setdefault("first", now)
            if p.completed == args.tasks and not p.finished and "all_done" not in marks:
                marks["all_done"] = now
                children.sample()

        t0 = time.perf_counter()
        progress = run_blocking(engine, blobs, run_id, progress=on_progress, procs=procs)
        wall = time.perf_counter() - t0
        setup = marks.get("first", t0) - t0
        teardown = wall - (marks.get("all_done", t0 + wall) - t0)
        loop_s = marks.get("all_done", t0 + wall) - marks.get("first", t0)
        cpu1 = resource.getrusage(resource.RUSAGE_SELF)
        kids1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        server_cpu1 = servers.cpu()
        from sqlmodel import select

        from store.models import Event, Trajectory

        with session_scope(engine) as s:
            usages = [t.usage for t in s.exec(select(Trajectory).where(Trajectory.run_id == run_id)).all()]
            kinds = s.exec(
                select(Event.kind)
                .join(Trajectory, Trajectory.id == Event.trajectory_id)  # type: ignore[arg-type]
                .where(Trajectory.run_id == run_id)
            ).all()
        engine.dispose()
        mean_latency = sum(u.get("latency_s", 0) for u in usages) / max(1, progress.api_calls)
        mean_traj = sum(u.get("wall_s", 0) for u in usages) / max(1, len(usages))
    servers.stop()
    calls = progress.api_calls
    # every task's calls are sequential; ideal = the waves of J tasks, each `rounds` calls long
    ideal = math.ceil(args.tasks / args.concurrency) * args.rounds * args.latency
    ideal_fluid = calls * args.latency / args.concurrency
    parent_cpu = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
    cpu = parent_cpu + (kids1.ru_utime - kids0.ru_utime) + (kids1.ru_stime - kids0.ru_stime)
    out = {
        "tasks": args.tasks,
        "concurrency": args.concurrency,
        "latency_s": args.latency,
        "rounds": args.rounds,
        "server": args.server,
        "done": progress.done,
        "failed": progress.failed,
        "model_calls": calls,
        "wall_s": round(wall, 3),
        "ideal_s": round(ideal, 3),
        "wall_over_ideal": round(wall / ideal, 3),
        "wall_over_fluid_ideal": round(wall / ideal_fluid, 3),
        "loop_over_ideal": round(loop_s / ideal, 3),
        "setup_s": round(setup, 3),
        "teardown_s": round(teardown, 3),
        "mean_call_latency_s": round(mean_latency, 4),
        "mean_trajectory_wall_s": round(mean_traj, 4),
        "harness_cpu_s": round(cpu, 3),
        "harness_cpu_ms_per_call": round(1000 * cpu / max(1, calls), 2),
        "procs": procs,
        "events": dict(sorted(collections.Counter(kinds).items())),
    }
    out["harness_peak_rss_mb"] = round(cpu1.ru_maxrss / 1024)  # Linux: kB
    if procs > 1:
        out["harness_parent_cpu_s"] = round(parent_cpu, 3)
        out["harness_parent_cpu_ms_per_call"] = round(1000 * parent_cpu / max(1, calls), 2)
        out["harness_child_cpu_s"] = [round(c, 2) for c in children.seen.values()]
        out["harness_parent_thread_cpu_s"] = children.parent_threads
        out["child_peak_rss_mb"] = round(kids1.ru_maxrss / 1024)  # the largest harness child
    if server_cpu0 is not None and server_cpu1 is not None:
        out["server_procs"] = len(servers.pids)
        out["server_cpu_s"] = round(server_cpu1 - server_cpu0, 3)
        out["server_cpu_ms_per_call"] = round(1000 * (server_cpu1 - server_cpu0) / max(1, calls), 3)
    out["load_average_before"] = load_before
    out["load_average"] = [round(x, 2) for x in os.getloadavg()]
    print(json.dumps(out, indent=2))


def whole_figures(
    *,
    tasks: int,
    concurrency: int,
    rounds: int,
    latency: float,
    started: float,
    exited: float,
    first_call: float | None,
    last_call: float | None,
    calls: int,
    cpu_s: float,
) -> dict[str, Any]:
    """The whole-process figures from five instants (``time.time()``, the server's and the bench's):
    the command started, the first model call arrived, the last one arrived (its answer left
    ``latency`` later), the command exited. start-up + in-loop + teardown = wall."""
    wall = exited - started
    ideal = math.ceil(tasks / concurrency) * rounds * latency
    out: dict[str, Any] = {
        "wall_s": round(wall, 3),
        "ideal_s": round(ideal, 3),
        "wall_over_ideal": round(wall / ideal, 3),
        "model_calls": calls,
        "cpu_s": round(cpu_s, 3),
        "cpu_ms_per_call": round(1000 * cpu_s / max(1, calls), 2),
    }
    if first_call is not None and last_call is not None:
        last_answer = last_call + latency
        out["startup_s"] = round(first_call - started, 3)  # exec → the first model call reached the server
        out["loop_s"] = round(last_answer - first_call, 3)
        out["loop_over_ideal"] = round((last_answer - first_call) / ideal, 3)
        out["teardown_s"] = round(exited - last_answer, 3)  # the last answer left the server → exit
    return out


def _command(argv: list[str], env: dict[str, str], tmp: Path) -> tuple[float, float, int, Any, str, str]:
    """Run the console script once: (started, exited, exit status, rusage of that child alone, stdout, stderr)."""
    out_path, err_path = tmp / "stdout", tmp / "stderr"
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        started = time.time()
        proc = subprocess.Popen(argv, env=env, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        exited = time.time()
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
    return started, exited, proc.returncode, usage, out_path.read_text(), err_path.read_text()


def _whole(args: argparse.Namespace) -> None:
    """``chainmark run`` as a user runs it, from exec to exit, against the scripted server (one
    untimed run of one task first, so imports and the file cache are warm as they are for a user
    who just built the benchmark)."""
    ctx = mp.get_context("spawn")
    replies: "mp.Queue[Any]" = ctx.Queue()
    asks: "mp.Queue[Any]" = ctx.Queue()
    server = ctx.Process(target=_serve, args=(args.latency, args.rounds, replies, asks), daemon=True)
    server.start()
    port = replies.get(timeout=30)
    try:
        with tempfile.TemporaryDirectory() as tmp_name:
            tmp = Path(tmp_name)
            engine, blobs = colour_benchmark(tmp, args.tasks, port)
            engine.dispose()
            env = command_env(CHAINMARK_DB=str(tmp / "bench.db"), CHAINMARK_BLOBS=str(blobs.root))
            print(NOTE, file=sys.stderr)  # stdout is the JSON document
            print(speed_note(), file=sys.stderr)
            run = [*CHAINMARK, "run", "-b", "bench", "-e", "scripted", "-m", "atomic", "--json"]
            if args.warm_up:
                warm = _command([*run, "--limit", "1"], env, tmp)
                if warm[2] != 0:
                    raise SystemExit(f"warm-up run failed ({warm[2]}): {warm[5][-2000:]}")
                asks.put("reset")
                replies.get(timeout=30)
            procs = ["--procs", str(args.procs)] if args.procs else []
            started, exited, status, usage, stdout, stderr = _command(
                [*run, "-j", str(args.concurrency), *procs], env, tmp
            )
            if status != 0:
                raise SystemExit(f"chainmark run failed ({status}): {stderr[-2000:]}")
            asks.put("stats")
            stats = replies.get(timeout=30)
            asks.put(None)
    finally:
        server.terminate()
    summary = json.loads(stdout)
    out: dict[str, Any] = {
        "whole": True,
        "tasks": args.tasks,
        "concurrency": args.concurrency,
        "latency_s": args.latency,
        "rounds": args.rounds,
        "done": summary["done"],
        "failed": summary["failed"],
        "status": summary["status"],
        **whole_figures(
            tasks=args.tasks,
            concurrency=args.concurrency,
            rounds=args.rounds,
            latency=args.latency,
            started=started,
            exited=exited,
            first_call=stats["first"],
            last_call=stats["last"],
            calls=stats["calls"],
            cpu_s=usage.ru_utime + usage.ru_stime,
        ),
        "cpu_user_s": round(usage.ru_utime, 3),
        "cpu_sys_s": round(usage.ru_stime, 3),
        "max_rss_mb": round(usage.ru_maxrss / 1024, 1),  # Linux: kilobytes
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }
    print(json.dumps(out, indent=2))


def _client_only(args: argparse.Namespace) -> None:
    """Tasks × rounds calls with an Agentic-MME-sized request (system prompt, tool schemas, one
    image), posted through the harness's openai client and transport by J workers, with no harness,
    database or task loading around them."""
    import asyncio
    import base64

    from evaluation.harness import prompts
    from evaluation.harness.client import canonical_request
    from evaluation.tools import get_tool_set

    servers = _Servers(args)
    port = servers.port
    image = "data:image/png;base64," + base64.b64encode(_png()).decode()
    body = {
        "model": "scripted-model",
        "tools": [t.openai() for t in get_tool_set("agentic-mme").all_tools()],
        "messages": [
            {"role": "system", "content": prompts.prompt_for("atomic", {}).format(max_tool_calls=15)},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "Image index 0:"},
                    {"type": "image_url", "image_url": {"url": image}},
                    {"type": "text", "text": "What colour is it?"},
                ],
            },
        ],
    }
    payload = canonical_request(body).encode()

    async def run() -> tuple[float, float]:
        import openai

        import httpx2

        n = 2 * args.concurrency  # the harness's pool size, on openai's own aiohttp client: no pacing
        http = openai.DefaultAioHttpClient(
            limits=httpx2.Limits(max_connections=n, max_keepalive_connections=n), timeout=180.0
        )
        client = openai.AsyncOpenAI(
            base_url=f"http://127.0.0.1:{port}/v1", api_key="bench", max_retries=0, http_client=http
        )
        todo = iter(range(args.tasks))
        latencies: list[float] = []

        async def worker() -> None:
            for _ in todo:
                for _ in range(args.rounds):
                    started = time.perf_counter()
                    response = await client.post("/chat/completions", content=payload, cast_to=httpx2.Response)
                    response.json()
                    latencies.append(time.perf_counter() - started)

        t0 = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(args.concurrency)))
        wall = time.perf_counter() - t0
        await client.close()
        return wall, sum(latencies) / len(latencies)

    cpu0, server_cpu0 = resource.getrusage(resource.RUSAGE_SELF), servers.cpu()
    wall, mean_latency = asyncio.run(run())
    cpu1, server_cpu1 = resource.getrusage(resource.RUSAGE_SELF), servers.cpu()
    servers.stop()
    calls = args.tasks * args.rounds
    ideal = math.ceil(args.tasks / args.concurrency) * args.rounds * args.latency
    cpu = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
    out: dict[str, object] = {
        "client_only": True,
        "tasks": args.tasks,
        "concurrency": args.concurrency,
        "latency_s": args.latency,
        "rounds": args.rounds,
        "model_calls": calls,
        "wall_s": round(wall, 3),
        "ideal_s": round(ideal, 3),
        "wall_over_ideal": round(wall / ideal, 3),
        "mean_call_latency_s": round(mean_latency, 4),
        "client_cpu_ms_per_call": round(1000 * cpu / calls, 2),
    }
    if server_cpu0 is not None and server_cpu1 is not None:
        out["server_cpu_ms_per_call"] = round(1000 * (server_cpu1 - server_cpu0) / calls, 2)
    out["load_average"] = [round(x, 2) for x in os.getloadavg()]
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
