"""`inventory`, `lint` and `plan` on trimmed copies of real public manifests (fixtures/real/, each with its URL).

Each test is a regression: what the platform engineer who owns the source repository would have read wrong.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from karpplan.cli.main import app

from conftest import FIXTURES

REAL = FIXTURES / "real"


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["--color", "never", *args])
    return result.exit_code, result.stdout, result.stderr


# https://github.com/aws-samples/karpenter-blueprints/blob/main/blueprints/node-overlay/node-overlay-targeted.yaml
def test_pool_targeted_node_overlay_prices_its_pool_only() -> None:
    """The NodeOverlay CRD allows `karpenter.sh/nodepool` in requirements (it was refused with exit 2 as
    "label is restricted"). Karpenter applies it to that pool's instance types only: the blueprint's +45% on
    generation 5 raises team-alpha's m5.large, and a second pool's m5.large keeps the catalog price."""
    code, out, err = invoke("inventory", str(REAL / "node-overlay-targeted.yaml"), "-o", "json")
    assert code == 0, err
    text = (REAL / "node-overlay-targeted.yaml").read_text()
    beta = text.split("---")[1].replace("team-alpha", "team-beta")  # the same NodePool, under another name
    pinned = """
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: POOL-app}
spec:
  replicas: 1
  selector: {matchLabels: {app: POOL}}
  template:
    metadata: {labels: {app: POOL}}
    spec:
      nodeSelector: {karpenter.sh/nodepool: POOL, node.kubernetes.io/instance-type: m5.large}
      containers: [{name: app, image: pause, resources: {requests: {cpu: "1"}}}]
"""
    manifests = text + "---" + beta + pinned.replace("POOL", "team-alpha") + pinned.replace("POOL", "team-beta")
    result = CliRunner().invoke(app, ["plan", "-", "--time-limit", "5", "--zones", "us-east-1a", "-o", "json"],
                                input=manifests)
    assert result.exit_code == 0, result.stderr
    plan = json.loads(result.stdout)
    m5 = {n["nodePool"]: n["hourlyPrice"] for n in plan["nodes"] if n["instanceType"] == "m5.large"}
    assert set(m5) == {"team-alpha", "team-beta"}, plan["nodes"]
    assert m5["team-alpha"] == pytest.approx(m5["team-beta"] * 1.45, rel=1e-3)
    warnings = "\n".join(plan["warnings"])
    assert ("<stdin>:3: NodeOverlay team-alpha-prefer-latest-gen (weight 10) matches 178 instance type(s) of NodePool(s) "
            "team-alpha only: priceAdjustment +45%") in warnings


def test_node_overlay_still_refuses_hostname() -> None:
    text = (REAL / "node-overlay-targeted.yaml").read_text().replace("karpenter.sh/nodepool\n", "kubernetes.io/hostname\n", 1)
    result = CliRunner().invoke(app, ["inventory", "-"], input=text)
    assert result.exit_code == 2
    assert "<stdin>:11: spec.requirements[0].key: Invalid value" in result.stderr and "restricted" in result.stderr


def test_inventory_lists_pod_disruption_budgets_as_read() -> None:
    """plan's steady state and consolidate read PDBs: the inventory lists them, never as "kind not read"."""
    path = str(REAL / "node-overlay-targeted.yaml")
    code, out, err = invoke("-v", "inventory", path)
    assert code == 0
    assert "1 PodDisruptionBudgets" in out and "minAvailable=1" in out
    assert "PodDisruptionBudget" not in err and "Skipped documents" not in out
    code, out, _ = invoke("inventory", path, "-o", "json")
    document = json.loads(out)
    assert document["summary"]["podDisruptionBudgets"] == 1 and document["summary"]["skipped"] == 0
    (budget,) = document["podDisruptionBudgets"]
    assert (budget["name"], budget["namespace"], budget["minAvailable"]) == ("workload-team-alpha", "default", "1")
    assert budget["origin"].endswith("node-overlay-targeted.yaml:64")
    code, out, err = invoke("plan", path, "--time-limit", "2", "-o", "json")
    assert code == 0 and all(d["kind"] != "PodDisruptionBudget" for d in json.loads(out).get("ignored", []))


# https://github.com/aws/karpenter-provider-aws/blob/main/examples/v1/windows-custom-userdata.yaml
def test_node_class_ref_group_with_a_version_is_refused_as_the_crd_does() -> None:
    """`group: karpenter.k8s.aws/v1` was read as a foreign node class ("is not an AWS node class", planned with
    defaults); the API server refuses it (`pattern: ^[^/]*$`), so plan and lint say so, at the line."""
    path = str(REAL / "windows-nodeclassref-group.yaml")
    for command in ("plan", "lint", "inventory"):
        code, out, err = invoke(command, path)
        assert code == 2 and out == ""
        assert err.startswith(f"{path}:30: spec.template.spec.nodeClassRef.group: Invalid value: \"karpenter.k8s.aws/v1\": "
                              "should match '^[^/]*$' (the API group without a version: 'karpenter.k8s.aws')")
    fixed = (REAL / "windows-nodeclassref-group.yaml").read_text().replace("karpenter.k8s.aws/v1", "karpenter.k8s.aws")
    result = CliRunner().invoke(app, ["inventory", "-o", "json", "-"], input=fixed)
    assert result.exit_code == 0 and "not an AWS node class" not in result.stdout + result.stderr


# https://github.com/eksctl-io/eksctl/blob/main/examples/08-spot-instances.yaml
def test_eksctl_node_groups_are_listed_and_their_max_size_said() -> None:
    """The inventory said "0 node pools, 0 existing nodes" for a ClusterConfig whose node group the plan places
    pods on; and the plan called pods unschedulable ("Insufficient cpu") with no word that the group may grow to
    maxSize 5, which karpplan does not simulate."""
    path = str(REAL / "eksctl-spot-nodegroup.yaml")
    code, out, _ = invoke("inventory", path)
    assert code == 0
    assert "1 eksctl node groups" in out and "eksctl node groups (planned as existing nodes)" in out
    assert "ng-1" in out and "t3.small" in out and "max 5" in out
    code, out, _ = invoke("inventory", path, "-o", "json")
    (group,) = json.loads(out)["nodeGroups"]
    assert (group["name"], group["instanceTypes"], group["nodes"], group["spot"], group["maxSize"]) == (
        "ng-1", ["t3.small", "t3.medium"], 2, 1, 5)
    code, out, _ = invoke("plan", path, "--time-limit", "2", "-o", "json")
    document = json.loads(out)
    assert code == 1 and len(document["unschedulable"]) > 0
    assert (f"{path}:9: eksctl node group ng-1: planned as the 2 node(s) it keeps; its maxSize is 5, and growing it "
            "(cluster-autoscaler) is not simulated") in "\n".join(document["warnings"])
    # the pods that do not fit read "no nodepools found: nothing can be launched", though ng-1 may grow by 3
    reasons = "\n".join(r for pod in document["unschedulable"] for r in pod["reasons"])
    assert "nothing can be launched" not in reasons
    assert ("eksctl node group ng-1 could add up to 3 node(s) for it, but its maxSize is 5, and growing it "
            "(cluster-autoscaler) is not simulated") in reasons


def test_what_karpplan_does_not_simulate_is_no_lint_finding() -> None:
    """A valid pool-targeted NodeOverlay and a node group with room to grow are right as written: plan says what it
    does not simulate, lint reports nothing about them (KPL601 would tell the owner to change a correct manifest)."""
    for name in ("eksctl-spot-nodegroup.yaml", "node-overlay-targeted.yaml"):
        code, out, err = invoke("lint", str(REAL / name), "-o", "json")
        assert code in (0, 1) and err == "", err
        messages = [f["message"] for f in json.loads(out)["findings"]]
        assert not any("maxSize" in m or "NodeOverlay" in m for m in messages), messages


# https://github.com/eksctl-io/eksctl/blob/main/examples/28-instance-selector.yaml
def test_lint_does_not_judge_against_node_groups_it_cannot_know() -> None:
    """Node groups that pick their types by instanceSelector are left out of the plan (it says so); lint judged the
    pods against nothing and reported no-pool-can-launch "no nodepools found" as an error (exit 1) for a cluster
    whose node groups take them. Now the capacity rules are skipped, with the reason."""
    code, out, err = invoke("lint", str(REAL / "eksctl-instance-selector.yaml"), "-o", "json")
    assert code == 0, out
    report = json.loads(out)
    assert [f["rule"] for f in report["findings"]] == ["replicas-without-spread"]
    reasons = {s["rule"]: s["reason"] for s in report["summary"]["skipped"]}
    assert reasons["no-pool-can-launch"].startswith(
        "the only capacity is eksctl node group(s) ng, mng, whose instance type cannot be known offline")


# https://github.com/prometheus-operator/kube-prometheus/blob/main/manifests/setup/0alertmanagerConfigCustomResourceDefinition.yaml
def test_a_plain_equals_sign_is_a_string_as_kubernetes_reads_it() -> None:
    """kube-prometheus' CRDs list `enum: ['!=', =, =~, '!~']`: a plain `=` is YAML 1.1's `!!value` to PyYAML, and
    the whole manifests/ directory was refused (exit 2, "could not determine a constructor"); kubectl reads "="."""
    text = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: alertmanagerconfigs.monitoring.coreos.com
spec:
  versions:
  - name: v1alpha1
    schema:
      openAPIV3Schema:
        properties:
          matchType:
            enum:
            - '!='
            - =
            - =~
            - '!~'
            type: string
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: prometheus-operator
  namespace: monitoring
spec:
  selector:
    matchLabels: {app.kubernetes.io/name: prometheus-operator}
  template:
    metadata:
      labels: {app.kubernetes.io/name: prometheus-operator}
    spec:
      containers:
      - name: prometheus-operator
        resources:
          requests: {cpu: 100m, memory: 100Mi}
      - name: kube-rbac-proxy
        resources:
          requests: {cpu: 10m, memory: 20Mi}
"""
    result = CliRunner().invoke(app, ["inventory", "-o", "json", "-"], input=text)
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["pending"][0]["template"]["requests"] == {"cpu": "110m", "memory": "120Mi", "pods": "1"}
    assert [s["kind"] for s in document["skipped"]] == ["CustomResourceDefinition"]


# https://github.com/kubernetes/website/blob/main/content/en/examples/pods/topology-spread-constraints/two-constraints.yaml
def test_spread_on_bare_zone_and_node_keys_names_the_well_known_labels() -> None:
    """The docs' `zone` and `node` keys are labels Karpenter's nodes never carry: the fix named
    topology.kubernetes.io/zone for both, also for `node`, which means kubernetes.io/hostname."""
    code, out, err = invoke("lint", str(REAL / "website-two-constraints.yaml"), "-o", "json")
    assert code == 1, err
    fixes = {(f["line"], f["rule"]): f["fix"] for f in json.loads(out)["findings"] if f["rule"] == "spread-key-unknown"}
    assert fixes == {(16, "spread-key-unknown"): "use topology.kubernetes.io/zone",
                     (25, "spread-key-unknown"): "use kubernetes.io/hostname"}


# https://github.com/linkerd/linkerd2/blob/main/charts/partials/templates/_affinity.tpl (see the fixture's header)
def test_spread_on_the_deprecated_zone_alias_says_why_karpenter_cannot_place_it() -> None:
    """`failure-domain.beta.kubernetes.io/zone`: "a label no NodePool provides (did you mean ...)" read as a typo;
    the key is an alias Karpenter normalises in requirements but not in spread keys (kubernetes-sigs/karpenter#3307)."""
    code, out, _ = invoke("lint", str(REAL / "linkerd-beta-zone-spread.yaml"), "-o", "json")
    assert code == 1
    (finding,) = [f for f in json.loads(out)["findings"] if f["rule"] == "spread-key-unknown"]
    assert finding["line"] == 19 and finding["fix"] == "use topology.kubernetes.io/zone"
    assert finding["message"].startswith("topologyKey 'failure-domain.beta.kubernetes.io/zone' is a deprecated alias of "
                                         "topology.kubernetes.io/zone: Karpenter finds no domain for it")
    code, out, _ = invoke("plan", str(REAL / "linkerd-beta-zone-spread.yaml"), "--time-limit", "2", "-o", "json")
    assert code == 1 and len(json.loads(out)["unschedulable"]) == 3  # lint and plan agree


# https://github.com/argoproj/argo-rollouts/blob/master/examples/rollout-canary.yaml, rollout-template-ref.yaml
def test_argo_rollouts_are_planned_like_deployments() -> None:
    """A Rollout was skipped as "kind not read": its 5 replicas were missing from the plan. It is a Deployment's
    replicas and template (an HPA may scale it); one whose template is another workload's (workloadRef) is
    skipped, saying that its replicas are not planned."""
    path = str(REAL / "argo-rollouts.yaml")
    code, out, err = invoke("inventory", path, "-o", "json")
    assert code == 0, err
    document = json.loads(out)
    (group,) = document["pending"]
    assert (group["workload"], group["replicas"]) == ("Rollout/rollout-canary", 6)  # the HPA's minReplicas
    assert group["template"]["requests"] == {"cpu": "250m", "memory": "256Mi", "pods": "1"}
    (skipped,) = document["skipped"]
    assert (skipped["kind"], skipped["name"]) == ("Rollout", "rollout-ref-deployment")
    assert skipped["reason"] == "its 5 replica(s) run Deployment/rollout-ref-deployment's template (workloadRef): not planned"


def test_replicasets_of_a_rollout_in_a_cluster_dump_are_not_planned_twice() -> None:
    text = (REAL / "argo-rollouts.yaml").read_text() + """
---
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: rollout-canary-6b8d9c7f5
  namespace: default
  ownerReferences:
  - {apiVersion: argoproj.io/v1alpha1, kind: Rollout, name: rollout-canary, controller: true}
spec:
  replicas: 5
  selector: {matchLabels: {app: rollout-canary}}
  template:
    metadata: {labels: {app: rollout-canary}}
    spec:
      containers:
      - {name: rollouts-demo, image: argoproj/rollouts-demo:blue, resources: {requests: {cpu: 250m}}}
"""
    result = CliRunner().invoke(app, ["inventory", "-o", "json", "-"], input=text)
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    assert [g["workload"] for g in document["pending"]] == ["Rollout/rollout-canary"]
    assert "owned by Rollout/rollout-canary, planned instead" in [s["reason"] for s in document["skipped"]]


def test_lint_reads_a_rollout_as_a_replicated_workload() -> None:
    """A Rollout with 5 replicas and no spread is warned like a Deployment; one whose template is another
    workload's (workloadRef) is not judged on a template it does not hold."""
    code, out, _ = invoke("lint", str(REAL / "argo-rollouts.yaml"), "-o", "json")
    assert code == 0
    findings = [(f["rule"], f["object"], f["line"]) for f in json.loads(out)["findings"]]
    assert findings == [("replicas-without-spread", "Rollout/default/rollout-canary", 8)]


# https://github.com/kubernetes/ingress-nginx/blob/main/charts/ingress-nginx/templates/controller-deployment.yaml
def test_replicas_without_spread_counts_the_replicas_an_autoscaler_keeps() -> None:
    """Charts leave spec.replicas out when an HPA scales the Deployment; the rule read 1 replica and said nothing
    about 3 controller replicas (the HPA's minReplicas, which plan places) that may share one node."""
    code, out, _ = invoke("lint", str(REAL / "ingress-nginx-autoscaled.yaml"), "-o", "json")
    assert code == 0
    (finding,) = json.loads(out)["findings"]
    assert (finding["rule"], finding["object"]) == ("replicas-without-spread", "Deployment/ingress-nginx/ingress-nginx-controller")
    assert finding["message"].startswith("3 replicas with neither a topologySpreadConstraint")


# https://github.com/aws-samples/karpenter-blueprints/tree/main/blueprints/stateful
def test_an_unrendered_zone_placeholder_is_said_to_be_one_in_the_reasons() -> None:
    """The blueprint's StorageClass keeps `<<AVAILABILITY_ZONE>>` for the reader to fill in; the reasons quoted it
    as a zone the volume keeps the pod in, and left the reader to work out that it is the blueprint's blank."""
    code, out, err = invoke("plan", str(REAL / "blueprint-stateful-placeholder-zone.yaml"), "--time-limit", "2",
                            "-o", "json")
    assert code == 1, err
    for pod in json.loads(out)["unschedulable"]:
        assert pod["reasons"][0] == ("<<AVAILABILITY_ZONE>> is an unrendered template placeholder, not a real value: "
                                     "nothing matches it as written; fill it in before applying, and plan again")
        assert sum("unrendered template placeholder" in r for r in pod["reasons"]) == 1
        # ... and only once: the placeholder is no zone of the cluster's either, which the first reason says
        assert not any("not one of the cluster's zones" in r for r in pod["reasons"]), pod["reasons"]


def test_a_placeholder_in_a_node_selector_is_said_to_be_one() -> None:
    """envsubst style, in the label a NodePool must carry: the reason quoted `intent In [${INTENT}]` as a value."""
    pool = (REAL / "blueprint-stateful-placeholder-zone.yaml").read_text().split("---")[-1]
    web = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      nodeSelector: {intent: "${INTENT}"}
      containers: [{name: c, image: nginx, resources: {requests: {cpu: "1"}}}]
"""
    result = CliRunner().invoke(app, ["plan", "-", "--time-limit", "2", "-o", "json"], input=pool + "---" + web)
    assert result.exit_code == 1, result.stderr
    pod = json.loads(result.stdout)["unschedulable"][0]
    assert pod["reasons"][0].startswith("${INTENT} is an unrendered template placeholder, not a real value")
    # The fix is rendering it, never writing the placeholder into the NodePool (widened, or as a label).
    assert not any("${INTENT}" in fix["action"] and fix["object"].startswith("NodePool/") for fix in pod["fixes"])
    assert pod["fixes"][0]["action"].startswith("render ${INTENT} in the pod's nodeSelector (intent): it is an "
                                                "unrendered template placeholder, not a value")
    assert pod["fixes"][0]["action"].endswith('NodePool "default" allows intent=apps')
    assert (pod["fixes"][0]["field"], pod["fixes"][0]["line"]) == ("spec.template.spec.nodeSelector.intent", 27)


def test_a_helm_placeholder_the_pool_lacks_is_never_proposed_as_its_label() -> None:
    """`{{ .Values.team }}` on a key no pool has: adding the label `team: {{ .Values.team }}` to the pool would
    make the placeholder a value; no fix may write it."""
    pool = (REAL / "blueprint-stateful-placeholder-zone.yaml").read_text().split("---")[-1]
    web = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      nodeSelector: {team: "{{ .Values.team }}"}
      containers: [{name: c, image: nginx, resources: {requests: {cpu: "1"}}}]
"""
    result = CliRunner().invoke(app, ["plan", "-", "--time-limit", "2", "-o", "json"], input=pool + "---" + web)
    assert result.exit_code == 1, result.stderr
    pod = json.loads(result.stdout)["unschedulable"][0]
    assert pod["reasons"][0].startswith("{{ .Values.team }} is an unrendered template placeholder")
    assert not any(fix["object"].startswith("NodePool/") for fix in pod["fixes"]), pod["fixes"]


def test_reasons_without_a_placeholder_say_none() -> None:
    code, out, _ = invoke("plan", str(REAL / "eksctl-spot-nodegroup.yaml"), "--time-limit", "2", "-o", "json")
    assert code == 1
    assert not any("placeholder" in r for pod in json.loads(out)["unschedulable"] for r in pod["reasons"])


# https://github.com/linkerd/linkerd2/blob/main/charts/partials/templates/_affinity.tpl: the chart's own spreads are
# ScheduleAnyway
def test_a_preferred_spread_on_the_deprecated_zone_alias_is_said_not_honoured() -> None:
    """All 3 replicas landed in one zone and the plan said nothing: Karpenter finds no domain for the alias
    (kubernetes-sigs/karpenter#3307) and relaxes the preference at once."""
    text = (REAL / "linkerd-beta-zone-spread.yaml").read_text().replace("DoNotSchedule", "ScheduleAnyway")
    result = CliRunner().invoke(app, ["plan", "-", "--time-limit", "2", "-o", "json"], input=text)
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    (said,) = [w for w in document["warnings"] if "failure-domain.beta.kubernetes.io/zone" in w]
    assert said == ("<stdin>:18: Deployment/linkerd-destination: preferred spread (ScheduleAnyway on "
                    "failure-domain.beta.kubernetes.io/zone) is not honoured: topologyKey "
                    "'failure-domain.beta.kubernetes.io/zone' is a deprecated alias of topology.kubernetes.io/zone: "
                    "Karpenter finds no domain for it, so it is relaxed and the 3 pod(s) are placed as if it were not "
                    "written (all may share one zone); use topology.kubernetes.io/zone")
    fixed = text.replace("failure-domain.beta.kubernetes.io/zone", "topology.kubernetes.io/zone")
    result = CliRunner().invoke(app, ["plan", "-", "--time-limit", "2", "-o", "json"], input=fixed)
    assert not any("is relaxed" in w for w in json.loads(result.stdout)["warnings"])


def test_a_preferred_spread_on_a_key_no_node_carries_is_said_not_honoured() -> None:
    text = (REAL / "linkerd-beta-zone-spread.yaml").read_text().replace("DoNotSchedule", "ScheduleAnyway").replace(
        "failure-domain.beta.kubernetes.io/zone", "example.com/rack")
    result = CliRunner().invoke(app, ["plan", "-", "--time-limit", "2", "-o", "json"], input=text)
    (said,) = [w for w in json.loads(result.stdout)["warnings"] if "example.com/rack" in w]
    assert ("topologyKey 'example.com/rack' is a label no NodePool, Fargate profile or existing node provides" in said
            and "the 3 pod(s) are placed as if it were not written" in said)


# https://github.com/prometheus-operator/kube-prometheus/blob/main/manifests/prometheus-prometheus.yaml,
# alertmanager-alertmanager.yaml; prometheus-operator example/shards and example/storage
def test_prometheus_operator_resources_are_planned_as_the_statefulsets_the_operator_creates() -> None:
    """A Prometheus and an Alertmanager were skipped as "kind not read": their 5 pods were never planned. The
    operator makes `prometheus-<name>` (one StatefulSet per shard) and `alertmanager-<name>`, each pod with a
    config-reloader sidecar at 10m CPU / 50Mi, and an Alertmanager without a memory request gets 200Mi."""
    code, out, err = invoke("inventory", str(REAL / "kube-prometheus-operator-resources.yaml"), "-o", "json")
    assert code == 0, err
    inventory = json.loads(out)
    pending = {g["workload"]: g for g in inventory["pending"]}
    assert {w: g["replicas"] for w, g in pending.items()} == {
        "StatefulSet/prometheus-k8s": 2, "StatefulSet/alertmanager-main": 3, "StatefulSet/prometheus-prometheus": 2,
        "StatefulSet/prometheus-prometheus-shard-1": 2, "StatefulSet/prometheus-persisted": 1}
    k8s = pending["StatefulSet/prometheus-k8s"]["template"]
    assert k8s["requests"] == {"cpu": "10m", "memory": "450Mi", "pods": "1"}  # 400Mi + the reloader's 50Mi
    assert k8s["labels"]["prometheus"] == "k8s" and k8s["labels"]["operator.prometheus.io/shard"] == "0"
    assert k8s["nodeAffinity"]["nodeSelector"] == ["kubernetes.io/os In [linux]"]
    shard = pending["StatefulSet/prometheus-prometheus-shard-1"]["template"]["labels"]
    assert shard["operator.prometheus.io/shard"] == "1"
    assert pending["StatefulSet/alertmanager-main"]["template"]["requests"]["memory"] == "150Mi"  # 100Mi + 50Mi
    assert inventory["skipped"] == []
    assert [d["statefulSets"] for d in inventory["derived"]] == [
        ["prometheus-k8s"], ["alertmanager-main"], ["prometheus-prometheus", "prometheus-prometheus-shard-1"],
        ["prometheus-persisted"]]
    code, out, err = invoke("inventory", str(REAL / "kube-prometheus-operator-resources.yaml"))
    assert code == 0, err
    flat = " ".join(out.split())
    assert ("kube-prometheus-operator-resources.yaml:4: Prometheus monitoring/k8s: planned as StatefulSet "
            "prometheus-k8s, as prometheus-operator creates them: 2 pod(s) of containers prometheus, "
            "config-reloader") in flat


def test_an_alertmanager_without_requests_gets_the_operators_200mi_and_its_spread_its_labels() -> None:
    text = (REAL / "kube-prometheus-operator-resources.yaml").read_text().split("---")[1]
    text = text.replace("""  resources:
    limits:
      cpu: 100m
      memory: 100Mi
    requests:
      cpu: 4m
      memory: 100Mi
""", """  topologySpreadConstraints:
  - maxSkew: 1
    topologyKey: topology.kubernetes.io/zone
    whenUnsatisfiable: DoNotSchedule
    labelSelector: {matchLabels: {alertmanager: main}}
""")
    result = CliRunner().invoke(app, ["inventory", "-", "-o", "json"], input=text)
    assert result.exit_code == 0, result.stderr
    (group,) = json.loads(result.stdout)["pending"]
    assert group["template"]["requests"] == {"cpu": "10m", "memory": "250Mi", "pods": "1"}
    assert "topology.kubernetes.io/zone" in str(group["template"]["topologySpreadConstraints"])


def test_a_cluster_dumps_statefulset_stands_for_its_prometheus() -> None:
    """`kubectl get prometheus,statefulset -A -o yaml`: the operator's StatefulSet is in the input, and is planned
    once, not again as derived from the Prometheus."""
    text = (REAL / "kube-prometheus-operator-resources.yaml").read_text().split("---")[2]  # example/shards
    statefulset = """
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: prometheus-prometheus, namespace: default}
spec:
  replicas: 2
  selector: {matchLabels: {prometheus: prometheus}}
  template:
    metadata: {labels: {prometheus: prometheus}}
    spec:
      containers: [{name: prometheus, image: prometheus, resources: {requests: {cpu: 100m}}}]
"""
    result = CliRunner().invoke(app, ["inventory", "-", "-o", "json"], input=text + statefulset)
    assert result.exit_code == 0, result.stderr
    inventory = json.loads(result.stdout)
    assert [g["workload"] for g in inventory["pending"]] == ["StatefulSet/prometheus-prometheus"]
    assert inventory["derived"][0]["reason"] == "its StatefulSet is in the input"


# https://github.com/aws-samples/karpenter-blueprints/tree/main/blueprints/node-overlay: the blueprint's two
# approaches (node-overlay-generation.yaml for every pool, node-overlay-targeted.yaml for team-alpha) applied together
def test_same_weight_overlays_on_one_pools_offerings_conflict_as_in_karpenter() -> None:
    """Karpenter evaluates overlays per NodePool: penalize-gen5 and team-alpha-prefer-latest-gen (both weight 10)
    price team-alpha's generation-5 offerings, so the one earlier in the alphabet is rejected whole (Conflict);
    penalize-gen6 and -gen7 touch no offering another weight-10 overlay prices, and apply to every pool."""
    code, out, err = invoke("plan", str(REAL / "node-overlay-generation.yaml"), str(REAL / "node-overlay-targeted.yaml"),
                            "--time-limit", "5", "--zones", "us-east-1a", "-o", "json")
    assert code == 0, err
    warnings = json.loads(out)["warnings"]
    conflicts = [w for w in warnings if "conflicts with" in w]
    assert len(conflicts) == 1, warnings
    assert ("node-overlay-generation.yaml:14: NodeOverlay penalize-gen5 (weight 10) conflicts with NodeOverlay "
            "team-alpha-prefer-latest-gen, of the same weight") in conflicts[0]
    assert any("NodeOverlay penalize-gen6 (weight 10) matches" in w and "of NodePool(s) team-alpha:" in w
               for w in warnings), warnings


@pytest.mark.parametrize("spec", ["{podMetadata: {labels: x}}", "x", "{containers: x, initContainers: [1]}",
                                  "{storage: {volumeClaimTemplate: {spec: x}}}", "{nodeSelector: {a: 1}}"])
def test_a_misshapen_prometheus_never_shows_a_traceback(spec: str) -> None:
    text = f"apiVersion: monitoring.coreos.com/v1\nkind: Prometheus\nmetadata: {{name: p}}\nspec: {spec}\n"
    result = CliRunner().invoke(app, ["inventory", "-"], input=text)
    assert result.exit_code in (0, 2) and result.exception is None or isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.stderr + result.stdout
    if result.exit_code == 2:
        assert result.stderr.startswith("<stdin>:") and result.stdout == ""


# https://github.com/aws/karpenter-provider-aws/tree/main/charts/karpenter rendered with its default values
def test_karpenters_own_controller_is_said_to_keep_off_karpenters_nodes_by_design() -> None:
    """The chart keeps its controller off the nodes Karpenter launches (`karpenter.sh/nodepool DoesNotExist`).
    The plan offered "remove karpenter.sh/nodepool from the pod's required node affinity" (the controller would
    then run on nodes it may consolidate away) and lint called the chart an error; what is missing is the node
    group it runs on."""
    code, out, err = invoke("plan", str(REAL / "karpenter-chart-controller.yaml"), "--time-limit", "3", "-o", "json")
    assert code == 1, err
    for pod in json.loads(out)["unschedulable"]:
        assert pod["reasons"][0].startswith("the pod keeps off the nodes Karpenter launches (its required node "
                                            "affinity says karpenter.sh/nodepool DoesNotExist")
        assert "none of them in the input" in pod["reasons"][0]
        assert not any("karpenter.sh/nodepool" in fix["action"] for fix in pod["fixes"]), pod["fixes"]
    code, out, err = invoke("lint", str(REAL / "karpenter-chart-controller.yaml"), "-o", "json")
    findings = [f for f in json.loads(out)["findings"] if f["rule"] == "no-pool-can-launch"]
    assert [f["severity"] for f in findings] == ["info"], findings
    assert findings[0]["message"].startswith("these 2 pod(s) keep off the nodes Karpenter launches")
    assert findings[0]["line"] == 80  # the affinity.nodeAffinity the chart writes


def test_karpenters_controller_runs_on_the_node_group_of_the_eksctl_cluster() -> None:
    """With the eksctl ClusterConfig that installs Karpenter (one managed node group of one node), one controller
    replica runs there; the other is kept off that node by the chart's hostname anti-affinity, and no NodePool
    may take it: said as such, not as a NodePool to fix."""
    code, out, err = invoke("plan", str(REAL / "karpenter-chart-controller.yaml"),
                            str(REAL / "eksctl-cluster-with-karpenter.yaml"), "--time-limit", "3", "-o", "json")
    assert code == 1, err
    plan = json.loads(out)
    placed = [p for n in plan["nodes"] for p in n["pods"]]
    assert len(placed) == 1, plan["nodes"]
    (pod,) = plan["unschedulable"]
    assert pod["reasons"][0].endswith("only the input's nodes, node groups or Fargate profiles may take it, and the "
                                      "next reasons say why they do not")
    code, out, err = invoke("lint", str(REAL / "karpenter-chart-controller.yaml"),
                            str(REAL / "eksctl-cluster-with-karpenter.yaml"), "-o", "json")
    assert not any(f["rule"] == "no-pool-can-launch" for f in json.loads(out)["findings"])


# https://github.com/kubernetes/autoscaler/blob/master/cluster-autoscaler/cloudprovider/aws/examples/
# cluster-autoscaler-run-on-control-plane.yaml
def test_a_pod_for_control_plane_nodes_is_said_to_have_none_on_eks() -> None:
    """The example pins cluster-autoscaler to control-plane nodes (`kubernetes.io/role: control-plane`). The fix
    search offered to give the NodePool that label; on EKS no node is the control plane: say so, and the fix is
    dropping the selection."""
    code, out, err = invoke("plan", str(REAL / "cluster-autoscaler-run-on-control-plane.yaml"), "--time-limit", "3",
                            "-o", "json")
    assert code == 1, err
    (pod,) = json.loads(out)["unschedulable"]
    assert pod["reasons"][0].startswith("the pod selects control-plane nodes (kubernetes.io/role In [control-plane]): "
                                        "EKS runs the control plane itself")
    assert not any(fix["object"].startswith("NodePool/") for fix in pod["fixes"]), pod["fixes"]
    assert [fix["action"] for fix in pod["fixes"]] == [
        "remove kubernetes.io/role from the pod's nodeSelector (it asks for kubernetes.io/role In [control-plane])"]


# https://github.com/aws-ia/terraform-aws-eks-blueprints/blob/main/patterns/multi-node-vllm/lws.yaml
def test_a_leader_worker_set_is_planned_as_its_leader_and_workers() -> None:
    """The vLLM pattern's LeaderWorkerSet (one group of 4 GPU pods) was skipped as "kind not read"."""
    code, out, err = invoke("inventory", str(REAL / "lws-multi-node-vllm.yaml"), "-o", "json")
    assert code == 0, err
    inventory = json.loads(out)
    pending = {g["workload"]: g for g in inventory["pending"]}
    assert {w: g["replicas"] for w, g in pending.items()} == {"StatefulSet/vllm": 1, "StatefulSet/vllm-workers": 3}
    leader = pending["StatefulSet/vllm"]["template"]
    assert leader["labels"]["role"] == "leader" and leader["labels"]["leaderworkerset.sigs.k8s.io/name"] == "vllm"
    assert leader["requests"]["nvidia.com/gpu"] == "1"
    assert inventory["derived"][0]["plain"] == (
        "LeaderWorkerSet default/vllm: planned as the pods the LeaderWorkerSet controller creates: 1 group(s) of 4 "
        "pod(s), a leader (leaderTemplate) and 3 worker(s) (workerTemplate) each")
    assert [s["kind"] for s in inventory["skipped"]] == ["Service"]


def test_a_leader_worker_sets_exclusive_topology_keeps_each_group_in_its_own_domain() -> None:
    text = (REAL / "lws-multi-node-vllm.yaml").read_text().replace(
        "  name: vllm\nspec:\n  replicas: 1\n",
        "  name: vllm\n  annotations: {leaderworkerset.sigs.k8s.io/exclusive-topology: topology.kubernetes.io/zone}\n"
        "spec:\n  replicas: 2\n")
    result = CliRunner().invoke(app, ["inventory", "-", "-o", "json"], input=text)
    assert result.exit_code == 0, result.stderr
    pending = {g["workload"]: g for g in json.loads(result.stdout)["pending"]}
    assert {w: g["replicas"] for w, g in pending.items()} == {
        "StatefulSet/vllm-0-leader": 1, "StatefulSet/vllm-0": 3, "StatefulSet/vllm-1-leader": 1, "StatefulSet/vllm-1": 3}
    template = json.dumps(pending["StatefulSet/vllm-1"]["template"])
    assert "topology.kubernetes.io/zone" in template and "NotIn" in template


# https://github.com/prometheus-operator/prometheus-operator/blob/main/example/rbac/prometheus-agent/prometheus.yaml
def test_a_prometheus_agent_is_planned_as_the_operators_statefulset_or_daemonset() -> None:
    code, out, err = invoke("inventory", str(REAL / "prometheus-agent.yaml"), "-o", "json")
    assert code == 0, err
    (group,) = json.loads(out)["pending"]
    assert (group["workload"], group["replicas"]) == ("StatefulSet/prom-agent-prometheus-agent", 2)
    assert group["template"]["labels"]["app.kubernetes.io/name"] == "prometheus-agent"
    daemon = (REAL / "prometheus-agent.yaml").read_text().replace("spec:\n", "spec:\n  mode: DaemonSet\n", 1)
    result = CliRunner().invoke(app, ["inventory", "-", "-o", "json"], input=daemon)
    assert result.exit_code == 0, result.stderr
    inventory = json.loads(result.stdout)
    assert inventory["pending"] == [] and [d["name"] for d in inventory["daemonSets"]] == ["prom-agent-prometheus-agent"]


def test_a_prometheus_whose_pods_are_in_a_cluster_dump_is_said_not_derived() -> None:
    """`kubectl get prometheus,pods -A -o yaml`: the operator's pods stand for the Prometheus; the inventory said it
    was planned as a StatefulSet that was in fact skipped."""
    text = (REAL / "kube-prometheus-operator-resources.yaml").read_text().split("---")[0] + """---
apiVersion: v1
kind: Pod
metadata:
  name: prometheus-k8s-0
  namespace: monitoring
  ownerReferences: [{apiVersion: apps/v1, kind: StatefulSet, name: prometheus-k8s, controller: true, uid: x}]
spec:
  nodeName: ip-10-0-0-1
  containers: [{name: prometheus, image: p, resources: {requests: {memory: 400Mi}}}]
"""
    result = CliRunner().invoke(app, ["inventory", "-", "-o", "json"], input=text)
    assert result.exit_code == 0, result.stderr
    inventory = json.loads(result.stdout)
    assert inventory["pending"] == []
    assert inventory["derived"][0]["plain"] == ("Prometheus monitoring/k8s: not derived, its pods are in the input "
                                                "(StatefulSet prometheus-k8s)")


# https://github.com/kubernetes-sigs/aws-load-balancer-controller/tree/main/helm/aws-load-balancer-controller
def test_host_network_replicas_take_a_node_each_on_the_cheap_pool() -> None:
    """With hostNetwork every containerPort is a host port, so no two replicas share a node. Rendered with
    configureDefaultAffinity=false (no anti-affinity) and 3 replicas, the optimiser did not know it: its counts
    put the replicas on one node, the decoder could not, and the plan fell back to Karpenter's, which takes the
    GPU pool (the later name goes first at equal weight): three g6.xlarge at $2.41/h instead of three small
    nodes of the default pool, "feasible" with a 97% gap."""
    text = (REAL / "aws-load-balancer-controller-host-network.yaml").read_text()
    start, end = text.index("      affinity:\n"), text.index("      priorityClassName")
    manifest = text[:start] + text[end:]
    result = CliRunner().invoke(app, ["plan", "-", "--replicas", "kube-system/aws-load-balancer-controller=3",
                                      "--time-limit", "10", "-o", "json"], input=manifest)
    assert result.exit_code == 0, result.stderr
    plan = json.loads(result.stdout)
    assert plan["summary"]["karpenter"]["hourlyCost"] > 2  # Karpenter's own plan: the GPU pool
    assert [n["nodePool"] for n in plan["nodes"]] == ["default"] * 3
    assert sorted(len(n["pods"]) for n in plan["nodes"]) == [1, 1, 1]
    assert plan["summary"]["hourlyCost"] < 0.5
    assert plan["summary"]["status"] == "optimal"


def test_host_network_chart_defaults_plan_two_nodes() -> None:
    code, out, err = invoke("plan", str(REAL / "aws-load-balancer-controller-host-network.yaml"), "--time-limit", "5",
                            "-o", "json")
    assert code == 0, err
    plan = json.loads(out)
    assert sorted(len(n["pods"]) for n in plan["nodes"]) == [1, 1]
    assert {n["nodePool"] for n in plan["nodes"]} == {"default"}


# https://github.com/ray-project/kuberay/blob/master/ray-operator/config/samples/ray-service.llm-serve.yaml
def test_a_ray_service_is_planned_as_its_head_and_gpu_workers() -> None:
    """A RayService was skipped ("1 RayService"): its GPU workers were never planned. KubeRay makes a head pod and
    the worker group's pods; the workers ask 4 nvidia.com/gpu and write no toleration, and EKS's
    ExtendedResourceToleration admission plugin tolerates the GPU pool's nvidia.com/gpu taint for them."""
    code, out, err = invoke("plan", str(REAL / "kuberay-llm-serve-gpu.yaml"), "--time-limit", "5", "-o", "json")
    assert code == 0, err
    plan = json.loads(out)
    pools = {p: n["nodePool"] for n in plan["nodes"] for p in n["pods"]}
    assert pools == {"default/ray-serve-llm-head-0": "default",
                     "default/ray-serve-llm-gpu-group-worker-0": "gpu-slices"}
    worker = next(p for p in plan["pods"] if p["name"] == "ray-serve-llm-gpu-group-worker-0")
    assert worker["requests"]["nvidia.com/gpu"] == "4"
    assert worker["requests"]["cpu"] == "32"  # the wait-gcs-ready init container (200m) is below the worker's
    code, out, err = invoke("inventory", str(REAL / "kuberay-llm-serve-gpu.yaml"))
    assert "RayService default/ray-serve-llm: planned as the pods the KubeRay operator creates" in " ".join(out.split())
    code, out, err = invoke("lint", str(REAL / "kuberay-llm-serve-gpu.yaml"), "-o", "json")
    assert code == 0 and json.loads(out)["findings"] == [], out


def test_a_ray_worker_groups_invalid_spread_points_at_its_template() -> None:
    text = (REAL / "kuberay-llm-serve-gpu.yaml").read_text().replace(
        "          containers:\n          - name: ray-worker\n",
        "          topologySpreadConstraints:\n          - {maxSkew: 0, topologyKey: kubernetes.io/hostname,"
        " whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {ray.io/group: gpu-group}}}\n"
        "          containers:\n          - name: ray-worker\n")
    result = CliRunner().invoke(app, ["lint", "-", "-o", "json"], input=text)
    (finding,) = [f for f in json.loads(result.stdout)["findings"] if f["rule"] == "spread-invalid"]
    assert finding["object"] == "RayService/default/ray-serve-llm"
    assert finding["field"] == ("spec.rayClusterConfig.workerGroupSpecs[0].template.spec.topologySpreadConstraints[0]"
                                ".maxSkew")
    assert text.splitlines()[finding["line"] - 1].lstrip().startswith("- {maxSkew: 0")


# https://github.com/eksctl-io/eksctl/blob/main/examples/42-auto-mode.yaml
AUTO_MODE_WORKLOADS = """
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: inflate}
spec:
  replicas: 3
  selector: {matchLabels: {app: inflate}}
  template:
    metadata: {labels: {app: inflate}}
    spec:
      containers: [{name: inflate, image: public.ecr.aws/eks-distro/kubernetes/pause:3.7, resources: {requests: {cpu: "1"}}}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: coredns-like, namespace: kube-system}
spec:
  replicas: 1
  selector: {matchLabels: {app: critical}}
  template:
    metadata: {labels: {app: critical}}
    spec:
      nodeSelector: {kubernetes.io/arch: arm64}
      tolerations: [{key: CriticalAddonsOnly, operator: Exists}]
      containers: [{name: c, image: coredns, resources: {requests: {cpu: 100m, memory: 70Mi}}}]
"""


def test_an_auto_mode_cluster_config_plans_on_eks_built_in_node_pools() -> None:
    """`autoModeConfig.enabled: true` gives the cluster EKS's built-in NodePools; every pod was "unschedulable: no
    nodepools found". general-purpose takes the plain Deployment (on-demand, C/M/R gen 5+, amd64); only system
    (amd64 and arm64, tainted CriticalAddonsOnly) takes an arm64 pod that tolerates the taint."""
    manifests = (REAL / "eksctl-auto-mode.yaml").read_text() + AUTO_MODE_WORKLOADS
    result = CliRunner().invoke(app, ["plan", "-", "--time-limit", "5", "--zones", "us-west-2a", "-o", "json"],
                                input=manifests)
    assert result.exit_code == 0, result.stderr
    plan = json.loads(result.stdout)
    pools = {p: n["nodePool"] for n in plan["nodes"] for p in n["pods"]}
    assert pools == {**{f"default/inflate-{i}": "general-purpose" for i in range(3)},
                     "kube-system/coredns-like-0": "system"}
    types = {n["nodePool"]: n["instanceType"] for n in plan["nodes"]}
    assert types["general-purpose"][0] in "cmr" and types["system"].split(".")[0].endswith("g")  # Graviton
    assert all(n["capacityType"] == "on-demand" for n in plan["nodes"])
    assert any("<stdin>:10: ClusterConfig auto-mode-cluster: EKS Auto Mode's built-in NodePools general-purpose and "
               "system planned as EKS defines them" in w for w in plan["warnings"])
    # `nodePools: []` turns them off; a NodePool of the same name in the input is the one planned.
    off = CliRunner().invoke(app, ["plan", "-", "--time-limit", "5", "-o", "json"],
                             input=manifests.replace("nodePools: [general-purpose, system]", "nodePools: []"))
    assert off.exit_code == 1 and "no nodepools found" in off.stdout
    own = manifests + """
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: general-purpose}
spec:
  template:
    spec:
      nodeClassRef: {group: eks.amazonaws.com, kind: NodeClass, name: default}
      requirements: [{key: eks.amazonaws.com/instance-family, operator: In, values: [m7i]}]
"""
    result = CliRunner().invoke(app, ["plan", "-", "--time-limit", "5", "--zones", "us-west-2a", "-o", "json"], input=own)
    plan = json.loads(result.stdout)
    assert {n["instanceType"].split(".")[0] for n in plan["nodes"] if n["nodePool"] == "general-purpose"} == {"m7i"}
    assert any("built-in NodePool system planned" in w for w in plan["warnings"])
