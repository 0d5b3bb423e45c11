"""Every custom resource whose controller creates workloads karpplan plans (a Prometheus, a LeaderWorkerSet, a
RayCluster, Strimzi's Kafka, a CloudNativePG Cluster, an ECK Elasticsearch, a SparkApplication, a RabbitmqCluster,
Zalando's postgresql, an OpenTelemetryCollector, a FlinkDeployment): which documents they are, and the input
with the workloads their controllers create added after each. The one list of them: the builder reads the input
through it, lint reads the derived pod specs through it."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from karpplan.inputs.loader import Document
from karpplan.model.cloudnative_pg import expand_cnpg_clusters, is_cnpg_cluster
from karpplan.model.elasticsearch_eck import expand_eck_elasticsearch, is_eck_elasticsearch
from karpplan.model.flink import expand_flink_deployments, is_flink_deployment
from karpplan.model.leader_worker_set import expand_leader_worker_sets, is_leader_worker_set
from karpplan.model.otel_collector import expand_otel_collectors, is_otel_collector
from karpplan.model.prometheus_operator import (
    DerivedWorkload,
    expand_operator_resources,
    is_operator_resource,
)
from karpplan.model.rabbitmq_cluster import expand_rabbitmq_clusters, is_rabbitmq_cluster
from karpplan.model.ray_cluster import expand_ray_clusters, is_ray_cluster
from karpplan.model.spark_operator import expand_spark_applications, is_spark_application
from karpplan.model.strimzi import expand_strimzi, is_strimzi_resource
from karpplan.model.zalando_postgres import expand_zalando_postgresqls, is_zalando_postgresql

Expand = Callable[[Sequence[Document]], tuple[list[Document], list[DerivedWorkload]]]

_EXPANDERS: tuple[tuple[Callable[[Document], bool], Expand], ...] = (
    (is_operator_resource, expand_operator_resources),
    (is_leader_worker_set, expand_leader_worker_sets),
    (is_ray_cluster, expand_ray_clusters),
    (is_strimzi_resource, expand_strimzi),
    (is_cnpg_cluster, expand_cnpg_clusters),
    (is_eck_elasticsearch, expand_eck_elasticsearch),
    (is_spark_application, expand_spark_applications),
    (is_rabbitmq_cluster, expand_rabbitmq_clusters),
    (is_zalando_postgresql, expand_zalando_postgresqls),
    (is_otel_collector, expand_otel_collectors),
    (is_flink_deployment, expand_flink_deployments),
)


def made_into_workloads(doc: Document) -> bool:
    """A custom resource a controller makes workloads of."""
    return any(is_resource(doc) for is_resource, _ in _EXPANDERS)


def expand_operator_workloads(documents: Sequence[Document]) -> tuple[list[Document], list[DerivedWorkload]]:
    """`documents` with each such resource followed by the workloads its controller creates, and what was
    derived, kind by kind."""
    out = list(documents)
    derived: list[DerivedWorkload] = []
    for _, expand in _EXPANDERS:
        out, made = expand(out)
        derived.extend(made)
    return out, derived
