"""The patch files of a kustomize tree linted as a directory (`karpplan lint k8s/`): a kustomization's
`patches[].path`, `patchesStrategicMerge[]` and `patchesJson6902[].path` (kubernetes-sigs/kustomize
api/types/kustomization.go) are not objects of their own, but parts kustomize merges into the objects of its
resources. Read as objects, a strategic merge patch is the base Deployment "defined twice" and a JSON 6902
patch (a list of operations) is no object at all, nor is a `replacements[].path` file; so every command leaves
them out: lint says at the
kustomization that the merged objects are judged by linting `kustomize build`'s output, plan (`patches_note`)
that it planned the objects as the bases write them."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence

from karpplan.errors import InputProblem, Origin
from karpplan.inputs.loader import Document
from karpplan.inputs.origins import line_of

# The transformers of a kustomization that change the names, labels and replica counts of the objects it lists (kustomize
# api/types/kustomization.go); `namespace:` is applied (`kustomized_namespaces`), these are not.
TRANSFORMERS = ("namePrefix", "nameSuffix", "commonLabels", "labels", "replicas")
KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
GROUP = "kustomize.config.k8s.io"


def is_kustomization(doc: Document) -> bool:
    """A kustomization file's document (kustomize lets it omit apiVersion and kind)."""
    if doc.group == GROUP:
        return doc.kind in ("Kustomization", "Component")
    return not doc.kind and os.path.basename(doc.origin.file) in KUSTOMIZATION_FILES


def named_patches(doc: Document) -> Iterator[tuple[str, str]]:
    """(field path, patch file path as written) of each patch file the kustomization names; inline patches
    (`patch:`, a strategic merge patch written as a string) name no file."""
    for field in ("patches", "patchesJson6902"):
        entries = doc.body.get(field)
        for index, entry in enumerate(entries if isinstance(entries, list) else []):
            path = entry.get("path") if isinstance(entry, dict) else None
            if isinstance(path, str) and path:
                yield f"{field}[{index}].path", path
    entries = doc.body.get("patchesStrategicMerge")
    for index, entry in enumerate(entries if isinstance(entries, list) else []):
        if isinstance(entry, str) and entry and "\n" not in entry:
            yield f"patchesStrategicMerge[{index}]", entry


def named_replacements(doc: Document) -> Iterator[tuple[str, str]]:
    """(field path, file path as written) of each replacements file the kustomization names (`replacements:
    - path: f.yaml`): a replacement (or a list of them, kubeflow/manifests' model-registry overlay) that kustomize
    applies to the objects it lists, no object of its own; inline replacements name no file."""
    entries = doc.body.get("replacements")
    for index, entry in enumerate(entries if isinstance(entries, list) else []):
        path = entry.get("path") if isinstance(entry, dict) else None
        if isinstance(path, str) and path:
            yield f"replacements[{index}].path", path


def patch_files(documents: Sequence[Document]) -> frozenset[str]:
    """The files (normalised paths) the input's kustomizations name as patches or replacements."""
    out: set[str] = set()
    for doc in documents:
        if is_kustomization(doc):
            base = os.path.dirname(doc.origin.file)
            named = [*named_patches(doc), *named_replacements(doc)]
            out.update(os.path.normpath(os.path.join(base, path)) for _, path in named)
    return frozenset(out)


def without_patches(documents: Sequence[Document],
                    problems: Sequence[InputProblem]) -> tuple[list[Document], list[InputProblem]]:
    """The documents and reading problems with the kustomize patch and replacements files left out."""
    patches = patch_files(documents)
    if not patches:
        return list(documents), list(problems)
    return ([d for d in documents if os.path.normpath(d.origin.file) not in patches],
            [p for p in problems if os.path.normpath(p.origin.file) not in patches])


def patches_note(documents: Sequence[Document]) -> tuple[Origin, str] | None:
    """What a command that planned a kustomize tree as read says, at the first kustomization naming patches:
    which patches it left out, and how to plan the objects as applied (None when no kustomization names one)."""
    named = [(doc, [path for _, path in named_patches(doc)]) for doc in documents if is_kustomization(doc)]
    named = [(doc, paths) for doc, paths in named if paths]
    if not named:
        return None
    where = "; ".join(f"{doc.origin.file} ({', '.join(paths)})" for doc, paths in named)
    first = os.path.dirname(named[0][0].origin.file) or "."
    return named[0][0].origin, (
        f"a kustomize tree: the patch files its kustomizations name are not objects and were left out, so the "
        f"objects are planned as their bases write them, unpatched: {where}; to plan what is applied, pipe the "
        f"build in: `kustomize build {first} | karpplan plan -`")


def _listed(doc: Document) -> list[str]:
    """The local paths a kustomization's `resources`, `bases` and `components` name (remote ones left out)."""
    out: list[str] = []
    for field in ("resources", "bases", "components"):
        entries = doc.body.get(field)
        for entry in entries if isinstance(entries, list) else []:
            if isinstance(entry, str) and entry and "://" not in entry and not entry.startswith(("github.com/", "git@")):
                out.append(os.path.normpath(os.path.join(os.path.dirname(doc.origin.file), entry)))
    return out


def kustomized_namespaces(documents: Sequence[Document]) -> dict[str, str]:
    """File (normalised path) -> the namespace the kustomizations that include it set (`namespace:`, the
    outermost one winning, as kustomize runs the outer namespace transformer last). A file two kustomizations
    of the input put in different namespaces (a base under dev and prod overlays) is left out: it is applied
    once per overlay, and read once here."""
    kustomizations = {os.path.dirname(os.path.normpath(d.origin.file)) or ".": d
                      for d in documents if is_kustomization(d)}
    if not any(isinstance(d.body.get("namespace"), str) and d.body.get("namespace") for d in kustomizations.values()):
        return {}
    included = {path for d in kustomizations.values() for path in _listed(d)}
    found: dict[str, set[str]] = {}

    def walk(directory: str, above: str | None, seen: frozenset[str]) -> None:
        doc = kustomizations[directory]
        own = doc.body.get("namespace")
        namespace = above or (own if isinstance(own, str) and own else None)
        for path in _listed(doc):
            if path in kustomizations and path not in seen:
                walk(path, namespace, seen | {path})
            elif namespace is not None and path not in kustomizations:
                found.setdefault(path, set()).add(namespace)

    for directory in kustomizations:
        if directory not in included:
            walk(directory, None, frozenset({directory}))
    return {path: next(iter(names)) for path, names in found.items() if len(names) == 1}


def unapplied_transformers(doc: Document) -> list[str]:
    """The name, label and replica transformers a kustomization sets (non-empty), which karpplan does not apply."""
    if not is_kustomization(doc):
        return []
    return [field for field in TRANSFORMERS if doc.body.get(field)]


def transformers_note(documents: Sequence[Document]) -> tuple[Origin, str] | None:
    """What a command that read a kustomize tree as written says once, at the first kustomization setting
    namePrefix / nameSuffix / commonLabels / labels: that its objects keep the names and labels their files
    write (kustomize build adds the labels to pods and to the selectors it owns, and renames the objects)."""
    found = [(doc, fields) for doc in documents if (fields := unapplied_transformers(doc))]
    if not found:
        return None
    first, fields = found[0]
    where = "; ".join(f"{doc.origin.file} ({', '.join(names)})" for doc, names in found)
    directory = os.path.dirname(first.origin.file) or "."
    return first.origin.at(line_of(first.body, fields[0])), (
        f"a kustomize tree: its kustomizations' {'/'.join(sorted({f for _, names in found for f in names}))} "
        f"are not applied, so the objects keep the names, labels and replicas their files write: {where}; "
        f"to read them as kustomize applies them, pipe the build in: `kustomize build {directory} | karpplan plan -`")
