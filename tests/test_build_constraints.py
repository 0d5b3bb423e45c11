"""Scheduling constraints from pod specs, and the API validation messages of kube-scheduler.md §9."""

from __future__ import annotations

import textwrap
from collections.abc import Callable

from karpplan.errors import Origin
from karpplan.model.inventory import Inventory
from karpplan.model.pods import HostPort
from karpplan.model.requirements import Requirement
from karpplan.model.taints import Toleration

from conftest import pod_manifest

Build = Callable[..., Inventory]
Problems = Callable[..., list[str]]
SPREAD = "spec.topologySpreadConstraints[0]"


def template_of(build: Build, spec: str) -> object:
    return build(pod_manifest("containers: [{name: a}]\n" + textwrap.dedent(spec))).pods[0].template


# ------------------------------------------------------------------------------------------ spread
def test_spread_constraints_are_read_with_their_lines(build: Build) -> None:
    inventory = build(
        pod_manifest(
            """
            containers: [{name: a}]
            topologySpreadConstraints:
            - maxSkew: 2
              topologyKey: topology.kubernetes.io/zone
              whenUnsatisfiable: DoNotSchedule
              minDomains: 3
              nodeAffinityPolicy: Ignore
              nodeTaintsPolicy: Honor
              labelSelector: {matchLabels: {app: p}}
              matchLabelKeys: [pod-template-hash]
            - {maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: ScheduleAnyway}
            """
        ),
        "spread.yaml",
    )
    zone, host = inventory.pods[0].template.spread
    assert (zone.max_skew, zone.topology_key, zone.when_unsatisfiable, zone.min_domains) == (
        2,
        "topology.kubernetes.io/zone",
        "DoNotSchedule",
        3,
    )
    assert (zone.node_affinity_policy, zone.node_taints_policy) == ("Ignore", "Honor")
    assert not zone.honors_affinity and zone.honors_taints
    assert zone.match_label_keys == ("pod-template-hash",)
    assert zone.origin == Origin("spread.yaml", 9)
    assert host.origin == Origin("spread.yaml", 17)
    assert not host.hard and host.effective_min_domains == 1
    assert host.label_selector is None


def test_spread_validation_in_api_order(problems: Problems) -> None:
    spec = """
    containers: [{name: a}]
    topologySpreadConstraints:
    - {maxSkew: 0, topologyKey: "", whenUnsatisfiable: Foo, minDomains: 0}
    - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway, minDomains: 2, nodeAffinityPolicy: Honour}
    - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway, nodeTaintsPolicy: ignore}
    - {maxSkew: 1, topologyKey: host, whenUnsatisfiable: DoNotSchedule, matchLabelKeys: [app]}
    - maxSkew: 1
      topologyKey: rack
      whenUnsatisfiable: DoNotSchedule
      labelSelector: {matchLabels: {app: p}, matchExpressions: [{key: x, operator: Foo}, {key: y, operator: In}, {key: z, operator: Exists, values: [a]}]}
      matchLabelKeys: [app]
    """
    c = "spec.topologySpreadConstraints"
    assert problems(pod_manifest(spec)) == [
        f"test.yaml:9: {c}[0].maxSkew: Invalid value: 0: must be greater than zero",
        f"test.yaml:9: {c}[0].topologyKey: Required value: can not be empty",
        f'test.yaml:9: {c}[0].whenUnsatisfiable: Unsupported value: "Foo": supported values: "DoNotSchedule", "ScheduleAnyway"',
        f"test.yaml:9: {c}[0].minDomains: Invalid value: 0: must be greater than zero",
        f"test.yaml:9: {c}[0].minDomains: Invalid value: 0: can only use minDomains if whenUnsatisfiable=DoNotSchedule, not Foo",
        f'test.yaml:10: {c}[1].{{topologyKey, whenUnsatisfiable}}: Duplicate value: "{{zone, ScheduleAnyway}}"',
        f"test.yaml:10: {c}[1].minDomains: Invalid value: 2: can only use minDomains if whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway",
        f'test.yaml:10: {c}[1].nodeAffinityPolicy: Unsupported value: "Honour": supported values: "Honor", "Ignore"',
        f'test.yaml:11: {c}[2].nodeTaintsPolicy: Unsupported value: "ignore": supported values: "Honor", "Ignore"',
        f"test.yaml:12: {c}[3].matchLabelKeys: Forbidden: must not be specified when labelSelector is not set",
        f'test.yaml:16: {c}[4].labelSelector.matchExpressions[0].operator: Invalid value: "Foo": not a valid selector operator',
        f"test.yaml:16: {c}[4].labelSelector.matchExpressions[1].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
        f"test.yaml:16: {c}[4].labelSelector.matchExpressions[2].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
        f'test.yaml:17: {c}[4].matchLabelKeys[0]: Invalid value: "app": exists in both matchLabelKeys and labelSelector',
    ]


def test_max_skew_must_be_an_integer(problems: Problems) -> None:
    spec = "containers: [{name: a}]\ntopologySpreadConstraints:\n- {maxSkew: x, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}"
    assert problems(pod_manifest(spec)) == [f'test.yaml:9: {SPREAD}.maxSkew: Invalid value: "x": must be an integer']


def test_workload_paths_carry_the_template_prefix(problems: Problems) -> None:
    text = """
    apiVersion: batch/v1
    kind: CronJob
    metadata: {name: c}
    spec:
      schedule: "@daily"
      jobTemplate:
        spec:
          template:
            spec:
              containers: [{name: a}]
              topologySpreadConstraints: [{maxSkew: 0, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}]
    """
    assert problems(text) == [
        "test.yaml:12: spec.jobTemplate.spec.template.spec.topologySpreadConstraints[0].maxSkew: "
        "Invalid value: 0: must be greater than zero"
    ]


# ------------------------------------------------------------------------------------------ tolerations
def test_tolerations_are_read(build: Build) -> None:
    template = template_of(
        build,
        """
        tolerations:
        - {key: dedicated, value: gpu, effect: NoSchedule}
        - {operator: Exists}
        - {key: spot, operator: Exists, effect: NoExecute, tolerationSeconds: 30}
        """,
    )
    assert template.tolerations == (  # type: ignore[attr-defined]
        Toleration("dedicated", "Equal", "gpu", "NoSchedule"),
        Toleration("", "Exists", "", ""),
        Toleration("spot", "Exists", "", "NoExecute"),
    )


def test_toleration_validation(problems: Problems) -> None:
    spec = """
    containers: [{name: a}]
    tolerations:
    - {operator: Equal, value: x}
    - {key: a, effect: NoSchedule, tolerationSeconds: 5}
    - {key: a, operator: Exists, value: bar}
    - {key: a, operator: In, value: b}
    - {key: a, value: b, effect: NoExec}
    - {key: a, value: "not valid!"}
    """
    t = "spec.tolerations"
    assert problems(pod_manifest(spec)) == [
        f'test.yaml:9: {t}[0].operator: Invalid value: "Equal": operator must be Exists when `key` is empty, '
        'which means "match all values and all keys"',
        f"test.yaml:10: {t}[1].effect: Invalid value: \"NoSchedule\": effect must be 'NoExecute' when `tolerationSeconds` is set",
        f"test.yaml:11: {t}[2].operator: Invalid value: \"bar\": value must be empty when `operator` is 'Exists'",
        f'test.yaml:12: {t}[3].operator: Unsupported value: "In": supported values: "Equal", "Exists"',
        f'test.yaml:13: {t}[4].effect: Unsupported value: "NoExec": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"',
        f'test.yaml:14: {t}[5].operator: Invalid value: "not valid!": a valid label must be an empty string or consist '
        "of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character "
        "(e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is "
        "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
    ]


# ------------------------------------------------------------------------------------------ node affinity
def test_node_selector_and_affinity_are_normalised(build: Build) -> None:
    template = template_of(
        build,
        """
        nodeSelector: {beta.kubernetes.io/arch: arm64, disk: ssd}
        affinity:
          nodeAffinity:
            requiredDuringSchedulingIgnoredDuringExecution:
              nodeSelectorTerms:
              - matchExpressions:
                - {key: karpenter.k8s.aws/instance-generation, operator: Gt, values: ["5"]}
            preferredDuringSchedulingIgnoredDuringExecution:
            - weight: 20
              preference:
                matchExpressions: [{key: failure-domain.beta.kubernetes.io/zone, operator: In, values: [a]}]
        """,
    )
    affinity = template.affinity  # type: ignore[attr-defined]
    assert set(affinity.node_selector) == {"kubernetes.io/arch", "disk"}
    assert affinity.required[0].requirements["karpenter.k8s.aws/instance-generation"] == Requirement.of(
        "karpenter.k8s.aws/instance-generation", "Gt", ["5"]
    )
    assert affinity.required[0].origin.line == 14  # the "- matchExpressions:" line
    (preferred,) = affinity.preferred
    assert preferred.weight == 20
    assert "topology.kubernetes.io/zone" in preferred.term.requirements
    assert affinity.preference_score({"topology.kubernetes.io/zone": "a"}) == 20


def test_node_affinity_validation(problems: Problems) -> None:
    spec = """
    containers: [{name: a}]
    affinity:
      nodeAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          nodeSelectorTerms: []
        preferredDuringSchedulingIgnoredDuringExecution:
        - {weight: 0, preference: {matchExpressions: [{key: a, operator: Exists}]}}
        - {weight: 101, preference: {}}
        - preference: {}
    """
    base = "spec.affinity.nodeAffinity"
    assert problems(pod_manifest(spec)) == [
        f"test.yaml:11: {base}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms: "
        "Required value: must have at least one node selector term",
        f"test.yaml:13: {base}.preferredDuringSchedulingIgnoredDuringExecution[0].weight: Invalid value: 0: must be in the range 1-100",
        f"test.yaml:14: {base}.preferredDuringSchedulingIgnoredDuringExecution[1].weight: Invalid value: 101: must be in the range 1-100",
        f"test.yaml:15: {base}.preferredDuringSchedulingIgnoredDuringExecution[2].weight: Invalid value: 0: must be in the range 1-100",
    ]


# ------------------------------------------------------------------------------------------ pod affinity
def test_pod_affinity_terms(build: Build) -> None:
    template = template_of(
        build,
        """
        affinity:
          podAffinity:
            requiredDuringSchedulingIgnoredDuringExecution:
            - topologyKey: topology.kubernetes.io/zone
              labelSelector: {matchLabels: {app: db}}
              namespaces: [data]
              namespaceSelector: {}
          podAntiAffinity:
            preferredDuringSchedulingIgnoredDuringExecution:
            - weight: 50
              podAffinityTerm:
                topologyKey: kubernetes.io/hostname
                labelSelector: {matchLabels: {app: p}}
                matchLabelKeys: [pod-template-hash]
                mismatchLabelKeys: [tenant]
        """,
    )
    (required,) = template.pod_affinity.required  # type: ignore[attr-defined]
    assert required.namespaces == frozenset({"data"})
    assert required.namespace_selector is not None and required.namespace_selector.is_empty()
    assert required.namespace_in_scope("p-ns", "anything", {})
    (weighted,) = template.pod_anti_affinity.preferred  # type: ignore[attr-defined]
    assert weighted.weight == 50
    assert weighted.term.match_label_keys == ("pod-template-hash",)
    assert weighted.term.mismatch_label_keys == ("tenant",)
    selector = weighted.term.selector_for({"app": "p", "pod-template-hash": "h1", "tenant": "t1"})
    assert selector is not None
    assert selector.matches({"app": "p", "pod-template-hash": "h1", "tenant": "t2"})
    assert not selector.matches({"app": "p", "pod-template-hash": "h1", "tenant": "t1"})


def test_pod_affinity_validation(problems: Problems) -> None:
    spec = """
    containers: [{name: a}]
    affinity:
      podAntiAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
        - {topologyKey: "", labelSelector: {}}
        - {topologyKey: zone, matchLabelKeys: [app]}
        - {topologyKey: zone, labelSelector: {}, matchLabelKeys: [a], mismatchLabelKeys: [a]}
        preferredDuringSchedulingIgnoredDuringExecution:
        - {weight: 0, podAffinityTerm: {topologyKey: zone}}
    """
    base = "spec.affinity.podAntiAffinity"
    assert problems(pod_manifest(spec)) == [
        f"test.yaml:11: {base}.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey: Required value: can not be empty",
        f"test.yaml:12: {base}.requiredDuringSchedulingIgnoredDuringExecution[1].matchLabelKeys: "
        "Forbidden: must not be specified when labelSelector is not set",
        f'test.yaml:13: {base}.requiredDuringSchedulingIgnoredDuringExecution[2].mismatchLabelKeys[0]: Invalid value: "a": '
        "exists in both matchLabelKeys and mismatchLabelKeys",
        f"test.yaml:15: {base}.preferredDuringSchedulingIgnoredDuringExecution[0].weight: Invalid value: 0: must be in the range 1-100",
    ]


# ------------------------------------------------------------------------------------------ ports and more
def test_host_ports_include_sidecars_and_host_network(build: Build) -> None:
    inventory = build(
        pod_manifest(
            """
            hostNetwork: true
            initContainers:
            - {name: proxy, restartPolicy: Always, ports: [{containerPort: 15000, hostPort: 15000}]}
            - {name: init, ports: [{containerPort: 9}]}
            containers:
            - name: a
              ports:
              - {containerPort: 8080}
              - {containerPort: 53, hostPort: 53, protocol: UDP, hostIP: 10.0.0.1}
            """
        )
    )
    assert inventory.pods[0].template.host_ports == (
        HostPort(8080),
        HostPort(53, "UDP", "10.0.0.1"),
        HostPort(15000),
    )


def test_annotations_runtime_class_and_fargate_traits(build: Build) -> None:
    inventory = build(
        pod_manifest(
            "runtimeClassName: kata\nhostNetwork: true\ncontainers: [{name: a}]",
            extra_metadata="annotations: {team: shop}",
        )
    )
    template = inventory.pods[0].template
    assert template.annotations == {"team": "shop"}
    assert template.runtime_class == "kata"
    assert template.fargate.refusals and template.fargate.refusals[0][0] == "spec.hostNetwork"
