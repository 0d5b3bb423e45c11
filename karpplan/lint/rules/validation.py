"""What the API server rejects, in its own words: the inventory builder's problems, each mapped to its rule
by field path, plus node-affinity expressions (which the builder reads leniently, as the scheduler does)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from karpplan.errors import InputProblem
from karpplan.inputs.loader import Document
from karpplan.inputs.origins import LineDict, LineList
from karpplan.lint.context import LintContext
from karpplan.lint.core import Hit, Severity, lint_rule
from karpplan.lint.locate import locate
from karpplan.lint.rules.examples import NODEPOOL, ZONE_SPREAD, deployment
from karpplan.model.build_fields import Field, is_qualified_name
from karpplan.model.derived import DefinedTwice
from karpplan.model.requirements import parse_int

_MESSAGE = re.compile(
    r"^(?P<path>.+?): (?P<text>(?:Invalid value|Required value|Unsupported value|Forbidden|Duplicate value)\b.*)$",
    re.DOTALL,
)
_DUPLICATE = re.compile(r"^(?P<list>.+)\[(?P<index>\d+)\]\.\{topologyKey, whenUnsatisfiable\}$")
_NODE_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
_KEY_MESSAGE = "name part must consist of alphanumeric characters, '-', '_' or '.'"

FIXES = {
    "maxSkew": "set maxSkew to 1 or more",
    "minDomains": "set minDomains to 1 or more, with whenUnsatisfiable: DoNotSchedule (or drop it)",
    "topologyKey": "name a node label key, e.g. topology.kubernetes.io/zone or kubernetes.io/hostname",
    "whenUnsatisfiable": "use DoNotSchedule or ScheduleAnyway",
    "nodeAffinityPolicy": "use Honor or Ignore (case matters)",
    "nodeTaintsPolicy": "use Honor or Ignore (case matters)",
    "matchLabelKeys": "name each key in matchLabelKeys or in labelSelector, not both, and set a labelSelector",
    "{topologyKey, whenUnsatisfiable}": "merge the two constraints or give them different topologyKeys",
}

# Fields whose fix depends on the rule (an `operator` of a toleration is not one of a selector).
RULE_FIXES = {
    ("toleration-invalid", "operator"): "use operator Equal or Exists",
    ("toleration-invalid", "effect"): "use NoSchedule, PreferNoSchedule or NoExecute (NoExecute with tolerationSeconds, "
                                      "or drop tolerationSeconds)",
    ("toleration-invalid", "value"): "drop the value of an Exists toleration, or use operator Equal",
    ("toleration-invalid", "key"): "use a valid label key, or no key with operator Exists to tolerate every taint",
    ("affinity-invalid", "weight"): "set weight between 1 and 100",
    ("affinity-invalid", "nodeSelectorTerms"): "give at least one nodeSelectorTerm, or drop the required node affinity",
    ("affinity-invalid", "operator"): "use In, NotIn, Exists, DoesNotExist, Gt or Lt",
    ("affinity-invalid", "values"): "In/NotIn need values, Exists/DoesNotExist take none, Gt/Lt take exactly one integer",
    ("selector-invalid", "operator"): "use In, NotIn, Exists or DoesNotExist",
    ("selector-invalid", "values"): "In/NotIn need values, Exists/DoesNotExist take none",
    ("selector-invalid", "key"): "use a valid label key (an optional DNS prefix and a name of at most 63 characters)",
}


def rule_of_path(path: str) -> str | None:
    """The validation rule a problem at this field path belongs to (None: not a lint rule's field)."""
    in_selector = ".labelSelector" in path or ".namespaceSelector" in path
    if in_selector and ("topologySpreadConstraints[" in path or "affinity." in path):
        return "selector-invalid"
    if "topologySpreadConstraints[" in path:
        return "spread-invalid"
    if "tolerations[" in path:
        return "toleration-invalid"
    if ".affinity." in path or path.startswith("affinity."):
        return "affinity-invalid"
    return None


@dataclass(frozen=True)
class Classified:
    rule: str
    hit: Hit


def _relocate_duplicate(doc: Document, path: str) -> tuple[str, int] | None:
    """A duplicate (topologyKey, whenUnsatisfiable) is reported by the API at the earlier constraint; the
    offending field is the later copy's topologyKey."""
    match = _DUPLICATE.match(path)
    if match is None:
        return None
    list_path, index = match.group("list"), int(match.group("index"))
    node: object = doc.body
    for part in list_path.split("."):
        node = node.get(part) if isinstance(node, LineDict) else None
    if not isinstance(node, LineList) or index >= len(node) or not isinstance(node[index], dict):
        return None

    def pair(item: object) -> tuple[object, object]:
        return (item.get("topologyKey"), item.get("whenUnsatisfiable")) if isinstance(item, dict) else (None, None)

    for later in range(index + 1, len(node)):
        if pair(node[later]) == pair(node[index]):
            new_path = f"{list_path}[{later}].topologyKey"
            return new_path, locate(doc, new_path)[0]
    return None


def classify(ctx: LintContext) -> list[Classified]:
    """Every validation problem as (rule, hit); cached on the context. Problems no rule owns are left in
    `ctx.cache["unowned"]` (the command reports them as bad input)."""
    cached = ctx.cache.get("validation")
    if isinstance(cached, list):
        return cached
    out: list[Classified] = []
    unowned: list[InputProblem] = []
    for problem in ctx.problems:
        if isinstance(problem, DefinedTwice):
            continue  # a finding of input-read-differently (a repository's alternative bundles), not bad input
        match = _MESSAGE.match(problem.message)
        rule = rule_of_path(match.group("path")) if match else None
        doc = ctx.document_at(problem.origin)
        if match is None or rule is None or doc is None:
            unowned.append(problem)
            continue
        path, line = match.group("path"), problem.origin.line
        last = path.rsplit(".", 1)[-1].split("[", 1)[0]
        moved = _relocate_duplicate(doc, path)
        if moved is not None:
            path, line = moved
            last = "{topologyKey, whenUnsatisfiable}"
        text = match.group("text")
        # the API server blames `operator` for an Exists toleration with a value: the fix is the value's
        field = "value" if rule == "toleration-invalid" and "value must be empty" in text else last
        out.append(Classified(rule, Hit(doc, path, text, RULE_FIXES.get((rule, field)) or FIXES.get(field, ""), line)))
    for doc, spec_path in ctx.pod_documents():
        out.extend(Classified("affinity-invalid", hit) for hit in node_affinity_hits(doc, spec_path))
    ctx.cache["validation"] = out
    ctx.cache["invalid"] = frozenset(id(c.hit.doc) for c in out)
    ctx.cache["unowned"] = unowned
    return out


# ------------------------------------------------------------------------------------------ node affinity
def _expression_problems(expression: Field, sink: list[InputProblem], fields: bool) -> None:
    key = expression["key"].string()
    operator = expression["operator"].string()
    values_field = expression["values"]
    values = values_field.string_list()
    if fields:
        if operator not in ("In", "NotIn"):
            expression["operator"].invalid("not a valid selector operator")
        elif len(values) != 1:
            values_field.required("must be only one value when `operator` is 'In' or 'NotIn' for node field selector")
        if key != "metadata.name":
            expression["key"].invalid("not a valid field selector key")
        return
    if operator not in _NODE_OPERATORS:
        expression["operator"].invalid("not a valid selector operator")
    elif operator in ("In", "NotIn") and not values:
        values_field.required("must be specified when `operator` is 'In' or 'NotIn'")
    elif operator in ("Exists", "DoesNotExist") and values:
        values_field.forbidden("may not be specified when `operator` is 'Exists' or 'DoesNotExist'")
    elif operator in ("Gt", "Lt"):
        if len(values) != 1:
            values_field.required("must be specified single value when `operator` is 'Lt' or 'Gt'")
        elif parse_int(values[0]) is None:
            values_field.renamed(f"{values_field.path}[0]").invalid(
                "must be an integer for `operator` 'Gt' or 'Lt' (the API accepts it, but no node ever matches)",
                values[0],
            )
    if key and not is_qualified_name(key):
        expression["key"].invalid(_KEY_MESSAGE)


def _term_problems(term: Field, sink: list[InputProblem]) -> None:
    if not isinstance(term.value, dict):
        return
    for expression in term["matchExpressions"].elements():
        if isinstance(expression.value, dict):
            _expression_problems(expression, sink, fields=False)
    for match in term["matchFields"].elements():
        if isinstance(match.value, dict):
            _expression_problems(match, sink, fields=True)


def node_affinity_hits(doc: Document, spec_path: str) -> Iterator[Hit]:
    """§9.3's checks of nodeSelectorTerms and preferences (the builder reports zero terms and weights)."""
    sink: list[InputProblem] = []
    root = Field.root(doc.body, doc.origin, sink)
    affinity = root.at_path(spec_path)["affinity"]["nodeAffinity"]
    if not isinstance(affinity.value, dict):
        return
    required = affinity["requiredDuringSchedulingIgnoredDuringExecution"]
    if isinstance(required.value, dict):
        for term in required["nodeSelectorTerms"].elements():
            _term_problems(term, sink)
    for item in affinity["preferredDuringSchedulingIgnoredDuringExecution"].elements():
        if isinstance(item.value, dict):
            _term_problems(item["preference"], sink)
    for problem in sink:
        match = _MESSAGE.match(problem.message)
        path = match.group("path") if match else spec_path
        text = match.group("text") if match else problem.message
        yield Hit(doc, path, text, _affinity_fix(path), problem.origin.line)


def _affinity_fix(path: str) -> str:
    if path.endswith("operator"):
        return f"use one of {', '.join(_NODE_OPERATORS)}"
    if path.endswith("key"):
        return "use a valid label key (or metadata.name in matchFields)"
    return "In/NotIn need values, Exists/DoesNotExist take none, Gt/Lt take exactly one integer"


def _owned(ctx: LintContext, rule_name: str) -> list[Hit]:
    """The validation problems `rule_name` owns."""
    return [c.hit for c in classify(ctx) if c.rule == rule_name]


@lint_rule("spread-invalid", "KPL101", Severity.error,
           fix="set the field the message names to a value the API server accepts (e.g. maxSkew 1 or more)",
           bad=NODEPOOL + deployment(ZONE_SPREAD.replace("maxSkew: 1", "maxSkew: 0")),
           good=NODEPOOL + deployment(ZONE_SPREAD))
def SPREAD_INVALID(ctx: LintContext) -> Iterable[Hit]:
    """A topologySpreadConstraint the API server rejects, with its message text.

    kubectl apply fails with `<Kind> "name" is invalid: ...`: maxSkew below 1, minDomains below 1 or with
    ScheduleAnyway, an empty topologyKey, a whenUnsatisfiable, nodeAffinityPolicy or nodeTaintsPolicy
    outside its enum (case matters), two constraints with the same topologyKey and whenUnsatisfiable, or
    matchLabelKeys naming a selector key or set without a labelSelector. The finding carries the API
    server's own message and field path.
    """
    return _owned(ctx, "spread-invalid")

@lint_rule("toleration-invalid", "KPL102", Severity.error,
           fix="drop the value of an Exists toleration, or use operator Equal",
           bad=NODEPOOL + deployment(
               "      tolerations:\n        - {key: dedicated, operator: Exists, value: infra, effect: NoSchedule}\n"),
           good=NODEPOOL + deployment("      tolerations:\n        - {key: dedicated, operator: Exists, effect: NoSchedule}\n"))
def TOLERATION_INVALID(ctx: LintContext) -> Iterable[Hit]:
    """A toleration the API server rejects (Exists with a value, bad operator or effect, ...).

    The API server validates each toleration: `operator: Exists` takes no value, the operator is Equal or
    Exists, the effect is NoSchedule, PreferNoSchedule or NoExecute, tolerationSeconds needs effect
    NoExecute, an empty key needs Exists, and the key must be a qualified name.
    """
    return _owned(ctx, "toleration-invalid")

@lint_rule("affinity-invalid", "KPL103", Severity.error,
           fix="In/NotIn need values, Exists/DoesNotExist take none, Gt/Lt take exactly one integer",
           bad=NODEPOOL + deployment(
               "      affinity:\n        nodeAffinity:\n          requiredDuringSchedulingIgnoredDuringExecution:\n"
               "            nodeSelectorTerms:\n              - matchExpressions:\n"
               "                  - {key: kubernetes.io/arch, operator: In}\n"),
           good=NODEPOOL + deployment(
               "      affinity:\n        nodeAffinity:\n          requiredDuringSchedulingIgnoredDuringExecution:\n"
               "            nodeSelectorTerms:\n              - matchExpressions:\n"
               "                  - {key: kubernetes.io/arch, operator: In, values: [amd64]}\n"))
def AFFINITY_INVALID(ctx: LintContext) -> Iterable[Hit]:
    """A node or pod (anti-)affinity the API server rejects.

    Required node affinity needs at least one nodeSelectorTerm; each expression needs a known operator (In,
    NotIn, Exists, DoesNotExist, Gt, Lt), values for In/NotIn, none for Exists/DoesNotExist and exactly one
    integer for Gt/Lt; preferred weights are 1..100; pod (anti-)affinity terms need a topologyKey.
    """
    return _owned(ctx, "affinity-invalid")

@lint_rule("selector-invalid", "KPL104", Severity.error,
           fix="use In, NotIn, Exists or DoesNotExist with values as the operator requires",
           bad=NODEPOOL + deployment(ZONE_SPREAD.replace(
               "labelSelector: {matchLabels: {app: web}}",
               "labelSelector: {matchExpressions: [{key: app, operator: Equals, values: [web]}]}")),
           good=NODEPOOL + deployment(ZONE_SPREAD.replace(
               "labelSelector: {matchLabels: {app: web}}",
               "labelSelector: {matchExpressions: [{key: app, operator: In, values: [web]}]}")))
def SELECTOR_INVALID(ctx: LintContext) -> Iterable[Hit]:
    """A labelSelector (spread or pod affinity) the API server rejects.

    matchExpressions in a labelSelector take In, NotIn, Exists or DoesNotExist; In/NotIn need values and
    Exists/DoesNotExist take none. The API server rejects anything else, so the workload is never created.
    """
    return _owned(ctx, "selector-invalid")

RULES = (SPREAD_INVALID, TOLERATION_INVALID, AFFINITY_INVALID, SELECTOR_INVALID)
