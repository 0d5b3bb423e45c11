"""The Flink Kubernetes operator's FlinkDeployment (flink.apache.org/v1beta1) read as the JobManager and TaskManager
pods it runs, so a Flink job is planned (apache/flink-kubernetes-operator FlinkConfigBuilder.java,
FlinkUtils.getNumTaskManagers, DefaultValidator.java, ResourceConfigUtils.parseResourceMemoryString;
awslabs/data-on-eks flink-on-eks and emr-on-eks examples).

* JobManager: `spec.jobManager.replicas` pods (default 1), planned as the Deployment `<name>`.
* TaskManagers: `ceil(P / slots)`, slots `taskmanager.numberOfTaskSlots` of `spec.flinkConfiguration` (default 1),
  P = `spec.taskManager.replicas` x slots when replicas are set, else `spec.job.parallelism` (at least 1). A session
  cluster (no `spec.job`) runs `spec.taskManager.replicas` in standalone mode and none until a job comes in native
  mode. Planned as `<name>-taskmanager` (a Deployment in standalone mode; native Flink creates bare pods, planned
  as a ReplicaSet of that name).
* Container `flink-main-container` requests and is limited to `resource.cpu` (default 1) and `resource.memory`
  (Flink's units: `2048m`, `2g` are MiB and GiB, as Flink's MemorySize reads them; a Kubernetes quantity
  otherwise), or `resources` (a Kubernetes ResourceRequirements) as written.
* Pod spec: `spec.podTemplate.spec`, with `spec.jobManager.podTemplate.spec` / `spec.taskManager.podTemplate.spec`
  over it (containers by name, any other field replaced); labels `app: <name>`, `component: jobmanager` or
  `taskmanager`, `type: flink-native-kubernetes` (`flink-standalone-kubernetes` in standalone mode).

A FlinkSessionJob runs in its session cluster's TaskManagers: no pods of its own.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

from karpplan.inputs.loader import Document
from karpplan.inputs.origins import LineDict, LineList
from karpplan.model.derived import (
    DerivedDocument,
    FieldAlias,
    as_mapping,
    controller_workload,
    expand_each,
    key_line,
)
from karpplan.model.prometheus_operator import DerivedWorkload, pod_specs_of

GROUP = "flink.apache.org"
KIND = "FlinkDeployment"
CONTAINER = "flink-main-container"
SLOTS = "taskmanager.numberOfTaskSlots"
# Flink MemorySize units (all binary) -> the Kubernetes suffix of the same size
_FLINK_UNITS = {"": "", "b": "", "bytes": "", "k": "Ki", "kb": "Ki", "kibibytes": "Ki", "m": "Mi", "mb": "Mi",
                "mebibytes": "Mi", "g": "Gi", "gb": "Gi", "gibibytes": "Gi", "t": "Ti", "tb": "Ti", "tebibytes": "Ti"}
_FLINK_SIZE = re.compile(r"^\s*(\d+)\s*([a-zA-Z]*)\s*$")


def is_flink_deployment(doc: Document) -> bool:
    return doc.group == GROUP and doc.kind == KIND


def flink_memory(value: object) -> str | None:
    """A `resource.memory` as a Kubernetes quantity: Flink's own units first (`2048m` is 2048 MiB), else as written."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str):
        return None
    match = _FLINK_SIZE.match(value)
    if match and match.group(2).lower() in _FLINK_UNITS:
        return match.group(1) + _FLINK_UNITS[match.group(2).lower()]
    return value.strip()


def _count(value: object, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else default


def _task_managers(spec: dict[str, Any], standalone: bool) -> int:
    """`FlinkUtils.getNumTaskManagers` of the parallelism the operator sets (`FlinkConfigBuilder`)."""
    conf = as_mapping(spec.get("flinkConfiguration"))
    written = conf.get(SLOTS)
    slots = int(written) if isinstance(written, int | str) and str(written).strip().isdigit() else 1
    slots = max(slots, 1)
    replicas = as_mapping(spec.get("taskManager")).get("replicas")
    if not isinstance(spec.get("job"), dict):  # a session cluster
        return _count(replicas, 0) if standalone else 0
    if isinstance(replicas, int) and not isinstance(replicas, bool) and replicas > 0:
        return replicas
    parallelism = max(_count(as_mapping(spec.get("job")).get("parallelism"), 1), 1)
    return math.ceil(parallelism / slots)


def _resources(role: dict[str, Any]) -> object:
    """The main container's resources: `resources` as written, else `resource` (cpu, memory) requested and limited."""
    if isinstance(role.get("resources"), dict):
        return role["resources"]
    resource = as_mapping(role.get("resource"))
    cpu = resource.get("cpu", 1)
    amounts = {"cpu": str(cpu)} if isinstance(cpu, int | float) and not isinstance(cpu, bool) else {}
    memory = flink_memory(resource.get("memory"))
    if memory:
        amounts["memory"] = memory
    return {"requests": dict(amounts), "limits": dict(amounts)}


def _pod_spec(spec: dict[str, Any], role: str, start: int) -> tuple[LineDict, tuple[FieldAlias, ...]]:
    """The role's pod spec: the common pod template's, the role's over it, the main container's resources set."""
    pod = LineDict(line=start)
    aliases: list[FieldAlias] = []
    containers: dict[str, tuple[dict[str, Any], str]] = {}
    for at, holder in (("spec.podTemplate.spec", spec), (f"spec.{role}.podTemplate.spec", as_mapping(spec.get(role)))):
        written = as_mapping(as_mapping(holder.get("podTemplate")).get("spec"))
        for key, value in written.items():
            if key == "containers" and isinstance(value, list):
                for index, container in enumerate(value):
                    if isinstance(container, dict):
                        containers[str(container.get("name"))] = (container, f"{at}.containers[{index}]")
                continue
            pod[key] = value
            pod.key_lines[key] = key_line(written, key, start)
            aliases.insert(0, FieldAlias(f"spec.{key}", f"{at}.{key}"))
    role_spec = as_mapping(spec.get(role))
    main, main_at = containers.pop(CONTAINER, ({}, ""))
    line = key_line(role_spec, "resources" if "resources" in role_spec else "resource", start)
    collector = LineDict({**main, "name": CONTAINER, "image": str(main.get("image") or spec.get("image") or "flink"),
                          "resources": _resources(role_spec)}, line=getattr(main, "line", 0) or line)
    if isinstance(main, LineDict):
        collector.key_lines.update(main.key_lines)
    collector.key_lines["resources"] = line
    others = [c for c, _ in containers.values()]
    listed = LineList([collector, *others], line=collector.line)
    listed.item_lines = [collector.line, *(getattr(c, "line", 0) or start for c in others)]
    pod["containers"] = listed
    pod.key_lines["containers"] = collector.line
    written_resources = f"spec.{role}.{'resources' if 'resources' in role_spec else 'resource'}"
    aliases.extend(FieldAlias(f"spec.containers[{i + 1}]", at) for i, (_, at) in enumerate(containers.values()))
    aliases.extend([FieldAlias("spec.containers[0].resources", written_resources, same_shape="resources" in role_spec),
                    *([FieldAlias("spec.containers[0]", main_at)] if main_at else []),
                    FieldAlias("spec.containers", written_resources, same_shape=False)])
    return pod, tuple(aliases)


def _workload(doc: Document, spec: dict[str, Any], role: str, kind: str, name: str, replicas: int,
              labels: dict[str, str]) -> DerivedDocument:
    pod, aliases = _pod_spec(spec, role, doc.origin.line)
    template = LineDict({"metadata": {"labels": {}}, "spec": pod}, line=pod.line)
    made = controller_workload(doc, kind, name, replicas, template, labels, "spec")
    replicas_at = f"spec.{role}.replicas" if "replicas" in as_mapping(spec.get(role)) else ""
    return DerivedDocument(made.body, made.origin, made.source, pod_spec_at="spec", field_aliases=aliases,
                           replicas_at=replicas_at, resource=made.resource,
                           spread_fix=f"add a topologySpreadConstraint on topology.kubernetes.io/zone (and "
                                      f"kubernetes.io/hostname) to spec.{role}.podTemplate.spec")


def _expand(doc: Document) -> tuple[list[Document], DerivedWorkload]:
    spec = as_mapping(doc.body.get("spec"))
    standalone = str(spec.get("mode", "native")).lower() == "standalone"
    kind_of = "flink-standalone-kubernetes" if standalone else "flink-native-kubernetes"
    managers = _count(as_mapping(spec.get("jobManager")).get("replicas"), 1)
    workers = _task_managers(spec, standalone)
    out: list[Document] = [
        _workload(doc, spec, "jobManager", "Deployment", doc.name, managers,
                  {"app": doc.name, "component": "jobmanager", "type": kind_of}),
        _workload(doc, spec, "taskManager", "Deployment" if standalone else "ReplicaSet", f"{doc.name}-taskmanager",
                  workers, {"app": doc.name, "component": "taskmanager", "type": kind_of}),
    ]
    session = "" if isinstance(spec.get("job"), dict) else " (a session cluster: TaskManagers start with its jobs)"
    plain = (f"planned as the pods the Flink operator runs: {managers} JobManager(s) and {workers} TaskManager(s)"
             f"{session}")
    return out, DerivedWorkload(KIND, doc.name, doc.namespace, doc.origin, tuple(d.name for d in out),
                                managers + workers, (CONTAINER,), plain=plain, pod_specs=pod_specs_of(out))


def expand_flink_deployments(documents: Sequence[Document]) -> tuple[list[Document], list[DerivedWorkload]]:
    """`documents` with each FlinkDeployment followed by the workloads of its JobManager and TaskManagers."""
    return expand_each(documents, is_flink_deployment, _expand)
