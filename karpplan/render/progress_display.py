"""The optimal engine's progress for people, on stderr: a live panel on a terminal, one line per phase with -v
elsewhere, nothing otherwise. stdout is never written (the plan document goes there).

The engine reports typed events (`engines/optimiser_progress.py`: phase, best cost, lower bound, elapsed of the
limit); this module only presents them. The live view shows the phase, the best plan's cost, the bound,
the gap and the time used of `--time-limit`; it redraws a few times a second (elapsed keeps moving between
events) and vanishes when the plan is done. Colours follow the stderr console (`--color`, NO_COLOR).
"""

from __future__ import annotations

import time
from types import TracebackType

from rich.console import Console, RenderableType
from rich.live import Live
from rich.table import Table
from rich.text import Text

from karpplan.engines.optimiser_progress import ProgressEvent
from karpplan.render.plan_table import bar_glyphs, format_hourly, format_percent

TIME_BAR_WIDTH = 20
WAITING = "preparing (reading the problem, Karpenter simulation)"


def _seconds(value: float) -> str:
    return f"{value:.1f} s"


def _cost_text(event: ProgressEvent) -> str:
    if event.cost is None:
        return "none yet"
    left_out = f" ({event.unplaced} pod{'s' if event.unplaced != 1 else ''} left out)" if event.unplaced else ""
    return f"{format_hourly(event.cost)}/h{left_out}"


def event_line(event: ProgressEvent) -> str:
    """One plain line: `CP-SAT: best $1.2345/h, bound $1.2000/h, gap 2.8%, 3.1 s of 10 s`."""
    parts = [f"best {_cost_text(event)}"]
    if event.bound is not None:
        parts.append(f"bound {format_hourly(event.bound)}/h")
    gap = event.gap
    if gap is not None:
        parts.append(f"gap {format_percent(gap)}")
    parts.append(f"{_seconds(event.elapsed)} of {event.limit:g} s")
    line = f"{event.phase}: " + ", ".join(parts)
    return line + (f" ({event.detail})" if event.detail else "")


def progress_view(event: ProgressEvent | None, elapsed: float, limit: float, console: Console) -> RenderableType:
    """The live panel for the latest event, `elapsed` wall seconds into `limit`."""
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column(no_wrap=True)
    glyphs = bar_glyphs(console)
    ratio = min(max(elapsed / limit, 0.0), 1.0) if limit > 0 else 1.0
    filled = round(ratio * TIME_BAR_WIDTH)
    clock = Text()
    clock.append(glyphs.full * filled, style="cyan")
    clock.append(glyphs.empty * (TIME_BAR_WIDTH - filled), style="dim")
    clock.append(f" {_seconds(elapsed)} of {limit:g} s")
    if event is None:
        grid.add_row("phase", Text(WAITING))
        grid.add_row("time", clock)
        return grid
    phase = Text(str(event.phase))
    if event.detail:
        phase.append(f"  {event.detail}", style="dim")
    grid.add_row("phase", phase)
    grid.add_row("best", Text(_cost_text(event), style="green" if event.cost is not None else "dim"))
    grid.add_row("bound", Text(f"{format_hourly(event.bound)}/h") if event.bound is not None
                 else Text("none yet", style="dim"))
    gap = event.gap
    grid.add_row("gap", Text(format_percent(gap)) if gap is not None else Text("-", style="dim"))
    grid.add_row("time", clock)
    return grid


class LiveProgress:
    """A live panel on a terminal's stderr while the optimal engine runs (a `ProgressSink`; a context
    manager that starts and clears it)."""

    def __init__(self, console: Console, limit: float) -> None:
        self.console = console
        self.limit = limit
        self.event: ProgressEvent | None = None
        self.seen = time.monotonic()  # when `event` arrived (elapsed keeps moving until the next one)
        self.started = self.seen
        self.live = Live(console=console, get_renderable=self.view, refresh_per_second=4, transient=True,
                         redirect_stdout=False, redirect_stderr=False)

    def view(self) -> RenderableType:
        now = time.monotonic()
        elapsed = self.event.elapsed + now - self.seen if self.event is not None else now - self.started
        if self.event is not None and self.event.phase == "done":
            elapsed = self.event.elapsed
        return progress_view(self.event, elapsed, self.limit, self.console)

    def __call__(self, event: ProgressEvent) -> None:
        self.event, self.seen = event, time.monotonic()

    def __enter__(self) -> LiveProgress:
        self.live.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.live.stop()


class PhaseLines:
    """One plain line per phase on stderr (`-v` when stderr is not a terminal): the phase's last event,
    printed when the next phase starts, and the final plan's line at the end."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.last: ProgressEvent | None = None

    def __call__(self, event: ProgressEvent) -> None:
        if self.last is not None and event.phase != self.last.phase:
            self._print(self.last)
        self.last = event

    def _print(self, event: ProgressEvent) -> None:
        self.console.print(event_line(event), markup=False, highlight=False, emoji=False, soft_wrap=True,
                           style="dim")

    def __enter__(self) -> PhaseLines:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        if self.last is not None and error is None:
            self._print(self.last)
        self.last = None


ProgressDisplay = LiveProgress | PhaseLines


def progress_display(stderr: Console, verbose: int, limit: float) -> ProgressDisplay | None:
    """The live panel when stderr is a terminal (not a dumb one), one line per phase with `-v` when it
    is not, else nothing."""
    isatty = getattr(stderr.file, "isatty", None)
    if callable(isatty) and isatty() and not stderr.is_dumb_terminal:
        return LiveProgress(stderr, limit)
    if verbose:
        return PhaseLines(stderr)
    return None


__all__ = ["LiveProgress", "PhaseLines", "ProgressDisplay", "event_line", "progress_display", "progress_view"]
