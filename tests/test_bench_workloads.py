"""The benchmark's workload generator produces what it claims (bench/workloads.py); no timing here."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench import workloads as w  # noqa: E402
from karpplan.catalog import load_catalog  # noqa: E402
from karpplan.inputs.loader import parse_documents  # noqa: E402
from karpplan.model.build import build_inventory  # noqa: E402
from karpplan.model.inventory import Inventory  # noqa: E402

MIB = 2**20
GIB = 2**30


def _inventory(inputs: w.BenchInputs) -> Inventory:
    return build_inventory(parse_documents(w.to_yaml(inputs.manifests), "bench.yaml"))


# ------------------------------------------------------------------------------------------ counts
@given(st.integers(min_value=0, max_value=20_000))
def test_each_class_gets_a_fifth_and_generic_the_remainder(total: int) -> None:
    counts = w.class_counts(total)
    assert sum(counts.values()) == total
    for cls in w.CLASSES:
        expected = total // 5 + (total % 5 if cls == w.GENERIC else 0)
        assert counts[cls] == expected


def test_generic_only_puts_every_pod_in_the_generic_class() -> None:
    assert w.class_counts(1234, generic_only=True) == {cls: (1234 if cls == w.GENERIC else 0) for cls in w.CLASSES}


@pytest.mark.parametrize("total", [0, 1, 7, 100, 1003])
def test_drawn_pods_and_deployment_replicas_match_the_class_counts(total: int) -> None:
    draws = w.draw_pods(total, seed=42)
    assert Counter(d.pod_class for d in draws) == +Counter(w.class_counts(total))
    specs = w.group_deployments(draws)
    replicas: Counter[str] = Counter()
    for spec in specs:
        replicas[spec.pod_class] += spec.replicas
    assert replicas == +Counter(w.class_counts(total))
    assert len({s.name for s in specs}) == len(specs)


# ------------------------------------------------------------------------------------------ values
def test_requests_and_labels_come_from_karpenters_ranges_and_cover_them() -> None:
    draws = w.draw_pods(2000, seed=7)
    assert {d.cpu_millis for d in draws} == set(w.CPU_MILLIS)
    assert {d.memory_mib for d in draws} == set(w.MEMORY_MIB)
    for d in draws:
        if d.pod_class == w.HOSTNAME_ANTI_AFFINITY:
            assert (d.label_value, d.selector_value) == ("nginx", "nginx")
        else:
            assert d.label_value in w.LABEL_VALUES
    labelled = [d for d in draws if d.pod_class != w.HOSTNAME_ANTI_AFFINITY]
    assert {d.label_value for d in labelled} == set(w.LABEL_VALUES)


def test_selectors_match_their_own_pods_unless_drawn_independently() -> None:
    own = w.draw_pods(500, seed=1)
    assert all(d.selector_value is None for d in own if d.pod_class == w.GENERIC)
    assert all(d.selector_value == d.label_value for d in own if d.pod_class != w.GENERIC)
    independent = w.draw_pods(500, seed=1, independent_selectors=True)
    constrained = [d for d in independent if d.pod_class not in (w.GENERIC, w.HOSTNAME_ANTI_AFFINITY)]
    assert any(d.selector_value != d.label_value for d in constrained)
    assert all(d.selector_value in w.LABEL_VALUES for d in constrained)


def test_a_seed_always_gives_the_same_workload_and_another_seed_a_different_one() -> None:
    assert w.draw_pods(1000, seed=42) == w.draw_pods(1000, seed=42)
    assert w.draw_pods(1000, seed=42) != w.draw_pods(1000, seed=43)
    assert w.to_yaml(w.make_inputs("aws", 300, 5).manifests) == w.to_yaml(w.make_inputs("aws", 300, 5).manifests)


# ------------------------------------------------------------------------------------------ manifests
def test_manifests_load_into_the_promised_pods_and_templates() -> None:
    inputs = w.make_inputs("synthetic", 250, seed=3)
    inventory = _inventory(inputs)
    pending = inventory.pending
    assert len(pending) == 250
    assert Counter(p.labels[w.CLASS_LABEL] for p in pending) == +Counter(w.class_counts(250))
    # Replicas of one Deployment share a template, so the planner groups them.
    assert len({id(p.template) for p in pending}) == len(inputs.deployments)
    for pod in pending:
        cpu, memory = pod.requests.get("cpu"), pod.requests.get("memory")
        assert cpu in w.CPU_MILLIS
        assert memory in {m * MIB for m in w.MEMORY_MIB}
    assert [p.name for p in inventory.nodepools] == [w.NODEPOOL_NAME]


def test_each_class_carries_its_scheduling_constraint() -> None:
    inventory = _inventory(w.make_inputs("aws", 100, seed=11))
    by_class = {p.labels[w.CLASS_LABEL]: p.template for p in inventory.pending}
    assert not by_class[w.GENERIC].spread and not by_class[w.GENERIC].pod_affinity.required
    for cls, key in ((w.ZONE_SPREAD, w.ZONE_KEY), (w.HOSTNAME_SPREAD, w.HOSTNAME_KEY)):
        (constraint,) = by_class[cls].spread
        assert (constraint.max_skew, constraint.topology_key, constraint.hard) == (1, key, True)
    (affinity,) = by_class[w.ZONE_AFFINITY].pod_affinity.required
    assert affinity.topology_key == w.ZONE_KEY
    anti_template = by_class[w.HOSTNAME_ANTI_AFFINITY]
    (anti,) = anti_template.pod_anti_affinity.required
    assert anti.topology_key == w.HOSTNAME_KEY
    assert anti_template.labels["app"] == "nginx"
    assert all(p.labels.get("app") != "nginx" for p in inventory.pending
               if p.labels[w.CLASS_LABEL] != w.HOSTNAME_ANTI_AFFINITY)


def test_synthetic_catalog_is_karpenters_fake_instance_types(tmp_path: Path) -> None:
    inputs = w.make_inputs("synthetic", 10)
    _, catalog_file = w.write_inputs(inputs, tmp_path)
    assert catalog_file is not None
    catalog = load_catalog(None, str(catalog_file))
    assert len(catalog.instance_types) == w.SYNTHETIC_TYPES
    assert set(catalog.zones) == set(w.SYNTHETIC_ZONES)
    by_name = catalog.by_name()
    for i in (0, 3, 4, 199, 399):
        it = by_name[f"fake-it-{i}"]
        assert it.capacity.get("cpu") == (i + 1) * 1000
        assert it.capacity.get("memory") == 2 * (i + 1) * GIB
        assert it.capacity.get("pods") == 10 * (i + 1)
        assert it.allocatable.get("cpu") == (i + 1) * 1000 - 100
        assert it.allocatable.get("memory") == 2 * (i + 1) * GIB - 10 * MIB
        offerings = {(o.zone, o.capacity_type) for o in it.offerings}
        assert offerings == {("test-zone-1", "spot"), ("test-zone-2", "spot"), ("test-zone-1", "on-demand"),
                             ("test-zone-2", "on-demand"), ("test-zone-3", "on-demand")}
        price = 0.1 * (i + 1) + 0.1 * 2 * (i + 1) * GIB / 1e9
        assert all(o.price == pytest.approx(price, abs=1e-6) for o in it.offerings)
        assert it.labels["size"] == ("large" if i + 1 > 4 else "small")


def test_aws_rows_use_the_embedded_catalog() -> None:
    inputs = w.make_inputs("aws", 10)
    assert inputs.catalog_document is None
    with pytest.raises(ValueError):
        w.nodepool_manifests("gcp")


# ------------------------------------------------------------------------------------------ real-world shape
@pytest.mark.parametrize("pods", [1, 100, 1000, 10_000])
def test_the_realistic_family_holds_exactly_the_pods_asked_for(pods: int) -> None:
    deployments = w.draw_realistic(pods, seed=42)
    assert sum(d.replicas for d in deployments) == pods
    assert all(d.replicas >= 1 for d in deployments)
    assert len({d.name for d in deployments}) == len(deployments)
    if pods >= 1000:  # every archetype shows up, and larger clusters run more replicas per service
        assert {d.archetype.name for d in deployments} == {a.name for a in w.ARCHETYPES}
    assert w.draw_realistic(pods, seed=42) == deployments


def test_realistic_manifests_load_with_pools_fargate_and_constraints() -> None:
    inputs = w.realistic_inputs(1000, seed=42)
    assert inputs.region == w.REALISTIC_REGION and inputs.catalog_document is None
    assert w.to_yaml(inputs.manifests) == w.to_yaml(w.realistic_inputs(1000, seed=42).manifests)
    assert w.to_yaml(inputs.manifests) != w.to_yaml(w.realistic_inputs(1000, seed=43).manifests)
    inventory = _inventory(inputs)
    assert len(inventory.pending) == 1000
    pools = {p.name: p for p in inventory.nodepools}
    assert set(pools) == {"spot", "on-demand", "memory", "critical"}
    assert len({p.weight for p in pools.values()}) == 4
    assert all(p.limits for p in pools.values())
    assert [p.name for p in inventory.fargate_profiles] == ["serverless"]
    assert inventory.region == w.REALISTIC_REGION
    assert [d.name for d in inventory.daemonsets] == ["log-agent"]
    templates = {p.labels[w.CLASS_LABEL]: p.template for p in inventory.pending}
    assert {c.topology_key for c in templates["payments"].spread} == {w.ZONE_KEY, w.HOSTNAME_KEY}
    assert templates["cache"].pod_anti_affinity.required[0].topology_key == w.HOSTNAME_KEY
    assert templates["api"].pod_anti_affinity.preferred
    assert templates["analytics"].tolerations and templates["payments"].tolerations
    namespaces = {p.namespace for p in inventory.pending}
    assert w.FARGATE_NAMESPACE in namespaces and len(namespaces) >= 5


def test_the_host_spread_row_is_the_seed_example_with_its_hostname_constraint() -> None:
    inputs = w.host_spread_inputs()
    assert (inputs.region, inputs.pods) == (w.HOST_SPREAD_REGION, 20)
    inventory = _inventory(inputs)
    assert len(inventory.pending) == 20
    (template,) = {id(p.template): p.template for p in inventory.pending}.values()
    spread = {(c.topology_key, c.max_skew, c.hard) for c in template.spread}
    assert spread == {(w.ZONE_KEY, 5, True), (w.HOSTNAME_KEY, 1, True)}
    seed = REPO.parent / "shared" / "cases" / "seed" / "02-host-spread-zone-only" / "manifests.yaml"
    if seed.exists():  # the same documents as the seed case, but for the hostname constraint put back
        import yaml

        documents = list(yaml.safe_load_all(seed.read_text()))
        ours = w.host_spread_manifests()
        ours[2]["spec"]["template"]["spec"]["topologySpreadConstraints"].pop()
        assert ours == documents


def test_families_dispatch() -> None:
    assert w.make_family_inputs("generic", "aws", 50).deployments == w.make_inputs("aws", 50, generic_only=True).deployments
    assert w.make_family_inputs("realistic", "aws", 50).pods == 50
    with pytest.raises(ValueError):
        w.make_family_inputs("realistic", "synthetic", 50)
    with pytest.raises(ValueError):
        w.make_family_inputs("nope", "aws", 50)


def test_the_many_deployments_family_is_the_lint_benchmarks_tree_planned() -> None:
    inputs = w.make_family_inputs(w.MANY_DEPLOYMENTS, "aws", 40)
    assert len(inputs.deployments) == 40 and inputs.pods == sum(1 + i % 3 for i in range(40))
    inventory = _inventory(inputs)
    assert len(inventory.pending) == inputs.pods
    assert sorted(p.name for p in inventory.nodepools) == sorted(f"pool-{i}" for i in range(w.MANY_POOLS))
    # Each Deployment spreads over zones by its own label and lands on its team's pool.
    templates = {id(p.template): p.template for p in inventory.pending}.values()
    assert len(templates) == 40
    for t in templates:
        (spread,) = t.spread
        assert (spread.topology_key, spread.max_skew, spread.hard) == (w.ZONE_KEY, 1, True)
        assert spread.label_selector is not None and spread.label_selector.matches(t.labels)
        assert set(t.affinity.node_selector) == {"team"}
