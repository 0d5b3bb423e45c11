"""One small grammar per dialect family: Karpenter messages, kube events and FitErrors, cluster-autoscaler."""
