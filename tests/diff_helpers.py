"""Manifests for the diff tests: a one-zone m5.large NodePool and Deployments, written as files."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import manifests
from manifests import HOSTNAME, INSTANCE_TYPE, ON_DEMAND, ZONE, ec2nodeclass, nodepool


def pool(instance_type: str = "m5.large") -> str:
    """An on-demand NodePool of one instance type in us-east-1a, and its EC2NodeClass."""
    requirements = {**ON_DEMAND, INSTANCE_TYPE: (instance_type,), ZONE: ("us-east-1a",)}
    return "---\n".join([nodepool(requirements=requirements), ec2nodeclass()])


def deployment(name: str, replicas: int, *, cpu: str = "1", zone: str | None = None, namespace: str = "shop") -> str:
    """`replicas` pods of `cpu` and 1Gi, spread over hosts (ScheduleAnyway), pinned to `zone` if given."""
    return manifests.deployment(name, replicas, namespace=namespace, cpu=cpu, container="app",
                                image="public.ecr.aws/nginx/nginx:1.27", spread=(HOSTNAME, "ScheduleAnyway"),
                                zone=zone)


def write(path: Path, *documents: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("---\n".join(documents))
    return path


def karpplan(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "karpplan", *args], capture_output=True, text=True, timeout=120,
                          cwd=cwd, env=env)
