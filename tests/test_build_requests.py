"""Effective pod requests exactly as kube-scheduler computes them (kube-scheduler.md §7)."""

from __future__ import annotations

from collections.abc import Callable

from karpplan.model.inventory import Inventory

from conftest import pod_manifest

Build = Callable[..., Inventory]
Problems = Callable[..., list[str]]
Mi = 2**20
Gi = 2**30


def requests_of(build: Build, spec: str, extra: str = "", status: str = "") -> dict[str, int]:
    inventory = build(extra + pod_manifest(spec) + status)
    return inventory.pods[-1].requests.as_dict()


def test_sidecars_and_init_containers_per_the_documented_example(build: Build) -> None:
    spec = """
    initContainers:
    - {name: a, restartPolicy: Always, resources: {requests: {cpu: 500m}}}
    - {name: b, resources: {requests: {cpu: "2"}}}
    - {name: c, restartPolicy: Always, resources: {requests: {cpu: 300m}}}
    - {name: d, resources: {requests: {cpu: "1"}}}
    containers:
    - {name: app, resources: {requests: {cpu: "1"}}}
    """
    # reqs = 1 + 0.5 + 0.3 = 1.8; init uses 0.5, 2.5, 0.8, 1.8 -> 2.5 CPU
    assert requests_of(build, spec) == {"cpu": 2500, "pods": 1}


def test_the_maximum_is_taken_per_resource(build: Build) -> None:
    spec = """
    initContainers:
    - {name: big-cpu, resources: {requests: {cpu: "4", memory: 10Mi}}}
    - {name: big-mem, resources: {requests: {cpu: 10m, memory: 8Gi}}}
    containers:
    - {name: a, resources: {requests: {cpu: "1", memory: 1Gi}}}
    - {name: b, resources: {requests: {cpu: 500m, memory: 1Gi}}}
    """
    assert requests_of(build, spec) == {"cpu": 4000, "memory": 8 * Gi, "pods": 1}


def test_limits_default_missing_requests_for_containers_and_init_containers(build: Build) -> None:
    spec = """
    initContainers:
    - {name: init, resources: {limits: {cpu: "3"}}}
    containers:
    - {name: a, resources: {requests: {cpu: 100m}, limits: {cpu: 200m, memory: 1Gi}}}
    - {name: b}
    """
    assert requests_of(build, spec) == {"cpu": 3000, "memory": Gi, "pods": 1}


def test_yaml_numbers_are_quantities(build: Build) -> None:
    spec = """
    containers:
    - {name: a, resources: {requests: {cpu: 0.5, memory: 1e3, ephemeral-storage: 2}}}
    """
    assert requests_of(build, spec) == {"cpu": 500, "memory": 1000, "ephemeral-storage": 2, "pods": 1}


def test_extended_resources_count_as_integers(build: Build) -> None:
    spec = """
    containers:
    - {name: a, resources: {limits: {nvidia.com/gpu: 2}}}
    - {name: b, resources: {requests: {nvidia.com/gpu: 1}, limits: {nvidia.com/gpu: 1}}}
    """
    assert requests_of(build, spec) == {"nvidia.com/gpu": 3, "pods": 1}


RUNTIME_CLASS = """apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {name: kata}
handler: kata
overhead:
  podFixed: {cpu: 250m, memory: 160Mi}
---
"""


def test_runtime_class_overhead_is_added_after_the_maximum(build: Build) -> None:
    spec = """
    runtimeClassName: kata
    initContainers: [{name: i, resources: {requests: {cpu: "2"}}}]
    containers: [{name: a, resources: {requests: {cpu: "1", memory: 1Gi}}}]
    """
    assert requests_of(build, spec, RUNTIME_CLASS) == {"cpu": 2250, "memory": Gi + 160 * Mi, "pods": 1}
    inventory = build(RUNTIME_CLASS + pod_manifest("containers: [{name: a}]"))
    assert inventory.runtime_classes[0].overhead == {"cpu": 250, "memory": 160 * Mi}


def test_explicit_overhead_wins_and_unknown_runtime_classes_add_nothing(build: Build) -> None:
    stored = """
    runtimeClassName: kata
    overhead: {cpu: 100m}
    containers: [{name: a}]
    """
    # a pod the API server admitted (it has a status) keeps the overhead it was given; one never created with an
    # overhead unlike its class's is refused by the RuntimeClass admission plugin (test_real_manifests_s19)
    assert requests_of(build, stored, RUNTIME_CLASS, status="status: {phase: Pending}\n") == {"cpu": 100, "pods": 1}
    assert build(RUNTIME_CLASS + pod_manifest(stored)).pods == ()
    assert requests_of(build, "runtimeClassName: gvisor\ncontainers: [{name: a}]") == {"pods": 1}


def test_pod_level_resources_replace_the_aggregate(build: Build) -> None:
    spec = """
    resources: {requests: {cpu: "2"}, limits: {memory: 4Gi}}
    containers:
    - {name: a, resources: {requests: {cpu: "1", memory: 1Gi, ephemeral-storage: 1Gi}}}
    """
    # the memory limit alone defaults the pod's memory request to the containers' aggregate (1Gi), not to the
    # limit, since a container requests memory (`defaultPodRequests`, pkg/apis/core/v1/defaults.go)
    assert requests_of(build, spec) == {"cpu": 2000, "memory": Gi, "ephemeral-storage": Gi, "pods": 1}


def test_pod_level_requests_below_the_aggregate_are_refused(problems: Problems) -> None:
    spec = """
    resources: {requests: {cpu: 500m}}
    containers: [{name: a, resources: {requests: {cpu: "1"}}}]
    """
    assert problems(pod_manifest(spec)) == [
        'test.yaml:7: spec.resources.requests[cpu]: Invalid value: "500m": '
        "must be greater than or equal to aggregate container requests of 1"
    ]


def test_resource_validation_messages(problems: Problems) -> None:
    spec = """
    containers:
    - name: a
      resources:
        requests: {cpu: "2", memory: 1K, cpus: 1, pods: 1, example.com/dev: 1}
        limits: {cpu: "1"}
    - name: b
      resources:
        requests: {example.com/dev: 0.5, memory: -1}
        limits: {example.com/dev: 1}
    """
    assert problems(pod_manifest(spec)) == [
        'test.yaml:10: spec.containers[0].resources.requests[memory]: Invalid value: "1K": '
        "unable to parse quantity's suffix",
        'test.yaml:10: spec.containers[0].resources.requests[cpus]: Invalid value: "cpus": '
        "must be a standard resource type or fully qualified",
        'test.yaml:10: spec.containers[0].resources.requests[pods]: Invalid value: "pods": '
        "must be a standard resource for containers",
        'test.yaml:10: spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1',
        "test.yaml:11: spec.containers[0].resources.limits: Required value: "
        "Limit must be set for non overcommitable resources",
        "test.yaml:14: spec.containers[1].resources.requests[memory]: Invalid value: -1: "
        "must be greater than or equal to 0",
        'test.yaml:14: spec.containers[1].resources.requests[example.com/dev]: Invalid value: "0.5": '
        "must be equal to example.com/dev limit of 1",
        'test.yaml:14: spec.containers[1].resources.requests[example.com/dev]: Invalid value: "0.5": must be an integer',
    ]


def test_shape_errors_in_pod_specs(problems: Problems) -> None:
    assert problems(pod_manifest("containers: {name: a}")) == [
        'test.yaml:7: spec.containers: Invalid value: {...}: must be a list, not a mapping'
    ]
    assert problems(pod_manifest("containers:\n- name: a\n  resources: [cpu]")) == [
        'test.yaml:9: spec.containers[0].resources: Invalid value: ["cpu"]: must be a mapping, not a list'
    ]
    assert problems(pod_manifest("nodeName: n1")) == [
        "test.yaml:6: spec.containers: Required value: at least one container is required"
    ]
    assert problems(pod_manifest("containers: [{name: a}]", labels="[a, b]")) == [
        'test.yaml:5: metadata.labels: Invalid value: ["a", "b"]: must be a mapping, not a list'
    ]
    assert problems(pod_manifest("containers: [{name: a}]", labels="{enabled: true}")) == [
        "test.yaml:5: metadata.labels.enabled: Invalid value: true: must be a string, not a boolean (quote it)"
    ]
