"""The work behind `karpplan plan`: options in, exit code out.

Reads the inputs and the catalog, has the planner plan within one `TimeBudget` made from
`--time-limit`, and renders. Every step is a named phase of that budget; `-v` prints their wall seconds.
While the optimal engine runs, its progress goes to stderr (`render/progress_display.py`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from karpplan.cli.terminal import Terminal
from karpplan.costs import plan_costs
from karpplan.engines.effort import TimeBudget
from karpplan.inputs.loader import Document
from karpplan.model.build import read_input
from karpplan.model.inventory import Inventory
from karpplan.plan_volumes import with_volume_fixes
from karpplan.planner import PlanOptions, fitted_time_limit, make_plan, read_catalog, with_fargate_profiles
from karpplan.render.documents import plan_document, render_document
from karpplan.render.inventory_view import skipped_lines, skipped_note
from karpplan.render.plan_table import render_table
from karpplan.render.progress_display import progress_display


def lint_for_report(options: PlanOptions, documents: Sequence[Document], texts: Mapping[str, str]
                    ) -> tuple[Mapping[str, Any] | None, str]:
    """The LintReport document of the plan's own input for the HTML report, or None and why not.

    Lint takes the documents the plan read (`texts`: each file's text, for columns), so no file is read
    twice and stdin is linted too; a lint that cannot judge the input leaves the report without findings
    rather than failing a plan that succeeded."""
    # lazy: the lint rules (the scheduler, numpy) load only for an HTML report, not for every plan
    from karpplan.errors import InputError
    from karpplan.lint.config import UnknownRule, find_config
    from karpplan.lint.run import LintOptions, lint_documents

    lint_options = LintOptions(
        paths=options.paths, catalog=options.catalog, region=options.region, fargate_profiles=options.fargate_profiles,
        zones=options.zones, config=find_config(), max_file_size=options.max_file_size,
    )
    try:
        return lint_documents(documents, texts, lint_options).to_document(), ""
    except (InputError, UnknownRule) as exc:
        return None, f"Lint could not run on this input: {exc}"


def read_plan_input(options: PlanOptions, keep: bool) -> tuple[Inventory, list[Document], dict[str, str]]:
    """The input read once: the inventory (`--fargate-profile` added, as `read_inventory`), and, when `keep`
    (the HTML report lints them), the documents and each file's text; else only the documents the fixes of
    unschedulable pods point into (`documents_for_fixes`)."""
    # lazy: the explain package loads when a plan is made, not at every start-up of the CLI
    from karpplan.explain.fixes import documents_for_fixes
    texts: dict[str, str] | None = {} if keep else None
    inventory, documents = read_input(options.paths, max_bytes=options.max_file_size, scale=options.scale,
                                      default_requests=options.default_requests, texts=texts,
                                      namespace=options.namespace)
    return (with_fargate_profiles(inventory, options.fargate_profiles),
            documents if keep else documents_for_fixes(documents), texts or {})


def run_plan(options: PlanOptions, output: str, terminal: Terminal) -> int:
    """Load, plan, render. Raises InputError for bad input; returns the exit code of cli-contract.md."""
    # lazy: the explain package (its log grammars) and the consolidation load when a plan is made, not at every
    # start-up of the CLI
    from karpplan.consolidate.from_plan import steady_state_of
    from karpplan.explain.fixes import plan_with_fixes

    options = replace(options, steady_state=steady_state_of)  # Karpenter's baseline is its steady state
    budget = TimeBudget(options.time_limit)
    with budget.phase("parse"):
        inventory, documents, texts = read_plan_input(options, keep=output == "html")
    options = fitted_time_limit(options, inventory)  # `--time-limit auto`: fitted to the input's size
    budget.limit = options.time_limit
    if terminal.verbose:
        terminal.say(
            f"read {len(inventory.pods)} pods, {len(inventory.nodepools)} node pools, "
            f"{len(inventory.nodes)} nodes from {len(options.paths)} path(s)",
            soft_wrap=False,
        )
    with budget.phase("catalog"):
        catalog = read_catalog(options, inventory)
    # The optimal engine's progress on stderr: live on a terminal, a line per phase with -v, else nothing.
    display = progress_display(terminal.stderr, terminal.verbose, options.time_limit) \
        if options.engine == "optimal" else None
    if display is None:
        plan = make_plan(inventory, catalog, options, budget)
    else:
        with display:
            plan = make_plan(inventory, catalog, replace(options, progress=display), budget)
    with budget.phase("fixes"):  # what explain --manifests would propose, in what is left of the time limit
        plan = plan_with_fixes(plan, inventory, documents, catalog, budget.limit - budget.elapsed())
        plan = with_volume_fixes(plan, inventory)
    # What was not read is always said (one line, once the input is known to be good); -v lists it.
    note = skipped_note(inventory, listed=terminal.verbose > 0)
    if note:
        terminal.say(note, style="dim")
        if terminal.verbose:
            for line in skipped_lines(inventory):
                terminal.say(line, style="dim")
    with budget.phase("render"):
        costs = plan_costs(plan, inventory.daemonsets)
        if output == "html":
            from karpplan.render.html import render_html  # lazy: only an HTML report needs the page builder

            report, why = lint_for_report(options, documents, texts)
            terminal.stdout.file.write(render_html(plan_document(plan, costs), lint=report, lint_note=why))
        elif output in ("json", "yaml"):
            terminal.stdout.file.write(render_document(plan_document(plan, costs), output))
        else:
            render_table(plan, terminal.stdout, costs)
    if terminal.verbose:
        timings = ", ".join(f"{name} {seconds:.2f}s" for name, seconds in budget.phases())
        terminal.say(f"time: {timings}", style="dim")
    return plan.exit_code
