#!/usr/bin/env python3
"""Write docs/explain.md: one worked example per log dialect, each with a real upstream line, the command,
what `karpplan explain` prints for it (run here, not pasted by hand) and the fix a user would apply.
tests/test_explain_docs.py fails when the page no longer matches what the command prints."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import NamedTuple

from typer.testing import CliRunner

TARGET = Path(__file__).resolve().parent.parent / "docs" / "explain.md"


class Example(NamedTuple):
    title: str
    source: str  # where the line was pasted (a real upstream issue), or "" when illustrative
    line: str
    fix: str  # the change a user would make, as markdown


EXAMPLES = [
    Example("Karpenter v0.5–v0.15 (console, `matched 0/N provisioners`)", "https://github.com/aws/karpenter-provider-aws/issues/1735",
            "Could not schedule pod, matched 0/1 provisioners, tried provisioner/default: did not tolerate "
            "nvidia.com/gpu=true:NoSchedule",
            "Add a toleration for `nvidia.com/gpu=true:NoSchedule` to the GPU pod (a Provisioner's `spec.taints`), or "
            "remove the taint if every pod may use those nodes."),
    Example("Karpenter v0.6 (console)", "https://github.com/aws/karpenter-provider-aws/issues/1308",
            '2022-02-09T22:20:06.877Z\tDEBUG\tcontroller.selection\tIgnoring pod, pod anti-affinity is not supported\t'
            '{"commit": "df57892", "pod": "default/elasticsearch-master-0"}',
            "Upgrade Karpenter (pod anti-affinity is supported since v0.9), or drop the "
            "`spec.affinity.podAntiAffinity` term from the StatefulSet's pod template."),
    Example("Karpenter v0.16–v0.31 (console, Provisioner)", "https://github.com/aws/karpenter-provider-aws/issues/2383",
            'ERROR\tcontroller.provisioning\tCould not schedule pod, incompatible with provisioner "default", incompatible '
            'requirements, key karpenter.sh/provisioner-name, karpenter.sh/provisioner-name DoesNotExist not in '
            'karpenter.sh/provisioner-name In [default]\t{"commit": "639756a", "pod": "karpenter/karpenter-788545f8d9-qjnx5"}',
            "The pod (here Karpenter's own controller) keeps away from Karpenter-launched nodes "
            "(`karpenter.sh/provisioner-name DoesNotExist`): that is intended, so run it on a managed node group "
            "or Fargate instead of expecting the Provisioner to launch a node for it."),
    Example("Karpenter v0.16–v0.31 (JSON, Provisioner)", "https://github.com/aws/karpenter-provider-aws/issues/2476",
            '{"level":"ERROR","time":"2022-09-08T17:59:04.478Z","logger":"controller.provisioning","message":"Could not '
            'schedule pod, incompatible with provisioner \\"test\\", no instance type satisfied resources {\\"pods\\":'
            '\\"1\\"} and requirements node.kubernetes.io/instance-type In [m6i.xlarge], karpenter.sh/provisioner-name '
            'In [test], karpenter.sh/capacity-type In [on-demand], topology.kubernetes.io/zone DoesNotExist, node-type '
            'In [node], kubernetes.io/arch In [amd64], manged-by In [karpenter]","pod":"kube-public/example-karpenter"}',
            "Most likely `topology.kubernetes.io/zone DoesNotExist` leaves no offering (every instance type is offered in a zone): "
            "remove that term from the pod's node affinity, or give the Provisioner a zone requirement:\n\n"
            "```yaml\n  requirements:\n    - key: topology.kubernetes.io/zone\n      operator: In\n"
            "      values: [us-east-1a, us-east-1b]\n```"),
    Example("Karpenter v0.32–v0.37 (JSON, NodePool)", "https://github.com/kubernetes-sigs/karpenter/issues/1162",
            '{"level":"ERROR","time":"2024-04-03T06:40:04.552Z","logger":"controller.provisioner","message":"Could not '
            'schedule pod, incompatible with nodepool \\"default\\", daemonset overhead={\\"cpu\\":\\"675m\\",\\"memory\\":'
            '\\"390Mi\\",\\"pods\\":\\"6\\"}, incompatible requirements, label \\"nodegroup\\" does not have known values",'
            '"commit":"17d6c05","pod":"com-dtv-dcp-dpd/beamacctgetprofilems-green-746d677b76-lghl4"}',
            "Either give the NodePool the label the pod selects on:\n\n```yaml\nspec:\n  template:\n    metadata:\n"
            "      labels:\n        nodegroup: apps\n```\n\nor remove `nodegroup` from the pod's `nodeSelector` "
            "(a leftover from managed node groups)."),
    Example("Karpenter v1.0–v1.4 (JSON, `Pod` object and `error`)", "https://github.com/kubernetes-sigs/karpenter/issues/2123",
            '{"level":"ERROR","time":"2025-04-04T10:15:40.110Z","logger":"controller","caller":"provisioning/provisioner.go:350",'
            '"message":"could not schedule pod","controller":"provisioner","namespace":"","name":"","reconcileID":'
            '"9aec5d56-039d-4b85-bcbd-78e58bfef269","Pod":{"name":"nginx-565d69d9cd-g5fkp","namespace":"default"},"error":'
            '"incompatible with nodepool \\"worker-multi-az-xxlarge\\", daemonset overhead={\\"cpu\\":\\"681m\\",\\"memory\\":'
            '\\"652Mi\\",\\"pods\\":\\"11\\"}, incompatible requirements, label \\"node-role.kaas.acquia.io/stable\\" does not '
            'have known values (typo of \\"acquia.io/stage\\"?); incompa…',
            "Fix the spelling of the label in the pod's `nodeSelector` (or node affinity) so it names a label the "
            "NodePool sets in `spec.template.metadata.labels`."),
    Example("Karpenter v1.5+ (event message, bare reasons)", "https://github.com/kubernetes-sigs/karpenter/issues/2809",
            'Failed to schedule pod, unsatisfiable topology constraint for pod affinity, key=topology.kubernetes.io/zone '
            '(counts = us-east-1a: 0, us-east-1b: 0, us-east-1c: 0, podDomains = topology.kubernetes.io/zone Exists, '
            'nodeDomains = topology.kubernetes.io/zone In [us-east-1a us-east-1b us-east-1c]; incompatible requirements, '
            'key karpenter.sh/nodepool, karpenter.sh/nodepool In [public] not in karpenter.sh/nodepool In [private] ...',
            "No pod the affinity follows runs in any zone yet, and a new node cannot change that: make the term "
            "preferred, or start the pods it follows first.\n\n```yaml\n  affinity:\n    podAffinity:\n"
            "      preferredDuringSchedulingIgnoredDuringExecution:\n        - weight: 100\n"
            "          podAffinityTerm: {topologyKey: topology.kubernetes.io/zone, labelSelector: {matchLabels: {app: db}}}\n```"),
    Example("Karpenter v1.5+ (JSON behind `kubectl logs --prefix`; the issue's line shortened to its first reason)", "https://github.com/kubernetes-sigs/karpenter/issues/3272",
            '[pod/karpenter-78748f59d4-hnx82/controller] {"level":"ERROR","time":"2026-09-02T13:12:57.030Z","logger":'
            '"controller","message":"could not schedule pod","Pod":{"name":"spread-workload-8695444944-d5g7x","namespace":'
            '"lab"},"error":"incompatible requirements, key karpenter.sh/nodepool, karpenter.sh/nodepool In '
            '[non-existent-zone] not in karpenter.sh/nodepool In [default]"}',
            "The pod pins `karpenter.sh/nodepool: non-existent-zone`, a NodePool that does not exist: point the "
            "selector at an existing NodePool (`default`) or create that NodePool."),
    Example("`kubectl describe pod` Events (Karpenter)", "https://github.com/aws/karpenter-provider-aws/issues/7999",
            '  Warning  FailedScheduling  16s   karpenter        Failed to schedule pod, incompatible with nodepool '
            '"default", daemonset overhead={"cpu":"629m","ephemeral-storage":"100Mi","memory":"1248Mi","pods":"11"}, '
            'unsatisfiable topology constraint for pod affinity, key=kubernetes.io/hostname (counts = '
            'ip-10-60-53-184.ec2.internal: 0, ip-10-60-53-209.ec2.internal: 0, podDomains = kubernetes.io/hostname…',
            "Required pod affinity on `kubernetes.io/hostname` can only be met on a node that already runs a matching "
            "pod; a new node never can. Use `preferredDuringSchedulingIgnoredDuringExecution`, or a zone key."),
    Example("`kubectl get events` (illustrative: no upstream issue pastes this layout whole)", "",
            "default     2m          Warning   FailedScheduling   pod/api-7d9f8b6c5d-x2x3z   0/5 nodes are available: "
            "2 Insufficient cpu, 3 node(s) didn't match Pod's node affinity/selector.",
            "Lower `resources.requests.cpu`, or let Karpenter add a node: the existing nodes are full or excluded by "
            "the pod's node affinity."),
    Example("`kubectl get events` row without its LAST SEEN column (cluster-autoscaler)",
            "https://github.com/pegasystems/pega-helm-charts/issues/663",
            "Normal    NotTriggerScaleUp        pod/pega-web-1                  pod didn't trigger scale-up: 1 "
            "Insufficient memory, 1 node(s) had volume node affinity conflict",
            "Give each zone its own node group (the volume is pinned to one zone), tagged with its zone label when it "
            "scales from zero, so cluster-autoscaler can add a node where the volume is."),
    Example("default-scheduler FitError", "https://github.com/kubernetes-sigs/karpenter/issues/932",
            "  Warning  FailedScheduling  77s (x3 over 4m14s)  default-scheduler  0/8 nodes are available: 1 Insufficient "
            "memory, 1 node(s) didn't find available persistent volumes to bind, 2 node(s) had untolerated taint "
            "{eks.amazonaws.com/compute-type: fargate}, 4 node(s) had untolerated taint {im-a-sparklike: true}. "
            "preemption: 0/8 nodes are available: 1 No preemption victims found for incoming pod, 7 Preemption is not "
            "helpful for scheduling..",
            "Nothing to add to the pod for the Fargate nodes (a Fargate profile places pods there); check the "
            "PersistentVolumeClaim's zone, and add a toleration only if the pod may run on the `im-a-sparklike` "
            "nodes:\n\n```yaml\n  tolerations:\n    - {key: im-a-sparklike, operator: Equal, value: \"true\", "
            "effect: NoSchedule}\n```"),
    Example("cluster-autoscaler NotTriggerScaleUp", "https://github.com/kubernetes/autoscaler/issues/3503",
            'I0910 18:42:33.914842       1 event.go:281] Event(v1.ObjectReference{Kind:"Pod", Namespace:"test", '
            'Name:"test-69c4886596-pssfj", UID:"bb1cd249-0fd3-42b9-bc01-f22b0bbafa64", APIVersion:"v1", '
            'ResourceVersion:"11897361", FieldPath:""}): type: \'Normal\' reason: \'NotTriggerScaleUp\' pod didn\'t '
            "trigger scale-up (it wouldn't fit if a new node is added): 1 node(s) didn't match node selector",
            "Give the node group the label the pod's `nodeSelector` asks for (its template labels / the ASG tag "
            "`k8s.io/cluster-autoscaler/node-template/label/<key>`), or change the selector to a label the group has."),
    Example("`kubectl describe pod` pasted whole (its fields are context; here cut above `Conditions:`)",
            "https://github.com/klothoplatform/klotho/issues/553",
            "QoS Class:                   Guaranteed\n"
            "Node-Selectors:              eks.amazonaws.com/nodegroup=private_t3_xlarge\n"
            "                             network_placement=private\n"
            "Tolerations:                 node.kubernetes.io/not-ready:NoExecute op=Exists for 300s\n"
            "                             node.kubernetes.io/unreachable:NoExecute op=Exists for 300s\n"
            "Events:\n"
            "  Type     Reason            Age   From               Message\n"
            "  ----     ------            ----  ----               -------\n"
            "  Warning  FailedScheduling  5m2s  default-scheduler  0/4 nodes are available: 4 node(s) didn't match "
            "Pod's node affinity/selector. preemption: 0/4 nodes are available: 4 Preemption is not helpful for "
            "scheduling.",
            "Give a node group both labels the pod's Node-Selectors name (`eks.amazonaws.com/nodegroup` is set by EKS "
            "to the managed node group's name, so `private_t3_xlarge` must be an existing group's exact name), or "
            "change the selector to labels the nodes carry (`kubectl get nodes -L eks.amazonaws.com/nodegroup`)."),
    Example("cluster-autoscaler filter-out-schedulable (no scale-up for a pod it thinks fits)",
            "https://github.com/neondatabase/autoscaling/issues/64",
            "cluster-autoscaler-76fdd8b4d-tb49v cluster-autoscaler I0223 15:23:21.970141       1 "
            "filter_out_schedulable.go:118] Pod default.compute-node-ep-curly-snowflake-209252-66c8479797-jxrtm marked "
            "as unschedulable can be scheduled on node ip-10-6-93-124.us-east-2.compute.internal (based on\n hinting). "
            "Ignoring in scale up.",
            "Make the pod's scheduler and cluster-autoscaler agree: here the pod's own scheduler "
            "(`spec.schedulerName`) counted limits that cluster-autoscaler's simulation does not, so schedule it with "
            "`default-scheduler` (or make that scheduler judge requests only)."),
    Example("Karpenter's interruption controller (a spot instance reclaimed; no pod named, the node is the subject)",
            "https://github.com/aws/karpenter-provider-aws/issues/4772",
            '2023-10-10T05:24:20.236Z\tINFO\tcontroller.interruption\tinitiating delete for machine from interruption '
            'message\t{"commit": "34d50bf-dirty", "queue": "karpenter-venture-preprod-queue-interruption", "messageKind": '
            '"SpotInterruptionKind", "machine": "karpenter-spot-worker-preprod-66tr5", "action": "CordonAndDrain", '
            '"node": "ip-172-27-13-123.ap-southeast-2.compute.internal"}',
            "Nothing to fix on the node: EC2 reclaimed the spot instance and Karpenter replaced it. Make the next one "
            "cheaper to absorb: allow many instance types and every zone in the NodePool, run two or more replicas "
            "spread across zones with a PodDisruptionBudget, and keep what must not be interrupted on on-demand."),
]

COMMAND = "karpplan explain pod.log -o json | jq '.items[0] | {source, dialect, pod, reasons: [(.nodePools[].reasons[], .reasons[]) | .kind], plain}'"


def selection(output: str) -> str:
    """The jq selection of COMMAND, computed from the JSON `karpplan explain` printed."""
    item = json.loads(output)["items"][0]
    kinds = [r["kind"] for p in item["nodePools"] for r in p["reasons"]] + [r["kind"] for r in item["reasons"]]
    picked = {"source": item["source"], "dialect": item.get("dialect"), "pod": item["pod"], "reasons": kinds,
              "plain": item["plain"]}
    return json.dumps(picked, indent=2, ensure_ascii=False)


def explain_output(line: str, workdir: Path) -> str:
    from karpplan.cli.main import app

    log = workdir / "pod.log"
    log.write_text(line + "\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["explain", str(log), "-o", "json"])
    if result.exit_code != 0:
        raise SystemExit(f"explain failed on {line[:60]!r}: {result.output}")
    return result.stdout


def markdown(workdir: Path) -> str:
    out = ["# `karpplan explain`: worked examples", "",
           "<!-- generated by scripts/gen_explain_docs.py; tests/test_explain_docs.py fails when it is stale -->", "",
           "`karpplan explain` reads a Karpenter log, `kubectl describe pod` / `kubectl get events` output, "
           "kube-scheduler FitErrors or cluster-autoscaler events (a file or `-` for stdin), and says in plain words "
           "why each pod did not schedule. With `--manifests` it also reproduces the failure on your manifests and "
           "proposes fixes at their file:line (see `karpplan explain --help`).", "",
           "Each example below is one line as a user pasted it upstream (the issue is linked), the command, what "
           "it prints (the JSON item, narrowed with jq to the fields shown) and the fix a user would apply.", ""]
    for example in EXAMPLES:
        out += [f"## {example.title}", ""]
        if example.source:
            out += [f"Pasted in {example.source}:", ""]
        out += ["```text", example.line, "```", "", "```console", f"$ {COMMAND}",
                selection(explain_output(example.line, workdir)), "```", "", "**Fix.** " + example.fix, ""]
    return "\n".join(out)


def main() -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        TARGET.write_text(markdown(Path(tmp)), encoding="utf-8")
    print(f"wrote {TARGET}", file=sys.stderr)


if __name__ == "__main__":
    main()
