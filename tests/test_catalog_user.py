"""User catalogs (`--catalog FILE`): the fake-provider shape, derived allocatable, EC2 facts, and errors."""

from __future__ import annotations

import glob
import textwrap
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from karpplan.catalog import instance_requirements, instance_types_for, load_catalog, node_labels
from karpplan.catalog.embedded import embedded_catalog
from karpplan.catalog.types import Catalog
from karpplan.catalog.user import catalog_document, parse_catalog_body
from karpplan.errors import InputError
from karpplan.model.pools import KubeletConfig
from karpplan.model.requirements import Requirement, Requirements
from karpplan.model.resources import CPU, MEMORY, PODS, Resources

MIB = 2**20
GIB = 2**30
CASES = Path(__file__).resolve().parents[2] / "shared" / "cases"
HEADER = "apiVersion: karpplan.io/v1alpha1\nkind: InstanceCatalog\nmetadata: {name: test}\n"


def write(tmp_path: Path, body: str) -> str:
    path = tmp_path / "catalog.yaml"
    path.write_text(HEADER + textwrap.dedent(body))
    return str(path)


def problems_of(path: str) -> list[str]:
    with pytest.raises(InputError) as info:
        load_catalog(None, path)
    return [str(p) for p in info.value.problems]


def test_every_case_catalog_loads() -> None:
    files = sorted(glob.glob(str(CASES / "*" / "*" / "catalog.yaml")))
    if not files:
        pytest.skip("../shared/cases is not available")
    for file in files:
        catalog = load_catalog(None, file)
        assert not catalog.embedded
        with open(file) as fh:
            raw = yaml.safe_load(fh)
        assert [it.name for it in catalog.instance_types] == [t["name"] for t in raw["instanceTypes"]]


FAKE = """\
zones: [test-zone-1, test-zone-2, test-zone-3]
instanceTypes:
- name: default-instance-type
  arch: amd64
  os: linux
  capacity: {cpu: '4', memory: 4Gi, pods: '5'}
  allocatable: {cpu: 3900m, memory: 4086Mi, pods: '5'}
  labels: {size: small, integer: '4'}
  offerings:
  - {zone: test-zone-1, capacityType: spot, price: 0.8294967296}
  - {zone: test-zone-3, capacityType: on-demand, price: 0.8294967296}
- name: arm-instance-type
  arch: arm64
  os: [linux, ios]
  capacity: {cpu: '16', memory: 128Gi, pods: '5', fake.com/vendor-a: '2'}
  allocatable: {cpu: 15900m, memory: 131062Mi, pods: '5'}
  labels: {size: large, special: optional, integer: '16'}
  offerings:
  - {zone: test-zone-1, capacityType: on-demand, price: 15.34}
"""


def test_fake_provider_catalog(tmp_path: Path) -> None:
    catalog = load_catalog(None, write(tmp_path, FAKE))
    assert catalog.zones == ("test-zone-1", "test-zone-2", "test-zone-3")
    default, arm = catalog.instance_types
    assert default.capacity == Resources({CPU: 4000, MEMORY: 4 * GIB, PODS: 5})
    assert default.allocatable == Resources({CPU: 3900, MEMORY: 4086 * MIB, PODS: 5})
    assert [(o.zone, o.capacity_type, o.price) for o in default.offerings] == [
        ("test-zone-1", "spot", 0.8294967296),
        ("test-zone-3", "on-demand", 0.8294967296),
    ]
    assert node_labels(default, auto_mode=False) == {
        "integer": "4",
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/os": "linux",
        "node.kubernetes.io/instance-type": "default-instance-type",
        "size": "small",
    }
    # Extended resources of capacity are allocatable when allocatable leaves them out.
    assert arm.allocatable["fake.com/vendor-a"] == 2
    assert arm.os_values == ("linux", "ios")
    assert "kubernetes.io/os" not in node_labels(arm, auto_mode=False)
    # `special` exists only on the large type: the others see DoesNotExist, as in the fake provider.
    assert default.absent_label_keys == frozenset({"special"})
    special = Requirements([Requirement.of("special", "Exists")])
    assert not instance_requirements(default, auto_mode=False).intersects(special)
    assert instance_requirements(arm, auto_mode=False).intersects(special)
    assert {"size", "special", "integer"} <= catalog.label_keys()
    ios = Requirements([Requirement.of("kubernetes.io/os", "In", ["ios"])])
    assert instance_requirements(arm, auto_mode=False).intersects(ios)


def test_empty_catalog(tmp_path: Path) -> None:
    catalog = load_catalog("us-east-1", write(tmp_path, "zones: []\ninstanceTypes: []\n"))
    assert catalog.zones == () and catalog.instance_types == ()


def test_capacity_only_is_derived_and_follows_kubelet(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """\
        instanceTypes:
        - name: box
          os: linux
          capacity: {cpu: '4', memory: 4Gi, pods: '5', ephemeral-storage: 20Gi, example.com/dongle: '3'}
          offerings: [{zone: z1, price: 1}]
        """,
    )
    catalog = load_catalog(None, path)
    (box,) = catalog.instance_types
    assert box.allocatable_derived
    assert catalog.zones == ("z1",)
    assert box.offerings[0].capacity_type == "on-demand"
    assert box.allocatable == Resources(
        {
            CPU: 3920,
            MEMORY: (4096 - (11 * 5 + 255) - 100) * MIB,
            PODS: 5,
            "ephemeral-storage": 17 * GIB,
            "example.com/dongle": 3,
        }
    )
    (recomputed,) = instance_types_for(catalog, KubeletConfig(max_pods=10))
    assert recomputed.allocatable[PODS] == 10
    assert recomputed.allocatable[MEMORY] == (4096 - (11 * 10 + 255) - 100) * MIB


def test_explicit_allocatable_is_returned_unchanged(tmp_path: Path) -> None:
    catalog = load_catalog(None, write(tmp_path, FAKE))
    types = instance_types_for(catalog, KubeletConfig(max_pods=110))
    assert all(a is b for a, b in zip(types, catalog.instance_types, strict=True))


def test_aws_facts_behave_like_the_embedded_catalog(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """\
        zones: [us-east-1a]
        instanceTypes:
        - name: m5.large
          capacity: {vpc.amazonaws.com/pod-eni: '9'}
          labels: {eks.amazonaws.com/instance-family: m5}
          aws: {vcpu: 2, memoryMiB: 8192, eniPods: 29}
          offerings: [{zone: us-east-1a, capacityType: on-demand, price: 0.096}]
        """,
    )
    catalog = load_catalog(None, path)
    (m5,) = catalog.instance_types
    reference = embedded_catalog("us-east-1").by_name()["m5.large"]
    assert m5.capacity == reference.capacity and m5.allocatable == reference.allocatable
    assert m5.labels["karpenter.k8s.aws/instance-family"] == "m5"  # Auto Mode keys are stored in Karpenter form
    assert node_labels(m5, auto_mode=True)["eks.amazonaws.com/instance-family"] == "m5"
    assert "karpenter.k8s.aws/instance-gpu-name" in m5.absent_label_keys
    (bottlerocket,) = instance_types_for(catalog, KubeletConfig(max_pods=110), "Bottlerocket")
    assert bottlerocket.allocatable[MEMORY] == (7577 - 1465 - 100) * MIB


def test_written_catalog_reads_back_identically() -> None:
    source = embedded_catalog("eu-west-1")
    subset = Catalog(
        name="subset",
        region=source.region,
        zones=source.zones,
        instance_types=tuple(source.by_name()[n] for n in ("m5.large", "g4dn.xlarge", "m5.metal", "m7g.large")),
        embedded=False,
    )
    document = catalog_document(subset)
    text = yaml.safe_dump(document, sort_keys=False)
    again = parse_catalog_body(yaml.safe_load(text), "subset.yaml")
    assert again.zones == subset.zones and again.region == "eu-west-1"
    for before, after in zip(subset.instance_types, again.instance_types, strict=True):
        assert after.capacity == before.capacity
        assert after.allocatable == before.allocatable
        assert after.labels == before.labels
        assert after.offerings == before.offerings
        assert after.shape == before.shape
        assert after.absent_label_keys == before.absent_label_keys


# ------------------------------------------------------------------------------------------ errors
@pytest.mark.parametrize(
    ("body", "line", "fragment"),
    [
        ("instanceTypes:\n- name: a\n  capacity: {cpu: lots}\n  offerings: []\n", 6, "capacity.cpu: quantities must match"),
        ("instanceTypes:\n- name: a\n  capacty: {cpu: '1'}\n", 6, "unknown field 'capacty'"),
        ("zones: [z1]\ninstanceTypes:\n- name: a\n  capacity: {cpu: '1'}\n  offerings:\n  - {zone: z9, price: 1}\n",
         9, "'z9' is not one of the catalog's zones"),
        ("instanceTypes:\n- name: a\n  capacity: {cpu: '1'}\n  offerings:\n  - {zone: z1}\n", 8, "price is required"),
        ("instanceTypes:\n- name: a\n  capacity: {cpu: '1'}\n  offerings:\n  - {zone: z1, price: -2}\n", 8,
         "price must be a non-negative number"),
        ("instanceTypes:\n- name: a\n  capacity: {cpu: '1'}\n- name: a\n  capacity: {cpu: '1'}\n", 7, "already defined"),
        ("instanceTypes:\n- name: a\n  capacity: {cpu: '1'}\n  allocatable: {cpu: '2'}\n", 7, "exceeds capacity"),
        ("instanceTypes:\n- name: a\n", 5, "give capacity, allocatable, or aws facts"),
        ("instanceTypes:\n- name: a\n  os: 7\n  capacity: {cpu: '1'}\n", 6, "os: must be an OS name"),
        ("instanceTypes: {a: 1}\n", 4, "instanceTypes: must be a list"),
        ("instanceTypes:\n- name: a\n  aws: {vcpu: 2, memoryMiB: 8192, eniPods: 29}\n  capacity: {cpu: '3'}\n", 7,
         "disagrees with 2 computed from aws"),
    ],
)  # fmt: skip
def test_malformed_catalog_points_at_the_line(tmp_path: Path, body: str, line: int, fragment: str) -> None:
    path = write(tmp_path, body)
    problems = problems_of(path)
    assert any(p.startswith(f"{path}:{line}:") and fragment in p for p in problems), problems


def test_wrong_kind_and_missing_document(tmp_path: Path) -> None:
    wrong = tmp_path / "wrong.yaml"
    wrong.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    assert "exactly one InstanceCatalog" in problems_of(str(wrong))[0]
    missing = str(tmp_path / "missing.yaml")
    assert problems_of(missing)[0].startswith(missing)
    broken = tmp_path / "broken.yaml"
    broken.write_text(HEADER + "instanceTypes: [\n")
    assert problems_of(str(broken))[0].startswith(f"{broken}:")


def test_every_problem_is_reported_at_once(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "instanceTypes:\n- name: a\n  capacity: {cpu: x}\n- name: b\n  capacity: {memory: y}\n",
    )
    assert len(problems_of(path)) == 2


QUANTITY = st.one_of(
    st.integers(0, 10**6).map(str),
    st.integers(1, 10**5).map(lambda n: f"{n}m"),
    st.integers(1, 4096).map(lambda n: f"{n}Mi"),
    st.integers(1, 512).map(lambda n: f"{n}Gi"),
)


@settings(max_examples=60)
@given(cpu=QUANTITY, memory=QUANTITY, pods=st.integers(1, 500))
def test_derived_allocatable_never_exceeds_capacity(cpu: str, memory: str, pods: int) -> None:
    body = {
        "apiVersion": "karpplan.io/v1alpha1",
        "kind": "InstanceCatalog",
        "instanceTypes": [{"name": "t", "capacity": {"cpu": cpu, "memory": memory, "pods": str(pods)}}],
    }
    (it,) = parse_catalog_body(body, "gen.yaml").instance_types
    assert it.capacity[PODS] == pods
    for resource, amount in it.allocatable.items():
        assert 0 <= amount <= it.capacity[resource]
    # What karpplan writes reads back to the same figures.
    (again,) = parse_catalog_body(catalog_document(Catalog("c", "", (), (it,))), "again.yaml").instance_types
    assert again.capacity == it.capacity and again.allocatable == it.allocatable
    assert again.allocatable_derived
