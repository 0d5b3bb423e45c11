"""Real manifests of session 20's sweep (fixtures/real-survey, see each SOURCES): what lint said wrong of them."""

from __future__ import annotations

from pathlib import Path

from karpplan.lint.core import Finding
from karpplan.lint.run import LintOptions, lint

SURVEY = Path(__file__).resolve().parent.parent / "fixtures" / "real-survey"


def findings(*paths: Path) -> list[Finding]:
    return list(lint(LintOptions(paths=tuple(str(p) for p in paths))).findings)


def test_a_single_angle_placeholder_in_a_volumes_zone_is_reported_as_unrendered() -> None:
    # data-on-eks spark-app-spot-r.yaml: the S3 Express PV's zone is "<S3_DIRECTORY_BUCKET_AZ>"
    tree = SURVEY / "data-on-eks-spark-s3-express"
    found = [f for f in findings(tree) if f.severity != "info"]
    assert [(f.rule, f.object) for f in found] == [("unrendered-placeholder", "PersistentVolume/spark-s3-mount-spotr-pv")]
    assert "<S3_DIRECTORY_BUCKET_AZ>" in found[0].message
    assert found[0].fix.startswith("replace <S3_DIRECTORY_BUCKET_AZ> with your cluster's value")


def test_rendered_the_driver_and_executors_are_told_their_own_node_selectors(tmp_path: Path) -> None:
    tree = SURVEY / "data-on-eks-spark-s3-express"
    rendered = tmp_path / "spark-app-spot-r.yaml"
    rendered.write_text((tree / "spark-app-spot-r.yaml").read_text().replace("<S3_DIRECTORY_BUCKET_AZ>", "us-east-1a"))
    found = [f for f in findings(tree / "ec2nodeclass.yaml", tree / "nodepool-memory-optimized.yaml", rendered)
             if f.severity != "info"]
    assert sorted((f.rule, f.field) for f in found) == [
        ("no-pool-can-launch", "spec.driver.nodeSelector[NodeGroupType]"),
        ("no-pool-can-launch", "spec.executor.nodeSelector[NodeGroupType]")]
