"""`karpplan consolidate` against Karpenter v1.14's own disruption tests (kubernetes-sigs/karpenter
pkg/controllers/disruption/*_test.go), each translated to a small snapshot: what a user would see is which
nodes go, by which method, and why the others stay, in Karpenter's wording."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from karpplan.catalog import load_catalog
from karpplan.consolidate.report import Report
from karpplan.consolidate.run import ConsolidateOptions, consolidate

ZONES = ("us-east-1a", "us-east-1b", "us-east-1c")


@cache
def _allocatable(itype: str) -> dict[str, str]:
    return load_catalog("us-east-1", None).by_name()[itype].allocatable.formatted()


def node(name: str, itype: str = "m5.large", zone: str = "us-east-1a", pool: str = "default",
         capacity: str = "on-demand", annotations: dict[str, str] | None = None) -> dict[str, Any]:
    labels = {"karpenter.sh/nodepool": pool, "karpenter.sh/capacity-type": capacity,
              "node.kubernetes.io/instance-type": itype, "topology.kubernetes.io/zone": zone,
              "kubernetes.io/hostname": name, "kubernetes.io/arch": "amd64", "kubernetes.io/os": "linux",
              "karpenter.sh/initialized": "true", "karpenter.k8s.aws/instance-family": itype.split(".")[0]}
    alloc = _allocatable(itype)
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": labels, "annotations": annotations or {}},
            "status": {"allocatable": alloc, "capacity": alloc}}


def pod(name: str, on: str | None, cpu: str = "500m", memory: str = "512Mi", owner: str | None = "ReplicaSet/web",
        labels: dict[str, str] | None = None, annotations: dict[str, str] | None = None,
        spec: dict[str, Any] | None = None, namespace: str = "default") -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, "namespace": namespace, "labels": labels or {"app": "web"},
                                "annotations": annotations or {}}
    if owner is not None:
        kind, owner_name = owner.split("/")
        api = "v1" if kind == "Node" else "apps/v1"
        metadata["ownerReferences"] = [{"apiVersion": api, "kind": kind, "name": owner_name, "uid": "u",
                                        "controller": True}]
    body: dict[str, Any] = {"containers": [{"name": "c", "image": "x",
                                            "resources": {"requests": {"cpu": cpu, "memory": memory}}}]}
    if on is not None:
        body["nodeName"] = on
    body.update(spec or {})
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": body,
            "status": {"phase": "Running" if on else "Pending"}}


def nodepool(name: str = "default", families: tuple[str, ...] = ("m5",), capacity: tuple[str, ...] = ("on-demand",),
             policy: str = "WhenEmptyOrUnderutilized", after: str = "0s",
             budgets: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    disruption: dict[str, Any] = {"consolidationPolicy": policy, "consolidateAfter": after}
    if budgets is not None:
        disruption["budgets"] = budgets
    return {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": name},
            "spec": {"disruption": disruption, "template": {"spec": {
                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                "requirements": [
                    {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": list(families)},
                    {"key": "karpenter.sh/capacity-type", "operator": "In", "values": list(capacity)},
                    {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}]}}}}


NODECLASS = {"apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass", "metadata": {"name": "default"},
             "spec": {"role": "r", "amiSelectorTerms": [{"alias": "al2023@latest"}],
                      "subnetSelectorTerms": [{"tags": {"k": "v"}}],
                      "securityGroupSelectorTerms": [{"tags": {"k": "v"}}]}}


def pdb(name: str, app: str, allowed: int, namespace: str = "default") -> dict[str, Any]:
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"maxUnavailable": allowed, "selector": {"matchLabels": {"app": app}}},
            "status": {"disruptionsAllowed": allowed}}


def write(tmp_path: Path, *docs: dict[str, Any], pools: tuple[dict[str, Any], ...] | None = None) -> Path:
    path = tmp_path / "snapshot.yaml"
    listed = {"apiVersion": "v1", "kind": "List", "items": list(docs)}
    path.write_text(yaml.safe_dump_all([listed, *(pools or (nodepool(),)), NODECLASS], sort_keys=True))
    return path


def run(path: Path, **kw: Any) -> Report:
    return consolidate(ConsolidateOptions(paths=(str(path),), region="us-east-1", time_limit=2.0, **kw))


def removed(report: Report) -> dict[str, tuple[str, str]]:
    return {n.name: (a.method, a.decision) for a in report.actions for n in a.nodes}


def reason(report: Report, name: str) -> str:
    return next(v.reason for v in report.nodes if v.node.name == name)


# ---------------------------------------------------------------------------------------------- budgets
def test_a_zero_budget_blocks_every_disruption(tmp_path: Path) -> None:
    # emptiness_test.go It("should not allow any empty nodes to be deleted when the budget is 0")
    path = write(tmp_path, node("a"), node("b", zone="us-east-1b"),
                 pools=(nodepool(budgets=[{"nodes": "0"}]),))
    report = run(path)
    assert report.actions == []
    assert "blocking budget" in reason(report, "a") and "Empty" in reason(report, "a")


def test_a_count_budget_caps_each_emptiness_command(tmp_path: Path) -> None:
    # emptiness_test.go It("should only allow 3 empty nodes to be disrupted") with nodes: "2"
    path = write(tmp_path, *(node(f"n{i}", zone=ZONES[i % 3]) for i in range(5)),
                 pools=(nodepool(budgets=[{"nodes": "2"}]),))
    report = run(path)
    assert [len(a.nodes) for a in report.actions] == [2, 2, 1]
    assert all(a.method == "emptiness" and a.decision == "delete" for a in report.actions)


def test_a_budget_for_underutilized_only_leaves_emptiness_free(tmp_path: Path) -> None:
    # consolidation_test.go Describe("Budgets") reasons: [Underutilized] with nodes "0"
    path = write(tmp_path, node("empty"), node("busy-a"), node("busy-b", zone="us-east-1b"),
                 pod("w1", "busy-a", cpu="300m"), pod("w2", "busy-b", cpu="300m"),
                 pools=(nodepool(budgets=[{"nodes": "0", "reasons": ["Underutilized"]}]),))
    report = run(path)
    assert removed(report) == {"empty": ("emptiness", "delete")}
    assert "Underutilized due to blocking budget" in reason(report, "busy-a")


def test_a_scheduled_budget_is_read_and_assumed_active(tmp_path: Path) -> None:
    path = write(tmp_path, node("a"), pools=(nodepool(budgets=[{"nodes": "0", "schedule": "0 9 * * mon-fri",
                                                               "duration": "8h"}]),))
    report = run(path)
    assert report.actions == []
    assert any("assumed active now" in w for w in report.warnings)


# ---------------------------------------------------------------------------------------------- policies
def test_when_empty_deletes_empty_nodes_only(tmp_path: Path) -> None:
    # emptiness_test.go It("can delete empty nodes with consolidation policy WhenEmpty")
    path = write(tmp_path, node("empty"), node("busy", itype="m5.2xlarge"), pod("w", "busy"),
                 pools=(nodepool(policy="WhenEmpty"),))
    report = run(path)
    assert removed(report) == {"empty": ("emptiness", "delete")}
    assert reason(report, "busy") == 'NodePool "default" has consolidation policy WhenEmpty, but node is not empty'


def test_consolidate_after_never_disables_even_emptiness(tmp_path: Path) -> None:
    # emptiness_test.go It("should not consider candidates that have consolidation disabled")
    path = write(tmp_path, node("empty"), pools=(nodepool(after="Never"),))
    report = run(path)
    assert report.actions == []
    assert reason(report, "empty") == 'NodePool "default" has consolidation disabled'


def test_balanced_rejects_a_replacement_that_saves_too_little_for_its_disruption(tmp_path: Path) -> None:
    # balanced.go: score = (savings / pool cost) / (disruption / pool disruption) must reach 1/2.
    busy = [pod(f"w{i}", "big", cpu="150m", memory="128Mi") for i in range(10)]
    guards = [pod("g1", "b", cpu="1700m", annotations={"karpenter.sh/do-not-disrupt": "true"}),
              pod("g2", "c", cpu="1700m", annotations={"karpenter.sh/do-not-disrupt": "true"})]
    docs = (node("big", itype="m5.xlarge"), node("b", zone="us-east-1b"), node("c", zone="us-east-1c"),
            *busy, *guards)
    eager = run(write(tmp_path, *docs))
    assert removed(eager) == {"big": ("single", "replace")}
    balanced = run(write(tmp_path, *docs, pools=(nodepool(policy="Balanced"),)))
    assert balanced.actions == []
    assert "Balanced" in reason(balanced, "big") and "threshold 0.50" in reason(balanced, "big")


# ---------------------------------------------------------------------------------------------- pods that need no home
def test_a_node_running_only_daemonset_pods_is_empty(tmp_path: Path) -> None:
    # emptiness_test.go: DaemonSet pods are not reschedulable (utils/pod IsReschedulable)
    path = write(tmp_path, node("ds-only"), node("busy", zone="us-east-1b"),
                 pod("agent-1", "ds-only", owner="DaemonSet/agent", labels={"app": "agent"}),
                 pod("agent-2", "busy", owner="DaemonSet/agent", labels={"app": "agent"}),
                 pod("w", "busy", cpu="1500m"))
    report = run(path)
    assert removed(report) == {"ds-only": ("emptiness", "delete")}


def test_a_node_running_only_a_mirror_pod_is_empty(tmp_path: Path) -> None:
    path = write(tmp_path, node("static"), node("busy", zone="us-east-1b"), pod("w", "busy", cpu="1500m"),
                 pod("kube-proxy-static", "static", owner="Node/static", labels={"app": "proxy"},
                     annotations={"kubernetes.io/config.mirror": "abc"}))
    report = run(path)
    assert removed(report) == {"static": ("emptiness", "delete")}


def test_a_do_not_disrupt_daemonset_pod_blocks_its_node(tmp_path: Path) -> None:
    # statenode.go: do-not-disrupt counts for every active pod, DaemonSet pods included
    path = write(tmp_path, node("a"), pod("agent", "a", owner="DaemonSet/agent", labels={"app": "agent"},
                                          annotations={"karpenter.sh/do-not-disrupt": "true"}))
    report = run(path)
    assert report.actions == []
    assert reason(report, "a") == 'Pod has "karpenter.sh/do-not-disrupt" annotation (Pod=default/agent)'


def test_a_do_not_disrupt_node_is_no_candidate(tmp_path: Path) -> None:
    path = write(tmp_path, node("a", annotations={"karpenter.sh/do-not-disrupt": "true"}))
    report = run(path)
    assert report.actions == []
    assert reason(report, "a") == 'Disruption is blocked through the "karpenter.sh/do-not-disrupt" annotation'


def test_a_pod_under_two_pdbs_cannot_be_evicted(tmp_path: Path) -> None:
    # utils/pdb: more than one matching PDB -> not evictable, whatever they allow
    path = write(tmp_path, node("a"), node("b", zone="us-east-1b"), pod("w", "a", cpu="200m"),
                 pod("x", "b", cpu="200m", labels={"app": "other"}), pdb("one", "web", 5), pdb("two", "web", 5))
    report = run(path)
    assert reason(report, "a") == ("Eviction does not support multiple PDBs "
                                   "(PodDisruptionBudget(s)=[default/one default/two])")
    assert removed(report) == {"b": ("single", "delete")}


def test_a_pod_pinned_to_its_node_cannot_move(tmp_path: Path) -> None:
    # consolidation_test.go: "Not all pods would schedule" when a pod fits nowhere else
    pinned = pod("pinned", "a", cpu="200m", spec={"nodeSelector": {"kubernetes.io/hostname": "a"}})
    path = write(tmp_path, node("a"), node("b", zone="us-east-1b"), pinned,
                 pod("x", "b", cpu="1800m", labels={"app": "other"}))
    report = run(path)
    assert reason(report, "a").startswith("Not all pods would schedule, default/pinned => ")
    assert "b" not in removed(report)


# ---------------------------------------------------------------------------------------------- multi-node and spot
def test_multi_node_consolidation_deletes_two_nodes_in_one_command(tmp_path: Path) -> None:
    # multinodeconsolidation: the longest prefix whose pods fit the rest (here the third node)
    docs = [node(f"n{i}", itype="m5.xlarge", zone=ZONES[i]) for i in range(3)]
    docs += [pod(f"w{i}", f"n{i}", cpu="1000m") for i in range(3)]
    report = run(write(tmp_path, *docs, pools=(nodepool(budgets=[{"nodes": "100%"}]),)))
    assert len(report.actions) == 1
    action = report.actions[0]
    assert (action.method, action.decision, len(action.nodes)) == ("multi", "delete", 2)


def test_spot_to_spot_needs_fifteen_cheaper_types(tmp_path: Path) -> None:
    # consolidation_test.go It("cannot replace spot with spot if less than minimum InstanceTypes flexibility")
    path = write(tmp_path, node("s", itype="m5.2xlarge", capacity="spot"), pod("w", "s", cpu="300m"),
                 pools=(nodepool(capacity=("spot",)),))
    report = run(path, spot_to_spot=True)
    assert report.actions == []
    assert reason(report, "s").startswith("SpotToSpotConsolidation requires 15 cheaper instance type options")


def test_spot_to_spot_replaces_with_the_cheapest_of_many_spot_types(tmp_path: Path) -> None:
    families = ("m5", "m5a", "m5d", "m6i", "m6a", "m7i", "c5", "c5a", "c5d", "c6i", "c6a", "c7i", "r5", "r5a",
                "r6i", "r6a", "t3", "t3a")
    pools = (nodepool(families=families, capacity=("spot",)),)
    docs = (node("s", itype="m5.4xlarge", capacity="spot"), pod("w", "s", cpu="300m"))
    off = run(write(tmp_path, *docs, pools=pools))
    assert off.actions == [] and "SpotToSpotConsolidation is disabled" in reason(off, "s")
    on = run(write(tmp_path, *docs, pools=pools), spot_to_spot=True)
    assert removed(on) == {"s": ("single", "replace")}
    replacement = on.actions[0].replacement
    assert replacement is not None and replacement.capacity_type == "spot"
    assert replacement.cost < 0.768 * 0.5


@pytest.mark.parametrize("allowed,kept", [(0, True), (1, False)])
def test_a_pdb_blocks_only_when_it_allows_no_eviction(tmp_path: Path, allowed: int, kept: bool) -> None:
    path = write(tmp_path, node("a"), node("b", zone="us-east-1b"), pod("w", "a", cpu="200m"),
                 pod("x", "b", cpu="1200m", labels={"app": "other"}), pdb("web", "web", allowed))
    report = run(path)
    assert ("a" not in removed(report)) is kept
    if kept:
        assert reason(report, "a") == "Pdb prevents pod evictions (PodDisruptionBudget=[default/web])"


def test_remembering_failures_reaches_the_same_steady_state_as_re_simulating_everything(tmp_path: Path) -> None:
    # loop.Memory skips simulations that cannot have changed; Karpenter re-simulates every pass.
    import random

    from karpplan.consolidate.loop import steady_state
    from karpplan.consolidate.run import read

    rng = random.Random(7)
    types = ("m5.large", "m5.xlarge", "m5.2xlarge", "c5.xlarge", "c5.2xlarge")
    docs: list[dict[str, Any]] = []
    for i in range(10):
        itype = rng.choice(types)
        docs.append(node(f"n{i}", itype=itype, zone=ZONES[i % 3]))
        cpu = int(load_catalog("us-east-1", None).by_name()[itype].allocatable.get("cpu"))
        used = 0
        for j in range(rng.randint(0, 5)):
            want = rng.choice((100, 250, 500, 1000))
            if used + want > cpu * rng.uniform(0.3, 0.9):
                break
            used += want
            app = rng.choice(("api", "web", "worker"))
            docs.append(pod(f"p{i}-{j}", f"n{i}", cpu=f"{want}m", memory="256Mi", labels={"app": app},
                            owner=f"ReplicaSet/{app}"))
    path = write(tmp_path, *docs, pools=(nodepool(families=("m5", "c5"), budgets=[{"nodes": "30%"}]),))
    options = ConsolidateOptions(paths=(str(path),), region="us-east-1")
    fast = steady_state(read(options)[1])
    slow = steady_state(read(options)[1], remember=False)
    assert fast.actions, "the snapshot should leave Karpenter something to do"
    assert [(a.method, [n.name for n in a.nodes]) for a in fast.actions] == \
        [(a.method, [n.name for n in a.nodes]) for a in slow.actions]
    assert fast.verdicts == slow.verdicts


def test_a_replacement_keeps_the_zone_a_zonal_spread_needs(tmp_path: Path) -> None:
    # consolidation_test.go It("can replace node maintaining zonal topology spread")
    spread = {"topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                                             "whenUnsatisfiable": "DoNotSchedule",
                                             "labelSelector": {"matchLabels": {"app": "web"}}}]}
    docs = (node("a", zone="us-east-1a"), node("b", itype="m5.2xlarge", zone="us-east-1b"),
            node("c", zone="us-east-1c"),
            *(pod(f"w{z}", n, cpu="1000m", spec=spread) for z, n in (("a", "a"), ("b", "b"), ("c", "c"))))
    report = run(write(tmp_path, *docs))
    assert removed(report) == {"b": ("single", "replace")}
    replacement = report.actions[0].replacement
    assert replacement is not None and replacement.zone == "us-east-1b"
    assert replacement.instance_type == "m5.large"


def test_an_optimal_repack_that_cannot_finish_in_time_quotes_the_steady_state_and_says_so(tmp_path: Path) -> None:
    from karpplan.consolidate.optimal import optimal_repack
    from karpplan.consolidate.run import read

    # two half-used m5.xlarge nodes: one m5.xlarge holds every pod
    path = write(tmp_path, node("a", "m5.xlarge"), node("b", "m5.xlarge"),
                 *(pod(f"w{i}", "a" if i < 2 else "b", cpu="900m") for i in range(4)))
    _, state = read(ConsolidateOptions(paths=(str(path),), region="us-east-1"))
    one_node = state.cost / 2
    finished = optimal_repack(state, state.cost, 2.0)
    assert finished.cost == pytest.approx(one_node) and finished.note is None
    stopped = optimal_repack(state, state.cost, 2.0, wall=0.0)
    assert stopped.cost == state.cost and stopped.status == "karpenter"
    assert stopped.lower_bound == 0.0  # every node may move: nothing is known to stay
    assert stopped.note is not None and "did not finish within 0s" in stopped.note


def test_the_optimal_repack_may_start_processes_of_its_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The plan inside the re-pack forks its background bound on a machine with two cores or more; a daemonic
    re-pack process may have no children, which turned `karpplan consolidate` into a traceback
    ('daemonic processes are not allowed to have children')."""
    import multiprocessing

    from karpplan.consolidate import optimal
    from karpplan.consolidate.run import read
    from karpplan.engines.background_bound import fork_available

    def plan_with_a_child(*_: object) -> tuple[float, float | None, str, int]:
        assert fork_available()  # the plan would start its background bound here
        child = multiprocessing.get_context("fork").Process(target=int)
        child.start()
        child.join()
        return 0.1, 0.1, "optimal", 0

    monkeypatch.setattr(optimal, "_plan", plan_with_a_child)
    path = write(tmp_path, node("a", "m5.xlarge"), node("b", "m5.xlarge"),
                 *(pod(f"w{i}", "a" if i < 2 else "b", cpu="900m") for i in range(4)))
    _, state = read(ConsolidateOptions(paths=(str(path),), region="us-east-1"))
    repack = optimal.optimal_repack(state, state.cost, 2.0)
    assert repack.cost == pytest.approx(0.1) and repack.status == "optimal"
