"""Lint inputs: read, build leniently, run the active rules, apply suppressions, sort."""

from __future__ import annotations

import functools
import gc
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TextIO

from karpplan.catalog.types import Catalog
from karpplan.errors import InputError, InputProblem
from karpplan.inputs.kustomize import without_patches
from karpplan.inputs.loader import DEFAULT_MAX_BYTES, Document, read_documents
from karpplan.inputs.placeholders import placeholder_in
from karpplan.lint.config import FileConfig, active_rules, ignored_by_annotation
from karpplan.lint.context import LintContext, object_name, templates
from karpplan.lint.core import Finding, Hit, Rule
from karpplan.lint.locate import column, key_of, locate
from karpplan.lint.report import LintReport
from karpplan.lint.rules.validation import classify
from karpplan.lint.skip import Skip
from karpplan.model.build import build_inventory
from karpplan.model.cluster import FargateProfile
from karpplan.model.default_namespace import in_namespace, kustomize_namespaced
from karpplan.model.inventory import Inventory
from karpplan.planner import catalog_for, with_fargate_profiles


@dataclass(frozen=True)
class LintOptions:
    paths: tuple[str, ...]
    catalog: str | None = None
    region: str | None = None
    fargate_profiles: tuple[FargateProfile, ...] = ()  # `--fargate-profile`, as `plan` reads it
    zones: tuple[str, ...] = ()  # `--zones`, as `plan` reads it
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    config: FileConfig = field(default_factory=FileConfig)
    max_file_size: int = DEFAULT_MAX_BYTES
    stdin: TextIO | None = None
    namespace: str | None = None  # `--namespace`: where objects that name none are (`model/default_namespace.py`)


def _lines(texts: Mapping[str, str]) -> dict[str, list[str]]:
    """Each file's lines, for the findings' columns."""
    return {name: text.split("\n") for name, text in texts.items()}


def to_finding(ctx: LintContext, rule: Rule, hit: Hit) -> Finding:
    path, setting_fix = ctx.written_path(hit.doc, hit.path)  # a derived pod spec's field, at the resource's own
    line, key = locate(hit.doc, path)
    if hit.line:
        line = hit.line
        key = key_of(path)
    lines = ctx.texts.get(hit.doc.origin.file, [])
    return Finding(
        file=hit.doc.origin.file, line=line, column=column(lines, line, key), rule=rule.name, code=rule.code,
        severity=hit.severity or rule.severity, object=object_name(hit.doc), field=path, message=hit.message,
        fix=setting_fix or hit.fix or rule.fix, source=hit.doc.source,
    )


@contextmanager
def _paused_gc() -> Iterator[None]:
    """The cyclic garbage collector paused for one lint run. What a run makes (the inventory, the planner's
    problem: ~60k launch options, and per workload the thousands it may use) lives until the report is
    made, so each collection would rescan it for no garbage: a seventh of the time at 1,000 workloads, a
    full scan of millions of references at 10,000. The loader pauses it the same way while it parses."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def lint(options: LintOptions) -> LintReport:
    """Raises InputError for input no rule owns (unreadable files, problems outside the lint rules)."""
    texts: dict[str, str] = {}
    documents, problems = read_documents(options.paths, max_bytes=options.max_file_size, stdin=options.stdin,
                                         texts=texts)
    documents, problems = without_patches(documents, problems)  # a kustomize tree's patches are no objects
    if problems:
        raise InputError(problems)
    return lint_documents(in_namespace(kustomize_namespaced(documents), options.namespace), texts, options)


def lint_documents(documents: Sequence[Document], texts: Mapping[str, str], options: LintOptions) -> LintReport:
    """Lint documents already read (`texts`: each file's text by name, for columns), as `lint` does the files
    at `options.paths`: `plan -o html` lints its own reading of the input, stdin included."""
    with _paused_gc():
        return _lint(documents, texts, options)


def _lint(documents: Sequence[Document], texts: Mapping[str, str], options: LintOptions) -> LintReport:
    rules = active_rules(options.select, options.ignore, options.config)
    collected: list[InputProblem] = []
    inventory = with_fargate_profiles(build_inventory(documents, collect=collected), options.fargate_profiles)

    @functools.cache
    def catalog() -> Catalog:  # read once, when a rule first needs it
        # Lint asks which types exist, never what they cost: a region's price list that lacks a type (most
        # regions' lists are partial, ../shared/data/NOTES.md) must not turn valid manifests into errors, so
        # a type priced only in us-east-1 is offered here at its estimate, as `plan --allow-estimated-prices`.
        return catalog_for(inventory, options.region, options.catalog, zones=options.zones,
                           allow_estimated_prices=True)

    files = list(dict.fromkeys(d.origin.file for d in documents))
    ctx = LintContext(list(documents), inventory, collected, catalog, _lines({f: texts.get(f, "") for f in files}),
                      region_named=bool(options.region or options.catalog or inventory.region))
    classify(ctx)
    unowned = ctx.cache.get("unowned")
    if isinstance(unowned, list) and unowned:
        raise InputError(unowned)
    unrendered_region = _unrendered_cluster(inventory, options)
    if (options.catalog or options.zones or ctx.has_capacity) and not unrendered_region:
        catalog()  # a bad --catalog or --region is bad input even when no rule needs it
    findings: list[Finding] = []
    ignored = {id(d): ignored_by_annotation(d) for d in documents}
    no_capacity = "" if ctx.has_capacity else _no_capacity_reason(ctx)
    if ctx.has_capacity and unrendered_region and templates(ctx):
        no_capacity = unrendered_region
    for rule in rules:
        if rule.needs_pools and (not ctx.has_capacity or unrendered_region):
            if no_capacity:
                ctx.skipped.append(Skip(rule.name, no_capacity))
            continue
        for hit in rule.check(ctx):
            if rule.name in ignored.get(id(hit.doc), frozenset()):
                continue
            findings.append(to_finding(ctx, rule, hit))
    unique = sorted(dict.fromkeys(findings))
    return LintReport(len(files), len(documents), tuple(unique), tuple(rules),
                      tuple(object_name(d) for d in documents), tuple(dict.fromkeys(ctx.skipped)),
                      tuple(d.origin.file for d in documents))


def _unrendered_cluster(inventory: Inventory, options: LintOptions) -> str:
    """Why there is no catalog to check against when the ClusterConfig's region or zones are unrendered
    placeholders (unrendered-placeholder reports them; the catalog would refuse them as bad input)."""
    region = inventory.region if not (options.region or options.catalog) else None
    found = placeholder_in(region)
    if found:
        return (f"the ClusterConfig's metadata.region is the unrendered placeholder {found} "
                "(unrendered-placeholder), so no catalog to check against: render it or pass --region")
    if options.zones:
        return ""
    for cluster in inventory.clusters:
        zones = [*cluster.availability_zones, *(z for g in cluster.node_groups for z in g.availability_zones)]
        found = next((p for z in zones if (p := placeholder_in(z))), None)
        if found:
            return (f"the ClusterConfig's availabilityZones hold the unrendered placeholder {found} "
                    "(unrendered-placeholder), so the cluster's zones are unknown: render it or pass --zones")
    return ""


def _no_capacity_reason(ctx: LintContext) -> str:
    """Why the rules that need pools cannot judge (empty when there is no pod template to judge either)."""
    count = len(templates(ctx))
    if not count:
        return ""
    unresolved = [g for c in ctx.inventory.clusters for g in c.node_groups if g.unresolved]
    if unresolved:
        names = ", ".join(g.name for g in unresolved)
        return (f"the only capacity is eksctl node group(s) {names}, whose instance type cannot be known offline "
                f"({unresolved[0].unresolved}), so nothing to check the {count} pod template(s) against: set "
                "instanceType on the node groups, or add the cluster's nodes (kubectl get nodes -o yaml)")
    return (f"the input holds no NodePool, Provisioner, Fargate profile or Node, so nothing to check the "
            f"{count} pod template(s) against: add the NodePools (and their EC2NodeClasses), "
            "an eksctl ClusterConfig with fargateProfiles or --fargate-profile, or the cluster's nodes "
            "(kubectl get nodes -o yaml)")
