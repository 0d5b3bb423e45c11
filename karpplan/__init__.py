"""karpplan: an offline capacity planner for Kubernetes on AWS (Karpenter, Fargate)."""

__version__ = "0.1.0"
