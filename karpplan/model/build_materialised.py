"""Controllers a cluster dump already represents by their pods or child objects (not expanded again), and
the `pod-template-hash` a Deployment's revision carries."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from karpplan.inputs.loader import Document
from karpplan.inputs.origins import LineDict
from karpplan.model.kinds import role_of
from karpplan.model.labels import POD_TEMPLATE_HASH

_CRONJOB_RUN = re.compile(r"^(.+)-[0-9]+$")


def _fnv32a(data: bytes) -> int:
    value = 0x811C9DC5
    for byte in data:
        value = ((value ^ byte) * 0x01000193) & 0xFFFFFFFF
    return value


_SAFE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


def template_hash(template: object) -> str:
    """A deterministic `pod-template-hash`: FNV-32a of the template, in Kubernetes' safe alphabet."""
    digest = _fnv32a(json.dumps(template, sort_keys=True, default=str).encode())
    return "".join(_SAFE_ALPHABET[b % len(_SAFE_ALPHABET)] for b in str(digest).encode())


def _controller_of(body: LineDict) -> tuple[str, str] | None:
    """(kind, name) of the ownerReference with `controller: true`, read leniently (validated later)."""
    metadata = body.get("metadata")
    refs = metadata.get("ownerReferences") if isinstance(metadata, dict) else None
    if not isinstance(refs, list):
        return None
    for ref in refs:
        if isinstance(ref, dict) and ref.get("controller") is True:
            kind, name = ref.get("kind"), ref.get("name")
            if isinstance(kind, str) and isinstance(name, str):
                return kind, name
    return None


@dataclass
class Materialised:
    """Controllers already represented in the input by their pods or child objects."""

    controllers: dict[tuple[str, str, str], str] = field(default_factory=dict)

    def add(self, namespace: str, kind: str, name: str, reason: str) -> None:
        self.controllers.setdefault((namespace, kind, name), reason)

    def reason(self, namespace: str, kind: str, name: str) -> str | None:
        return self.controllers.get((namespace, kind, name))

    @classmethod
    def scan(cls, documents: Sequence[Document]) -> Materialised:
        found = cls()
        present = {(d.namespace, d.kind, d.name) for d in documents if role_of(d) == "workload"}
        replicaset_owner: dict[tuple[str, str], tuple[str, str]] = {}
        with_pods: set[tuple[str, str, str]] = set()
        for doc in documents:
            owner = _controller_of(doc.body)
            if owner is None:
                continue
            kind, name = owner
            role = role_of(doc)
            if role == "Pod":
                found.add(doc.namespace, kind, name, "its pods are in the input")
                with_pods.add((doc.namespace, kind, name))
                labels = doc.metadata.get("labels")
                hash_value = labels.get(POD_TEMPLATE_HASH) if isinstance(labels, dict) else None
                if kind == "ReplicaSet" and isinstance(hash_value, str) and name.endswith("-" + hash_value):
                    deployment = name[: -len(hash_value) - 1]
                    found.add(doc.namespace, "Deployment", deployment, "its pods are in the input")
                if kind == "Job" and (run := _CRONJOB_RUN.match(name)):
                    found.add(doc.namespace, "CronJob", run.group(1), "its pods are in the input")
            elif doc.kind == "ReplicaSet" and kind in ("Deployment", "Rollout"):
                replicaset_owner[(doc.namespace, doc.name)] = (kind, name)
                if (doc.namespace, kind, name) in present:
                    found.add(doc.namespace, "ReplicaSet", doc.name, f"owned by {kind}/{name}, planned instead")
            elif doc.kind == "Job" and kind == "CronJob":
                found.add(doc.namespace, "CronJob", name, "its Jobs are in the input")
        for (namespace, replicaset), (kind, deployment) in replicaset_owner.items():
            if (namespace, "ReplicaSet", replicaset) in with_pods:
                found.add(namespace, kind, deployment, "its pods are in the input")
        return found
