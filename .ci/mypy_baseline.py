"""Run mypy and hold it to a checked-in baseline that may only shrink.

The codebase had hundreds of mypy errors when type checking was introduced. Fixing them all at
once would collide with everyone's work, so the known errors are recorded in
`.ci/mypy-baseline.txt` and the check fails only on errors that are not in it. Lines are compared
without line numbers (and as a multiset), so editing a file doesn't invalidate its known errors;
adding one more error of the same text in the same file does count as new.

    python .ci/mypy_baseline.py            # check: fail on new errors, list fixed ones
    python .ci/mypy_baseline.py --update   # rewrite the baseline from the current errors (never to more)

Runs from the repository root with the settings in pyproject.toml ([tool.mypy]).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASELINE = ROOT / ".ci" / "mypy-baseline.txt"
HEADER = (
    "# Known mypy errors (see .ci/mypy_baseline.py). This file may only shrink:\n"
    "# fix errors, then run `python .ci/mypy_baseline.py --update`. Never add lines by hand.\n"
)

# path:line[:col][:end_line:end_col]: error: message  [code]
_ERROR = re.compile(r"^(?P<path>[^:\s][^:]*):\d+(?::\d+)*: error: (?P<message>.*)$")
# Messages that quote line numbers ("defined on line 12") would churn with every edit above them.
_LINE_REF = re.compile(r"\bline \d+\b")


def normalise(line: str) -> str | None:
    """The comparable form of one mypy output line, or None for notes and summaries."""
    match = _ERROR.match(line.rstrip())
    if match is None:
        return None
    path = match["path"].replace(os.sep, "/")
    message = _LINE_REF.sub("line N", match["message"])
    return f"{path}: error: {message}"


def run_mypy(extra_args: list[str]) -> tuple[int, list[str]]:
    """mypy's exit code and output lines (stdout; stderr is passed through)."""
    cmd = [
        sys.executable,
        "-m",
        "mypy",
        "--no-error-summary",
        "--no-pretty",
        "--hide-error-context",
        "--no-color-output",
        *extra_args,
    ]
    proc = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    return proc.returncode, proc.stdout.splitlines()


def read_baseline() -> Counter[str]:
    if not BASELINE.exists():
        return Counter()
    lines = BASELINE.read_text(encoding="utf-8").splitlines()
    return Counter(line for line in lines if line and not line.startswith("#"))


def write_baseline(errors: Counter[str]) -> None:
    body = "".join(f"{line}\n" for line in sorted(errors.elements()))
    BASELINE.write_text(HEADER + body, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--update", action="store_true", help="rewrite the baseline from the current errors")
    parser.add_argument("mypy_args", nargs="*", help="extra arguments for mypy (after --)")
    args = parser.parse_args(argv)

    code, output = run_mypy(args.mypy_args)
    raw_by_key: dict[str, list[str]] = {}
    current: Counter[str] = Counter()
    for line in output:
        key = normalise(line)
        if key is not None:
            current[key] += 1
            raw_by_key.setdefault(key, []).append(line)
    if code not in (0, 1) or (code == 1 and not current):
        # 2 = mypy itself failed (bad config, crash): its output is the explanation.
        print("\n".join(output), file=sys.stderr)
        print(f"mypy failed to run (exit {code})", file=sys.stderr)
        return 2

    if args.update:
        before = sum(read_baseline().values())
        if sum(current.values()) > before:
            print(
                f"mypy: {sum(current.values())} errors, more than the {before} in the baseline; the baseline only "
                "shrinks (errors may move with the code they are in, never grow): fix the new ones",
                file=sys.stderr,
            )
            return 1
        write_baseline(current)
        print(f"mypy baseline: {sum(current.values())} errors written to {BASELINE.relative_to(ROOT)} (was {before})")
        return 0

    baseline = read_baseline()
    new = current - baseline
    fixed = baseline - current
    if fixed:
        print(
            f"mypy: {sum(fixed.values())} baseline errors are gone; shrink the baseline with "
            f"`python .ci/mypy_baseline.py --update`:"
        )
        for key in sorted(fixed.elements()):
            print(f"  fixed  {key}")
    if new:
        print(f"mypy: {sum(new.values())} new errors (not in {BASELINE.relative_to(ROOT)}); fix them:")
        for key in sorted(new):
            # Show every occurrence with its line number, so the new one can be found.
            for raw in raw_by_key[key]:
                print(f"  {raw}")
        return 1
    print(f"mypy: no new errors ({sum(current.values())} known in the baseline)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
