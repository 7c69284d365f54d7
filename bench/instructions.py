"""Instructions a `chainmark` command executes, per source tree: the figure that does not move with load.

    .venv/bin/python bench/instructions.py [--tree DIR]… [--first-statement] [--cwd DIR] -- chainmark-args…

On the 2-core machine shared with other work a command's CPU time, not only its wall time, grows
1.5-3x (the other processes share the cores' caches), so two timings taken hours apart cannot tell
a slower code path from a busier machine. Valgrind's instruction count can: run under
``cachegrind --cache-sim=no`` the same command from each tree (a ``git worktree`` of an older commit,
put first on ``PYTHONPATH`` and run by this checkout's interpreter) and compare. A run is about 30x
slower than the command itself; each tree runs the command once untimed first, so its bytecode is
compiled and its caches (command index, plugin entry points) are written, as for a user.
``--first-statement`` stops the command at its first own SQL statement (``bench/startup_probe.py``),
the start-up that ``bench_startup.py`` times. Needs ``valgrind`` (Debian package).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VALGRIND = ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null"]


def command(args: list[str], first_statement: bool) -> list[str]:
    """The interpreter's argv for ``chainmark args``, through ``bench/startup_probe.py`` either way (its
    folder, not the working one, is ``sys.path[0]``: a working folder whose files come and go would
    change the plugin cache's stamp between runs), stopped at the first own statement if asked."""
    stop = ["--stop"] if first_statement else []
    return [sys.executable, str(ROOT / "bench" / "startup_probe.py"), os.devnull, *stop, *args]


def instructions(tree: Path, argv: list[str], cwd: Path) -> int:
    """Instructions valgrind counted for ``argv`` with ``tree`` first on PYTHONPATH (after one untimed run)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(tree), os.environ.get("PYTHONPATH", "")) if p)
    subprocess.run(argv, env=env, cwd=cwd, capture_output=True)
    done = subprocess.run([*VALGRIND, *argv], env=env, cwd=cwd, capture_output=True, text=True)
    found = re.search(r"I\s+refs:\s+([\d,]+)", done.stderr)
    if found is None:
        raise SystemExit(f"valgrind gave no count for {tree}: {done.stderr[-1500:]}")
    return int(found.group(1).replace(",", ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", type=Path, action="append", help="a source tree (repeatable; default: this one)")
    parser.add_argument("--first-statement", action="store_true", help="stop at the first own SQL statement")
    parser.add_argument("--cwd", type=Path, default=Path.cwd(), help="the folder the command runs in")
    parser.add_argument("args", nargs="+", help="the chainmark arguments (after --)")
    opts = parser.parse_args()
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed (apt-get install valgrind)")
    argv = command(opts.args, opts.first_statement)
    for tree in opts.tree or [ROOT]:
        count = instructions(tree.resolve(), argv, opts.cwd)
        print(f"{count / 1e6:10.0f} M instructions  {tree}  chainmark {' '.join(opts.args)}", flush=True)


if __name__ == "__main__":
    main()
