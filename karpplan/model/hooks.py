"""Helm and Argo CD hooks that never run when the release is installed or synced.

`helm template` writes a chart's hooks beside its objects: `helm.sh/hook: test` pods (`helm create`'s scaffold has
one, `templates/tests/test-connection.yaml`) run only on `helm test`, `pre-delete` / `post-delete` jobs only on
`helm uninstall`, `pre-rollback` / `post-rollback` only on `helm rollback` (helm pkg/release/hook.go). Argo CD's
`argocd.argoproj.io/hook: Skip` is never applied, `SyncFail` runs only when a sync fails, `PreDelete` /
`PostDelete` only when the Application is deleted (Argo CD resource hooks). A pod, workload or DaemonSet that is
only such a hook needs no capacity when the release is installed: it is not planned, and says so (a hook pod a
cluster dump shows bound to a node holds capacity there, and is read). A hook that also
runs at install or upgrade (`pre-install,test`; `PreSync`) is planned as any object.
"""

from __future__ import annotations

from collections.abc import Sequence

from karpplan.errors import Origin
from karpplan.inputs.loader import Document
from karpplan.model.kinds import document_name, role_of

HELM_HOOK = "helm.sh/hook"
ARGO_HOOK = "argocd.argoproj.io/hook"
# Hook -> when it runs, for those that do not run at install, upgrade or sync.
_HELM_NOT_AT_INSTALL = {
    "test": "helm test", "test-success": "helm test", "test-failure": "helm test",
    "pre-delete": "helm uninstall", "post-delete": "helm uninstall",
    "pre-rollback": "helm rollback", "post-rollback": "helm rollback",
}
_ARGO_NOT_AT_SYNC = {
    "skip": "never (Argo CD skips it)", "syncfail": "a failed Argo CD sync",
    "predelete": "the Argo CD Application's deletion", "postdelete": "the Argo CD Application's deletion",
}


def _hooks(doc: Document, key: str) -> list[str]:
    annotations = doc.metadata.get("annotations")
    value = annotations.get(key) if isinstance(annotations, dict) else None
    return [h.strip() for h in value.split(",") if h.strip()] if isinstance(value, str) else []


def hook_not_run(doc: Document) -> str | None:
    """When a hook that never runs at install / sync runs (`helm test`...), None for any other object."""
    helm, argo = _hooks(doc, HELM_HOOK), _hooks(doc, ARGO_HOOK)
    if argo:  # Argo CD applies a chart's objects by its own hook annotation first
        runs = [_ARGO_NOT_AT_SYNC.get(h.lower()) for h in argo]
        return None if None in runs else " or ".join(dict.fromkeys(r for r in runs if r))
    if helm:
        runs = [_HELM_NOT_AT_INSTALL.get(h.lower()) for h in helm]
        return None if None in runs else " or ".join(dict.fromkeys(r for r in runs if r))
    return None


def without_unrun_hooks(documents: Sequence[Document]) -> tuple[list[Document], list[tuple[Document, str]]]:
    """The documents but the pods, workloads and DaemonSets that are hooks never run at install, and those left
    out with when they run."""
    kept: list[Document] = []
    left_out: list[tuple[Document, str]] = []
    for doc in documents:
        when = unrun_hook(doc)
        if when:
            left_out.append((doc, when))
        else:
            kept.append(doc)
    return kept, left_out


def unrun_hook(doc: Document) -> str | None:
    """When a pod, workload or DaemonSet that is a hook never run at install runs (None: it is planned)."""
    return hook_not_run(doc) if role_of(doc) in ("Pod", "workload", "DaemonSet") and not _bound(doc) else None


def hook_field(doc: Document) -> str:
    """The annotation that makes the document a hook, as a field path."""
    return f"metadata.annotations[{ARGO_HOOK if _hooks(doc, ARGO_HOOK) else HELM_HOOK}]"


def _bound(doc: Document) -> bool:
    """A pod a cluster dump shows on a node (a `helm test` running now): it holds capacity, so it is read."""
    spec = doc.body.get("spec")
    return doc.kind == "Pod" and isinstance(spec, dict) and bool(spec.get("nodeName"))


def hooks_notice(left_out: Sequence[tuple[Document, str]]) -> tuple[Origin, str] | None:
    """What the plan says once about the hooks it left out (None when it left out none)."""
    if not left_out:
        return None
    shown = "; ".join(f"{doc.kind}/{document_name(doc) or '(no name)'} ({_annotation(doc)}: runs at {when})"
                      for doc, when in left_out[:5])
    more = f" and {len(left_out) - 5} more" if len(left_out) > 5 else ""
    times = " or ".join(dict.fromkeys(when for _, when in left_out))
    return left_out[0][0].origin, (
        f"{len(left_out)} hook object(s) not planned: they run only at {times}, not when the release is installed "
        f"or synced, so they need no capacity then: {shown}{more}")


def _annotation(doc: Document) -> str:
    return f"{ARGO_HOOK}: {','.join(_hooks(doc, ARGO_HOOK))}" if _hooks(doc, ARGO_HOOK) else \
        f"{HELM_HOOK}: {','.join(_hooks(doc, HELM_HOOK))}"
