"""Single-node consolidation's candidates judged two at a time: speculation in a forked worker.

A pass of single-node consolidation simulates its candidates one after another until the first that yields a
command; their simulations read the same cluster, so they are independent. Most passes end at their first
or second candidate, so those are judged here; a pass that goes on is a long one (the last passes judge every
candidate left), and `judged` then forks one worker that judges every other candidate (by position among those to simulate) while this process judges the rest, and
hands the verdicts back strictly in candidate order: the caller stops at the first command, as it does
sequentially, and the worker is then killed. The answer is the sequential one: the same verdicts for the
candidates before the command, the same command (the worker only says "a command"; this process simulates
that candidate again to build it, so no simulated object crosses the pipe).

Forking is unsafe while other threads run (a lock held by one stays held in the child): the worker is
forked only when this process has no thread but the main one and the native threads numpy starts at import
(OR-Tools' CP-SAT threads end with its solve; a background solve still running means no fork). Forking costs
a few milliseconds and the worker's first touches copy pages, so a pass with few candidates to simulate, or
a small cluster, stays sequential. The parent's objects are frozen out of the garbage collector around the
fork, and the worker does not collect, so it does not copy their pages by scanning them.
"""

from __future__ import annotations

import contextlib
import gc
import os
import pickle
import signal
import threading
from collections.abc import Callable, Generator, Sequence
from typing import BinaryIO, TypeVar

import numpy  # noqa: F401  (its threads are started before the baseline below is taken)

T = TypeVar("T")
R = TypeVar("R")
HEAD = 2  # judged here before any fork: most passes take their first or second candidate
MIN_SIMULATIONS = 4  # fewer candidates left to simulate after those: no fork
MIN_NODES = 40  # a smaller cluster simulates too fast for a fork to pay
COMMAND = ""  # what the worker sends for a candidate that yields a command (a refusal is never empty)
FAILED = None  # what it sends when judging raised (this process then judges that candidate itself)


def _native_threads() -> int:
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return -1


_BASELINE = _native_threads()


def fork_safe() -> bool:
    """No thread but the main one (and numpy's, started at import) is alive."""
    if threading.active_count() != 1 or not hasattr(os, "fork"):
        return False
    now = _native_threads()
    return now != -1 and _BASELINE != -1 and now <= _BASELINE


Notes = tuple[Callable[[T], object], Callable[[T, object], None]]  # what a worker's judge noted: (take, give)


def _worker(todo: Sequence[T], judge: Callable[[T], object], out: BinaryIO,
            note: Callable[[T], object] | None) -> None:
    for i in range(1, len(todo), 2):
        try:
            verdict = judge(todo[i])
        except BaseException:  # OutOfTime, or a fault: this process judges it again and sees the same
            pickle.dump((FAILED, None), out)
            return
        refused = isinstance(verdict, str)
        pickle.dump((verdict if refused else COMMAND, note(todo[i]) if refused and note is not None else None), out)
        out.flush()
        if not refused:
            return


def judged(todo: Sequence[T], judge: Callable[[T], R], workers: int, nodes: int,
           notes: Notes[T] | None = None) -> Generator[R | str, None, None]:
    """`judge(c)` for each of `todo` in order (a refusal string, or anything else for a command): the first
    `HEAD` here, then every other one of the rest by a forked worker when `workers` > 1 and it pays. Close
    the iterator (or leave it) once a command is seen: the worker is killed. `notes` (take, give): what the
    worker's judge noted of a refused candidate, `take(c)` there, goes to `give(c, note)` here."""
    head = min(len(todo), HEAD)
    for c in todo[:head]:
        yield judge(c)
    todo = todo[head:]
    if workers < 2 or len(todo) < MIN_SIMULATIONS or nodes < MIN_NODES or not fork_safe():
        for c in todo:
            yield judge(c)
        return
    read, write = os.pipe()
    gc.freeze()
    try:
        pid = os.fork()
    except OSError:
        gc.unfreeze()
        os.close(read)
        os.close(write)
        for c in todo:
            yield judge(c)
        return
    if pid == 0:  # the worker
        code = 0
        try:
            os.close(read)
            gc.disable()
            with os.fdopen(write, "wb") as out:
                _worker(todo, judge, out, notes[0] if notes is not None else None)
        except BaseException:
            code = 1
        finally:
            os._exit(code)
    gc.unfreeze()
    os.close(write)
    source, alive = os.fdopen(read, "rb"), True
    try:
        for i, c in enumerate(todo):
            if i % 2 == 0 or not alive:
                yield judge(c)
                continue
            try:
                sent, note = pickle.load(source)
            except (EOFError, pickle.UnpicklingError, OSError):
                sent, note, alive = FAILED, None, False
            if isinstance(sent, str) and sent != COMMAND:
                if notes is not None and note is not None:
                    notes[1](c, note)
                yield sent
            else:  # a command (built here), or the worker failed on it
                alive = alive and sent is not FAILED
                yield judge(c)
    finally:
        source.close()
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)


__all__ = ["fork_safe", "judged"]
