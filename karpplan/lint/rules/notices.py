"""What the model reads differently from how it is written (its `InputNotice`s, the warnings `plan` prints about
the manifests), reported at their file:line. The notices are the model's: nothing here decides what is one."""

from __future__ import annotations

import os
from collections.abc import Iterator

from karpplan.errors import Origin
from karpplan.inputs.charts import chart_directory, chart_origin, is_chart
from karpplan.inputs.kustomize import is_kustomization, named_patches, unapplied_transformers
from karpplan.inputs.loader import Document
from karpplan.lint.context import LintContext
from karpplan.lint.core import Hit, Severity, lint_rule
from karpplan.lint.locate import locate, path_at
from karpplan.lint.rules.examples import NODE_CLASS, NODEPOOL
from karpplan.lint.unread import unread_pod_resource
from karpplan.model.derived import DefinedTwice
from karpplan.model.hooks import hook_field, unrun_hook

_CLASS_REFS = ("spec.template.spec.nodeClassRef", "spec.providerRef")
# Where a notice is about what the cluster will do with a pool or node class as written (a warning); elsewhere
# (claims, volumes) it is what karpplan assumes for input it was not given (info).
_ASSUMED_FIX = "nothing to change in this manifest; add what the message names to the input to lint against it"
_NODE_KINDS = frozenset({"NodePool", "Provisioner", "EC2NodeClass", "AWSNodeTemplate", "NodeClass", "NodeOverlay"})


def _about_object(doc: Document, message: str) -> str:
    """The notice without its leading `Kind name: ` when that is the finding's own object (which every lint
    format names already: "NodePool/default: NodePool default: ..." said it twice)."""
    for prefix in (f"{doc.kind} {doc.name}: ", f"{doc.kind}/{doc.name}: "):
        if doc.name and message.startswith(prefix):
            return message[len(prefix):]
    return message


def _zero_replicas_notice(ctx: LintContext, doc: Document, origin: Origin) -> bool:
    """The model's notice at a workload's `spec.replicas: 0` (that `plan` has no pod of it to plan, and how to
    give it some): lint judges the template of a workload scaled to 0 all the same (`LintContext.planner`),
    and says so in the capacity findings, so the notice's advice is plan's, not lint's."""
    return id(doc) in ctx.scaled_to_zero and locate(doc, "spec.replicas") == (origin.line, "replicas")


# Karpenter v0.33.0+ "only supports Karpenter v1beta1 APIs and will not work with existing Provisioner,
# AWSNodeTemplate or Machine alpha APIs" (aws/karpenter-provider-aws upgrade guide); v1.x serves karpenter.sh/v1.
_ALPHA = {("karpenter.sh", "Provisioner"): "a karpenter.sh/v1 NodePool",
          ("karpenter.k8s.aws", "AWSNodeTemplate"): "a karpenter.k8s.aws/v1 EC2NodeClass"}


def _alpha_apis(ctx: LintContext) -> Iterator[Hit]:
    for doc in ctx.documents:
        successor = _ALPHA.get((doc.group, doc.kind))
        if successor is None or not doc.api_version.endswith(("/v1alpha5", "/v1alpha1")):
            continue
        yield Hit(doc, "apiVersion",
                  f"{doc.api_version} {doc.kind} is not served by Karpenter since v0.33 (nor by v1.x): applied to "
                  f"such a cluster it is refused, and karpplan plans it as v0.27 did; migrate to {successor}",
                  f"migrate to {successor}")


@lint_rule("input-read-differently", "KPL601", Severity.warning,
           fix="move spec.template.spec.kubelet to the EC2NodeClass's spec.kubelet (each finding says what to "
               "change for its field)",
           bad=NODEPOOL.replace("      requirements:\n", "      kubelet: {maxPods: 110}\n      requirements:\n") + NODE_CLASS,
           good=NODEPOOL + NODE_CLASS + "  kubelet: {maxPods: 110}\n")
def INPUT_READ_DIFFERENTLY(ctx: LintContext) -> Iterator[Hit]:
    """A field the API server or Karpenter reads differently from how it is written (what `plan` warns about).

    The same notices `karpplan plan` prints among its warnings, at the line they are about. Warnings: what
    a NodePool or node class says that the cluster will not do, such as a v1beta1 `kubelet` block in a v1
    NodePool (not in the v1 schema, so the API server drops it: it belongs in the EC2NodeClass), a
    nodeClassRef to a node class the input does not hold while it holds others (Karpenter launches nothing
    from that pool until it exists) or to a group that is not an AWS node class. Info: what karpplan
    assumes for input it was not given, such as the node class defaults when the input holds no node class
    at all, or the zone of a claim whose StorageClass or volume is not in the input. A karpenter.sh/v1alpha5
    Provisioner (or karpenter.k8s.aws/v1alpha1 AWSNodeTemplate) is a warning too: karpplan plans it as v0.27
    did, but Karpenter has not served the alpha APIs since v0.33, nor does any v1 release. A kustomization (a
    kustomize tree linted as a directory) naming patch files is an info: the patches are left out, not merged,
    so the objects as applied are judged by linting `kustomize build`'s output; so is one setting namePrefix,
    nameSuffix, commonLabels, labels or replicas (only its `namespace:` is applied). An object defined twice,
    differently (in two files of a repository holding alternative bundles, such as argo-cd's install.yaml and
    ha/install.yaml), is a warning at the second definition, which the capacity rules leave out (`plan` refuses
    it as bad input); written twice the same, it is one object. A custom resource karpplan
    does not read whose spec writes pod fields is an info too (a RedisCluster's affinity): the pods its controller runs are
    judged nowhere, which "0 errors" must not hide; and so is a Helm chart below a directory linted (read as its
    Chart.yaml alone: its templates are not objects until `helm template` renders them), and so is a Helm or
    Argo CD hook that never runs at install or sync (a `helm.sh/hook: test` pod, a `pre-delete` Job): it is not
    planned, nor are its pods judged against the NodePools.
    """
    yield from _alpha_apis(ctx)
    yield from _defined_twice(ctx)
    yield from _charts(ctx)
    yield from _kustomize_patches(ctx)
    yield from _kustomize_transformers(ctx)
    yield from _unread_pod_resources(ctx)
    yield from _unrun_hooks(ctx)
    pool_starts = {(p.origin.file, p.origin.line) for p in ctx.inventory.nodepools}
    for notice in ctx.inventory.notices:
        origin = notice.origin
        doc = ctx.document_at(origin)
        if doc is None or _zero_replicas_notice(ctx, doc, origin):
            continue
        assumed = doc.kind not in _NODE_KINDS
        if (origin.file, origin.line) in pool_starts:
            # A notice about a pool as a whole is about its node class: shown at the reference to it.
            assumed = assumed or not ctx.inventory.nodeclasses
            ref = next((path for path in _CLASS_REFS if locate(doc, path)[1] == path.rsplit(".", 1)[-1]), "")
            yield Hit(doc, ref, _about_object(doc, notice.message), notice.fix or (_ASSUMED_FIX if assumed else ""),
                      severity=Severity.info if assumed else None)
            continue
        yield Hit(doc, path_at(doc, origin.line), _about_object(doc, notice.message), notice.fix or (_ASSUMED_FIX if assumed else ""),
                  line=origin.line or doc.origin.line, severity=Severity.info if assumed else None)


_SHOWN_TWICE = 3  # second definitions named in a file's one finding (the rest counted)


def _defined_twice(ctx: LintContext) -> Iterator[Hit]:
    """Second definitions of objects (alternative bundles side by side, or a copy): one finding per file that
    holds any, at the first of them (a repository of bundles holds dozens: argo-cd's manifests/ 64)."""
    by_file: dict[str, list[tuple[DefinedTwice, Document]]] = {}
    for problem in ctx.problems:
        doc = ctx.document_at(problem.origin) if isinstance(problem, DefinedTwice) else None
        if doc is not None and isinstance(problem, DefinedTwice):
            by_file.setdefault(problem.origin.file, []).append((problem, doc))
    for file, found in by_file.items():
        problem, doc = found[0]
        said = problem.message if len(found) == 1 else (
            f"{len(found)} objects of this file are defined earlier in the input too: "
            + ", ".join(p.message.replace(" is defined twice", "") for p, _ in found[:_SHOWN_TWICE])
            + (f" and {len(found) - _SHOWN_TWICE} more" if len(found) > _SHOWN_TWICE else ""))
        elsewhere = any(p.first.file != file for p, _ in found)
        yield Hit(doc, "metadata.name",
                  f"{said}: both definitions are linted as written, but the capacity rules read only the first "
                  "one (and `karpplan plan` refuses the input)",
                  f"keep one definition; if the files are alternatives, lint each on its own: karpplan lint {file}"
                  if elsewhere else "keep one definition of the object")


def _charts(ctx: LintContext) -> Iterator[Hit]:
    """A Helm chart below a directory linted (read as its Chart.yaml alone): its objects are judged nowhere."""
    for doc in ctx.documents:
        if is_chart(doc):
            directory = chart_directory(doc)
            yield Hit(doc, "name",
                      f"a Helm chart, not rendered: its templates are Go templating, not objects, so what it "
                      f"installs is not linted (karpplan read its {os.path.basename(doc.origin.file)} alone)",
                      f"to lint what it installs, lint its output: helm template {directory} | karpplan lint -",
                      line=chart_origin(doc).line, severity=Severity.info)


def _kustomize_patches(ctx: LintContext) -> Iterator[Hit]:
    """A kustomization naming patch files: lint leaves them out (they are no objects of their own) and does not
    merge them, so the objects as applied are judged only in `kustomize build`'s output."""
    for doc in ctx.documents:
        named = list(named_patches(doc)) if is_kustomization(doc) else []
        if not named:
            continue
        files = ", ".join(path for _, path in named)
        directory = os.path.dirname(doc.origin.file) or "."
        build = ("kustomize build OVERLAY | karpplan lint -, OVERLAY a kustomization that lists this component"
                 if doc.kind == "Component" else f"kustomize build {directory} | karpplan lint -")
        yield Hit(doc, named[0][0],
                  f"names the kustomize patch{'es' if len(named) > 1 else ''} {files}: karpplan reads the files as "
                  "written, so it merges no patch into the object it patches (nor lints a patch as an object)",
                  f"to lint the objects as kustomize applies them, lint its build: {build}", severity=Severity.info)


def _kustomize_transformers(ctx: LintContext) -> Iterator[Hit]:
    """A kustomization setting namePrefix / nameSuffix / commonLabels / labels / replicas: lint reads the objects
    as their files write them (only `namespace:` is applied), so it says so once, at the field."""
    for doc in ctx.documents:
        fields = unapplied_transformers(doc)
        if not fields:
            continue
        directory = os.path.dirname(doc.origin.file) or "."
        build = ("kustomize build OVERLAY | karpplan lint -, OVERLAY a kustomization that lists this component"
                 if doc.kind == "Component" else f"kustomize build {directory} | karpplan lint -")
        yield Hit(doc, fields[0],
                  f"sets {', '.join(fields)}: karpplan applies a kustomization's namespace but not these, so the "
                  f"objects it lists are linted as their files write them ({_build_does(fields)})",
                  f"to lint the objects as kustomize applies them, lint its build: {build}", severity=Severity.info)


def _build_does(fields: list[str]) -> str:
    """What kustomize build does with the transformers a kustomization sets."""
    does = ["renames them" if {"namePrefix", "nameSuffix"} & set(fields) else "",
            "adds the labels to their pods and to the selectors that write matchLabels"
            if "commonLabels" in fields else "",
            "adds the labels to their metadata (and, as each entry says, to templates and selectors)"
            if "labels" in fields else "",
            "sets the replicas of the workloads its replicas field names" if "replicas" in fields else ""]
    return "kustomize build " + ", and ".join(d for d in does if d)


def _unread_pod_resources(ctx: LintContext) -> Iterator[Hit]:
    """A custom resource whose controller runs pods karpplan does not derive: its pods are judged nowhere."""
    for doc in ctx.documents:
        field = unread_pod_resource(doc)
        if field is not None:
            yield Hit(doc, "spec",
                      f"{doc.kind} is a custom resource karpplan does not read (its spec writes pod fields, "
                      f"{field} first): the pods its controller runs are neither linted nor planned",
                      "nothing to change in this manifest; to judge those pods, lint the workloads the controller "
                      "creates (kubectl get statefulsets,deployments -o yaml from a cluster running it)",
                      severity=Severity.info)


def _unrun_hooks(ctx: LintContext) -> Iterator[Hit]:
    """A hook run only at `helm test`, uninstall, rollback (or Argo CD's Skip, SyncFail, deletion): the model leaves
    it out (`model/hooks.py`), so its pods are judged nowhere, which lint says at its annotation."""
    for doc in ctx.documents:
        when = unrun_hook(doc)
        if when:
            yield Hit(doc, hook_field(doc),
                      f"a hook run only at {when}, not when the release is installed or synced: karpplan does not "
                      "plan it, nor judge its pods against the NodePools",
                      "nothing to change in this manifest", severity=Severity.info)


RULES = (INPUT_READ_DIFFERENTLY,)
