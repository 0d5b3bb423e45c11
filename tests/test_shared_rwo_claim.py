"""Replicas mounting one ReadWriteOnce claim (karpenter-blueprints' stateful blueprint: a Deployment of 3 replicas
and one EBS PVC `ebs-claim`): they can only run on one node, so lint gives no spread advice and plan and lint say
why, once per workload."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from karpplan.cli.main import app

from conftest import FIXTURES

# https://github.com/aws-samples/karpenter-blueprints/tree/main/blueprints/stateful (with its NodePool)
BLUEPRINT = (FIXTURES / "real" / "blueprint-stateful-placeholder-zone.yaml").read_text().replace(
    "<<AVAILABILITY_ZONE>>", "us-east-1a"
)
HOST_SPREAD = """      topologySpreadConstraints:
      - maxSkew: 1
        topologyKey: kubernetes.io/hostname
        whenUnsatisfiable: DoNotSchedule
        labelSelector:
          matchLabels:
            app: stateful
      volumes:
"""
MULTI_ATTACH = ("Deployment/stateful: 3 replicas mount ReadWriteOnce claim ebs-claim: an EBS volume attaches to one "
                "node, so replicas placed on other nodes fail to start (Multi-Attach error); run 1 replica, use a "
                "StatefulSet with volumeClaimTemplates, or a ReadWriteMany volume (EFS)")


def run(*args: str, manifests: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["--color", "never", *args, "-"], input=manifests)
    return result.exit_code, result.stdout


def plan_warnings(manifests: str) -> list[str]:
    code, out = run("plan", "--time-limit", "2", "--zones", "us-east-1a", "-o", "json", manifests=manifests)
    assert code == 0, out
    return list(json.loads(out)["warnings"])


def lint_findings(manifests: str) -> list[dict[str, object]]:
    code, out = run("lint", "-o", "json", manifests=manifests)
    assert code in (0, 1), out
    return list(json.loads(out)["findings"])


def test_plan_warns_once_that_the_replicas_need_one_node() -> None:
    warnings = plan_warnings(BLUEPRINT)
    assert [w for w in warnings if "Multi-Attach" in w] == [f"<stdin>:29: {MULTI_ATTACH}"]


def test_lint_says_why_instead_of_advising_a_spread() -> None:
    for manifests in (BLUEPRINT, BLUEPRINT.replace("      volumes:\n", HOST_SPREAD)):
        (finding,) = [f for f in lint_findings(manifests) if f["code"] == "KPL301"]
        assert "spread" not in str(finding["message"]) + str(finding["fix"])
        assert finding["message"] == MULTI_ATTACH.split(": ", 1)[1].split("; run")[0]
        assert finding["fix"] == "run 1 replica, use a StatefulSet with volumeClaimTemplates, or a ReadWriteMany volume (EFS)"


def test_read_write_once_pod_leaves_the_others_pending() -> None:
    manifests = BLUEPRINT.replace("- ReadWriteOnce", "- ReadWriteOncePod")
    (warning,) = [w for w in plan_warnings(manifests) if "ebs-claim" in w]
    assert "3 replicas mount ReadWriteOncePod claim ebs-claim: only one pod may use it, so the scheduler leaves 2 of " \
           "them pending" in warning


def test_shareable_claims_and_one_replica_are_not_flagged() -> None:
    for manifests in (
        BLUEPRINT.replace("- ReadWriteOnce", "- ReadWriteMany"),
        BLUEPRINT.replace("provisioner: ebs.csi.aws.com", "provisioner: efs.csi.aws.com"),
        BLUEPRINT.replace("replicas: 3", "replicas: 1"),
    ):
        assert not [w for w in plan_warnings(manifests) if "ebs-claim" in w]
        assert not [f for f in lint_findings(manifests) if "ebs-claim" in str(f["message"])]
    # Without the claim, the usual spread advice is back.
    (finding,) = [f for f in lint_findings(BLUEPRINT.replace("- ReadWriteOnce", "- ReadWriteMany"))
                  if f["code"] == "KPL301"]
    assert "topologySpreadConstraint" in str(finding["fix"])
