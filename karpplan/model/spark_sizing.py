"""What Spark on Kubernetes requests for a driver or an executor pod of a SparkApplication (apache/spark
resource-managers/kubernetes BasicDriverFeatureStep, BasicExecutorFeatureStep; kubeflow/spark-operator
api/v1beta2/defaults.go, internal/controller/sparkapplication/submission.go).

* CPU request: `coreRequest` (`spark.kubernetes.{driver,executor}.request.cores`), else `cores`
  (`spark.{driver,executor}.cores`; the operator's default 1). CPU limit: `coreLimit`, else none.
* Memory request and limit: `memory` (`spark.{driver,executor}.memory`, a Java size, MiB without a unit; the
  operator's default 1g) plus the overhead: `memoryOverhead` (`spark.{driver,executor}.memoryOverhead`), else
  max(factor x memory, 384 MiB). The factor: `spark.{driver,executor}.memoryOverheadFactor`, else
  `spec.memoryOverheadFactor` (`spark.kubernetes.memoryOverheadFactor`), else 0.1, or 0.4 for a Python or R
  application (a non-JVM resource). An executor adds `spark.executor.pyspark.memory` when it is set.
  `memoryLimit` (the operator's webhook) replaces the memory limit.
* The CR's fields are passed to spark-submit after `sparkConf`, so they win over it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

DEFAULT_CORES = 1  # api/v1beta2/defaults.go
DEFAULT_MEMORY_MIB = 1024  # "1g"
OVERHEAD_FACTOR = 0.1  # spark.kubernetes.memoryOverheadFactor
NON_JVM_OVERHEAD_FACTOR = 0.4  # Python and R applications
MIN_OVERHEAD_MIB = 384  # ResourceProfile.MEMORY_OVERHEAD_MIN_MIB
NON_JVM_TYPES = ("python", "r")

_UNITS = {"": 1 / 1024 / 1024, "b": 1 / 1024 / 1024, "k": 1 / 1024, "kb": 1 / 1024, "m": 1, "mb": 1,
          "g": 1024, "gb": 1024, "t": 1024 ** 2, "tb": 1024 ** 2, "p": 1024 ** 3, "pb": 1024 ** 3}
_SIZE = re.compile(r"^\s*(\d+)\s*([a-z]*)\s*$", re.IGNORECASE)


def mebibytes(value: object) -> int | None:
    """A Spark size (`512m`, `2g`, `4096`: MiB without a unit) in MiB; None when it is not one."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value >= 0 else None
    if not isinstance(value, str):
        return None
    match = _SIZE.match(value)
    if match is None:
        return None
    number, unit = int(match.group(1)), match.group(2).lower()
    if unit == "":
        return number  # spark.{driver,executor}.memory and memoryOverhead read a bare number as MiB
    scale = _UNITS.get(unit)
    return None if scale is None else int(number * scale)


def _factor(value: object) -> float | None:
    try:
        factor = float(value) if isinstance(value, (str, int, float)) and not isinstance(value, bool) else None
    except ValueError:
        return None
    return factor if factor is not None and factor >= 0 else None


@dataclass(frozen=True)
class PodSize:
    """A Spark pod's main container: CPU request (a quantity), memory request (MiB), limits."""

    cpu: str
    memory_mib: int
    memory: int  # the memory setting (MiB)
    overhead: int  # the overhead added to it (MiB)
    cpu_limit: str | None
    memory_limit: str | None  # `memoryLimit`, in MiB

    def resources(self) -> dict[str, Any]:
        limits: dict[str, Any] = {"memory": self.memory_limit or f"{self.memory_mib}Mi"}
        if self.cpu_limit is not None:
            limits["cpu"] = self.cpu_limit
        return {"requests": {"cpu": self.cpu, "memory": f"{self.memory_mib}Mi"}, "limits": limits}


def pod_size(role: str, spec: Mapping[str, Any], app: Mapping[str, Any]) -> PodSize:
    """The size Spark gives the `role` (`driver` | `executor`) pod written at `spec` of the application `app`."""
    conf_raw = app.get("sparkConf")
    conf: Mapping[str, Any] = conf_raw if isinstance(conf_raw, dict) else {}

    def setting(field: str, key: str) -> object:
        value = spec.get(field)
        return value if value is not None else conf.get(key)

    cores = setting("cores", f"spark.{role}.cores")
    request = setting("coreRequest", f"spark.kubernetes.{role}.request.cores")
    if isinstance(request, (str, int, float)) and not isinstance(request, bool) and str(request).strip():
        cpu = str(request).strip()
    elif isinstance(cores, (str, int)) and not isinstance(cores, bool) and str(cores).strip().isdigit():
        cpu = str(int(str(cores).strip()))
    else:
        cpu = str(DEFAULT_CORES)
    memory = mebibytes(setting("memory", f"spark.{role}.memory"))
    memory = DEFAULT_MEMORY_MIB if memory is None else memory
    written_overhead = mebibytes(setting("memoryOverhead", f"spark.{role}.memoryOverhead"))
    if written_overhead is not None:
        overhead = written_overhead
    else:
        factor = _factor(conf.get(f"spark.{role}.memoryOverheadFactor"))
        if factor is None:
            factor = _factor(app.get("memoryOverheadFactor"))
        if factor is None:
            factor = _factor(conf.get("spark.kubernetes.memoryOverheadFactor"))
        if factor is None:
            kind = app.get("type")
            factor = NON_JVM_OVERHEAD_FACTOR if isinstance(kind, str) and kind.lower() in NON_JVM_TYPES \
                else OVERHEAD_FACTOR
        overhead = max(int(factor * memory), MIN_OVERHEAD_MIB)
    pyspark = mebibytes(conf.get("spark.executor.pyspark.memory")) if role == "executor" else None
    total = memory + overhead + (pyspark or 0)
    limit = spec.get("coreLimit", conf.get(f"spark.kubernetes.{role}.limit.cores"))
    memory_limit = mebibytes(spec.get("memoryLimit"))  # the webhook converts the Java size (`2g`) to `2048Mi`
    return PodSize(cpu, total, memory, overhead,
                   str(limit) if isinstance(limit, (str, int, float)) and not isinstance(limit, bool) else None,
                   None if memory_limit is None else f"{memory_limit}Mi")
