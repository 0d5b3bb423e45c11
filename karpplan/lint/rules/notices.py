"""What the model reads differently from how it is written (its `InputNotice`s, the warnings `plan` prints about
the manifests), reported at their file:line. The notices are the model's: nothing here decides what is one."""

from __future__ import annotations

from collections.abc import Iterator

from karpplan.errors import Origin
from karpplan.lint.context import LintContext
from karpplan.lint.core import Hit, Severity, lint_rule
from karpplan.lint.locate import locate, path_at
from karpplan.lint.rules.examples import NODEPOOL

_CLASS_REFS = ("spec.template.spec.nodeClassRef", "spec.providerRef")


def _origin(text: str) -> Origin:
    """`file:line` (as `Origin.__str__` writes it) back into an Origin; a bare file name has line 0."""
    file, _, line = text.rpartition(":")
    if file and line.isdigit():
        return Origin(file, int(line))
    return Origin(text, 0)


_NODE_CLASS = """\
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: default
spec:
  role: KarpenterNodeRole-demo
  amiSelectorTerms: [{alias: al2023@latest}]
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
"""


@lint_rule("input-read-differently", "KPL601", Severity.warning,
           fix="change the manifest so that it means what it says (the message tells how Karpenter reads it)",
           bad=NODEPOOL.replace("      requirements:\n", "      kubelet: {maxPods: 110}\n      requirements:\n") + _NODE_CLASS,
           good=NODEPOOL + _NODE_CLASS + "  kubelet: {maxPods: 110}\n")
def INPUT_READ_DIFFERENTLY(ctx: LintContext) -> Iterator[Hit]:
    """A field the API server or Karpenter reads differently from how it is written (what `plan` warns about).

    The same notices `karpplan plan` prints among its warnings, at the line they are about: a v1beta1
    `kubelet` block in a v1 NodePool (not in the v1 schema, so the API server drops it: it belongs in the
    EC2NodeClass), a nodeClassRef that names a node class the input does not hold (Karpenter launches
    nothing from that pool until it exists) or that is not an AWS node class, a claim whose volume's zone is
    unknown. When the input holds no node class at all, what karpplan assumes for the pools' node classes
    is info: linting NodePools without their EC2NodeClasses is common.
    """
    # With no node class in the input, the notices about the pools as a whole (their node class) say what
    # karpplan assumes for input it was not given, not how a manifest reads.
    pool_starts = {(p.origin.file, p.origin.line) for p in ctx.inventory.nodepools}
    for notice in ctx.inventory.notices:
        origin = _origin(notice.origin)
        doc = ctx.document_at(origin)
        if doc is None:
            continue
        if (origin.file, origin.line) in pool_starts:
            if not ctx.inventory.nodeclasses:
                continue
            # A notice about a pool as a whole is about its node class: shown at the reference to it.
            ref = next((path for path in _CLASS_REFS if locate(doc, path)[1] == path.rsplit(".", 1)[-1]), "")
            yield Hit(doc, ref, notice.message)
            continue
        yield Hit(doc, path_at(doc, origin.line), notice.message, line=origin.line or doc.origin.line)


RULES = (INPUT_READ_DIFFERENTLY,)
