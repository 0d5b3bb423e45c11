"""Node-class errors are read wherever they stand in a log (not only among its first unrecognised lines): a
NodePool whose node class is missing or not Ready launches nothing, and its pods' 'exceed limits' is the
side effect."""

from __future__ import annotations

from karpplan.explain.dialects import nodeclass
from karpplan.explain.enrich import catalog_loader, enrich
from karpplan.explain.report import Explanation, explain_text
from karpplan.explain.structure import NO_INSTANCE_TYPE

# https://github.com/aws/karpenter-provider-aws/issues/6292 (the reporter's JSON log, Karpenter v0.37)
MISSING = ('{"level":"ERROR","time":"2024-05-28T20:49:25.665Z","logger":"controller.provisioner","message":"skipping, '
           'unable to resolve instance types, resolving node class, EC2NodeClass.karpenter.k8s.aws \\"default\\" not '
           'found","commit":"17dd42b","nodepool":"default"}')
LIMITS = ('{"level":"ERROR","time":"2024-05-28T20:49:25.812Z","logger":"controller.provisioner","message":"Could not '
          'schedule pod, all available instance types exceed limits for nodepool: \\"default\\"","commit":"17dd42b",'
          '"pod":"podname/model-d4dnm"}')
# kubernetes-sigs/karpenter v1 provisioner: log.WithValues("NodePool", klog.KRef("", np.Name)).Error(err, "ignoring
# nodepool, not ready"), as controller-runtime's JSON logger writes it (aws/karpenter-provider-aws#8720 quotes it)
NOT_READY = ('{"level":"ERROR","time":"2025-11-23T10:12:01.512Z","logger":"controller","message":"ignoring nodepool, '
             'not ready","commit":"4ee8e5f","controller":"provisioner","namespace":"","name":"","reconcileID":'
             '"0c2b1b9e-6a4e-4c55-9d0f-55bd4c1a5d2e","NodePool":{"name":"general"}}')
NOISE = ('{"level":"INFO","time":"2024-05-28T20:49:2%d.000Z","logger":"controller.provisioner","message":"found '
         'provisionable pod(s)","commit":"17dd42b","pods":"podname/model-d4dnm","duration":"12ms"}')


def _explained(text: str) -> Explanation:
    out = explain_text(text)
    enrich(out, catalog_loader(None, None))
    return out


def test_a_node_class_error_after_many_other_lines_is_still_the_cause() -> None:
    log = "\n".join([*(NOISE % (i % 10) for i in range(80)), MISSING, LIMITS])
    out = _explained(log)
    pool_items = [i for i in out.item_list() if i.parsed.pod is None]
    assert len(pool_items) == 1 and pool_items[0].line == 81
    reason = pool_items[0].parsed.reasons[0]
    assert (reason.kind, reason.cause, reason.node_pool) == (NO_INSTANCE_TYPE, nodeclass.MISSING, "default")
    assert 'EC2NodeClass "default" does not exist' in pool_items[0].plain
    limits = next(i.plain for i in out.item_list() if i.parsed.pod == "podname/model-d4dnm")
    assert "Do not raise spec.limits" in limits and "Raise the limits" not in limits
    assert out.summary()["explained"] == 2 and out.summary()["unrecognised"] == 80


def test_ignoring_a_not_ready_nodepool_names_the_pool_and_its_node_class_conditions() -> None:
    out = _explained("\n".join([NOT_READY, NOT_READY.replace("10:12:01", "10:12:11")]))
    [item] = out.item_list()
    assert item.count == 2 and item.parsed.pod is None and item.parsed.time == "2025-11-23T10:12:01.512Z"
    assert item.parsed.reasons[0].cause == nodeclass.NOT_READY and item.parsed.reasons[0].node_pool == "general"
    assert 'NodePool "general"' in item.plain and "not Ready" in item.plain and "kubectl describe" in item.plain
    assert not out.unrecognised_lines


def test_a_console_not_ready_line_is_read_without_the_unrecognised_scan() -> None:
    line = ('2024-06-01T10:00:00.000Z\tERROR\tcontroller.provisioner\tskipping, unable to resolve instance types, '
            'resolving node class, NodeClassNotReady\t{"commit": "x", "nodepool": "gpu"}')
    out = explain_text(line)
    [item] = out.item_list()
    assert item.parsed.time == "2024-06-01T10:00:00.000Z"
    assert (item.parsed.reasons[0].cause, item.parsed.reasons[0].node_pool) == (nodeclass.NOT_READY, "gpu")
    assert out.summary()["unrecognised"] == 0
