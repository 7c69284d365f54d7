"""An import's new blob files, written by a forked child process while the parent does the database work.

Creating thousands of small files is mostly kernel time, and on some file systems a lot of it. A thread
cannot overlap it with the parent's work: every return from a system call must win the GIL back from
the busy parent thread (measured: no gain). A forked child already has the bytes (copy-on-write),
writes them with the folder store's own temp-file-and-rename protocol and leaves through ``os._exit``,
so it never runs a finalizer or touches the parent's database connection. The parent waits for it
before its transaction commits.

Only on Linux, with no other Python thread running (the TUI imports from worker threads), and for
enough files to be worth a fork; otherwise the files are written in-process, one after another.
"""

from __future__ import annotations

import os
import sys
import threading

from store.blobs import FolderBlobStore

FORK_MIN_BLOBS = 256


class BlobWrites:
    """Started by the constructor; ``wait`` returns once every file is in place or raises what failed."""

    def __init__(self, blobs: FolderBlobStore, by_sha: dict[str, bytes]):
        self.pid = 0
        self.report_fd = -1
        if _may_fork(len(by_sha)):
            try:
                self._fork(blobs, by_sha)
                return
            except OSError:  # no process to spare (memory, limits): write them here instead
                pass
        for sha, data in by_sha.items():
            blobs.put_hashed(sha, data)

    def _fork(self, blobs: FolderBlobStore, by_sha: dict[str, bytes]) -> None:
        pid, read_fd, write_fd = fork_with_pipe()
        if pid == 0:  # the child: write, report a failure on the pipe, leave without any cleanup
            status = 0
            try:
                os.close(read_fd)
                for sha, data in by_sha.items():
                    blobs.put_hashed(sha, data)
            except BaseException as exc:
                status = 1
                os.write(write_fd, _describe(exc).encode("utf-8", "replace"))
            finally:
                os._exit(status)
        os.close(write_fd)
        self.pid, self.report_fd = pid, read_fd

    def wait(self) -> None:
        """Block until the child is done; its failure is raised here as an OSError."""
        if not self.pid:
            return
        report = b""
        try:
            while chunk := os.read(self.report_fd, 65536):
                report += chunk
        finally:
            os.close(self.report_fd)
            _, status = os.waitpid(self.pid, 0)
            self.pid = 0
        if status != 0:
            raise _rebuild(report.decode("utf-8", "replace"), status)


def fork_is_safe() -> bool:
    """A fork copies only the calling thread: forking is safe on Linux from a single-threaded process."""
    return sys.platform.startswith("linux") and hasattr(os, "fork") and threading.active_count() == 1


def fork_with_pipe() -> tuple[int, int, int]:
    """``os.fork`` with a pipe for the child to talk back on: (pid, read end, write end); the pipe is
    closed again if the fork fails."""
    read_fd, write_fd = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(read_fd)
        os.close(write_fd)
        raise
    return pid, read_fd, write_fd


def _may_fork(count: int) -> bool:
    return count >= FORK_MIN_BLOBS and fork_is_safe()


def _describe(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.errno is not None:
        return f"{exc.errno}\0{exc.strerror}\0{exc.filename or ''}"
    return f"\0{type(exc).__name__}: {exc}\0"


def _rebuild(report: str, status: int) -> OSError:
    """The child's error as the OSError writing in-process would have raised."""
    parts = report.split("\0")
    if len(parts) == 3 and parts[0].isdigit():
        return OSError(int(parts[0]), parts[1], parts[2] or None)
    detail = parts[1] if len(parts) == 3 else f"exit status {status}"
    return OSError(f"writing blob files failed: {detail}")
