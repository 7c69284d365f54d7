"""Where model code may write: a ``work`` folder inside a private (0700) folder that is never bound
into the sandbox.

Files the sandbox writes belong, on the host, to the user running chainmark. Code inside can make
them setuid or open their modes to everyone (``chmod 4755 rootsh; chmod 755 .``), and bubblewrap's
``nosuid`` bind only holds inside the sandbox: on the host another local user could run such a
file with chainmark's rights. The private parent is out of the sandbox's reach, so no other user
can reach anything below it, whatever modes the code sets; and after every run the special mode
bits are stripped (``outputs.strip_special_bits``) before anything there is read.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from store.sandbox_folders import held_folder


@contextmanager
def work_folder(prefix: str) -> Iterator[Path]:
    """A fresh ``work`` folder for one caller (a code-mode trajectory, one Solver/Plot call): inside
    a private parent that is locked as live until the block ends (``chainmark gc`` leaves it alone),
    then removed."""
    with held_folder(prefix) as parent:
        work = parent / "work"
        work.mkdir(mode=0o700)
        yield work


def require_private_parent(workdir: Path) -> None:
    """Refuse a work folder no ancestor of which is closed to other users (owner-only, ours)."""
    me = os.geteuid()
    for parent in Path(os.path.abspath(workdir)).parents:
        try:
            st = os.stat(parent)
        except OSError:
            continue
        if st.st_uid == me and stat.S_IMODE(st.st_mode) & 0o077 == 0:
            return
    raise ValueError(
        f"sandbox work folder {workdir} must lie inside a folder only its owner can enter "
        "(use evaluation.sandbox.work_folder): another user could reach what the code leaves there"
    )
