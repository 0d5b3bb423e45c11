"""One side of a diff (BASE or HEAD): its manifests read once (`read_side`), planned, costed and linted
(`plan_side`).

Both sides are planned with the same options (engine, seed, time limit, region, catalog, zones), so that
what differs between them is what the manifests change; the time limit (`--time-limit auto|SECONDS`, per
side) is `auto` by default, fitted to the larger side's pending pods (`side_time_limit`, `time_limit.py`), so
both sides are read before either is planned. Lint runs through its library API on the same paths. A side
with no paths (a PATH the git revision does not have) is empty: no pods, no nodes, no cost.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from karpplan.costs import Costs, plan_costs
from karpplan.diff.definitions import Definitions, definitions
from karpplan.engines.optimiser_progress import ProgressSink
from karpplan.errors import InputError, InputProblem, Origin
from karpplan.inputs.kustomize import without_patches
from karpplan.inputs.loader import read_documents
from karpplan.lint.config import find_config
from karpplan.lint.core import Finding
from karpplan.lint.run import LintOptions, lint
from karpplan.model.build import build_inventory
from karpplan.model.default_namespace import in_namespace, kustomize_namespaced
from karpplan.model.inventory import Inventory
from karpplan.plan import Plan
from karpplan.planner import Engine, PlanOptions, make_plan, read_catalog
from karpplan.time_limit import TimeLimit


@dataclass(frozen=True)
class SideOptions:
    """What both sides are planned with (the `diff` command's flags)."""

    region: str | None = None
    catalog: str | None = None
    zones: tuple[str, ...] = ()
    engine: Engine = "karpenter"
    time_limit: float | None = None  # seconds per side; None: `auto`, fitted to the larger side (`side_time_limit`)
    seed: int = 0
    max_file_size: int = 50 * 1024 * 1024
    namespace: str | None = None  # `--namespace`: where objects that name none are (`model/default_namespace.py`)
    allow_estimated_prices: bool = False  # `--allow-estimated-prices`, as `plan` reads it
    spot_prices: str | None = None  # `--spot-prices FILE`, as `plan` reads it


def _same(text: str) -> str:
    return text


@dataclass(frozen=True)
class Side:
    name: str  # "base" or "head"
    paths: tuple[str, ...]
    plan: Plan
    costs: Costs
    definitions: Definitions
    findings: tuple[Finding, ...]
    relabel: Callable[[str], str]  # a path as read -> as the user named it (--git's BASE lives in a temp dir)
    notes: tuple[str, ...] = ()  # e.g. a PATH the revision does not have
    capacity: bool = True  # it holds something pods can run on (`has_capacity`)
    at_revision: Callable[[str], str] = _same  # names what exists only on this side (`SideInput.at_revision`)
    inventory: Inventory = Inventory()  # what was planned (`weights.py` reads its NodePools and templates)


def has_capacity(inventory: Inventory) -> bool:
    """A NodePool (or Provisioner), a Node, an eksctl node group or Fargate profile: somewhere a pod could run.
    Without any, every pending pod is unschedulable and the side costs nothing."""
    return bool(inventory.nodepools or inventory.nodes
                or any(c.fargate_profiles or c.node_groups for c in inventory.clusters))


def _relabelled(error: InputError, relabel: Callable[[str], str]) -> InputError:
    return InputError([InputProblem(Origin(relabel(p.origin.file), p.origin.line), relabel(p.message))
                       for p in error.problems])


def _inventory(paths: Sequence[str], options: SideOptions) -> tuple[Inventory, Definitions]:
    if not paths:
        return Inventory(), Definitions({}, {})
    documents, problems = read_documents(paths, max_bytes=options.max_file_size)
    documents, problems = without_patches(documents, problems)  # read as plan and lint read a kustomize tree
    if problems:
        raise InputError(problems)
    documents = in_namespace(kustomize_namespaced(documents), options.namespace)
    inventory = build_inventory(documents)
    return inventory, definitions(documents, inventory)


def _lint(paths: Sequence[str], options: SideOptions) -> tuple[Finding, ...]:
    if not paths:
        return ()
    report = lint(LintOptions(paths=tuple(paths), catalog=options.catalog, region=options.region,
                              zones=options.zones, config=find_config(), max_file_size=options.max_file_size,
                              namespace=options.namespace))
    return report.findings


@dataclass(frozen=True)
class SideInput:
    """One side's manifests, read once: what `plan_side` plans, and what the time limit is fitted to."""

    name: str  # "base" or "head"
    paths: tuple[str, ...]
    inventory: Inventory
    definitions: Definitions
    relabel: Callable[[str], str]
    notes: tuple[str, ...] = ()
    # how what exists only on this side names its files: --git's BASE, `REF:PATH` (git's own notation), since
    # the working tree's PATH is another version of the file or none; bad input's messages too
    at_revision: Callable[[str], str] | None = None


def read_side(name: str, paths: Sequence[str], options: SideOptions, *,
              relabel: Callable[[str], str] | None = None, notes: Sequence[str] = (),
              at_revision: Callable[[str], str] | None = None) -> SideInput:
    """Read one side; InputError (named as the user named the files, or by `at_revision`) for bad input."""
    relabel = _same if relabel is None else relabel
    try:
        inventory, defined = _inventory(paths, options)
    except InputError as error:
        raise _relabelled(error, at_revision or relabel) from None
    return SideInput(name, tuple(paths), inventory, defined, relabel, tuple(notes), at_revision)


def side_time_limit(options: SideOptions, *sides: SideInput) -> float:
    """Seconds each side is planned in: those given, else `auto` of the larger side's pending pods, so both
    sides are planned alike."""
    return TimeLimit(options.time_limit).fitted(*(side.inventory.pending for side in sides))


def plan_side(side: SideInput, options: SideOptions, time_limit: float, *,
              progress: ProgressSink | None = None) -> Side:
    """Plan (within `time_limit` seconds), cost and lint one side; InputError (named as the user named the
    files) for bad input."""
    try:
        plan_options = PlanOptions(paths=side.paths, catalog=options.catalog, region=options.region,
                                   engine=options.engine, time_limit=time_limit,
                                   time_limit_auto=options.time_limit is None, seed=options.seed,
                                   zones=options.zones, max_file_size=options.max_file_size,
                                   allow_estimated_prices=options.allow_estimated_prices,
                                   spot_prices=options.spot_prices)
        catalog = read_catalog(plan_options, side.inventory)
        plan = make_plan(side.inventory, catalog, replace(plan_options, progress=progress))
        findings = _lint(side.paths, options)
    except InputError as error:
        raise _relabelled(error, side.at_revision or side.relabel) from None
    return Side(side.name, side.paths, plan, plan_costs(plan, side.inventory.daemonsets), side.definitions, findings,
                side.relabel, side.notes, has_capacity(side.inventory), side.at_revision or side.relabel,
                side.inventory)
