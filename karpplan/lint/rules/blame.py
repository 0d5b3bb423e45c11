"""Which field of a pod, as written, makes a NodePool refuse it: the nodeSelector entry or node-affinity
expression whose requirement no option of the pool meets, the container request no instance type holds, the
tolerations a taint needs. The verdicts are the planner's (`check_pool`); this only finds their field."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from karpplan.lint.locate import value_at
from karpplan.model.labels import WELL_KNOWN, normalize_key
from karpplan.model.pods import PodTemplate
from karpplan.model.pools import NodePool
from karpplan.model.quantity import QuantityError, parse_quantity
from karpplan.model.requirements import Requirement, Requirements
from karpplan.model.selectors import NodeAffinity
from karpplan.scheduling.candidates import PoolVerdict, option_table
from karpplan.scheduling.problem import Problem

_REQUIRED = "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"


@dataclass(frozen=True)
class Written:
    """One pod-side node requirement as written: its field path and what it requires."""

    path: str
    requirement: Requirement
    term: int | None  # the required node-affinity term (ORed); None: nodeSelector (ANDed with every term)


def written_requirements(spec: object, spec_path: str) -> list[Written]:
    """The nodeSelector entries and required node-affinity expressions of the pod spec (`spec`, written at
    `spec_path`), in order."""
    out: list[Written] = []
    selector = value_at(spec, "nodeSelector")
    if isinstance(selector, dict):
        for key, value in selector.items():
            out.append(Written(f"{spec_path}.nodeSelector[{key}]",
                               Requirement.of(normalize_key(str(key)), "In", [value]), None))
    terms = value_at(spec, _REQUIRED)
    for t, term in enumerate(terms if isinstance(terms, list) else []):
        expressions = term.get("matchExpressions") if isinstance(term, dict) else None
        for e, expression in enumerate(expressions if isinstance(expressions, list) else []):
            if not isinstance(expression, dict):
                continue
            values = expression.get("values")
            try:
                requirement = Requirement.of(normalize_key(str(expression.get("key", ""))),
                                             str(expression.get("operator", "")),
                                             values if isinstance(values, list) else [])
            except ValueError:
                continue  # affinity-invalid says what is wrong with it
            out.append(Written(f"{spec_path}.{_REQUIRED}[{t}].matchExpressions[{e}]", requirement, t))
    return out


def _refuses(requirement: Requirement, pool_side: Requirements) -> bool:
    """Karpenter's per-key check: the intersection is empty, or a custom key the pool never defines."""
    theirs = pool_side.get(requirement.key)
    if theirs is not None:
        return requirement.intersect(theirs).is_empty()
    return requirement.key not in WELL_KNOWN and not requirement.absent_ok


def _requirement_field(written: Sequence[Written], verdict: PoolVerdict) -> str | None:
    """The first written requirement the pool's requirements refuse (nodeSelector entries first: they
    apply to every term)."""
    for item in sorted(written, key=lambda w: w.term is not None):
        if _refuses(item.requirement, verdict.pool.requirements):
            return item.path
    return None


def excludes(requirement: Requirement, pools: Sequence[NodePool], problem: Problem) -> bool:
    """Does this requirement alone leave no launch option in any of these pools (an instance type, zone or
    capacity type none of their offerings has)?"""
    table = option_table(problem.options)
    mask = table.affinity_mask(NodeAffinity(node_selector=Requirements([requirement])))
    return not any(mask[table.pool_rows(pool)].any() for pool in pools)


def _offering_field(written: Sequence[Written], verdict: PoolVerdict, problem: Problem) -> str | None:
    """The first written requirement that alone excludes every launch option of the pool."""
    for item in sorted(written, key=lambda w: w.term is not None):
        if excludes(item.requirement, [verdict.pool], problem):
            return item.path
    return None


def _amount(raw: object) -> Fraction:
    try:
        return parse_quantity(raw).amount
    except (QuantityError, TypeError, ValueError):
        return Fraction(0)


def _resource_field(spec: object, spec_path: str, template: PodTemplate, verdict: PoolVerdict,
                    problem: Problem) -> str | None:
    """The container request (or limit standing for it) of the resource no matching instance type holds."""
    table = option_table(problem.options)
    rows = table.pool_rows(verdict.pool)
    matching = rows[table.affinity_mask(template.affinity)[rows]]
    if not len(matching):
        return None
    largest = max(table.rows(matching), key=lambda o: (o.free.get("cpu"), o.free.get("memory")))
    short = template.requests.shortfalls(largest.free)
    best: tuple[Fraction, str] | None = None
    for resource in short:
        for group in ("containers", "initContainers"):
            containers = value_at(spec, group)
            for i, container in enumerate(containers if isinstance(containers, list) else []):
                for kind in ("requests", "limits"):
                    amounts = value_at(container, f"resources.{kind}")
                    if isinstance(amounts, dict) and resource in amounts:
                        amount = _amount(amounts[resource])
                        if best is None or amount > best[0]:
                            best = (amount, f"{spec_path}.{group}[{i}].resources.{kind}[{resource}]")
                        break
        if best is not None:
            return best[1]
    return None


def _verdict_field(spec: object, spec_path: str, template: PodTemplate, verdict: PoolVerdict,
                   written: Sequence[Written], problem: Problem) -> str | None:
    if verdict.kind == "taint":  # where a toleration goes (the line: the pod spec's when there is none yet)
        return f"{spec_path}.tolerations"
    if verdict.kind == "requirements":
        return _requirement_field(written, verdict)
    if verdict.kind == "resources":
        return _offering_field(written, verdict, problem) or _resource_field(spec, spec_path, template, verdict, problem)
    return None


def _refusing_fields(spec: object, spec_path: str, template: PodTemplate, verdict: PoolVerdict,
                     written: Sequence[Written], problem: Problem) -> list[str]:
    """Every written field that alone refuses the pool (the planner stops at its first reason: a taint before a
    requirement), in order."""
    fields = [f"{spec_path}.tolerations"] if verdict.kind == "taint" else []
    for item in sorted(written, key=lambda w: w.term is not None):
        if _refuses(item.requirement, verdict.pool.requirements) or excludes(item.requirement, [verdict.pool], problem):
            fields.append(item.path)
    if not fields and verdict.kind == "resources":
        fields.extend(f for f in [_resource_field(spec, spec_path, template, verdict, problem)] if f is not None)
    return list(dict.fromkeys(fields))


def blamed_field(spec: object, spec_path: str, template: PodTemplate, verdicts: Sequence[PoolVerdict],
                 problem: Problem) -> str | None:
    """The field of the pod spec (`spec`, written at `spec_path`) to change: of the NodePools the fewest fields
    refuse (the pool the pod was written for: its nodeSelector's own label matches, another field does not),
    the field that refuses the most; else the field that refuses the most NodePools (the first pool's on a
    tie); None when none is found."""
    written = written_requirements(spec, spec_path)
    fields = [f for v in verdicts if not v.ok
              if (f := _verdict_field(spec, spec_path, template, v, written, problem)) is not None]
    if not fields:
        return None
    counts = Counter(fields)
    refusing = [r for v in verdicts if not v.ok if (r := _refusing_fields(spec, spec_path, template, v, written, problem))]
    fewest = min((len(r) for r in refusing), default=0)
    if fewest == 1 and len(refusing) > 1:
        # One field alone keeps a pool out, while every other pool is kept out by more than it: the pool the pod
        # was written for. Its field is the fix (a zone of another region, a family the catalog lacks).
        nearest = Counter(r[0] for r in refusing if len(r) == 1)
        if len(nearest) == 1 and all(len(r) > 1 or r[0] in nearest for r in refusing):
            return next(iter(nearest))
    return max(dict.fromkeys(fields), key=lambda f: counts[f])
