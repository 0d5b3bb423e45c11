"""`karpplan explain [LOG|-] [--manifests PATH]...`: option parsing only; the work is in karpplan.explain."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Annotated, BinaryIO

import typer
from rich.console import Console
from rich.progress import BarColumn, DownloadColumn, Progress, TaskID, TextColumn, TimeRemainingColumn

from karpplan.errors import InputError, Origin, Problem


class ExplainFormat(StrEnum):
    table = "table"
    json = "json"
    yaml = "yaml"


@dataclass(frozen=True)
class ExplainOptions:
    log: str = "-"
    manifests: tuple[str, ...] = ()
    catalog: str | None = None
    region: str | None = None
    output: str = "table"
    stdout: Console = field(default_factory=Console)
    stderr: Console = field(default_factory=lambda: Console(stderr=True))


class _LazyProgress:
    """A rich progress bar on stderr that appears only once reading has taken more than a second."""

    def __init__(self, console: Console, total: int | None) -> None:
        self.console = console
        self.total = total
        self.started = time.monotonic()
        self.progress: Progress | None = None
        self.task: TaskID | None = None

    def __call__(self, done: int) -> None:
        if self.progress is None:
            if time.monotonic() - self.started < 1.0:
                return
            self.progress = Progress(TextColumn("reading log"), BarColumn(), DownloadColumn(), TimeRemainingColumn(),
                                     console=self.console, transient=True)
            self.progress.start()
            self.task = self.progress.add_task("read", total=self.total)
        assert self.task is not None
        self.progress.update(self.task, completed=done)

    def stop(self) -> None:
        if self.progress is not None:
            self.progress.stop()


def run_explain(options: ExplainOptions) -> int:
    from karpplan.explain.parallel import explain_file
    from karpplan.explain.render import render_table, render_text
    from karpplan.explain.report import explain_stream

    size: int | None = None
    if options.log == "-":
        stream: BinaryIO = sys.stdin.buffer
    else:
        path = Path(options.log)
        if not path.is_file():
            raise InputError(Problem(Origin(options.log), "no such file" if not path.exists() else "not a file"))
        size = path.stat().st_size
        stream = path.open("rb")
    progress = _LazyProgress(options.stderr, size)
    try:
        if size is not None:
            explanation = explain_file(options.log, size, progress)
        else:
            explanation = explain_stream(stream, progress)
    finally:
        progress.stop()
        if stream is not sys.stdin.buffer:
            stream.close()
    if options.manifests:
        from karpplan.explain.fixes import reproduce_and_fix

        reproduce_and_fix(explanation, options.manifests, catalog=options.catalog, region=options.region)
    if options.output in ("json", "yaml"):
        options.stdout.file.write(render_text(explanation, options.output))
    else:
        render_table(explanation, options.stdout)
    return 0 if explanation.items else 1


def _consoles(ctx: typer.Context) -> tuple[Console, Console]:
    obj = ctx.obj
    stdout = getattr(obj, "stdout", None)
    stderr = getattr(obj, "stderr", None)
    no_color = bool(os.environ.get("NO_COLOR"))
    return (stdout if isinstance(stdout, Console) else Console(no_color=no_color),
            stderr if isinstance(stderr, Console) else Console(stderr=True, no_color=no_color))


def explain(
    ctx: typer.Context,
    log: Annotated[str, typer.Argument(metavar="[LOG|-]", help="A log, events or describe output; - for stdin.")] = "-",
    manifests: Annotated[
        list[str] | None,
        typer.Option("--manifests", help="The user's manifests: reproduce the failure and propose fixes (repeatable)."),
    ] = None,
    catalog: Annotated[
        Path | None, typer.Option("--catalog", help="An InstanceCatalog file replacing the embedded AWS catalog.",
                                  dir_okay=False)
    ] = None,
    region: Annotated[str | None, typer.Option("--region", help="Region of the embedded catalog.")] = None,
    output: Annotated[ExplainFormat, typer.Option("-o", "--output", help="Output format.")] = ExplainFormat.table,
) -> None:
    """Explain Karpenter / kube-scheduler / cluster-autoscaler scheduling failures pasted from logs or events."""
    stdout, stderr = _consoles(ctx)
    options = ExplainOptions(log=log, manifests=tuple(manifests or ()), catalog=str(catalog) if catalog else None,
                             region=region, output=output.value, stdout=stdout, stderr=stderr)
    raise typer.Exit(guarded(lambda: run_explain(options), stderr))


def guarded(body: Callable[[], int], stderr: Console) -> int:
    try:
        return body()
    except InputError as error:
        for problem in error.problems:
            stderr.print(str(problem), markup=False, highlight=False, soft_wrap=True)
        return 2
    except (OSError, UnicodeError) as error:
        stderr.print(f"error: {error}", markup=False, highlight=False)
        return 2
