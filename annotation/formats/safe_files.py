"""Reading dataset and run files as untrusted input: regular files under the dataset root only, size-capped,
images decoded once under a pixel limit, JSON without silent duplicate keys.

The symbolic-link rule: a link is followed only when the file it leads to is inside the dataset root (the
root's own path is resolved first, so a root reached through a link is fine). Links that leave the root
(``/etc/passwd``, ``/proc/self/environ``, another user's files) are refused, as are FIFOs, devices and
sockets. The check is made on what was actually opened: ``lstat`` refuses a non-regular file before it is
opened (a FIFO cannot hang the import, a device is never opened), the file is opened with ``O_NOFOLLOW |
O_NONBLOCK``, ``fstat`` must say regular file, and the opened descriptor's real path (``/proc/self/fd``)
must lie inside the root, so swapping a folder for a link halfway through gains nothing.

Limits come from the settings (``max_file_mb`` … in chainmark.toml or ``CHAINMARK_MAX_FILE_MB`` …; see ``limits``).
"""

from __future__ import annotations

import io
import json
import os
import stat
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from annotation.formats.errors import FormatError

MB = 1024 * 1024
FILE_CACHE_BYTES = 64 * MB  # file contents one import keeps for records that name the same file again
_PROC_FD = "/proc/self/fd"
_HAS_PROC_FD = os.path.isdir(_PROC_FD)
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


@dataclass(frozen=True)
class ReadLimits:
    """Caps on what one import may read (defaults in brackets; environment variable to change each)."""

    file_bytes: int = 512 * MB  # any one data file: JSON, JSONL, TSV, text [CHAINMARK_MAX_FILE_MB=512]
    image_bytes: int = 64 * MB  # any one image file [CHAINMARK_MAX_IMAGE_MB=64]
    image_pixels: int = 89_478_485  # width × height of one image, Pillow's own default [CHAINMARK_MAX_IMAGE_PIXELS]
    record_bytes: int = 256 * MB  # one task or trajectory: its line plus all its files [CHAINMARK_MAX_RECORD_MB=256]


def limits() -> ReadLimits:
    """The limits in force now (settings are re-read when they change, so tests and users can change them)."""
    from store.settings import SettingsError, current

    try:
        s = current()
    except SettingsError as exc:
        raise FormatError("settings", message=str(exc)) from None
    return ReadLimits(s.max_file_mb * MB, s.max_image_mb * MB, s.max_image_pixels, s.max_record_mb * MB)


class UnsafeFile(Exception):
    """Why a file was refused; the caller turns it into a FormatError naming its file, record and field."""


@contextmanager
def refusals_as_format_errors(path: Any) -> Iterator[None]:
    """Opening a data file: a missing file, a file on its path or an unsafe one, worded as FormatErrors."""
    try:
        yield
    except FileNotFoundError:
        raise FormatError(path, message="file not found") from None
    except NotADirectoryError:
        raise FormatError(path, message="file not found (a folder on its path is a file)") from None
    except UnsafeFile as exc:
        raise FormatError(path, message=str(exc)) from None


def real_root(root: str | os.PathLike[str]) -> str:
    """The dataset root with its own links resolved: what every file read must stay inside."""
    return os.path.realpath(root)


def _inside(real: str, root_real: str) -> bool:
    return real == root_real or real.startswith(root_real.rstrip(os.sep) + os.sep)


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def open_regular(path: str | os.PathLike[str], root_real: str, max_bytes: int) -> tuple[int, os.stat_result]:
    """An open descriptor on ``path`` if it is a regular file inside ``root_real`` of at most ``max_bytes``
    (the caller closes it), with its ``fstat``.

    Raises FileNotFoundError for a missing file (callers word that themselves) and UnsafeFile for
    everything refused.
    """
    path = os.fspath(path)
    st = os.lstat(path)  # FileNotFoundError / NotADirectoryError propagate
    if stat.S_ISLNK(st.st_mode):
        real = os.path.realpath(path)
        if not _inside(real, root_real):
            raise UnsafeFile(
                f"is a symbolic link to {real}, outside the dataset folder {root_real}; "
                f"copy the file in instead of linking it"
            )
        path = real
        st = os.lstat(path)
    if not stat.S_ISREG(st.st_mode):
        raise UnsafeFile(f"is {_kind(st.st_mode)}, not a regular file")
    if st.st_size > max_bytes:
        raise UnsafeFile(f"is {_size(st.st_size)}, over the {_size(max_bytes)} limit")
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except FileNotFoundError:
        raise
    except OSError as exc:  # ELOOP: the file became a link since lstat
        raise UnsafeFile(f"cannot be opened safely ({exc.strerror})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UnsafeFile(f"is {_kind(st.st_mode)}, not a regular file")
        real = os.readlink(f"{_PROC_FD}/{fd}") if _HAS_PROC_FD else os.path.realpath(path)
        if not _inside(real, root_real):
            raise UnsafeFile(f"leads to {real}, outside the dataset folder {root_real}")
    except BaseException:
        os.close(fd)
        raise
    return fd, st


def read_regular(path: str | os.PathLike[str], root_real: str, max_bytes: int) -> tuple[bytes, os.stat_result]:
    """The bytes of ``path`` if it is a regular file inside ``root_real`` of at most ``max_bytes``
    (refusals as ``open_regular``). Also returns the opened file's ``fstat`` (callers key caches on it).
    """
    fd, st = open_regular(path, root_real, max_bytes)
    try:
        with open(fd, "rb", closefd=False) as fh:
            data = fh.read(min(st.st_size, max_bytes) + 1)
            if len(data) > st.st_size and len(data) <= max_bytes:  # grew while we read
                data += fh.read(max_bytes + 1 - len(data))
    finally:
        os.close(fd)
    if len(data) > max_bytes:
        raise UnsafeFile(f"is over the {_size(max_bytes)} limit")
    return data, st


def _size(n: int) -> str:
    return f"{n / MB:.1f} MB" if n >= MB else f"{n} bytes"


# ------------------------------------------------------------------ images

_checked_images: dict[tuple[int, ...], None] = {}
_CHECKED_MAX = 65536


def check_image(data: bytes, max_pixels: int, key: tuple[int, ...] | None = None) -> None:
    """Decode ``data`` with Pillow; raise UnsafeFile if it is not an image or has more than ``max_pixels``.

    ``key`` (device, inode, size, ctime, limit) skips files this process already checked unchanged: tasks
    that share one image pay for one decode.
    """
    if key is not None and key in _checked_images:
        return
    from PIL import Image

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)  # the limit is checked here
            with Image.open(io.BytesIO(data)) as im:
                w, h = im.size
                if w * h > max_pixels:
                    raise UnsafeFile(f"is a {w}×{h} image, over the {max_pixels:,} pixel limit")
                im.load()
    except UnsafeFile:
        raise
    except Image.DecompressionBombError as exc:
        raise UnsafeFile(f"is an image over the {max_pixels:,} pixel limit (Pillow: {exc})") from None
    except Exception as exc:  # Pillow raises many kinds for bad input
        raise UnsafeFile(f"is not a readable image ({type(exc).__name__}: {exc})") from None
    if key is not None:
        if len(_checked_images) >= _CHECKED_MAX:
            _checked_images.clear()
        _checked_images[key] = None


def stat_key(st: os.stat_result) -> tuple[int, int, int, int]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_ctime_ns)


# ------------------------------------------------------------------ JSON


class DuplicateKey(ValueError):
    def __init__(self, key: str):
        super().__init__(key)
        self.key = key


def _strict_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    d = dict(pairs)
    if len(d) != len(pairs):
        seen: set[str] = set()
        for k, _ in pairs:
            if k in seen:
                raise DuplicateKey(k)
            seen.add(k)
    return d


def loads_strict(text: str) -> Any:
    """``json.loads`` that raises DuplicateKey on the first object with a key twice."""
    return json.loads(text, object_pairs_hook=_strict_object)


def loads_keep_last(text: str) -> tuple[Any, list[str]]:
    """``json.loads`` as the reference reads it (the last of duplicate keys wins) and the keys that were
    duplicated, in order of appearance."""
    duplicated: list[str] = []

    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        d = dict(pairs)
        if len(d) != len(pairs):
            seen: set[str] = set()
            for k, _ in pairs:
                if k in seen and k not in duplicated:
                    duplicated.append(k)
                seen.add(k)
        return d

    return json.loads(text, object_pairs_hook=hook), duplicated


# ------------------------------------------------------------------ one import's root


class DatasetRoot:
    """The folder one import reads from: its resolved path, the limits in force and the warnings so far."""

    def __init__(self, path: str | os.PathLike[str], read_limits: ReadLimits | None = None):
        self.path = os.fspath(path)
        self.real = real_root(path)
        self.limits = read_limits or limits()
        self.warnings: list[str] = []
        # Files already read and hashed by this import, (relative path, as image) -> (bytes, sha256), up
        # to FILE_CACHE_BYTES: records that share a file are not re-read, re-checked and re-hashed.
        self.files: dict[tuple[str, bool], tuple[bytes, str]] = {}
        self._files_bytes = 0

    def remember(self, key: tuple[str, bool], value: tuple[bytes, str]) -> None:
        size = len(value[0])
        if self._files_bytes + size > FILE_CACHE_BYTES:
            self.files.clear()
            self._files_bytes = 0
            if size > FILE_CACHE_BYTES:
                return
        self.files[key] = value
        self._files_bytes += size

    def read(self, path: str | os.PathLike[str], *, image: bool = False) -> bytes:
        """Bytes of a file under the root (UnsafeFile/FileNotFoundError as ``read_regular``); an image is
        also decoded under the pixel limit."""
        cap = self.limits.image_bytes if image else self.limits.file_bytes
        data, st = read_regular(path, self.real, cap)
        if image:
            check_image(data, self.limits.image_pixels, (*stat_key(st), self.limits.image_pixels))
        return data
