"""Files a sandbox left behind, read without ever following a link.

Every path component is opened relative to its parent's descriptor with ``O_NOFOLLOW``; only regular
files with one link count, and each is size-capped. So a symlink (or a hard link, or a FIFO) the code
planted, or re-pointed after a check, cannot make the harness read ``/etc/passwd`` or its own
``/proc/self/environ``.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_SPECIAL_BITS = stat.S_ISUID | stat.S_ISGID
MAX_DEPTH = 8
MAX_ENTRIES = 10_000


MAX_IMAGE_PIXELS = 40_000_000


class OutputRefused(OSError):
    """A sandbox output that is not a plain regular file inside the folder, or is too big."""


@dataclass(frozen=True)
class OutputFile:
    size: int
    mtime_ns: int
    inode: int


def scan_outputs(folder: Path, suffixes: set[str] | None = None) -> dict[str, OutputFile]:
    """Regular files under ``folder`` (relative path → size/mtime/inode); links and special files skipped."""
    found: dict[str, OutputFile] = {}
    try:
        top = os.open(folder, _DIR_FLAGS)
    except OSError:
        return found
    budget = [MAX_ENTRIES]

    def walk(dir_fd: int, prefix: str, depth: int) -> None:
        with os.scandir(dir_fd) as entries:
            for entry in entries:
                budget[0] -= 1
                if budget[0] < 0:
                    return
                st = entry.stat(follow_symlinks=False)
                rel = prefix + entry.name
                if stat.S_ISDIR(st.st_mode) and depth < MAX_DEPTH:
                    try:
                        sub = os.open(entry.name, _DIR_FLAGS, dir_fd=dir_fd)
                    except OSError:
                        continue
                    try:
                        walk(sub, rel + "/", depth + 1)
                    finally:
                        os.close(sub)
                elif stat.S_ISREG(st.st_mode) and st.st_nlink == 1:
                    if suffixes is None or Path(entry.name).suffix.lower() in suffixes:
                        found[rel] = OutputFile(st.st_size, st.st_mtime_ns, st.st_ino)

    try:
        walk(top, "", 0)
    finally:
        os.close(top)
    return found


def read_regular_file(folder: Path, relative: str, max_bytes: int) -> bytes:
    """The bytes of ``folder/relative``, refusing links at any level, non-regular files, hard-linked
    files and anything over ``max_bytes``."""
    parts = [p for p in relative.split("/") if p]
    if not parts or any(p in (".", "..") for p in parts):
        raise OutputRefused(f"{relative!r}: not a plain relative path")
    fds = [os.open(folder, _DIR_FLAGS)]
    try:
        for part in parts[:-1]:
            fds.append(os.open(part, _DIR_FLAGS, dir_fd=fds[-1]))
        try:
            fd = os.open(parts[-1], _FILE_FLAGS, dir_fd=fds[-1])
        except OSError as exc:
            raise OutputRefused(f"{relative!r}: {exc.strerror or exc} (links are not followed)") from None
        fds.append(fd)
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1:
            raise OutputRefused(f"{relative!r}: not a regular file of its own")
        if st.st_mode & _SPECIAL_BITS:
            raise OutputRefused(f"{relative!r}: setuid/setgid file refused")
        if st.st_size > max_bytes:
            raise OutputRefused(f"{relative!r}: {st.st_size} bytes, over the {max_bytes}-byte cap")
        chunks = []
        total = 0
        while True:
            chunk = os.read(fd, min(1 << 20, max_bytes + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > max_bytes:
                raise OutputRefused(f"{relative!r}: over the {max_bytes}-byte cap")
        return b"".join(chunks)
    finally:
        for fd in reversed(fds):
            os.close(fd)


def strip_special_bits(folder: Path) -> int:
    """Clear setuid/setgid on every file and folder under ``folder``, however deep or many (links are
    not followed); returns how many were cleared. Run once the sandbox is gone, after every run."""
    cleared = 0
    stack = [str(folder)]
    while stack:
        path = stack.pop()
        try:
            fd = os.open(path, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC)  # even a file we may not read
        except OSError:
            continue
        try:
            st = os.fstat(fd)
            if st.st_mode & _SPECIAL_BITS and (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
                os.chmod(f"/proc/self/fd/{fd}", stat.S_IMODE(st.st_mode) & ~_SPECIAL_BITS)
                cleared += 1
            if stat.S_ISDIR(st.st_mode):
                with os.scandir(path) as entries:
                    stack += [os.path.join(path, e.name) for e in entries]
        except OSError:
            pass
        finally:
            os.close(fd)
    return cleared


def check_image(data: bytes, max_pixels: int = MAX_IMAGE_PIXELS, formats: set[str] | None = None) -> str:
    """The image format of ``data`` when it really is a decodable image of at most ``max_pixels``
    (and, given ``formats``, of one of them); raises :class:`OutputRefused` otherwise. The size is
    read from the header first, so a decompression bomb is refused before it is decoded."""
    import io
    import warnings

    from PIL import Image

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data)) as im:
                if formats is not None and im.format not in formats:
                    raise OutputRefused(f"a {im.format} image, not {' or '.join(sorted(formats))}")
                if im.width * im.height > max_pixels:
                    raise OutputRefused(f"{im.width}x{im.height} pixels, over the {max_pixels}-pixel limit")
                im.load()
                return str(im.format)
    except OutputRefused:
        raise
    except (OSError, ValueError, SyntaxError, Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        raise OutputRefused(f"not a readable image: {exc}") from None
