"""Progress of a diff on stderr, side by side: what is being planned and what it came to, and the optimal
engine's own progress (`render/progress_display.py`) while each side is solved.

On a terminal or with `-v` a line per side; the optimal engine's live panel on a terminal, its phase lines
with `-v`; nothing otherwise (a CI log gets the result, not the chatter). stdout is never written.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from rich.console import Console

from karpplan.engines.optimiser_progress import ProgressSink
from karpplan.plan import Plan
from karpplan.render.formatting import format_hourly
from karpplan.render.progress_display import progress_display


class DiffProgress:
    def __init__(self, console: Console, verbose: int, engine: str) -> None:
        isatty = getattr(console.file, "isatty", None)
        self.console = console
        self.verbose = verbose
        self.engine = engine
        self.chatty = bool(verbose) or (callable(isatty) and bool(isatty()))

    def _say(self, text: str) -> None:
        if self.chatty:
            self.console.print(text, markup=False, highlight=False, emoji=False, style="dim")

    @contextmanager
    def side(self, name: str, paths: Sequence[str], time_limit: float) -> Iterator[ProgressSink | None]:
        """Around one side's planning (in `time_limit` seconds): the line before, the engine's display during it."""
        where = ", ".join(paths) if paths else "(nothing)"
        self._say(f"{name}: planning {where} with the {self.engine} engine (time limit {time_limit:g}s)")
        display = progress_display(self.console, self.verbose, time_limit) if self.engine == "optimal" else None
        if display is None:
            yield None
            return
        with display:
            yield display

    def done(self, name: str, plan: Plan, started: float) -> None:
        s = plan.summary
        self._say(f"{name}: {s.pods} pods, {s.new_nodes} new nodes, {s.unschedulable} unschedulable, "
                  f"{format_hourly(s.hourly_cost)}/h ({time.monotonic() - started:.1f} s)")
