"""Kubeflow Spark operator's SparkApplication planned and linted as the driver and executor pods a run creates
(model/spark_operator.py, model/spark_sizing.py): Spark's requests (memory plus its overhead), the operator's
defaults, the placement the webhook writes, run-to-completion costs, and lint findings at the application's own
file:line. The manifests follow kubeflow/spark-operator examples/ (spark-pi.yaml, spark-pi-python.yaml,
spark-pi-dynamic-allocation.yaml, spark-pi-pod-template.yaml, spark-pi-scheduled.yaml)."""

from __future__ import annotations

from derived_helpers import findings, line_of, plan, pods_of
from typer.testing import CliRunner

from karpplan.cli.main import app
from karpplan.costs.showback import runs_to_completion

runner = CliRunner()

POOL = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
        - {key: topology.kubernetes.io/zone, operator: In, values: [us-east-1a, us-east-1b, us-east-1c]}
---
"""

# examples/spark-pi.yaml (securityContext left out)
SPARK_PI = """\
apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata:
  name: spark-pi
  namespace: default
spec:
  type: Scala
  mode: cluster
  image: docker.io/apache/spark:4.0.4
  imagePullPolicy: IfNotPresent
  mainClass: org.apache.spark.examples.SparkPi
  mainApplicationFile: local:///opt/spark/examples/jars/spark-examples.jar
  arguments:
  - "5000"
  sparkVersion: 4.0.4
  driver:
    labels:
      version: 4.0.0
    cores: 1
    memory: 512m
    serviceAccount: spark-operator-spark
  executor:
    labels:
      version: 4.0.0
    instances: 1
    cores: 1
    memory: 512m
"""

# examples/spark-pi-pod-template.yaml (abridged): the driver's pod template with a podAffinity on Spark's own
# spark-app-name label, and resources Spark overrides.
POD_TEMPLATE = """\
apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata:
  name: spark-pi-pod-template
  namespace: default
spec:
  type: Scala
  mode: cluster
  sparkVersion: 4.0.4
  image: docker.io/apache/spark:4.0.4
  mainApplicationFile: local:///opt/spark/examples/jars/spark-examples.jar
  mainClass: org.apache.spark.examples.SparkPi
  driver:
    template:
      metadata:
        labels:
          spark.apache.org/version: 4.0.0
      spec:
        containers:
        - name: spark-kubernetes-driver
          resources:
            requests:
              cpu: 500m
              memory: 512Mi
            limits:
              cpu: 1
              memory: 1Gi
        nodeSelector:
          kubernetes.io/os: linux
        affinity:
          podAffinity:
            preferredDuringSchedulingIgnoredDuringExecution:
            - weight: 1
              podAffinityTerm:
                labelSelector:
                  matchLabels:
                    spark-app-name: spark-pi-pod-template
                topologyKey: kubernetes.io/hostname
        tolerations:
        - operator: Exists
          effect: NoSchedule
    cores: 1
    coreLimit: "1"
    memory: 512m
    memoryOverhead: 512m
  executor:
    instances: 1
    cores: 1
    memory: 1g
"""


def application(spec: str, name: str = "etl", kind: str = "SparkApplication") -> str:
    return f"""\
apiVersion: sparkoperator.k8s.io/v1beta2
kind: {kind}
metadata:
  name: {name}
  namespace: spark-jobs
spec:
{spec}"""






def test_spark_pi_is_a_driver_and_an_executor_with_the_memory_overhead_minimum() -> None:
    document = plan(POOL + SPARK_PI)
    driver = pods_of(document, "Job/spark-pi-driver")
    executors = pods_of(document, "Job/spark-pi-exec")
    assert len(driver) == 1 and len(executors) == 1
    # 512m with the overhead's 384 MiB floor (10% of 512 MiB is less)
    assert driver[0]["requests"] == {"cpu": "1", "memory": "896Mi"}
    assert executors[0]["requests"] == {"cpu": "1", "memory": "896Mi"}
    assert driver[0]["labels"]["spark-role"] == "driver"
    assert driver[0]["labels"]["sparkoperator.k8s.io/app-name"] == "spark-pi"
    assert executors[0]["labels"]["version"] == "4.0.0"
    assert all(p["node"] for p in driver + executors)


def test_a_run_is_charged_only_while_it_runs_and_a_streaming_one_all_month() -> None:
    document = plan(POOL + SPARK_PI)
    workloads = [w["workload"] for w in document["costs"]["workloads"] if "spark-pi" in w["workload"]]
    assert workloads and all(runs_to_completion(w) for w in workloads)
    streaming = SPARK_PI.replace("  sparkVersion: 4.0.4\n", "  sparkVersion: 4.0.4\n  restartPolicy:\n"
                                                            "    type: Always\n")
    workloads = [w["workload"] for w in plan(POOL + streaming)["costs"]["workloads"] if "spark-pi" in w["workload"]]
    assert workloads and not any(runs_to_completion(w) for w in workloads)


def test_the_overhead_is_ten_percent_forty_for_python_or_as_written() -> None:
    spec = """\
  type: {kind}
  driver:
    cores: 2
    memory: 4g
  executor:
    instances: 3
    coreRequest: 1500m
    cores: 2
    memory: 14g
{more}"""
    scala = plan(POOL + application(spec.format(kind="Scala", more="")))
    assert pods_of(scala, "Job/etl-driver")[0]["requests"] == {"cpu": "2", "memory": f"{4096 + 409}Mi"}
    executors = pods_of(scala, "Job/etl-exec")
    # coreRequest is the CPU request; cores stays the task slots
    assert len(executors) == 3 and executors[0]["requests"] == {"cpu": "1500m", "memory": f"{14336 + 1433}Mi"}
    python = plan(POOL + application(spec.format(kind="Python", more="")))
    assert pods_of(python, "Job/etl-driver")[0]["requests"]["memory"] == f"{4096 + 1638}Mi"
    written = plan(POOL + application(spec.format(kind="Python", more="  memoryOverheadFactor: \"0.2\"\n")))
    assert pods_of(written, "Job/etl-exec")[0]["requests"]["memory"] == f"{14336 + 2867}Mi"
    overhead = spec.format(kind="Scala", more="").replace("    memory: 14g\n", "    memory: 14g\n"
                                                         "    memoryOverhead: 1g\n")
    assert pods_of(plan(POOL + application(overhead)), "Job/etl-exec")[0]["requests"]["memory"] == \
        "15Gi"  # 14336Mi + 1024Mi


def test_spark_conf_sizes_what_the_fields_leave_unset() -> None:
    spec = """\
  type: Scala
  sparkConf:
    spark.executor.instances: "4"
    spark.executor.memory: 2g
    spark.driver.cores: "2"
  driver: {}
  executor: {}
"""
    document = plan(POOL + application(spec))
    executors = pods_of(document, "Job/etl-exec")
    assert len(executors) == 4 and executors[0]["requests"] == {"cpu": "1", "memory": f"{2048 + 384}Mi"}
    # the operator's defaults: 1 core, 1g
    assert pods_of(document, "Job/etl-driver")[0]["requests"] == {"cpu": "2", "memory": f"{1024 + 384}Mi"}


def test_dynamic_allocation_starts_the_most_of_initial_min_and_instances() -> None:
    spec = """\
  type: Scala
  driver: {cores: 1, memory: 512m}
  executor: {instances: 1, cores: 1, memory: 512m}
  dynamicAllocation:
    enabled: true
    initialExecutors: 2
    maxExecutors: 5
    minExecutors: 1
"""
    assert len(pods_of(plan(POOL + application(spec)), "Job/etl-exec")) == 2


def test_an_executor_too_big_for_every_type_is_reported_at_its_memory_with_spark_sizes() -> None:
    pool = POOL.replace("values: [on-demand]}", "values: [on-demand]}\n"
                        "        - {key: node.kubernetes.io/instance-type, operator: In, values: [m5.xlarge]}")
    spec = """\
  type: Scala
  driver:
    cores: 1
    memory: 2g
  executor:
    instances: 4
    cores: 3
    memory: 14g
"""
    text = pool + application(spec)
    found = [f for f in findings(text) if f.rule == "no-pool-can-launch"]
    assert len(found) == 1
    assert (found[0].object, found[0].field, found[0].line) == ("SparkApplication/spark-jobs/etl",
                                                               "spec.executor.memory", line_of(text, "memory: 14g"))
    assert "15769Mi" in found[0].message and "1433Mi overhead" in found[0].fix
    # The fix works: 12g with its 10% overhead fits an m5.xlarge.
    fixed = text.replace("memory: 14g", "memory: 12g")
    assert [f for f in findings(fixed) if f.severity == "error"] == []


def test_the_applications_node_selector_is_reported_where_it_is_written() -> None:
    spec = """\
  type: Scala
  nodeSelector:
    workload: spark
  driver:
    cores: 1
    memory: 1g
  executor:
    instances: 2
    cores: 1
    memory: 1g
    nodeSelector:
      disk: nvme
"""
    text = POOL + application(spec)
    hits = [f for f in findings(text) if f.rule == "no-pool-can-launch"]
    # the driver's and the executors' pods both ask for the application's label: one mistake, one finding
    assert [(f.field, f.line) for f in hits] == [("spec.nodeSelector[workload]", line_of(text, "workload: spark"))]
    assert "these 3 pod(s): 1 of spec.driver: " in hits[0].message and "; 2 of spec.executor: " in hits[0].message
    labelled = POOL.replace("  template:\n    spec:", "  template:\n    metadata: {labels: {workload: spark}}\n    spec:")
    text = labelled + application(spec)
    found = [(f.object, f.field, f.line) for f in findings(text) if f.rule == "no-pool-can-launch"]
    # the executors' own nodeSelector, over the application's
    assert found == [("SparkApplication/spark-jobs/etl", "spec.executor.nodeSelector[disk]",
                      line_of(text, "disk: nvme"))]


def test_a_shared_node_selector_is_one_finding_naming_both_roles() -> None:
    spec = """\
  type: Scala
  nodeSelector:
    workload: spark
  driver: {cores: 1, memory: 1g}
  executor: {instances: 2, cores: 1, memory: 1g}
"""
    text = POOL + application(spec)
    hits = [f for f in findings(text) if f.rule == "no-pool-can-launch"]
    assert [(f.field, f.line) for f in hits] == [("spec.nodeSelector[workload]", line_of(text, "workload: spark"))]
    assert "these 3 pod(s) (1 of spec.driver, 2 of spec.executor): " in hits[0].message
    assert 'label "workload"' in hits[0].message


def test_the_pod_templates_affinity_on_sparks_own_label_is_not_a_selector_that_misses() -> None:
    text = POOL + POD_TEMPLATE
    assert [f.rule for f in findings(text) if f.severity != "info"] == []
    driver = pods_of(plan(text), "Job/spark-pi-pod-template-driver")[0]
    # Spark's requests replace the template's: 1 core, 512m + the written 512m overhead
    assert driver["requests"] == {"cpu": "1", "memory": "1Gi"}
    assert driver["labels"]["spark-app-name"] == "spark-pi-pod-template"


def test_executors_of_a_run_are_not_asked_to_spread() -> None:
    spec = """\
  type: Scala
  driver: {cores: 1, memory: 1g}
  executor: {instances: 6, cores: 1, memory: 1g}
"""
    assert [f for f in findings(POOL + application(spec)) if f.rule == "replicas-without-spread"] == []


def test_a_scheduled_application_plans_one_run_at_its_template() -> None:
    spec = """\
  schedule: "@every 10m"
  concurrencyPolicy: Allow
  template:
    type: Scala
    driver:
      cores: 1
      memory: 512m
    executor:
      instances: 2
      cores: 1
      memory: 512m
      nodeSelector:
        pool: batch
"""
    text = POOL + application(spec, kind="ScheduledSparkApplication")
    document = plan(text)
    assert len(pods_of(document, "Job/etl-driver")) == 1
    found = [f for f in findings(text) if f.rule == "no-pool-can-launch"]
    assert [(f.field, f.line) for f in found] == [("spec.template.executor.nodeSelector[pool]",
                                                   line_of(text, "pool: batch"))]


def test_driver_pods_in_the_input_stand_for_the_driver() -> None:
    dump = """\
apiVersion: v1
kind: Pod
metadata:
  name: spark-pi-driver
  namespace: default
  labels: {sparkoperator.k8s.io/app-name: spark-pi, spark-role: driver}
spec:
  nodeName: ip-10-0-1-1.ec2.internal
  containers: [{name: spark-kubernetes-driver, image: spark}]
---
"""
    workloads = {p["workload"] for p in plan(POOL + dump + SPARK_PI)["pods"]}
    assert "Job/spark-pi-driver" not in workloads and "Job/spark-pi-exec" in workloads


def test_an_application_written_twice_is_named_as_written_not_as_its_jobs() -> None:
    # awslabs/data-on-eks spark-on-eks/examples: ebs-node-storage.yaml and mountpoint-s3-spark-job.yaml both
    # define SparkApplication spark-team-a/taxi-trip (alternatives, not meant to be applied together).
    other = SPARK_PI.replace("instances: 1", "instances: 2")  # the two files' applications differ
    result = runner.invoke(app, ["plan", "-"], input=POOL + SPARK_PI + "---\n" + other)
    assert result.exit_code == 2 and result.stdout == ""
    lines = [line for line in result.stderr.splitlines() if "defined twice" in line]
    first = line_of(POOL + SPARK_PI, "apiVersion: spark")
    second = first + len(SPARK_PI.splitlines()) + 1
    assert lines == [f"<stdin>:{second}: SparkApplication default/spark-pi is defined twice (first at <stdin>:{first})"]


def test_a_claim_the_executors_mount_binds_them_to_its_zone_and_not_the_driver() -> None:
    # data-on-eks spark-app-ondemand.yaml's pattern: spec.volumes holds a claim of a zonal volume, the role's
    # volumeMounts pick it (the webhook adds the volumes a role mounts).
    volume = """\
apiVersion: v1
kind: PersistentVolume
metadata:
  name: shared-data
spec:
  capacity: {storage: 100Gi}
  accessModes: [ReadWriteMany]
  storageClassName: ""
  csi: {driver: s3.csi.aws.com, volumeHandle: s3-csi-driver-volume}
  nodeAffinity:
    required:
      nodeSelectorTerms:
      - matchExpressions:
        - {key: topology.kubernetes.io/zone, operator: In, values: [us-east-1d]}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: shared-data, namespace: spark-jobs}
spec:
  accessModes: [ReadWriteMany]
  storageClassName: ""
  volumeName: shared-data
  resources: {requests: {storage: 100Gi}}
---
"""
    spec = """\
  type: Scala
  volumes:
    - name: spark-log4j2
      configMap: {name: spark-log4j2-config}
    - name: data
      persistentVolumeClaim: {claimName: shared-data}
  driver:
    cores: 1
    memory: 1g
    volumeMounts:
      - {name: spark-log4j2, mountPath: /opt/spark/log4j2-custom}
  executor:
    instances: 3
    memory: 1g
    volumeMounts:
      - {name: data, mountPath: /data}
"""
    document = plan(POOL + volume + application(spec))
    # The pool launches in us-east-1a/b/c only: the executors wait for us-east-1d, the driver runs.
    assert sorted(p["pod"] for p in document["unschedulable"]) == [f"spark-jobs/etl-exec-{i}" for i in range(3)]
    assert pods_of(document, "Job/etl-driver")[0]["node"]
    widened = POOL.replace("us-east-1c]", "us-east-1c, us-east-1d]")
    placed = pods_of(plan(widened + volume + application(spec)), "Job/etl-exec")
    assert all("us-east-1d" in p["node"] for p in placed) and len(placed) == 3


def test_sparks_own_gpu_request_in_spark_conf_is_the_executors_limit() -> None:
    # data-on-eks spark-rapids-app-gpus.yaml's sparkConf (the operator's executor.gpu left out)
    spec = """\
  type: Python
  sparkConf:
    "spark.executor.resource.gpu.amount": "1"
    "spark.task.resource.gpu.amount": "1"
    "spark.executor.resource.gpu.discoveryScript": "/opt/sparkRapidsPlugin/getGpusResources.sh"
    "spark.executor.resource.gpu.vendor": "nvidia.com"
  driver: {cores: 1, memory: 1g}
  executor: {instances: 2, cores: 4, memory: 8g}
"""
    pools = POOL.replace("values: [on-demand]}", "values: [on-demand]}\n"
                         "        - {key: karpenter.k8s.aws/instance-family, operator: In, values: [g5]}")
    document = plan(pools + application(spec))
    executors = pods_of(document, "Job/etl-exec")
    assert [p["requests"]["nvidia.com/gpu"] for p in executors] == ["1", "1"]
    assert "nvidia.com/gpu" not in pods_of(document, "Job/etl-driver")[0]["requests"]
