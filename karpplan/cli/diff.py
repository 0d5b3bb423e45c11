"""`karpplan diff`: a thin command over `karpplan.diff` (option parsing, output, exit code)."""

from __future__ import annotations

from dataclasses import replace
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NamedTuple

import typer

from karpplan.cli.options import (
    AUTO,
    allow_estimated_prices_option,
    catalog_option,
    max_file_size_option,
    namespace_option,
    output_option,
    parse_size,
    parse_time_limit,
    region_option,
    spot_prices_option,
    time_limit_option,
    zones_option,
)
from karpplan.cli.terminal import Terminal, run_guarded, terminal_of

if TYPE_CHECKING:
    from rich.console import Console

    from karpplan.diff.model import PlanDiff


TIME_LIMIT_HELP = ("Time limit in seconds per side, or auto (default): fitted to the larger side as plan fits its "
                   "own (10 s up to about a thousand pending pods, more for larger inputs); the diff states it.")


class DiffFormat(StrEnum):
    table = "table"
    json = "json"
    yaml = "yaml"
    markdown = "markdown"
    github = "github"
    html = "html"


class DiffEngine(StrEnum):
    karpenter = "karpenter"
    optimal = "optimal"


def render(diff: PlanDiff, output: DiffFormat, stdout: Console) -> None:
    # lazy: the renderers load only when a diff is made, not at every start-up of the CLI
    from karpplan.diff.github import render_github
    from karpplan.diff.markdown import render_markdown
    from karpplan.diff.table import render_table
    from karpplan.render.documents import render_document

    if output is DiffFormat.table:
        render_table(diff, stdout)
        return
    if output in (DiffFormat.json, DiffFormat.yaml):
        text = render_document(diff.to_document(), output.value)
    elif output is DiffFormat.html:
        from karpplan.render.html import render_diff_html  # lazy: only an HTML page needs the page builder

        text = render_diff_html(diff.to_document())
    else:
        text = render_markdown(diff) if output is DiffFormat.markdown else render_github(diff)
    stdout.file.write(text)
    stdout.file.flush()


def register(app: typer.Typer) -> None:
    @app.command("diff")
    def diff_command(
        ctx: typer.Context,
        paths: Annotated[
            list[str],
            typer.Argument(metavar="BASE HEAD | PATH...",
                           help="BASE and HEAD (files or directories); with --git, the PATHs to compare.",
                           show_default=False),
        ],
        git: Annotated[
            str | None,
            typer.Option("--git", metavar="REF",
                         help="Compare PATH... at git revision REF (read without a checkout) with the working tree."),
        ] = None,
        catalog: Annotated[Path | None, catalog_option("An InstanceCatalog replacing the embedded AWS catalog.")] = None,
        region: Annotated[str | None, region_option()] = None,
        zones: Annotated[list[str] | None, zones_option()] = None,
        engine: Annotated[
            DiffEngine, typer.Option("--engine", help="karpenter (what the cluster will launch; deterministic) or "
                                                      "optimal (CP-SAT, same seed and limit on both sides).")
        ] = DiffEngine.karpenter,
        time_limit: Annotated[str, time_limit_option(TIME_LIMIT_HELP)] = AUTO,
        seed: Annotated[int, typer.Option("--seed", metavar="N", help="Optimal engine: solver seed.")] = 0,
        output: Annotated[DiffFormat, output_option()] = DiffFormat.table,
        fail_on_increase: Annotated[
            float | None,
            typer.Option("--fail-on-increase", min=0.0, metavar="PERCENT",
                         help="Exit 1 when HEAD costs more than PERCENT percent above BASE."),
        ] = None,
        max_file_size: Annotated[str, max_file_size_option()] = "50Mi",
        namespace: Annotated[str | None, namespace_option()] = None,
        allow_estimated_prices: Annotated[bool, allow_estimated_prices_option("Plan both sides")] = False,
        spot_prices: Annotated[str | None, spot_prices_option("Plan both sides")] = None,
        verbose: Annotated[int, typer.Option("-v", "--verbose", count=True, help="More detail (repeatable).")] = 0,
    ) -> None:
        """Compare the plans (cost, nodes, unschedulable pods, lint) of two versions of the manifests."""
        terminal = replace(terminal_of(ctx), verbose=terminal_of(ctx).verbose + verbose)
        if git is None and len(paths) != 2:
            raise typer.BadParameter("give BASE and HEAD (two files or directories), or --git REF PATH...",
                                     param_hint="'BASE HEAD'")
        _run(terminal, paths, git, _Side(region, catalog, zones, engine, time_limit, seed, max_file_size,
                                         namespace, allow_estimated_prices, spot_prices), output, fail_on_increase)


class _Side(NamedTuple):
    """The options both sides are planned with, as given on the command line."""

    region: str | None
    catalog: Path | None
    zones: list[str] | None
    engine: DiffEngine
    time_limit: str  # `auto` or seconds, as given
    seed: int
    max_file_size: str
    namespace: str | None
    allow_estimated_prices: bool
    spot_prices: str | None


def _run(terminal: Terminal, paths: list[str], git: str | None, side: _Side, output: DiffFormat,
         fail_on_increase: float | None) -> None:
    """Plan both sides, compare, render; exit with the diff's code (run_guarded turns bad input into exit 2)."""
    # lazy: the planner, lint and the engines load only when a diff runs, not at every start-up of the CLI
    from karpplan.catalog.zones import parse_zones
    from karpplan.diff.progress import DiffProgress
    from karpplan.diff.run import diff_git, diff_paths
    from karpplan.diff.side import SideOptions

    options = SideOptions(region=side.region, catalog=str(side.catalog) if side.catalog is not None else None,
                          zones=parse_zones(side.zones), engine=side.engine.value,
                          time_limit=parse_time_limit(side.time_limit), seed=side.seed,
                          max_file_size=parse_size(side.max_file_size), namespace=side.namespace,
                          allow_estimated_prices=side.allow_estimated_prices, spot_prices=side.spot_prices)
    progress = DiffProgress(terminal.stderr, terminal.verbose, side.engine.value)

    def body() -> int:
        if git is not None:
            diff = diff_git(git, paths, options, fail_on_increase=fail_on_increase, progress=progress)
        else:
            diff = diff_paths(paths[:1], paths[1:], options, fail_on_increase=fail_on_increase, progress=progress)
        render(diff, output, terminal.stdout)
        return diff.exit_code

    run_guarded(body, terminal)
