"""`karpplan lint`: a thin command over `karpplan.lint` (option parsing, output, exit code)."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from karpplan.catalog.zones import parse_zones
from karpplan.cli.options import (
    catalog_option,
    fargate_profile_option,
    max_file_size_option,
    namespace_option,
    output_option,
    parse_profiles,
    parse_size,
    region_option,
    zones_option,
)
from karpplan.cli.terminal import Terminal, run_guarded, terminal_of
from karpplan.errors import InputError, Origin

if TYPE_CHECKING:  # the lint package (its rules load the scheduler and numpy) loads when the command runs
    from karpplan.lint.run import LintOptions


class LintFormat(StrEnum):
    table = "table"
    json = "json"
    sarif = "sarif"
    github = "github"
    junit = "junit"


def run_lint(options: LintOptions, output: LintFormat, stdout: Console) -> int:
    """Lint and render; raises InputError for bad input (the error boundary prints it, exit 2)."""
    # lazy: the lint rules load the scheduler and numpy; the CLI starts (and the other commands run) without them
    from karpplan.lint.render import render_github, render_json, render_junit, render_table
    from karpplan.lint.run import lint
    from karpplan.lint.sarif import render_sarif

    report = lint(options)
    if output is LintFormat.table:
        render_table(report, stdout)
    else:
        text = {
            LintFormat.json: render_json,
            LintFormat.sarif: render_sarif,
            LintFormat.github: render_github,
            LintFormat.junit: render_junit,
        }[output](report)
        stdout.file.write(text)
        stdout.file.flush()
    return report.exit_code


def register(app: typer.Typer) -> None:
    """`karpplan lint` on the command line's app."""
    app.command("lint")(lint_command)


PathsArgument = Annotated[
    list[str] | None,
    typer.Argument(metavar="PATH", help="Manifest files, directories or - for stdin.", show_default=False),
]
SelectOption = Annotated[
    list[str] | None,
    typer.Option("--select", metavar="RULES", help="Only these rules (names or codes, comma-separated)."),
]
IgnoreOption = Annotated[
    list[str] | None,
    typer.Option("--ignore", metavar="RULES", help="Skip these rules (names or codes, comma-separated)."),
]
ListRulesOption = Annotated[bool, typer.Option("--list-rules", help="List the rules and exit.")]
ExplainRuleOption = Annotated[
    str | None, typer.Option("--explain-rule", metavar="RULE", help="Explain one rule (name or code) and exit.")
]
MaxFileSizeOption = Annotated[str, max_file_size_option()]


def lint_command(
    ctx: typer.Context,
    paths: PathsArgument = None,
    catalog: Annotated[Path | None, catalog_option("An InstanceCatalog replacing the embedded AWS catalog.")] = None,
    region: Annotated[str | None, region_option()] = None,
    zones: Annotated[list[str] | None, zones_option()] = None,
    fargate_profile: Annotated[list[str] | None, fargate_profile_option()] = None,
    output: Annotated[LintFormat, output_option()] = LintFormat.table,
    select: SelectOption = None,
    ignore: IgnoreOption = None,
    list_rules_flag: ListRulesOption = False,
    explain: ExplainRuleOption = None,
    max_file_size: MaxFileSizeOption = "50Mi",
    namespace: Annotated[str | None, namespace_option()] = None,
) -> None:
    """Check manifests for what the API server rejects and what can never schedule (CI-friendly)."""
    # lazy: the lint rules load the scheduler and numpy; the CLI starts (and the other commands run) without them
    from karpplan.lint.config import UnknownRule, find_config
    from karpplan.lint.run import LintOptions

    state = terminal_of(ctx)
    _rule_docs(list_rules_flag, explain, state)
    if not paths:
        raise typer.BadParameter("give at least one PATH (a file, a directory or - for stdin)", param_hint="'PATH'")
    size = parse_size(max_file_size)
    profiles = parse_profiles(fargate_profile)

    def body() -> int:
        options = LintOptions(
            paths=tuple(paths or ()), catalog=str(catalog) if catalog is not None else None, region=region,
            fargate_profiles=profiles, zones=parse_zones(zones), select=tuple(select or ()),
            ignore=tuple(ignore or ()), config=find_config(), max_file_size=size, namespace=namespace,
        )
        try:
            return run_lint(options, output, state.stdout)
        except UnknownRule as exc:  # on the command line a usage error, said as every other one is; in a file, bad input
            where, _, message = str(exc).partition(": ")
            if where.startswith("-"):
                raise typer.BadParameter(message, param_hint=f"'{where}'") from exc
            raise InputError.at(Origin(where), message) from exc

    run_guarded(body, state)


def _rule_docs(list_rules_flag: bool, name: str | None, state: Terminal) -> None:
    """`--list-rules` and `--explain-rule NAME`: the rules' documentation on stdout, then exit (2 for a rule
    that does not exist); nothing without either."""
    # lazy: the lint rules load the scheduler and numpy; the CLI starts (and the other commands run) without them
    from karpplan.lint.docs import explain_rule, list_rules
    from karpplan.lint.registry import resolve

    if list_rules_flag:
        state.stdout.file.write(list_rules())
        raise typer.Exit(0)
    if name is not None:
        rule = resolve(name)
        if rule is None:
            raise typer.BadParameter(f"unknown rule {name!r} (see --list-rules)", param_hint="'--explain-rule'")
        state.stdout.file.write(explain_rule(rule))
        raise typer.Exit(0)
