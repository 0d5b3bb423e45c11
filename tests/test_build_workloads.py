"""Workloads to pods: replica naming, shared templates, pod states, controllers already in the input."""

from __future__ import annotations

import textwrap
from collections.abc import Callable

import pytest

from karpplan.model.inventory import Inventory
from karpplan.model.labels import POD_TEMPLATE_HASH

from conftest import pod_manifest

Build = Callable[..., Inventory]
Problems = Callable[..., list[str]]


def workload(kind: str, name: str = "web", spec: str = "replicas: 3", api: str = "apps/v1", ns: str = "") -> str:
    namespace = f"\n  namespace: {ns}" if ns else ""
    template = (
        "  template:\n    metadata:\n      labels: {app: web}\n    spec:\n"
        "      containers:\n      - {name: c, resources: {requests: {cpu: 100m}}}\n"
    )
    if kind == "CronJob":
        body = f"  schedule: '* * * * *'\n  jobTemplate:\n    spec:\n{_indent(spec, 6)}\n{_indent(template, 4)}"
    else:
        body = f"{_indent(spec, 2)}\n{template}"
    return f"apiVersion: {api}\nkind: {kind}\nmetadata:\n  name: {name}{namespace}\nspec:\n{body}"


def _indent(text: str, spaces: int) -> str:
    return "\n".join(" " * spaces + line if line else line for line in text.splitlines())


@pytest.mark.parametrize(
    ("kind", "api"),
    [("Deployment", "apps/v1"), ("StatefulSet", "apps/v1"), ("ReplicaSet", "apps/v1"), ("ReplicationController", "v1")],
)
def test_replicas_are_named_and_share_one_template(build: Build, kind: str, api: str) -> None:
    inventory = build(workload(kind, api=api, ns="shop"))
    assert [p.name for p in inventory.pods] == ["web-0", "web-1", "web-2"]
    assert {p.workload for p in inventory.pods} == {f"{kind}/web"}
    assert {p.namespace for p in inventory.pods} == {"shop"}
    assert len({id(p.template) for p in inventory.pods}) == 1
    (group,) = inventory.pending_groups()
    assert group.size == 3 and group.workload == f"{kind}/web"
    assert inventory.pods[0].requests == {"cpu": 100, "pods": 1}


def test_replicas_default_to_one_and_zero_means_none(build: Build) -> None:
    assert len(build(workload("Deployment", spec="paused: false")).pods) == 1
    assert build(workload("Deployment", spec="replicas: 0")).pods == ()


def test_deployment_replicas_carry_a_deterministic_template_hash(build: Build) -> None:
    first = build(workload("Deployment")).pods
    again = build(workload("Deployment")).pods
    other = build(workload("Deployment", spec="replicas: 3\nminReadySeconds: 5")).pods
    changed = build(workload("Deployment").replace("100m", "200m")).pods
    hash_value = first[0].labels[POD_TEMPLATE_HASH]
    assert {p.labels[POD_TEMPLATE_HASH] for p in first} == {hash_value}
    assert again[0].labels[POD_TEMPLATE_HASH] == hash_value
    assert other[0].labels[POD_TEMPLATE_HASH] == hash_value  # only the template counts
    assert changed[0].labels[POD_TEMPLATE_HASH] != hash_value
    assert set(hash_value) <= set("bcdfghjklmnpqrstvwxz2456789")
    assert POD_TEMPLATE_HASH not in build(workload("StatefulSet")).pods[0].labels


@pytest.mark.parametrize(
    ("spec", "count"),
    [
        ("completions: 5", 1),  # parallelism defaults to 1
        ("parallelism: 4", 4),
        ("parallelism: 4\ncompletions: 2", 2),  # capped by completions
        ("parallelism: 0", 0),
        ("parallelism: 3\nsuspend: true", 0),
    ],
)
def test_job_pods_are_parallelism_capped_by_completions(build: Build, spec: str, count: int) -> None:
    job = build(workload("Job", spec=spec, api="batch/v1")).pods
    cron = build(workload("CronJob", spec=spec, api="batch/v1")).pods
    assert [p.name for p in job] == [f"web-{i}" for i in range(count)]
    assert [p.workload for p in cron] == ["CronJob/web"] * count


def test_bare_pods_keep_their_state(build: Build) -> None:
    docs = "---\n".join(
        [
            pod_manifest("containers: [{name: a}]", name="pending"),
            pod_manifest("nodeName: node-1\ncontainers: [{name: a}]", name="bound"),
            pod_manifest("schedulingGates: [{name: wait}]\ncontainers: [{name: a}]", name="gated"),
            pod_manifest(
                "nodeName: node-1\ncontainers: [{name: a}]",
                name="leaving",
                extra_metadata="deletionTimestamp: '2024-01-01T00:00:00Z'",
            ),
            pod_manifest("containers: [{name: a}]", name="done") + "status: {phase: Succeeded}\n",
            pod_manifest(
                "containers: [{name: a}]",
                name="owned",
                extra_metadata="ownerReferences: [{kind: ReplicaSet, name: rs, controller: true, apiVersion: apps/v1, uid: u}]",
            ),
        ]
    )
    inventory = build(docs)
    by_name = {p.name: p for p in inventory.pods}
    assert by_name["pending"].workload == "Pod/pending" and not by_name["pending"].bound
    assert by_name["bound"].node_name == "node-1"
    assert by_name["gated"].gated
    assert by_name["leaving"].terminating and by_name["leaving"].bound
    assert by_name["done"].terminal
    assert by_name["owned"].owner == "ReplicaSet/rs"
    assert [p.name for p in inventory.pending] == ["pending", "owned"]
    assert [p.name for p in inventory.gated] == ["gated"]


def test_unbound_daemonset_pods_are_dropped_and_bound_ones_kept(build: Build) -> None:
    owner = "ownerReferences: [{kind: DaemonSet, name: agent, controller: true, apiVersion: apps/v1, uid: u}]"
    docs = (
        pod_manifest("containers: [{name: a}]", name="agent-x", extra_metadata=owner)
        + "---\n"
        + pod_manifest("nodeName: n1\ncontainers: [{name: a}]", name="agent-y", extra_metadata=owner)
    )
    inventory = build(docs)
    assert [p.name for p in inventory.pods] == ["agent-y"]
    assert [(s.kind, s.name, s.reason) for s in inventory.skipped] == [
        ("Pod", "agent-x", "pending DaemonSet pod (Karpenter ignores these)")
    ]


def test_daemonsets_are_overhead_not_pods(build: Build) -> None:
    inventory = build(
        """
        apiVersion: apps/v1
        kind: DaemonSet
        metadata: {name: agent, namespace: kube-system}
        spec:
          template:
            metadata: {labels: {app: agent}}
            spec:
              tolerations: [{operator: Exists}]
              containers:
              - name: a
                resources: {limits: {cpu: 200m, memory: 100Mi}}
        """
    )
    assert inventory.pods == ()
    (daemonset,) = inventory.daemonsets
    assert (daemonset.name, daemonset.namespace) == ("agent", "kube-system")
    assert daemonset.template.requests == {"cpu": 200, "memory": 100 * 2**20, "pods": 1}
    assert daemonset.template.labels == {"app": "agent"}


def test_unknown_kinds_are_skipped_and_recorded(build: Build) -> None:
    inventory = build(
        """
        apiVersion: v1
        kind: Service
        metadata: {name: web}
        ---
        apiVersion: example.com/v1
        kind: Deployment
        metadata: {name: not-apps}
        ---
        values: {replicas: 3}
        """,
        "chart.yaml",
    )
    assert [(s.kind, s.name, s.origin, s.reason) for s in inventory.skipped] == [
        ("Service", "web", "chart.yaml:2", ""),
        ("Deployment", "not-apps", "chart.yaml:6", ""),
        ("(no kind)", "", "chart.yaml:10", "not a Kubernetes object"),
    ]
    assert inventory.skipped_counts()["Service"] == 1


def test_controllers_whose_pods_are_in_the_input_are_not_expanded_again(build: Build) -> None:
    deployment = workload("Deployment", ns="shop")
    replicaset = (
        "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata:\n  name: web-abc\n  namespace: shop\n"
        "  ownerReferences: [{kind: Deployment, name: web, controller: true, apiVersion: apps/v1, uid: u}]\n"
        "spec:\n  replicas: 3\n  template:\n    spec:\n      containers: [{name: c}]\n"
    )
    pod = pod_manifest(
        "nodeName: n1\ncontainers: [{name: c}]",
        name="web-abc-x1",
        labels="{app: web, pod-template-hash: abc}",
        extra_metadata="namespace: shop\n"
        "ownerReferences: [{kind: ReplicaSet, name: web-abc, controller: true, apiVersion: apps/v1, uid: u}]",
    )
    dump = build("---\n".join([deployment, replicaset, pod]))
    assert [p.name for p in dump.pods] == ["web-abc-x1"]
    assert {(s.kind, s.reason) for s in dump.skipped} == {
        ("Deployment", "its pods are in the input"),
        ("ReplicaSet", "owned by Deployment/web, planned instead"),
    }
    # Without the pods, the Deployment is the workload and its ReplicaSet is left to it.
    plain = build("---\n".join([deployment, replicaset]))
    assert [p.workload for p in plain.pods] == ["Deployment/web"] * 3
    assert [(s.kind, s.reason) for s in plain.skipped] == [("ReplicaSet", "owned by Deployment/web, planned instead")]


def test_cronjob_with_jobs_in_the_input_is_left_to_them(build: Build) -> None:
    job = workload("Job", name="nightly-28000000", spec="parallelism: 2", api="batch/v1").replace(
        "metadata:\n  name: nightly-28000000",
        "metadata:\n  name: nightly-28000000\n  ownerReferences: [{kind: CronJob, name: nightly, controller: true}]",
    )
    inventory = build(workload("CronJob", name="nightly", spec="parallelism: 2", api="batch/v1") + "\n---\n" + job)
    assert [p.workload for p in inventory.pods] == ["Job/nightly-28000000"] * 2
    assert [(s.kind, s.name) for s in inventory.skipped] == [("CronJob", "nightly")]


def test_priority_comes_from_the_spec_or_its_priority_class(build: Build) -> None:
    classes = textwrap.dedent(
        """
        apiVersion: scheduling.k8s.io/v1
        kind: PriorityClass
        metadata: {name: high}
        value: 1000
        ---
        apiVersion: scheduling.k8s.io/v1
        kind: PriorityClass
        metadata: {name: normal}
        value: 10
        globalDefault: true
        """
    )
    inventory = build(
        classes
        + "---\n"
        + pod_manifest("priorityClassName: high\ncontainers: [{name: a}]", name="a")
        + "---\n"
        + pod_manifest("containers: [{name: a}]", name="b")
        + "---\n"
        + pod_manifest("priority: 7\npriorityClassName: high\ncontainers: [{name: a}]", name="c")
    )
    assert [p.template.priority for p in inventory.pods] == [1000, 10, 7]


def test_objects_defined_twice_are_an_error(problems: Problems) -> None:
    text = pod_manifest("containers: [{name: a}]") + "---\n" + pod_manifest("containers: [{name: b}]")
    assert problems(text) == ["test.yaml:9: Pod default/p is defined twice (first at test.yaml:1)"]


def test_an_object_written_twice_the_same_is_one_object(build: Build) -> None:
    # cert-manager deploy/manifests: Namespace cert-manager in 01-namespace.yaml and namespace.yaml, the same;
    # kubectl apply of both makes one object, so plan read it as two definitions (exit 2) for nothing.
    text = pod_manifest("containers: [{name: a}]") + "---\n" + pod_manifest("containers: [{name: a}]")
    assert [p.name for p in build(text).pods] == ["p"]


def test_workload_shape_errors_name_the_field(problems: Problems) -> None:
    assert problems(workload("Deployment", spec='replicas: "abc"')) == [
        'test.yaml:6: spec.replicas: Invalid value: "abc": must be an integer'
    ]
    assert problems(workload("Deployment", spec="replicas: -1")) == [
        "test.yaml:6: spec.replicas: Invalid value: -1: must be greater than or equal to 0"
    ]
    assert problems(workload("Deployment", spec="replicas: 1000000")) == [
        "test.yaml:6: spec.replicas: Invalid value: 1000000: karpplan plans at most 100,000 replicas per workload"
    ]
    assert problems("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec: {replicas: 1}\n") == [
        "test.yaml:4: spec.template: Required value: a pod template is required",
        "test.yaml:4: spec.template.spec: Required value: a pod spec is required",
    ]
    assert problems("apiVersion: v1\nkind: Pod\nmetadata: {labels: {a: b}}\nspec: {containers: []}\n") == [
        "test.yaml:3: metadata.name: Required value: name or generateName is required"
    ]


def test_total_pod_count_is_bounded(problems: Problems, monkeypatch: pytest.MonkeyPatch) -> None:
    from karpplan.model import build as build_module

    monkeypatch.setattr(build_module, "MAX_PODS", 5)
    text = workload("Deployment", name="a") + "---\n" + workload("Deployment", name="b")
    assert problems(text) == ["test.yaml:14: the input expands to more than 5 pods; karpplan does not plan that many"]
