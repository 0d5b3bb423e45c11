"""EKS's ExtendedResourceToleration admission plugin: a pod that requests an extended resource (nvidia.com/gpu,
aws.amazon.com/neuron) is created with a toleration of the taint of that name, so it runs on the GPU pool's
tainted nodes without writing one; a pod that does not ask for it, or a quota name, gets nothing."""

from __future__ import annotations

import io

from karpplan.inputs.loader import read_documents
from karpplan.model.build import build_inventory
from karpplan.model.build_pods import is_extended_resource
from karpplan.model.taints import Toleration

POD = """\
apiVersion: v1
kind: Pod
metadata: {{name: p}}
spec:
  containers:
  - name: c
    resources: {{limits: {{{limits}}}}}
  tolerations: [{{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}}]
"""


def tolerations_of(text: str) -> tuple[Toleration, ...]:
    documents, problems = read_documents(["-"], stdin=io.StringIO(text))
    assert not problems
    (pod,) = build_inventory(documents).pods
    return pod.template.tolerations


def test_a_gpu_pod_tolerates_its_resources_taint_once() -> None:
    gpu = Toleration(key="nvidia.com/gpu", operator="Exists", effect="NoSchedule")
    efa = Toleration(key="vpc.amazonaws.com/efa", operator="Exists", effect="NoSchedule")
    assert tolerations_of(POD.format(limits="nvidia.com/gpu: 1, vpc.amazonaws.com/efa: 1")) == (gpu, efa)
    no_gpu = POD.format(limits="cpu: 1").replace("  tolerations: [{key: nvidia.com/gpu, operator: Exists, "
                                                 "effect: NoSchedule}]\n", "")
    assert tolerations_of(no_gpu) == ()


def test_what_is_an_extended_resource() -> None:
    assert is_extended_resource("nvidia.com/gpu") and is_extended_resource("aws.amazon.com/neuron")
    assert not is_extended_resource("cpu") and not is_extended_resource("hugepages-2Mi")
    assert not is_extended_resource("kubernetes.io/batch-cpu")
    assert not is_extended_resource("requests.nvidia.com/gpu")
