"""Parsing a big dataset in a forked child process while the parent writes it to the database.

A 100,000-task import spends about half its CPU time reading: decoding JSON, checking fields, reading,
decoding and hashing image files, fingerprinting each task. The parent stays the only database writer;
the child runs the format's own task iterator and the per-task checks, and sends the parsed tasks over
a pipe in file order, pickled a few hundred at a time. The parent unpickles them and goes on exactly
as with an in-process stream, so ids, rows and audit order do not change.

An error in the child (a ``FormatError`` naming file, record and field, or anything else) is sent in
its place in the stream and raised in the parent when the tasks before it are written, so the import's
transaction rolls back as it would in-process. A child that dies without a word is an error too. The
parent kills and reaps the child when it stops early; a parent that is killed takes the child with it
(``PR_SET_PDEATHSIG``; without it, the child's next write to the pipe fails) and commits nothing.

The child's main thread parses; a second thread writes the frames, so parsing goes on while the pipe is
full (up to ``QUEUED_FRAMES`` frames wait in memory). Forked only on Linux with no other Python thread
running (the TUI imports from worker threads) and for data files big enough to pay for the process;
otherwise the stream is read in-process.
"""

from __future__ import annotations

import os
import pickle
import queue
import signal
import struct
import threading
from collections.abc import Callable, Iterator
from typing import Any

from annotation.formats.base import TaskSpec
from annotation.formats.blob_writer import fork_is_safe, fork_with_pipe
from annotation.formats.errors import FormatError
from store.speedups import enabled

FORK_MIN_BYTES = 8 * 1024 * 1024  # smaller data files are read in-process: a fork costs more than it saves
FRAME_TASKS = 256  # tasks pickled together: one pipe write and one unpickle each
QUEUED_FRAMES = 40  # frames the child may hold while the parent is busy (about 10,000 tasks)
_HEADER = struct.Struct("<Q")


def may_fork(size: int) -> bool:
    return size >= FORK_MIN_BYTES and enabled("read_ahead") and fork_is_safe()


class ReadAhead:
    """``for task in ReadAhead(tasks, notes, prepare)``: ``tasks`` iterated in a child, each passed
    through ``prepare`` there (checks, fingerprint), the results in the same order here. ``notes`` gets
    the notes the child's stream added by its end. Use as a context manager (``close`` on the way out).
    """

    def __init__(self, tasks: Iterator[TaskSpec], notes: list[str], prepare: Callable[[TaskSpec], None]):
        self.notes = notes
        self.pid = 0
        self.child_cpu = 0.0  # seconds of CPU the child used, once it is reaped (for benchmarks)
        self._file: Any = None
        parent = os.getpid()
        pid, read_fd, write_fd = fork_with_pipe()
        if pid == 0:  # the child: never returns
            os.close(read_fd)
            _die_with(parent)
            _child(tasks, notes, prepare, write_fd)
        os.close(write_fd)
        self.pid = pid
        self._file = open(read_fd, "rb", buffering=1 << 20)

    def __enter__(self) -> ReadAhead:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __iter__(self) -> Iterator[TaskSpec]:
        while True:
            kind, body = self._frame()
            if kind == "tasks":
                yield from body
            elif kind == "end":
                self.notes[:] = body
                self._reap()
                return
            elif kind == "format_error":
                self.close()
                raise FormatError(*body)
            else:  # "error": what the child raised, or its description when that could not be pickled
                self.close()
                raise body if isinstance(body, BaseException) else RuntimeError(body)

    def _frame(self) -> tuple[str, Any]:
        head = self._file.read(_HEADER.size)
        if len(head) == _HEADER.size:
            (size,) = _HEADER.unpack(head)
            data = self._file.read(size)
            if len(data) == size:
                return pickle.loads(data)  # noqa: S301 (our own child's output, over our own pipe)
        status = self._reap()
        raise RuntimeError(f"the process reading the dataset ended before its end (status {status})")

    def _reap(self) -> int:
        if self._file is not None:
            self._file.close()
            self._file = None
        if not self.pid:
            return 0
        _, status, usage = os.wait4(self.pid, 0)
        self.pid = 0
        self.child_cpu = usage.ru_utime + usage.ru_stime
        return status

    def close(self) -> None:
        """Stop the child if it is still reading, and reap it."""
        if self.pid:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self._reap()


def _die_with(parent: int) -> None:
    """Have the kernel kill this process when the parent dies (Linux ``PR_SET_PDEATHSIG``), so a killed
    import does not leave its reader parsing on; if the parent is gone already, leave now."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # 1: PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # no prctl: the pipe's EPIPE still ends the child, later
        pass
    if os.getppid() != parent:
        os._exit(1)


def _child(tasks: Iterator[TaskSpec], notes: list[str], prepare: Callable[[TaskSpec], None], fd: int) -> None:
    """Parse, prepare and send; leave through ``os._exit`` (no finalizer touches the parent's state)."""
    status = 0
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle; it kills us
        frames: queue.Queue[bytes | None] = queue.Queue(QUEUED_FRAMES)
        writer = threading.Thread(target=_send, args=(frames, fd), daemon=True)
        writer.start()

        def put(kind: str, body: Any) -> None:
            data = pickle.dumps((kind, body), protocol=pickle.HIGHEST_PROTOCOL)
            frames.put(_HEADER.pack(len(data)) + data)

        part: list[TaskSpec] = []
        try:
            for task in tasks:
                prepare(task)
                part.append(task)
                if len(part) >= FRAME_TASKS:
                    put("tasks", part)
                    part = []
            if part:
                put("tasks", part)
            put("end", list(notes))
        except FormatError as exc:
            if part:
                put("tasks", part)
            put("format_error", (exc.file, exc.record, exc.field, exc.message))
        except BaseException as exc:
            if part:
                put("tasks", part)
            try:
                put("error", exc)
            except Exception:
                put("error", f"{type(exc).__name__}: {exc}")
        frames.put(None)
        writer.join()
    except BaseException:
        status = 1
    finally:
        os._exit(status)


def _send(frames: queue.Queue[bytes | None], fd: int) -> None:
    """Write each frame whole; a pipe with no reader left (the parent died or gave up) ends the child."""
    try:
        while (frame := frames.get()) is not None:
            view = memoryview(frame)
            while view:
                view = view[os.write(fd, view) :]
        os.close(fd)
    except OSError:
        os._exit(1)
