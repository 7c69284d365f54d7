"""Every speed mechanism by name, each with its switch back to the plain path (the ``plain`` setting).

A mechanism that exists only for speed earns its place with a measured gain, a bench that prints it,
a test that its output equals the plain path's, and an off switch. This registry is where all four
are named, once: ``chainmark config speedups`` prints it, docs/design/performance.md tabulates it (a test
keeps the two equal), and each mechanism's code asks :func:`enabled` before taking its fast path.

``CHAINMARK_PLAIN=all`` (or ``plain = "all"`` in chainmark.toml) runs every command on the plain paths;
``CHAINMARK_PLAIN=read_ahead,gc_pause`` switches off just those. Standard library only: hot paths
and every command's start-up ask.
"""

from __future__ import annotations

from dataclasses import dataclass

from store.settings import SettingsError, current

ALL = "all"


@dataclass(frozen=True)
class Mechanism:
    name: str
    what: str  # what it does instead of the plain path
    where: str  # the module that holds it
    gain: str  # the measured gain, with the bench figure it comes from
    bench: str  # the script that measures it
    same_output: str  # the test that its output equals the plain path's
    plain_path: str  # what runs when it is switched off


MECHANISMS: tuple[Mechanism, ...] = (
    Mechanism(
        "sqlite_listings",
        "listings and the TUI's reads open a SQLite file with the standard library's sqlite3",
        "store/sqlite_read.py",
        "`benchmarks list` to its first statement 0.45-0.57 s -> 0.07 s CPU (no SQLAlchemy import)",
        "bench/bench_startup.py",
        "tests/test_speedups.py",
        "the SQLAlchemy engine, as on PostgreSQL",
    ),
    Mechanism(
        "plain_executemany",
        "harness commits, score writes and import inserts on SQLite go through one plain executemany",
        "store/plain_rows.py",
        "harness CPU per call 2.52-3.82 -> 2.08-2.95 ms at -j 256; half of writing 30,000 checkpoint rows",
        "bench/bench_harness.py, bench/bench_scoring.py",
        "tests/scoring/test_score_fast_paths.py, tests/test_speedups.py",
        "SQLAlchemy Core statements",
    ),
    Mechanism(
        "gc_pause",
        "the cyclic garbage collector is paused while an import or a score builds its objects",
        "store/gc_pause.py",
        "a fifth of a 10,000-task import's CPU; half of loading a 10,000-trajectory run",
        "bench/bench_import.py, bench/bench_scoring.py",
        "tests/test_speedups.py",
        "the collector runs as usual",
    ),
    Mechanism(
        "heap_freeze",
        "objects that exist when a run starts, or once the TUI shows its first screen, are frozen out of the"
        " collector until it ends",
        "store/heap.py",
        "collections during a 500-call run 42-50 ms -> 31-34 ms (80-120 ms stalls avoided); a tab press in"
        " the task editor 239 -> 213 ms CPU, its collections 49 -> 26 ms, the longest 346 -> 171 ms",
        "bench/bench_harness.py, bench/bench_focus.py",
        "tests/test_speedups.py, tests/tui/test_home_and_list.py",
        "the collector walks the whole heap",
    ),
    Mechanism(
        "exit_keep",
        "a command's last big result is left to the process exit instead of being freed object by object",
        "tui/exit_keep.py",
        "`score` of 10,000 trajectories about 0.15 s",
        "bench/bench_scoring.py --command",
        "tests/test_speedups.py",
        "everything is freed before exit",
    ),
    Mechanism(
        "read_ahead",
        "an import's data file is parsed and checked in a child process while this one writes",
        "annotation/formats/read_ahead.py",
        "100,000 GTA tasks: busiest process 31.7 -> 19.5 s CPU (6 % more CPU in all)",
        "bench/bench_import.py",
        "tests/formats/test_import_equivalence.py, tests/test_speedups.py",
        "one process parses and writes",
    ),
    Mechanism(
        "replay_group_write",
        "service-tool answers that arrive together are recorded in one transaction",
        "evaluation/tools/replay.py",
        "64 one-second vision calls at -j 32: 3.19 -> 2.74 s whole command (with the loop's HTTP)",
        "bench/bench_service_tools.py",
        "tests/harness/test_service_tool_transactions.py, tests/test_speedups.py",
        "each answer in a transaction of its own",
    ),
    Mechanism(
        "png_background_encode",
        "a tool's PNG result is encoded on a thread pool as soon as the tool returns",
        "evaluation/tools/images.py",
        "the event loop never waits on an encode; the images of one result encode at once",
        "bench/bench_tools.py, bench/bench_harness.py",
        "tests/tools/test_png_encode.py, tests/test_speedups.py",
        "encoded on the calling thread when the bytes are first needed",
    ),
    Mechanism(
        "decoded_image_cache",
        "decoded pixels are kept (256 MB, least recently used out) under their encoded bytes",
        "evaluation/tools/images.py",
        "a tool reading a produced image skips the decode (no encode/decode between steps)",
        "bench/bench_tools.py",
        "tests/test_speedups.py",
        "every read decodes",
    ),
    Mechanism(
        "command_index_cache",
        "the list of commands is read from a cached index of the command modules' syntax",
        "tui/command_index.py",
        "`--help` 0.164 -> 0.124 s, `tasks --help` 0.169 -> 0.137 s",
        "bench/bench_startup.py",
        "tests/test_speedups.py",
        "the index is rebuilt from the sources on every start",
    ),
    Mechanism(
        "keyed_footer",
        "the key footer keeps its keys when a focus move leaves them the same, and mounts new keys already compact",
        "tui/widgets/footer.py",
        "a tab press in the task editor at 160x48: 248 -> 151 ms CPU (footer rebuilds 2.0 -> 0.4 per press)",
        "bench/bench_focus.py",
        "tests/tui/test_footer.py",
        "Textual's footer: every key removed, mounted and restyled on each bindings signal",
    ),
    Mechanism(
        "plugin_cache",
        "the installed benchmark plugins' entry points are cached per sys.path",
        "store/plugins.py",
        "no metadata scan of every installed distribution on each start",
        "bench/bench_startup.py",
        "tests/plugins/test_toy_plugin.py, tests/test_speedups.py",
        "entry points are scanned on every start",
    ),
    Mechanism(
        "harness_procs",
        "a run above 128 in flight spreads its trajectories over child event loops, one per core",
        "evaluation/harness/procs.py",
        "2,000 x 200 ms at -j 256: the busiest process 4.3-4.7 -> 1.4-1.8 ms CPU per call",
        "bench/bench_harness.py --procs",
        "tests/harness/test_procs.py, tests/test_speedups.py",
        "one event loop (also: `chainmark run --procs 1`)",
    ),
)

NAMES = frozenset(m.name for m in MECHANISMS)


class UnknownMechanism(SettingsError):
    """The ``plain`` setting names a mechanism that does not exist."""


def switched_off(value: str) -> frozenset[str]:
    """The mechanisms a ``plain`` value switches off (``all``, or names separated by commas)."""
    names = {part.strip().lower() for part in value.split(",") if part.strip()}
    if ALL in names:
        return NAMES
    unknown = sorted(names - NAMES)
    if unknown:
        raise UnknownMechanism(
            f"setting plain: unknown speed mechanism {', '.join(unknown)} (known: {ALL}, {', '.join(sorted(NAMES))})"
        )
    return frozenset(names)


def enabled(name: str) -> bool:
    """Whether mechanism ``name`` may take its fast path now (the ``plain`` setting, re-read when it changes)."""
    if name not in NAMES:
        raise KeyError(f"no speed mechanism named {name!r}")
    return name not in switched_off(current().plain)


def markdown_table() -> str:
    """The mechanisms as the table in docs/design/performance.md (``python -m store.speedups`` prints it)."""
    lines = [
        "| mechanism | what it does | where | measured gain | bench | same-output test | switched off |",
        "|---|---|---|---|---|---|---|",
    ]
    for m in MECHANISMS:
        cells = [f"`{m.name}`", m.what, f"`{m.where}`", m.gain, _code_list(m.bench), _code_list(m.same_output)]
        lines.append("| " + " | ".join([*cells, m.plain_path]) + " |")
    return "\n".join(lines) + "\n"


def _code_list(paths: str) -> str:
    return ", ".join(f"`{p}`" for p in paths.split(", "))


if __name__ == "__main__":
    print(markdown_table(), end="")
