"""Large logs read in parallel: the file is cut at line starts into one part per core, each part is
explained on its own and the parts are merged in order (line numbers shifted by the lines before them).
A record spanning a cut (pretty-printed JSON) is read as its two halves; cuts avoid indented lines.

One part per worker: each part's distinct items come back pickled and most of them repeat another part's,
so more parts would only mean more copies unpickled (and memory fragmented) in the main process. The
parent's objects are frozen out of the garbage collector before the fork so the workers do not copy
their pages by collecting them."""

from __future__ import annotations

import gc
import multiprocessing
import os
from collections.abc import Callable

from karpplan.explain.report import Explanation, explain_blocks, explain_stream

PARALLEL_MIN_BYTES = 64 << 20


def _cuts(path: str, size: int, parts: int) -> list[int]:
    cuts = [0]
    with open(path, "rb") as f:
        for i in range(1, parts):
            f.seek(max(size * i // parts, cuts[-1]))
            f.readline()
            while True:
                pos = f.tell()
                line = f.readline()
                if not line or not line[:1].isspace() and not line.startswith((b"}", b"]")):
                    break
            cuts.append(pos)
    cuts.append(size)
    return cuts


def _part(args: tuple[str, int, int]) -> Explanation:
    path, start, end = args
    with open(path, "rb") as f:
        f.seek(start)
        return explain_blocks(f, limit=end - start)


def explain_file(path: str, size: int, progress: Callable[[int], None] | None = None,
                 workers: int | None = None) -> Explanation:
    workers = workers or min(os.cpu_count() or 1, 8)
    if size < PARALLEL_MIN_BYTES or workers < 2:
        with open(path, "rb") as f:
            return explain_stream(f, progress)
    cuts = _cuts(path, size, workers)
    tasks = [(path, cuts[i], cuts[i + 1]) for i in range(len(cuts) - 1) if cuts[i + 1] > cuts[i]]
    out = Explanation()
    gc.freeze()  # the forked workers then leave the parent's objects (and their pages) alone
    # A worker explains one part and exits (`maxtasksperchild=1`), so one that finished first does not keep its
    # heap while the main process unpickles its part and the other workers run.
    with multiprocessing.get_context("fork").Pool(processes=workers, maxtasksperchild=1) as pool:
        for (_, _, end), part in zip(tasks, pool.imap(_part, tasks), strict=True):
            out.merge(part, out.lines)
            if progress is not None:
                progress(end)
    out._same.clear()
    out.finish()
    return out


__all__ = ["explain_file"]
