"""`karpplan explain [LOG|-] [--manifests PATH]...`: option parsing only; the work is in karpplan.explain."""

from __future__ import annotations

import io
import sys
import time
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Annotated, BinaryIO

import typer
from rich.console import Console
from rich.progress import BarColumn, DownloadColumn, Progress, TaskID, TextColumn, TimeRemainingColumn

from karpplan.catalog.zones import parse_zones
from karpplan.cli.options import (
    allow_estimated_prices_option,
    catalog_option,
    output_option,
    region_option,
    zones_option,
)
from karpplan.cli.terminal import run_guarded, terminal_of
from karpplan.errors import InputError, InputProblem, Origin


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
    zones: tuple[str, ...] = ()  # `--zones`
    output: str = "table"
    allow_estimated_prices: bool = False  # `--allow-estimated-prices`, as `plan` reads it
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
    # lazy: the explain package (its log grammars) loads when `explain` runs, not at every start-up of the CLI
    from karpplan.cli.explain_consolidation import consolidation_simulator
    from karpplan.explain.enrich import catalog_loader, enrich
    from karpplan.explain.fixes import reproduce_and_fix
    from karpplan.explain.parallel import explain_file
    from karpplan.explain.render import render_table, write_document
    from karpplan.explain.report import explain_stream
    from karpplan.explain.simulation import simulate_items

    size: int | None = None
    if options.log == "-":
        stream: BinaryIO = sys.stdin.buffer
    else:
        path = Path(options.log)
        if not path.is_file():
            raise InputError(InputProblem(Origin(options.log), "no such file" if not path.exists() else "not a file"))
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
    stdin = sys.stdin.read() if "-" in options.manifests else None  # read once, for every reader
    read = None
    if options.manifests:
        from karpplan.model.build import read_input  # lazy: start-up of a plain `explain LOG`

        read = read_input(options.manifests, stdin=None if stdin is None else io.StringIO(stdin))
    # `--region`, else the region the manifests name (as `plan` reads it: a ClusterConfig, the Nodes, an
    # EC2NodeClass's subnets), so explain prices and suggests in the region `plan` plans the same input in
    region = options.region or (read[0].region if read is not None and not options.catalog else None)
    enrich(explanation, catalog_loader(region, options.catalog, allow_estimated_prices=options.allow_estimated_prices))
    if options.manifests:
        reproduce_and_fix(explanation, options.manifests, catalog=options.catalog, region=options.region,
                          zones=options.zones, stdin=stdin, read=read,
                          allow_estimated_prices=options.allow_estimated_prices)
        simulate_items(explanation, consolidation_simulator(
            options.manifests, catalog=options.catalog, region=options.region, zones=options.zones, stdin=stdin,
            allow_estimated_prices=options.allow_estimated_prices))
    if options.output in ("json", "yaml"):
        write_document(explanation, options.output, options.stdout.file)
    else:
        render_table(explanation, options.stdout)
    return 0 if explanation.items else 1


def explain(
    ctx: typer.Context,
    paths: Annotated[
        list[str] | None,
        typer.Argument(metavar="LOG", help="A log, events or describe output; - for stdin. After --manifests, "
                                               "further paths are more manifests (--manifests deploy/ pools/)."),
    ] = None,
    manifests: Annotated[
        list[str] | None,
        typer.Option("--manifests", metavar="PATH",
                     help="The user's manifests: reproduce the failure and propose fixes (repeatable)."),
    ] = None,
    catalog: Annotated[Path | None, catalog_option("An InstanceCatalog file replacing the embedded AWS catalog.")] = None,
    region: Annotated[str | None, region_option()] = None,
    zones: Annotated[list[str] | None, zones_option()] = None,
    output: Annotated[ExplainFormat, output_option()] = ExplainFormat.table,
    allow_estimated_prices: Annotated[bool, allow_estimated_prices_option("Price and suggest types")] = False,
) -> None:
    """Explain Karpenter / kube-scheduler / cluster-autoscaler scheduling failures pasted from logs or events."""
    terminal = terminal_of(ctx)
    stdout, stderr = terminal.stdout, terminal.stderr
    log, more = split_paths(list(paths or ()), bool(manifests))
    options = ExplainOptions(log=log, manifests=(*(manifests or ()), *more), catalog=str(catalog) if catalog else None,
                             region=region, zones=parse_zones(zones), output=output.value, stdout=stdout,
                             stderr=stderr, allow_estimated_prices=allow_estimated_prices)
    run_guarded(lambda: _explain_or_refuse(options), terminal)


def split_paths(paths: list[str], has_manifests: bool) -> tuple[str, list[str]]:
    """The log and the extra manifest paths among the positional arguments.

    `--manifests deploy/ pools/` leaves `pools/` positional (an option takes one value): with --manifests, a
    directory or a YAML/JSON file is a manifest path, and the one other path (or `-`) is the log.
    """
    if not has_manifests or len(paths) <= 1:
        if len(paths) > 1:
            raise typer.BadParameter(f"one log at a time (got {len(paths)}: {' '.join(paths)})", param_hint="'LOG'")
        return (paths[0] if paths else "-"), []
    logs = [p for p in paths if not _manifest_like(p)]
    more = [p for p in paths if _manifest_like(p)]
    if len(logs) > 1:
        raise typer.BadParameter(f"one log at a time (got {len(logs)}: {' '.join(logs)})", param_hint="'LOG'")
    return (logs[0] if logs else "-"), more


def _manifest_like(path: str) -> bool:
    return path != "-" and (Path(path).is_dir() or path.endswith((".yaml", ".yml", ".json")))


def _explain_or_refuse(options: ExplainOptions) -> int:
    """run_explain, with a log that cannot be read turned into bad input (exit 2 at the error boundary)."""
    try:
        return run_explain(options)
    except BrokenPipeError:
        raise  # stdout's reader left (`| head`): not the log's fault; main() exits quietly
    except (OSError, UnicodeError) as error:
        raise InputError.at(Origin(options.log), f"cannot read the log: {error}") from error
