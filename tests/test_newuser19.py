"""What a new user's trial in us-west-2 found (session 19: data-on-eks's GPU and Neuron NodePools): the note that
the region's catalog lacks a pool's fitting types is said only where a catalog could change the answer."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from karpplan.cli.main import app

# eks-workshop-v2's `aiml` pool (inf2/trn1, no neuron-device label) and a `neuron` pool that defines the label;
# us-west-2's embedded price list has neither inf2 nor trn1.
POOLS = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: aiml}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - {key: karpenter.k8s.aws/instance-family, operator: In, values: [inf2, trn1]}
        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: neuron}
spec:
  template:
    metadata: {labels: {neuron.amazonaws.com/neuron-device: "true"}}
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - {key: node.kubernetes.io/instance-type, operator: In, values: [inf2.xlarge]}
        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
---
apiVersion: v1
kind: Pod
metadata: {name: mistral, namespace: vllm}
spec:
  nodeSelector: {neuron.amazonaws.com/neuron-device: "true"}
  containers:
    - name: vllm
      image: public.ecr.aws/neuron/pytorch-inference-vllm-neuronx
      resources:
        requests: {cpu: "3", memory: 12Gi}
        limits: {aws.amazon.com/neuron: 1}
"""


def test_the_catalog_note_is_said_only_for_a_pool_that_could_take_the_pod(tmp_path: Path) -> None:
    (tmp_path / "all.yaml").write_text(POOLS)
    result = CliRunner().invoke(app, ["plan", str(tmp_path), "--region", "us-west-2", "-o", "json"])
    assert result.exit_code == 1, result.output
    (pod,) = json.loads(result.stdout)["unschedulable"]
    by_pool = {r.split('"')[1]: r for r in pod["reasons"] if r.startswith('nodepool "')}
    # aiml never gets as far as its types: it does not define the label the pod selects
    assert 'label "neuron.amazonaws.com/neuron-device" does not have known values' in by_pool["aiml"]
    assert "catalog lacks" not in by_pool["aiml"]
    # neuron would take it on inf2.xlarge, which the us-west-2 catalog lacks: that is said, with the remedy
    assert "inf2.xlarge, which the embedded us-west-2 catalog lacks" in by_pool["neuron"]
    assert "--allow-estimated-prices" in by_pool["neuron"]
