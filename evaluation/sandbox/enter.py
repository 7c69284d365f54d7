"""First code to run INSIDE a sandbox, for every caller: applies the kernel limits, then runs the
caller's payload script as ``__main__``. Standard library only, no chainmark imports, so it starts
fast and shows nothing of the host project.

Usage: python -I -B enter.py LIMITS.json PAYLOAD.py [ARGS...]
"""

import json
import os
import resource
import runpy
import signal
import sys


def apply_limits(cfg):
    """Soft = hard for every limit, so nothing the payload does can raise them again."""
    mb = 1024 * 1024

    def hard(which, value):
        resource.setrlimit(which, (value, value))

    cpu = int(cfg["cpu_seconds"])
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    hard(resource.RLIMIT_AS, int(cfg["memory_mb"]) * mb)
    hard(resource.RLIMIT_FSIZE, int(cfg["file_mb"]) * mb)
    hard(resource.RLIMIT_CORE, 0)
    hard(resource.RLIMIT_NOFILE, 256)
    if cfg.get("max_processes"):
        hard(resource.RLIMIT_NPROC, int(cfg["max_processes"]))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # an oversized write raises OSError instead of killing


def main():
    with open(sys.argv[1]) as fh:
        cfg = json.load(fh)
    apply_limits(cfg)
    payload = sys.argv[2]
    sys.argv = [payload, *sys.argv[3:]]
    sys.path[:] = [p for p in sys.path if p and os.path.realpath(p) != os.path.dirname(os.path.realpath(__file__))]
    runpy.run_path(payload, run_name="__main__")


if __name__ == "__main__":
    main()
