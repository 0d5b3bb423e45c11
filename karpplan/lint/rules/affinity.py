"""Pod (anti-)affinity terms the API server accepts that do not do what they were written for."""

from __future__ import annotations

from collections.abc import Iterator

from karpplan.lint.context import LintContext, templates
from karpplan.lint.core import Hit, Severity, lint_rule
from karpplan.lint.rules.examples import NODEPOOL, deployment
from karpplan.model.pods import PodAffinityTerm, PodTemplate

_HOST_ANTI_AFFINITY = """\
      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            - topologyKey: kubernetes.io/hostname
              labelSelector: {matchLabels: {app: zk}}
"""
_OWN_LABELS = "{app.kubernetes.io/name: zk}"


def _terms(template: PodTemplate) -> Iterator[tuple[str, PodAffinityTerm]]:
    """(field path under the pod spec, term) of every pod affinity and anti-affinity term."""
    for kind, affinity in (("podAffinity", template.pod_affinity), ("podAntiAffinity", template.pod_anti_affinity)):
        for i, term in enumerate(affinity.required):
            yield f"affinity.{kind}.requiredDuringSchedulingIgnoredDuringExecution[{i}]", term
        for i, weighted in enumerate(affinity.preferred):
            yield f"affinity.{kind}.preferredDuringSchedulingIgnoredDuringExecution[{i}].podAffinityTerm", weighted.term


@lint_rule("affinity-selector-misses-own-pods", "KPL206", Severity.warning,
           fix="make the labelSelector match the pod template's labels",
           bad=NODEPOOL + deployment(_HOST_ANTI_AFFINITY, replicas=3, labels=_OWN_LABELS),
           good=NODEPOOL + deployment(_HOST_ANTI_AFFINITY.replace("{app: zk}", _OWN_LABELS), replicas=3,
                                      labels=_OWN_LABELS))
def AFFINITY_SELECTOR_MISSES_OWN_PODS(ctx: LintContext) -> Iterator[Hit]:
    """A pod (anti-)affinity term selects no pod in the input, and its values are this workload's own.

    A term like `app In [zk]` on pods labelled `app.kubernetes.io/name: zk` (a label renamed, a chart's
    selector copied) selects none of the replicas it was written to keep apart (or together): the
    anti-affinity never applies, so they may all share one node, and the API server accepts it. Flagged only
    when no pod in the input matches the selector and a value it asks for is one of the workload's own label
    values, so an affinity to another team's pods is not.
    """
    pods = [(p.namespace, p.template.labels) for p in ctx.inventory.pods]
    pods += [(d.namespace, d.template.labels) for d in ctx.inventory.daemonsets]
    namespace_labels = ctx.inventory.namespace_labels
    for doc, spec_path, template in templates(ctx):
        own_values = set(template.labels.values())
        for path, term in _terms(template):
            selector = term.selector_for(template.labels)
            if selector is None or selector.is_empty() or selector.matches(template.labels):
                continue
            asked = {v for key in selector.requirements for v in selector.requirements[key].values
                     if not selector.requirements[key].complement}
            if not asked & own_values:
                continue
            if any(selector.matches(labels) and term.namespace_in_scope(template.namespace, ns, namespace_labels)
                   for ns, labels in pods):
                continue
            own = ", ".join(f"{k}={v}" for k, v in sorted(template.labels.items()) if v in asked)
            yield Hit(
                doc, f"{spec_path}.{path}.labelSelector",
                f"the labelSelector ({selector}) selects no pod in the input, though this workload's own pods "
                f"carry {own}: the term was written for these pods and never applies to them",
                f"make the labelSelector match the pod template's labels ({own})",
            )


RULES = (AFFINITY_SELECTOR_MISSES_OWN_PODS,)
