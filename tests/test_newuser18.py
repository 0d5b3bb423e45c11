"""What a new user's trial in eu-west-1 found (session 18): the region read from an EC2NodeClass's resolved
subnets, a managed node group's capacity type, a pool whose fitting types the region's catalog lacks, and
explain pricing in the manifests' region."""

from __future__ import annotations

import json
import re
from pathlib import Path

from typer.testing import CliRunner

from karpplan.cli.main import app

NODECLASS = """\
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: default
spec:
  role: KarpenterNodeRole-prod
  amiSelectorTerms:
    - alias: al2023@latest
status:
  subnets:
    - {id: subnet-1, zone: eu-west-1a, zoneID: euw1-az3}
    - {id: subnet-2, zone: eu-west-1b, zoneID: euw1-az1}
"""

DATA_POOL = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: team-data
spec:
  template:
    metadata:
      labels: {team: data}
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      taints:
        - {key: team, value: data, effect: NoSchedule}
      requirements:
        - {key: karpenter.sh/capacity-type, operator: In, values: ["on-demand"]}
        - {key: karpenter.k8s.aws/instance-family, operator: In, values: ["r6i", "r7i"]}
        - {key: karpenter.k8s.aws/instance-size, operator: NotIn, values: ["metal", "48xlarge", "32xlarge", "24xlarge"]}
"""

SPARK = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: spark-thrift
  namespace: data
spec:
  replicas: 1
  selector:
    matchLabels: {app: spark-thrift}
  template:
    metadata:
      labels: {app: spark-thrift}
    spec:
      nodeSelector: {team: data}
      tolerations:
        - {key: team, operator: Equal, value: data, effect: NoSchedule}
      containers:
        - name: driver
          image: apache/spark:3.5.1
          resources:
            requests: {cpu: "16", memory: 600Gi}
"""

SMALL = SPARK.replace("600Gi", "4Gi").replace('cpu: "16"', 'cpu: "1"')

MNG_NODE = """\
apiVersion: v1
kind: Node
metadata:
  name: ip-10-0-12-34.eu-west-1.compute.internal
  labels:
    eks.amazonaws.com/capacityType: ON_DEMAND
    eks.amazonaws.com/nodegroup: system
    node.kubernetes.io/instance-type: m6i.2xlarge
    kubernetes.io/os: linux
    kubernetes.io/arch: amd64
    topology.kubernetes.io/zone: eu-west-1a
status:
  allocatable: {cpu: 7910m, memory: 31369316Ki, pods: "58"}
"""

SPARK_LOG = (
    'Warning  FailedScheduling  2m  karpenter  Failed to schedule pod, incompatible with nodepool "team-data", '
    'daemonset overhead={"pods":"0"}, no instance type has enough resources, requirements=karpenter.k8s.aws/'
    'instance-family In [r6i r7i], karpenter.k8s.aws/instance-size NotIn [24xlarge 32xlarge 48xlarge metal], '
    'karpenter.sh/capacity-type In [on-demand], karpenter.sh/nodepool In [team-data], team In [data], '
    'resources={"cpu":"16","memory":"600Gi","pods":"1"}\n')


def _repo(tmp_path: Path, workload: str) -> Path:
    (tmp_path / "nodeclass.yaml").write_text(NODECLASS)
    (tmp_path / "pool.yaml").write_text(DATA_POOL)
    (tmp_path / "app.yaml").write_text(workload)
    return tmp_path


def _plan(*args: str) -> dict:  # type: ignore[type-arg]
    result = CliRunner().invoke(app, ["--color", "never", "plan", *args, "-o", "json"])
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def test_region_is_read_from_an_ec2nodeclass_subnets(tmp_path: Path) -> None:
    """An eu-west-1 repo with no ClusterConfig and no Node: its EC2NodeClass's resolved subnets say the region,
    not the us-east-1 default (whose prices and zones the user saw)."""
    summary = _plan(str(_repo(tmp_path, SMALL)))["summary"]
    assert summary["region"] == "eu-west-1"
    assert summary["regionSource"].startswith("from EC2NodeClass default's subnet zones")
    assert "nodeclass.yaml" in summary["regionSource"]
    assert summary["zones"] == ["eu-west-1a", "eu-west-1b"]


def test_summary_says_a_default_region_is_a_default(tmp_path: Path) -> None:
    (tmp_path / "app.yaml").write_text(SMALL)
    summary = _plan(str(tmp_path / "app.yaml"))["summary"]
    assert summary["region"] == "us-east-1"
    assert summary["regionSource"].startswith("default")
    assert summary["catalogCoverage"] is None  # us-east-1's list is current: nothing to say


def test_an_old_regional_price_list_is_said_in_the_summary(tmp_path: Path) -> None:
    summary = _plan(str(_repo(tmp_path, SMALL)))["summary"]
    assert "known types priced, as of" in summary["catalogCoverage"]


def test_managed_node_group_node_keeps_its_capacity_type(tmp_path: Path) -> None:
    """A pasted managed-node-group Node carries eks.amazonaws.com/capacityType, not Karpenter's label."""
    (tmp_path / "node.yaml").write_text(MNG_NODE)
    (tmp_path / "app.yaml").write_text(SMALL.replace("      nodeSelector: {team: data}\n", ""))
    plan = _plan(str(tmp_path))
    node = next(n for n in plan["nodes"] if not n["new"])
    assert node["capacityType"] == "on-demand"


def test_unschedulable_reason_names_fitting_types_the_catalog_lacks(tmp_path: Path) -> None:
    """The pool allows r7i.metal-24xl (`instance-size NotIn [metal]` does not exclude `metal-24xl`), which would
    hold 600Gi, but the eu-west-1 price list lacks it: the reason must not read as Karpenter's verdict alone."""
    plan = _plan(str(_repo(tmp_path, SPARK)))
    reasons = " ".join(plan["unschedulable"][0]["reasons"])
    assert "no instance type has enough resources" in reasons
    assert "r7i.metal-24xl" in reasons and "catalog lacks" in reasons
    assert "--catalog FILE" in reasons


def test_explain_with_manifests_prices_in_the_manifests_region(tmp_path: Path) -> None:
    """Without --region, explain --manifests uses the region plan uses for the same input (eu-west-1 here, whose
    catalog lacks the r7i metal sizes the pool allows; in us-east-1 they would be offered at a price)."""
    repo = _repo(tmp_path / "repo", SPARK) if (tmp_path / "repo").mkdir() is None else None
    assert repo is not None
    log = tmp_path / "event.log"
    log.write_text(SPARK_LOG)
    result = CliRunner().invoke(app, ["--color", "never", "explain", str(log), "--manifests", str(repo), "-o", "json"])
    assert result.exit_code in (0, 1), result.output
    text = result.stdout
    assert "embedded eu-west-1 catalog lacks" in text  # not us-east-1, where r7i.metal-24xl is priced
    assert "r7i.metal-24xl ($" not in text  # a us-east-1 price for a type eu-west-1's catalog lacks


GENERAL_POOL = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: general
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - {key: karpenter.sh/capacity-type, operator: In, values: ["on-demand"]}
"""

CRONJOB = """\
apiVersion: batch/v1
kind: CronJob
metadata:
  name: nightly-etl
  namespace: data
spec:
  schedule: "0 2 * * *"
  jobTemplate:
    spec:
      parallelism: 2
      template:
        spec:
          restartPolicy: Never
          containers:
            - name: etl
              image: apache/spark:3.5.1
              resources:
                requests: {cpu: "3", memory: 8Gi}
"""


def test_cost_table_does_not_bill_a_cronjob_for_a_month(tmp_path: Path) -> None:
    """A nightly CronJob's nodes run while it does: its $/month cell says so and the note gives its hourly share,
    instead of $1,464/month read as 60% of the cluster's bill."""
    (tmp_path / "cron.yaml").write_text(CRONJOB)
    (tmp_path / "app.yaml").write_text(SMALL.replace("      nodeSelector: {team: data}\n", ""))
    (tmp_path / "pool.yaml").write_text(GENERAL_POOL)
    result = CliRunner().invoke(app, ["--color", "never", "plan", str(tmp_path)], env={"COLUMNS": "120"})
    assert result.exit_code == 0, result.output
    row = next(line for line in result.stdout.splitlines() if line.startswith("CronJob/data/nightly-etl"))
    assert "while running" in row
    deployment = next(line for line in result.stdout.splitlines() if line.startswith("Deployment/data/spark-thrift"))
    assert "while running" not in deployment and "$" in deployment.split()[-2]
    assert "paid only while their pods run" in result.stdout


OPENSEARCH = """\
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: opensearch-logs-data
  namespace: logging
spec:
  replicas: 2
  selector:
    matchLabels: {app: opensearch-logs-data}
  template:
    metadata:
      labels: {app: opensearch-logs-data}
    spec:
      containers:
        - name: opensearch
          image: opensearchproject/opensearch:2.17.0
          resources:
            requests: {cpu: "3", memory: 24Gi}
"""


def test_80_columns_with_existing_nodes_never_cut_a_name_mid_word(tmp_path: Path) -> None:
    """An `existing` marker is wider than `NEW`: the name column is measured, not guessed, so rich never folds a
    wrapped name again (`opensearch-logs-dat` / `a`, `team-data-r6i-8xlarge` / `-` / `7`)."""
    (tmp_path / "node.yaml").write_text(MNG_NODE.replace("    eks.amazonaws.com/nodegroup: system\n", ""))
    spot = GENERAL_POOL.replace("name: general", "name: general-spot").replace('["on-demand"]', '["spot"]')
    (tmp_path / "pool.yaml").write_text(spot)  # `~$0.0902`, `general-spot`: the columns a guess under-counted
    (tmp_path / "os.yaml").write_text(OPENSEARCH)
    result = CliRunner().invoke(app, ["--color", "never", "plan", str(tmp_path)], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    table = result.stdout.split("\n\n")[0].splitlines()
    assert any("existing" in line for line in table)
    for line in table:
        first = line.split("  ")[0].strip()
        assert len(first) != 1 or first in "0123456789" and line.strip() == first, f"a name's fragment: {line!r}"
    joined = "\n".join(table)
    assert re.search(r"opensearch-logs-(data|\s)", joined)
    assert not re.search(r"opensearch-logs-dat\s", joined)


def test_inventory_pools_table_reads_at_80_columns(tmp_path: Path) -> None:
    """Six columns at 80 split even the header (`Requirement` / `s`); numeric values sorted as text read
    `[16 4 8]`."""
    pool = GENERAL_POOL.replace(
        "        - {key: karpenter.sh/capacity-type, operator: In, values: [\"on-demand\"]}\n",
        "        - {key: karpenter.sh/capacity-type, operator: In, values: [\"on-demand\"]}\n"
        "        - {key: karpenter.k8s.aws/instance-cpu, operator: In, values: [\"16\", \"4\", \"8\"]}\n")
    (tmp_path / "pool.yaml").write_text(pool)
    result = CliRunner().invoke(app, ["--color", "never", "inventory", str(tmp_path)], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    text = result.stdout
    assert "Requirements" in text and "Requirement " not in text.replace("Requirements", "")
    assert "[4 8 16]" in text


SERVICE = SMALL.replace("      nodeSelector: {team: data}\n", "").replace("spark-thrift", "api").replace(
    "      tolerations:\n        - {key: team, operator: Equal, value: data, effect: NoSchedule}\n", "")


def _diff_dirs(tmp_path: Path, base_parallelism: int, head_parallelism: int, head_api_replicas: int) -> list[str]:
    sides = []
    for side, parallelism, replicas in (("base", base_parallelism, 1), ("head", head_parallelism, head_api_replicas)):
        directory = tmp_path / side
        directory.mkdir()
        (directory / "pool.yaml").write_text(GENERAL_POOL)
        (directory / "data-pool.yaml").write_text(DATA_POOL)  # the jobs on their team's tainted pool, as users run them
        cron = CRONJOB.replace("parallelism: 2", f"parallelism: {parallelism}").replace(
            "          restartPolicy: Never\n",
            "          restartPolicy: Never\n          nodeSelector: {team: data}\n          tolerations:\n"
            "            - {key: team, operator: Equal, value: data, effect: NoSchedule}\n")
        (directory / "cron.yaml").write_text(cron)
        (directory / "api.yaml").write_text(SERVICE.replace("replicas: 1", f"replicas: {replicas}"))
        sides.append(str(directory))
    return sides


def test_diff_gate_judges_the_cost_that_runs_all_month(tmp_path: Path) -> None:
    """A nightly CronJob's parallelism from 2 to 6 is no reason to fail a 10% gate on the monthly bill; the
    headline says how much of the change is Jobs/CronJobs priced as if they ran all month."""
    base, head = _diff_dirs(tmp_path, 2, 6, 1)
    result = CliRunner().invoke(app, ["--color", "never", "diff", base, head, "--fail-on-increase", "10",
                                      "-o", "json"])
    assert result.exit_code == 0, result.output
    gate = json.loads(result.stdout)["gate"]
    assert gate["costExceeded"] is False and gate["increasePercent"] > 10
    assert gate["jobsMonthlyCostDelta"] > 0 and gate["judgedIncreasePercent"] == 0
    table = CliRunner().invoke(app, ["--color", "never", "diff", base, head], env={"COLUMNS": "120"})
    assert "Jobs/CronJobs if they ran all month" in table.stdout.splitlines()[0]


def test_diff_gate_still_fails_on_the_always_on_cost(tmp_path: Path) -> None:
    base, head = _diff_dirs(tmp_path, 2, 2, 6)
    result = CliRunner().invoke(app, ["--color", "never", "diff", base, head, "--fail-on-increase", "10",
                                      "-o", "json"])
    assert result.exit_code == 1, result.output
    gate = json.loads(result.stdout)["gate"]
    assert gate["costExceeded"] is True
    assert any("Jobs and CronJobs aside" in r for r in gate["reasons"])


GPU_LIMITS_LOG = (
    '  Warning  FailedScheduling  3m50s (x58 over 4h48m)  karpenter          Failed to schedule pod, incompatible '
    'with nodepool "spot-pool", daemonset overhead={"cpu":"1566m","memory":"930Mi","pods":"11"}, no instance type '
    'has enough resources, requirements=eks.amazonaws.com/instance-category In [c m t], eks.amazonaws.com/nodeclass '
    'In [spot-default], karpenter.sh/capacity-type In [spot], karpenter.sh/nodepool In [spot-pool], '
    'kubernetes.io/arch In [amd64], resources={"cpu":"1566m","memory":"930Mi","nvidia.com/gpu":"1","pods":"12"}; '
    'all available instance types exceed limits for nodepool (NodePool=gpu-nodepool)\n')


def test_a_pool_at_its_limits_is_said_first() -> None:
    """https://github.com/aws/karpenter-provider-aws/issues/8068: the GPU pool at its limits is the cause (0 -> 1
    works); the general pool's lack of GPU types is not. The limits sentence leads and names a GPU limit as a
    possible one."""
    result = CliRunner().invoke(app, ["--color", "never", "explain", "-", "-o", "json"], input=GPU_LIMITS_LOG)
    (item,) = json.loads(result.stdout)["items"]
    plain = item["plain"]
    assert plain.index('"gpu-nodepool" has reached its') < plain.index('NodePool "spot-pool"')
    assert "nvidia.com/gpu" in plain[plain.index('"gpu-nodepool"'):plain.index('NodePool "spot-pool"')]


def test_karpenters_volume_topology_line_is_read() -> None:
    """https://github.com/kubernetes-sigs/karpenter/issues/2458: Karpenter's debug line names the zone the pod's
    volume pins it to; it was 'unrecognised'."""
    line = ('{"level":"DEBUG","time":"2025-07-01T10:00:00.000Z","logger":"controller","message":"adding requirements '
            'derived from pod volumes, [{topology.ebs.csi.aws.com/zone In [us-east-1a]}]","caller":'
            '"scheduling/volumetopology.go:77","controller":"provisioner"}\n')
    result = CliRunner().invoke(app, ["--color", "never", "explain", "-", "-o", "json"], input=line)
    assert result.exit_code == 0, result.output
    (item,) = json.loads(result.stdout)["items"]
    assert item["source"] == "karpenter" and [r["kind"] for r in item["reasons"]] == ["volume"]
    assert "may only run in us-east-1a" in item["plain"] and "WaitForFirstConsumer" in item["plain"]
