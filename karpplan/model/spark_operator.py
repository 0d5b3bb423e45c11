"""Kubeflow Spark operator's SparkApplication and ScheduledSparkApplication (sparkoperator.k8s.io/v1beta2) read as
the driver and executor pods a run creates, so they are planned with the requests Spark gives them and the
placement the operator's webhook writes (kubeflow/spark-operator api/v1beta2/defaults.go,
internal/controller/sparkapplication/submission.go, internal/webhook/sparkpod_defaulter.go).

* The driver: one pod, planned as the Job `<name>-driver`; the executors: `executor.instances` pods (else
  `spark.executor.instances`; with dynamic allocation the most of its `initialExecutors` and `minExecutors`, as
  Spark starts; else the operator's default 1), planned as the Job `<name>-exec`. A run ends when the
  application does, so their nodes are charged while it runs; `restartPolicy.type: Always` (a streaming
  application the operator restarts) is planned as a long-running ReplicaSet instead.
* Their main containers request what model/spark_sizing.py says; `spark.{role}.resource.X.amount` (with its
  `vendor`) and `driver.gpu` / `executor.gpu` add a limit of that resource (`nvidia.com/gpu`); `sidecars` and `initContainers` are added as written; a `template` (Spark 3+ pod template)
  is the base of the pod, its `spark-kubernetes-driver` / `spark-kubernetes-executor` container the main one.
* `nodeSelector` is `spec.nodeSelector` with the role's own over it; the role's `affinity`, `tolerations`,
  `priorityClassName`, `schedulerName`, `hostNetwork` are the pod's, and so are the `spec.volumes` its
  `volumeMounts` name (a claim's zone binds the pod).
* Labels: `spark-role`, `spark-app-name`, `sparkoperator.k8s.io/app-name`, `sparkoperator.k8s.io/launched-by-spark-operator`, the
  application's labels and the role's `labels`.

A ScheduledSparkApplication's `spec.template` is the application each scheduled run creates. Pods labelled
`sparkoperator.k8s.io/app-name: <name>` already in the input (a cluster dump) stand for that application's.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from karpplan.inputs.loader import Document
from karpplan.inputs.origins import LineDict, LineList
from karpplan.model.derived import (
    DerivedDocument,
    FieldAlias,
    as_mapping,
    expand_each,
    key_line,
    resource_name,
)
from karpplan.model.prometheus_operator import DerivedWorkload, pod_specs_of
from karpplan.model.spark_sizing import PodSize, pod_size

GROUP = "sparkoperator.k8s.io"
KINDS = ("SparkApplication", "ScheduledSparkApplication")
APP_LABEL = "sparkoperator.k8s.io/app-name"
ROLE_LABEL = "spark-role"
NAME_LABEL = "spark-app-name"  # Spark's own (KubernetesConf.getAppNameLabel) of the name the operator submits
CONTAINERS = {"driver": "spark-kubernetes-driver", "executor": "spark-kubernetes-executor"}
DEFAULT_EXECUTORS = 1  # api/v1beta2/defaults.go: instances when neither it nor dynamic allocation is set
_COPIED = ("affinity", "tolerations", "priorityClassName", "schedulerName", "hostNetwork")


def is_spark_application(doc: Document) -> bool:
    return doc.group == GROUP and doc.kind in KINDS




def _count(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value >= 0 else None
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def app_name_label(name: str) -> str:
    """Spark's `spark-app-name` label of an application named `name`: lower case, each run of other characters
    than a-z, 0-9 and `-` one `-`, at most 63 characters, no `-` at either end."""
    label = re.sub(r"-+", "-", re.sub(r"[^a-z0-9-]", "-", name.strip().lower()))
    return label[:63].strip("-")


def executors(app: dict[str, Any]) -> tuple[int, str]:
    """How many executors a run starts, and where that is written (relative to the application's spec): with
    dynamic allocation the most of `minExecutors`, `initialExecutors` and the instances, as Spark starts
    (Utils.getDynamicAllocationInitialExecutors)."""
    executor = as_mapping(app.get("executor"))
    conf = as_mapping(app.get("sparkConf"))
    written = _count(executor.get("instances"))
    instances = written if written is not None else _count(conf.get("spark.executor.instances"))
    dynamic = as_mapping(app.get("dynamicAllocation"))
    enabled = dynamic.get("enabled") is True if dynamic else str(conf.get("spark.dynamicAllocation.enabled",
                                                                            "")).lower() == "true"
    if enabled:
        starts = [n for n in (instances, _count(dynamic.get("initialExecutors")), _count(dynamic.get("minExecutors")),
                              _count(conf.get("spark.dynamicAllocation.initialExecutors")),
                              _count(conf.get("spark.dynamicAllocation.minExecutors"))) if n is not None]
        count = max(starts, default=0)
        return count, "executor.instances" if written is not None and written == count else "dynamicAllocation"
    if written is not None:
        return written, "executor.instances"
    if instances is not None:
        return instances, "sparkConf"
    return DEFAULT_EXECUTORS, "executor"


def _main_container(role: str, size: PodSize, app: dict[str, Any], spec: dict[str, Any], line: int,
                    base: object) -> LineDict:
    container = LineDict(as_mapping(base), line=line)
    if isinstance(base, LineDict):
        container.key_lines.update(base.key_lines)
    container["name"] = CONTAINERS[role]
    resources = size.resources()  # over the template's: Spark sets these keys and keeps the others
    written = as_mapping(container.get("resources"))
    for key in ("requests", "limits"):
        resources[key] = {**as_mapping(written.get(key)), **resources[key]}
    # Spark's own resource requests (spark.{role}.resource.X.amount with its vendor: `nvidia.com/gpu`), then
    # the operator's `gpu` (the webhook's addGPU) over them
    conf = as_mapping(app.get("sparkConf"))
    for key, amount in conf.items():
        match = re.fullmatch(rf"spark\.{role}\.resource\.([A-Za-z0-9_.-]+)\.amount", str(key))
        vendor = conf.get(f"spark.{role}.resource.{match.group(1)}.vendor") if match else None
        if match and isinstance(vendor, str) and vendor and _count(amount):
            resources["limits"][f"{vendor}/{match.group(1)}"] = str(amount).strip()
    gpu = as_mapping(spec.get("gpu"))
    if isinstance(gpu.get("name"), str) and gpu["name"] and _count(gpu.get("quantity")):
        resources["limits"][gpu["name"]] = str(gpu["quantity"])
    container["resources"] = resources
    container.key_lines["resources"] = line
    return container


def _listed(items: list[Any], lines: list[int], line: int) -> LineList:
    out = LineList(items, line=line)
    out.item_lines = lines
    return out


def _pod_spec(role: str, at: str, app: dict[str, Any], spec: dict[str, Any],
              base: str) -> tuple[LineDict, tuple[FieldAlias, ...]]:
    """The pod spec of `role` (its fields at the application's lines) and where the application writes each."""
    start = getattr(spec, "line", 0) or getattr(app, "line", 0)
    template = as_mapping(as_mapping(spec.get("template")).get("spec"))
    pod = LineDict(line=start)
    aliases: dict[str, FieldAlias] = {}  # by the field of the pod spec: the last written wins
    for key, value in template.items():  # a pod template's fields, under the operator's
        if key != "containers":
            pod[key] = value
            pod.key_lines[key] = key_line(template, key, start)
            aliases[key] = FieldAlias(f"{at}.{key}", f"{at}.template.spec.{key}")
    selector, selector_aliases = _node_selector(at, base, app, spec, template, start)
    if selector:
        pod["nodeSelector"] = selector
        pod.key_lines["nodeSelector"] = selector.line
        aliases.pop("nodeSelector", None)
    for key in (*_COPIED, "initContainers"):
        if spec.get(key) is not None:
            pod[key] = spec[key]
            pod.key_lines[key] = key_line(spec, key, start)
            aliases.pop(key, None)
    containers, container_aliases = _containers(role, at, app, spec, template, start)
    pod["containers"] = containers
    pod.key_lines["containers"] = containers.line
    volume_aliases = _volumes(pod, at, base, app, spec, template, start)
    return pod, (*container_aliases[:-1], *selector_aliases, *volume_aliases, *aliases.values(),
                 container_aliases[-1])


def _volumes(pod: LineDict, at: str, base: str, app: dict[str, Any], spec: dict[str, Any], template: dict[str, Any],
             start: int) -> list[FieldAlias]:
    """The application's `spec.volumes` the role's `volumeMounts` name join the pod's (the webhook's addVolumes;
    Spark adds its local-dir volumes itself): a claim's zone binds the pod as it does any pod's. Returns where
    each added volume is written."""
    mounts = spec.get("volumeMounts")
    names = {m.get("name") for m in mounts if isinstance(m, dict)} if isinstance(mounts, list) else set()
    written = app.get("volumes")
    volumes = written if isinstance(written, list) else []
    added = [(index, v) for index, v in enumerate(volumes) if isinstance(v, dict) and v.get("name") in names]
    if not added:
        return []
    own = template.get("volumes")
    items = list(own) if isinstance(own, list) else []
    lines = [getattr(v, "line", 0) or start for v in items]
    aliases = [FieldAlias(f"{at}.volumes[{len(items) + k}]", f"{base}.volumes[{index}]")
               for k, (index, _) in enumerate(added)]
    items.extend(v for _, v in added)
    lines.extend(getattr(v, "line", 0) or start for _, v in added)
    pod["volumes"] = _listed(items, lines, lines[0])
    pod.key_lines["volumes"] = lines[0]
    return aliases


def _node_selector(at: str, base: str, app: dict[str, Any], spec: dict[str, Any], template: dict[str, Any],
                   start: int) -> tuple[LineDict, list[FieldAlias]]:
    """The pod's nodeSelector: the role's own over the application's (`spec.nodeSelector`, Spark's
    `spark.kubernetes.node.selector.*`), over the pod template's; each key where it is written."""
    selector = LineDict(line=start)
    written_at: dict[str, str] = {}
    sources = ((template, f"{at}.template.spec"), (app, base), (spec, at))
    for source, written in sources:
        mapping = as_mapping(source.get("nodeSelector"))
        for key, value in mapping.items():
            selector[key] = value
            selector.key_lines[key] = key_line(mapping, key, key_line(source, "nodeSelector", start))
            written_at[key] = written
    if not selector:
        return selector, []
    owner, owner_at = next((s, w) for s, w in reversed(sources) if "nodeSelector" in s)
    selector.line = key_line(owner, "nodeSelector", start)
    aliases = [FieldAlias(f"{at}.nodeSelector[{key}]", f"{written}.nodeSelector[{key}]")
               for key, written in written_at.items() if written != at]
    if owner_at != at:
        aliases.append(FieldAlias(f"{at}.nodeSelector", f"{owner_at}.nodeSelector"))
    return selector, aliases


def _containers(role: str, at: str, app: dict[str, Any], spec: dict[str, Any], template: dict[str, Any],
                start: int) -> tuple[LineList, list[FieldAlias]]:
    """The main container Spark sizes (first), the template's others, the role's sidecars; and where the
    application writes each (the last alias: the containers as a whole)."""
    size = pod_size(role, spec, app)
    sized_at = next((k for k in ("memory", "coreRequest", "cores") if k in spec), "")
    line = key_line(spec, sized_at, start) if sized_at else start
    written = template.get("containers")
    written_list = written if isinstance(written, list) else []
    main_at = next((i for i, c in enumerate(written_list) if as_mapping(c).get("name") == CONTAINERS[role]), None)
    containers: list[Any] = [_main_container(role, size, app, spec, line,
                                             written_list[main_at] if main_at is not None else None)]
    lines = [line]
    wheres: list[str] = []
    sidecars = spec.get("sidecars")
    for where, items in ((f"{at}.template.spec.containers", written_list),
                         (f"{at}.sidecars", sidecars if isinstance(sidecars, list) else [])):
        for index, other in enumerate(items):
            if items is written_list and index == main_at:
                continue
            containers.append(other)
            lines.append(getattr(other, "line", 0) or start)
            wheres.append(f"{where}[{index}]")
    sized = f"{at}.{sized_at}" if sized_at else at
    fix = (f"size the {role} with {at}.cores (or coreRequest) and {at}.memory: Spark requests "
           f"{size.cpu} CPU and {size.memory_mib}Mi memory for it ({size.memory}Mi memory + {size.overhead}Mi "
           f"overhead, memoryOverhead or 10% of memory, 40% for Python and R, at least 384Mi)")
    aliases = [FieldAlias(f"{at}.containers[{i + 1}]", where) for i, where in enumerate(wheres)]
    aliases.append(FieldAlias(f"{at}.containers[0]", sized, same_shape=False, fix=fix))
    aliases.append(FieldAlias(f"{at}.containers", sized, same_shape=False, fix=fix))
    return _listed(containers, lines, line), aliases


def _workload(doc: Document, role: str, name: str, count: int, pod: LineDict, labels: dict[str, str],
              long_running: bool) -> LineDict:
    line = doc.origin.line
    template = LineDict({"metadata": {"labels": labels}, "spec": pod}, line=pod.line or line)
    spec = LineDict({"selector": {"matchLabels": {APP_LABEL: labels[APP_LABEL], ROLE_LABEL: role}},
                     "template": template}, line=line)
    if long_running:
        spec["replicas"] = count
        kind, version = "ReplicaSet", "apps/v1"
    else:
        spec["parallelism"] = count
        kind, version = "Job", "batch/v1"
    return LineDict({"apiVersion": version, "kind": kind,
                     "metadata": LineDict({"name": name, "namespace": doc.namespace}, line=line),
                     "spec": spec}, line=line)


def _expand(present: set[tuple[str, str, str]], doc: Document) -> tuple[list[Document], DerivedWorkload]:
    scheduled = doc.kind == "ScheduledSparkApplication"
    base = "spec.template" if scheduled else "spec"
    outer = as_mapping(doc.body.get("spec"))
    app = as_mapping(outer.get("template")) if scheduled else outer
    long_running = as_mapping(app.get("restartPolicy")).get("type") == "Always"
    count, written = executors(app)
    app_labels = {str(k): str(v) for k, v in as_mapping(doc.metadata.get("labels")).items()}
    made: list[DerivedDocument] = []
    shown: list[str] = []
    for role, suffix, pods in (("driver", "driver", 1), ("executor", "exec", count)):
        if (doc.namespace, doc.name, role) in present:
            continue
        spec = as_mapping(app.get(role))
        at = f"{base}.{role}"
        pod, aliases = _pod_spec(role, at, app, spec, base)
        template_labels = as_mapping(as_mapping(as_mapping(spec.get("template")).get("metadata")).get("labels"))
        labels = {**{str(k): str(v) for k, v in template_labels.items()}, **app_labels,
                  **{str(k): str(v) for k, v in as_mapping(spec.get("labels")).items()},
                  APP_LABEL: doc.name, NAME_LABEL: app_name_label(doc.name), ROLE_LABEL: role,
                  "sparkoperator.k8s.io/launched-by-spark-operator": "true"}
        body = _workload(doc, role, f"{doc.name}-{suffix}", pods, pod, labels, long_running)
        if role == "executor":
            where = written if written in ("executor.instances", "dynamicAllocation") else ""
            body_spec = body["spec"]
            field = "replicas" if long_running else "parallelism"
            body_spec.key_lines[field] = key_line(as_mapping(app.get("executor")), "instances", getattr(spec, "line", 0)
                                               or doc.origin.line)
            # Executors of a run are spread by no one (a Job's pods are not, either): only a long-running
            # application's are judged for spread.
            replicas_at = f"{base}.{where}" if where and long_running else ""
        else:
            replicas_at = ""
        made.append(DerivedDocument(
            body, doc.origin, doc.source, pod_spec_at=at, field_aliases=aliases, replicas_at=replicas_at,
            resource=resource_name(doc),
            spread_fix=f"add podAntiAffinity on kubernetes.io/hostname or topology.kubernetes.io/zone to {at}.affinity"))
        size = pod_size(role, spec, app)
        shown.append(f"{pods} {role} pod(s) of {size.cpu} CPU, {size.memory_mib}Mi")
    if not made:
        return [], DerivedWorkload(doc.kind, doc.name, doc.namespace, doc.origin, (), 0, (),
                                   reason=f"its pods (label {APP_LABEL}={doc.name}) are in the input")
    how = "long-running (restartPolicy Always)" if long_running else "while a run lasts"
    plain = (f"planned as the pods a {'scheduled ' if scheduled else ''}run creates, {how}: " + ", ".join(shown)
             + " (memory with Spark's overhead)")
    return list(made), DerivedWorkload(doc.kind, doc.name, doc.namespace, doc.origin, (), count,
                                       tuple(CONTAINERS.values()), plain=plain, pod_specs=pod_specs_of(made))


def expand_spark_applications(documents: Sequence[Document]) -> tuple[list[Document], list[DerivedWorkload]]:
    """`documents` with each SparkApplication followed by the workloads of its driver and executor pods."""
    if not any(is_spark_application(d) for d in documents):
        return list(documents), []
    present: set[tuple[str, str, str]] = set()
    for d in documents:
        labels = d.metadata.get("labels")
        if d.kind == "Pod" and isinstance(labels, dict) and isinstance(labels.get(APP_LABEL), str):
            present.add((d.namespace, labels[APP_LABEL], str(labels.get(ROLE_LABEL, ""))))
    return expand_each(documents, is_spark_application, lambda doc: _expand(present, doc))
